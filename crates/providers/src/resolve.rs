//! Where a built-in provider's model is reached: its key and base URL from the options or the
//! environment, and which wire format it speaks. One function per kind of built-in name; the
//! registry (`registry.rs`, above) chooses among them by prefix.

use crate::error::ProviderError;
use crate::options::ModelOptions;

/// A model name resolved to the server it is reached at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// `OpenAI`, `Anthropic`, or a compatible service's name.
    pub service: String,
    /// The model's name as the API knows it.
    pub model: String,
    pub key: Option<String>,
    pub key_var: String,
    pub base_url: String,
    pub kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// OpenAI itself.
    OpenAi,
    /// Another server speaking Chat Completions.
    Compatible,
    Anthropic,
    /// Google's Gemini API; `bearer` when the credential is an OAuth access token (Vertex AI)
    /// rather than an API key.
    Google {
        bearer: bool,
    },
}

/// Local servers with a default base URL and no key needed.
pub(crate) const LOCAL: &[(&str, &str)] = &[
    ("vllm", "http://localhost:8000/v1"),
    ("ollama", "http://localhost:11434/v1"),
    ("llama-cpp", "http://localhost:8080/v1"),
    ("llama-cpp-python", "http://localhost:8000/v1"),
];

/// The prefix of a service's environment variables: capitals, with `-` and `.` as `_`.
fn env_prefix(service: &str) -> String {
    service.to_ascii_uppercase().replace(['-', '.'], "_")
}

/// The key given in code or read from `var`, which the service requires.
fn required_key(
    options: &ModelOptions,
    service: &str,
    var: &str,
) -> Result<Option<String>, ProviderError> {
    options
        .api_key
        .clone()
        .or_else(|| options.env_var(var))
        .map(Some)
        .ok_or_else(|| ProviderError::MissingApiKey {
            provider: service.to_owned(),
            var: var.to_owned(),
        })
}

/// The base URL given in code, else read from `var`.
fn base_url(options: &ModelOptions, var: &str) -> Option<String> {
    options.base_url.clone().or_else(|| options.env_var(var))
}

/// `openai/<model>`: OpenAI itself.
pub(crate) fn openai(model: &str, options: &ModelOptions) -> Result<Resolved, ProviderError> {
    Ok(Resolved {
        service: "OpenAI".into(),
        model: model.to_owned(),
        key: required_key(options, "OpenAI", "OPENAI_API_KEY")?,
        key_var: "OPENAI_API_KEY".into(),
        base_url: base_url(options, "OPENAI_BASE_URL")
            .unwrap_or_else(|| "https://api.openai.com/v1".into()),
        kind: Kind::OpenAi,
    })
}

/// `anthropic/<model>`: Anthropic's Messages API.
pub(crate) fn anthropic(model: &str, options: &ModelOptions) -> Result<Resolved, ProviderError> {
    Ok(Resolved {
        service: "Anthropic".into(),
        model: model.to_owned(),
        key: required_key(options, "Anthropic", "ANTHROPIC_API_KEY")?,
        key_var: "ANTHROPIC_API_KEY".into(),
        base_url: base_url(options, "ANTHROPIC_BASE_URL")
            .unwrap_or_else(|| "https://api.anthropic.com".into()),
        kind: Kind::Anthropic,
    })
}

/// `google/<model>`: the Gemini API. Google AI Studio's endpoint by default, with
/// `GOOGLE_API_KEY` (as the reference reads it, else `GEMINI_API_KEY`); Vertex AI when
/// `GOOGLE_GENAI_USE_VERTEXAI` is `true` (the SDK's switch), in `GOOGLE_CLOUD_PROJECT` and
/// `GOOGLE_CLOUD_LOCATION` (default `us-central1`), with an access token from
/// `GOOGLE_CLOUD_ACCESS_TOKEN` (`gcloud auth print-access-token`) or, without a project, an
/// express-mode `GOOGLE_API_KEY`. The base URL is everything before `/models/{model}`.
pub(crate) fn google(model: &str, options: &ModelOptions) -> Result<Resolved, ProviderError> {
    let vertex = options
        .env_var("GOOGLE_GENAI_USE_VERTEXAI")
        .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1"));
    if vertex {
        return vertex_ai(model, options);
    }
    let key = match required_key(options, "Google", "GOOGLE_API_KEY") {
        Ok(key) => key,
        Err(missing) => Some(options.env_var("GEMINI_API_KEY").ok_or(missing)?),
    };
    Ok(Resolved {
        service: "Google".into(),
        model: model.to_owned(),
        key,
        key_var: "GOOGLE_API_KEY".into(),
        base_url: base_url(options, "GOOGLE_BASE_URL")
            .unwrap_or_else(|| "https://generativelanguage.googleapis.com/v1beta".into()),
        kind: Kind::Google { bearer: false },
    })
}

/// `google/<model>` on Vertex AI (see [`google`]).
fn vertex_ai(model: &str, options: &ModelOptions) -> Result<Resolved, ProviderError> {
    let project = options.env_var("GOOGLE_CLOUD_PROJECT");
    let location = options
        .env_var("GOOGLE_CLOUD_LOCATION")
        .unwrap_or_else(|| "us-central1".into());
    let token = options.env_var("GOOGLE_CLOUD_ACCESS_TOKEN");
    let (key, key_var, bearer) = match (&project, token) {
        (Some(_), Some(token)) => (Some(token), "GOOGLE_CLOUD_ACCESS_TOKEN", true),
        (Some(_), None) => {
            return Err(ProviderError::MissingApiKey {
                provider: "Vertex AI".into(),
                var: "GOOGLE_CLOUD_ACCESS_TOKEN".into(),
            });
        }
        (None, _) => (
            required_key(options, "Vertex AI", "GOOGLE_API_KEY")?,
            "GOOGLE_API_KEY",
            false,
        ),
    };
    let host = if location == "global" {
        "https://aiplatform.googleapis.com".to_owned()
    } else {
        format!("https://{location}-aiplatform.googleapis.com")
    };
    let default_url = match &project {
        Some(project) => {
            format!("{host}/v1/projects/{project}/locations/{location}/publishers/google")
        }
        None => "https://aiplatform.googleapis.com/v1/publishers/google".to_owned(),
    };
    Ok(Resolved {
        service: "Vertex AI".into(),
        model: model.to_owned(),
        key,
        key_var: key_var.into(),
        base_url: base_url(options, "GOOGLE_BASE_URL").unwrap_or(default_url),
        kind: Kind::Google { bearer },
    })
}

/// `openai-api/<service>/<model>` (`rest` is what follows `openai-api/` in `name`): any
/// OpenAI-compatible service, whose key and base URL are both required.
pub(crate) fn openai_api(
    name: &str,
    rest: &str,
    options: &ModelOptions,
) -> Result<Resolved, ProviderError> {
    let invalid = |reason: &str| ProviderError::InvalidModelName {
        model: name.to_owned(),
        reason: reason.to_owned(),
    };
    let (service, model) = rest.split_once('/').ok_or_else(|| {
        invalid("expected `openai-api/<service>/<model>`, for example `openai-api/together/meta-llama/Llama-3-8b`")
    })?;
    if service.is_empty() || model.is_empty() {
        return Err(invalid(
            "expected `openai-api/<service>/<model>` with both parts non-empty",
        ));
    }
    let prefix = env_prefix(service);
    let base_var = format!("{prefix}_BASE_URL");
    let base_url = base_url(options, &base_var).ok_or_else(|| ProviderError::MissingBaseUrl {
        provider: service.to_owned(),
        var: base_var,
    })?;
    let key_var = format!("{prefix}_API_KEY");
    Ok(Resolved {
        service: service.to_owned(),
        model: model.to_owned(),
        key: required_key(options, service, &key_var)?,
        key_var,
        base_url,
        kind: Kind::Compatible,
    })
}

/// `<service>/<model>` for a local server (`vllm`, `ollama` …) whose base URL defaults to
/// `default_url` and whose key is optional.
pub(crate) fn local(
    service: &str,
    default_url: &str,
    model: &str,
    options: &ModelOptions,
) -> Resolved {
    let prefix = env_prefix(service);
    let key_var = format!("{prefix}_API_KEY");
    Resolved {
        service: service.to_owned(),
        model: model.to_owned(),
        key: options
            .api_key
            .clone()
            .or_else(|| options.env_var(&key_var)),
        key_var,
        base_url: base_url(options, &format!("{prefix}_BASE_URL"))
            .unwrap_or_else(|| default_url.to_owned()),
        kind: Kind::Compatible,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> ModelOptions {
        ModelOptions::new().env(move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    /// A local server's resolution, by its prefix.
    fn local_named(name: &str, options: &ModelOptions) -> Resolved {
        let (service, model) = name.split_once('/').unwrap();
        let (_, url) = LOCAL.iter().find(|(p, _)| *p == service).unwrap();
        local(service, url, model, options)
    }

    #[test]
    fn google_reads_ai_studio_or_vertex_settings() {
        let r = google("gemini-2.5-flash", &env(&[("GEMINI_API_KEY", "g")])).unwrap();
        assert_eq!(r.key.as_deref(), Some("g"));
        assert_eq!(
            r.base_url,
            "https://generativelanguage.googleapis.com/v1beta"
        );
        assert_eq!(r.kind, Kind::Google { bearer: false });
        let vertex = env(&[
            ("GOOGLE_GENAI_USE_VERTEXAI", "True"),
            ("GOOGLE_CLOUD_PROJECT", "proj"),
            ("GOOGLE_CLOUD_LOCATION", "europe-west4"),
            ("GOOGLE_CLOUD_ACCESS_TOKEN", "ya29.t"),
        ]);
        let r = google("gemini-2.5-pro", &vertex).unwrap();
        assert_eq!(
            r.base_url,
            "https://europe-west4-aiplatform.googleapis.com/v1/projects/proj/locations/europe-west4/publishers/google"
        );
        assert_eq!(r.kind, Kind::Google { bearer: true });
        assert_eq!(r.key.as_deref(), Some("ya29.t"));
        // A project without a token names the variable to set.
        let err = google(
            "m",
            &env(&[
                ("GOOGLE_GENAI_USE_VERTEXAI", "1"),
                ("GOOGLE_CLOUD_PROJECT", "p"),
            ]),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("GOOGLE_CLOUD_ACCESS_TOKEN"),
            "{err}"
        );
        // Express mode: an API key, no project.
        let r = google(
            "m",
            &env(&[
                ("GOOGLE_GENAI_USE_VERTEXAI", "true"),
                ("GOOGLE_API_KEY", "k"),
            ]),
        )
        .unwrap();
        assert_eq!(
            r.base_url,
            "https://aiplatform.googleapis.com/v1/publishers/google"
        );
        assert_eq!(r.kind, Kind::Google { bearer: false });
    }

    #[test]
    fn openai_reads_key_and_base_url_with_default() {
        let r = openai("gpt-4.1-mini", &env(&[("OPENAI_API_KEY", "sk-1")])).unwrap();
        assert_eq!(r.model, "gpt-4.1-mini");
        assert_eq!(r.key.as_deref(), Some("sk-1"));
        assert_eq!(r.base_url, "https://api.openai.com/v1");
        let r = openai(
            "gpt-4.1-mini",
            &env(&[
                ("OPENAI_API_KEY", "sk-1"),
                ("OPENAI_BASE_URL", "http://127.0.0.1:1/v1"),
            ]),
        )
        .unwrap();
        assert_eq!(r.base_url, "http://127.0.0.1:1/v1");
        let err = openai("gpt-4.1-mini", &env(&[])).unwrap_err();
        assert_eq!(
            err,
            ProviderError::MissingApiKey {
                provider: "OpenAI".into(),
                var: "OPENAI_API_KEY".into()
            }
        );
        // A key in code wins over the environment, and an empty variable counts as unset.
        let r = openai("m", &env(&[("OPENAI_API_KEY", "env")]).api_key("code")).unwrap();
        assert_eq!(r.key.as_deref(), Some("code"));
        assert!(openai("m", &env(&[("OPENAI_API_KEY", "  ")])).is_err());
    }

    #[test]
    fn openai_api_services_read_their_own_variables() {
        let opts = env(&[
            ("DEEP_INFRA_API_KEY", "k"),
            ("DEEP_INFRA_BASE_URL", "http://127.0.0.1:2/v1"),
        ]);
        let name = "openai-api/deep-infra/meta-llama/Llama-3-8b";
        let r = openai_api(name, "deep-infra/meta-llama/Llama-3-8b", &opts).unwrap();
        assert_eq!(r.service, "deep-infra");
        assert_eq!(r.model, "meta-llama/Llama-3-8b");
        assert_eq!(r.base_url, "http://127.0.0.1:2/v1");
        assert_eq!(r.kind, Kind::Compatible);
        let name = "openai-api/groq/llama";
        let err = openai_api(name, "groq/llama", &env(&[("GROQ_API_KEY", "k")])).unwrap_err();
        assert!(err.to_string().contains("GROQ_BASE_URL"), "{err}");
        let err = openai_api(
            name,
            "groq/llama",
            &env(&[("GROQ_BASE_URL", "http://127.0.0.1:3")]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("GROQ_API_KEY"), "{err}");
        assert!(matches!(
            openai_api("openai-api/groq", "groq", &opts),
            Err(ProviderError::InvalidModelName { .. })
        ));
    }

    #[test]
    fn local_servers_have_default_base_urls_and_optional_keys() {
        for (name, url) in [
            ("vllm/m", "http://localhost:8000/v1"),
            ("ollama/m", "http://localhost:11434/v1"),
            ("llama-cpp/m", "http://localhost:8080/v1"),
            ("llama-cpp-python/m", "http://localhost:8000/v1"),
        ] {
            let r = local_named(name, &env(&[]));
            assert_eq!(r.base_url, url, "{name}");
            assert_eq!(r.key, None);
        }
        let r = local_named(
            "vllm/m",
            &env(&[
                ("VLLM_BASE_URL", "http://127.0.0.1:4/v1"),
                ("VLLM_API_KEY", "v"),
            ]),
        );
        assert_eq!(
            (r.base_url.as_str(), r.key.as_deref()),
            ("http://127.0.0.1:4/v1", Some("v"))
        );
        let r = local_named(
            "llama-cpp/m",
            &env(&[("LLAMA_CPP_BASE_URL", "http://127.0.0.1:5/v1")]),
        );
        assert_eq!(r.base_url, "http://127.0.0.1:5/v1");
    }
}
