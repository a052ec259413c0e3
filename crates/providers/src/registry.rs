//! Model names (`provider/model`) to models, with keys and base URLs from the options or the
//! environment.

use std::sync::Arc;

use actuator_model::{FunctionModel, Model, ModelOutput, ScriptedModel};

use crate::error::ProviderError;
use crate::options::ModelOptions;

/// The model named `name`, configured from the environment.
///
/// | name | provider | key | base URL (default) |
/// |---|---|---|---|
/// | `openai/<model>` | OpenAI Chat Completions | `OPENAI_API_KEY` (required) | `OPENAI_BASE_URL` (`https://api.openai.com/v1`) |
/// | `anthropic/<model>` | Anthropic Messages | `ANTHROPIC_API_KEY` (required) | `ANTHROPIC_BASE_URL` (`https://api.anthropic.com`) |
/// | `openai-api/<service>/<model>` | any OpenAI-compatible service (OpenRouter, Together, Groq, LiteLLM …) | `<SERVICE>_API_KEY` (required) | `<SERVICE>_BASE_URL` (required) |
/// | `vllm/<model>` | vLLM | `VLLM_API_KEY` (optional) | `VLLM_BASE_URL` (`http://localhost:8000/v1`) |
/// | `ollama/<model>` | Ollama | `OLLAMA_API_KEY` (optional) | `OLLAMA_BASE_URL` (`http://localhost:11434/v1`) |
/// | `llama-cpp/<model>` | llama.cpp's `llama-server` | `LLAMA_CPP_API_KEY` (optional) | `LLAMA_CPP_BASE_URL` (`http://localhost:8080/v1`) |
/// | `llama-cpp-python/<model>` | llama-cpp-python's server | `LLAMA_CPP_PYTHON_API_KEY` (optional) | `LLAMA_CPP_PYTHON_BASE_URL` (`http://localhost:8000/v1`) |
/// | `mockllm/model` | the scripted model ([`ModelOptions::script`]) | — | — |
///
/// `<SERVICE>` is the service name in capitals with `-` as `_` (`openai-api/deep-infra/…` reads
/// `DEEP_INFRA_API_KEY`). Give anything in code instead with [`ModelOptions`] and
/// [`get_model_with`].
///
/// ```
/// use actuator_providers::{ModelOptions, ProviderError, get_model, get_model_with};
///
/// let mock = get_model("mockllm/model").unwrap();
/// assert_eq!(mock.name(), "mockllm/model");
///
/// let err = get_model("palm/bison").err().unwrap();
/// assert!(matches!(err, ProviderError::UnknownProvider { .. }));
///
/// let no_key = ModelOptions::new().env(|_| None);
/// let err = get_model_with("anthropic/claude-sonnet-4-5", &no_key).err().unwrap();
/// assert!(err.to_string().contains("ANTHROPIC_API_KEY"));
///
/// // Local servers need no key.
/// let local = get_model_with("ollama/llama3.2", &no_key).unwrap();
/// assert_eq!(local.name(), "ollama/llama3.2");
/// ```
pub fn get_model(name: &str) -> Result<Arc<dyn Model>, ProviderError> {
    ModelOptions::new().build(name)
}

/// The model named `name` (see [`get_model`]) with options given in code.
pub fn get_model_with(name: &str, options: &ModelOptions) -> Result<Arc<dyn Model>, ProviderError> {
    options.build(name)
}

/// A parsed model name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// `openai`, `anthropic`, or a compatible service's name.
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
}

/// Local servers with a default base URL and no key needed.
const LOCAL: &[(&str, &str)] = &[
    ("vllm", "http://localhost:8000/v1"),
    ("ollama", "http://localhost:11434/v1"),
    ("llama-cpp", "http://localhost:8080/v1"),
    ("llama-cpp-python", "http://localhost:8000/v1"),
];

fn env_prefix(service: &str) -> String {
    service.to_ascii_uppercase().replace(['-', '.'], "_")
}

pub(crate) fn resolve(name: &str, options: &ModelOptions) -> Result<Resolved, ProviderError> {
    let invalid = |reason: &str| ProviderError::InvalidModelName {
        model: name.to_owned(),
        reason: reason.to_owned(),
    };
    let (provider, rest) = name
        .split_once('/')
        .ok_or_else(|| invalid("expected `provider/model`, for example `openai/gpt-4.1-mini`"))?;
    if rest.is_empty() {
        return Err(invalid("the model after the provider's `/` is missing"));
    }
    let required_key = |service: &str, var: String| {
        options
            .api_key
            .clone()
            .or_else(|| options.var(&var))
            .map(Some)
            .ok_or(ProviderError::MissingApiKey {
                provider: service.to_owned(),
                var,
            })
    };
    match provider {
        "openai" => Ok(Resolved {
            service: "OpenAI".into(),
            model: rest.to_owned(),
            key: required_key("OpenAI", "OPENAI_API_KEY".into())?,
            key_var: "OPENAI_API_KEY".into(),
            base_url: options
                .base_url
                .clone()
                .or_else(|| options.var("OPENAI_BASE_URL"))
                .unwrap_or_else(|| "https://api.openai.com/v1".into()),
            kind: Kind::OpenAi,
        }),
        "anthropic" => Ok(Resolved {
            service: "Anthropic".into(),
            model: rest.to_owned(),
            key: required_key("Anthropic", "ANTHROPIC_API_KEY".into())?,
            key_var: "ANTHROPIC_API_KEY".into(),
            base_url: options
                .base_url
                .clone()
                .or_else(|| options.var("ANTHROPIC_BASE_URL"))
                .unwrap_or_else(|| "https://api.anthropic.com".into()),
            kind: Kind::Anthropic,
        }),
        "openai-api" => {
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
            let base_url = options
                .base_url
                .clone()
                .or_else(|| options.var(&base_var))
                .ok_or_else(|| ProviderError::MissingBaseUrl {
                    provider: service.to_owned(),
                    var: base_var,
                })?;
            Ok(Resolved {
                service: service.to_owned(),
                model: model.to_owned(),
                key: required_key(service, format!("{prefix}_API_KEY"))?,
                key_var: format!("{prefix}_API_KEY"),
                base_url,
                kind: Kind::Compatible,
            })
        }
        local => {
            let Some((_, default)) = LOCAL.iter().find(|(p, _)| *p == local) else {
                return Err(ProviderError::UnknownProvider {
                    provider: provider.to_owned(),
                    model: name.to_owned(),
                });
            };
            let prefix = env_prefix(local);
            let key_var = format!("{prefix}_API_KEY");
            Ok(Resolved {
                service: local.to_owned(),
                model: rest.to_owned(),
                key: options.api_key.clone().or_else(|| options.var(&key_var)),
                key_var,
                base_url: options
                    .base_url
                    .clone()
                    .or_else(|| options.var(&format!("{prefix}_BASE_URL")))
                    .unwrap_or_else(|| (*default).to_owned()),
                kind: Kind::Compatible,
            })
        }
    }
}

pub(crate) fn build(name: &str, options: &ModelOptions) -> Result<Arc<dyn Model>, ProviderError> {
    if let Some(model) = name.strip_prefix("mockllm/") {
        if model.is_empty() {
            return Err(ProviderError::InvalidModelName {
                model: name.to_owned(),
                reason: "use `mockllm/model`".into(),
            });
        }
        return Ok(match &options.script {
            Some(outputs) => Arc::new(ScriptedModel::named(name, outputs.clone())),
            None => {
                let text = format!("Default output from {name}");
                let model_name = name.to_owned();
                Arc::new(FunctionModel::new(name, move |_, _| {
                    Ok(ModelOutput::from_content(model_name.clone(), text.clone()))
                }))
            }
        });
    }
    let resolved = resolve(name, options)?;
    match resolved.kind {
        Kind::OpenAi | Kind::Compatible => openai_model(name, resolved, options),
        Kind::Anthropic => anthropic_model(name, resolved, options),
    }
}

#[cfg(feature = "openai")]
fn openai_model(
    name: &str,
    resolved: Resolved,
    options: &ModelOptions,
) -> Result<Arc<dyn Model>, ProviderError> {
    Ok(Arc::new(crate::openai::OpenAiChat::new(
        name, resolved, options,
    )?))
}

#[cfg(not(feature = "openai"))]
fn openai_model(
    name: &str,
    resolved: Resolved,
    _options: &ModelOptions,
) -> Result<Arc<dyn Model>, ProviderError> {
    Err(ProviderError::InvalidConfig {
        provider: resolved.service,
        message: format!("`{name}` needs the `openai` feature of actuator-providers"),
    })
}

#[cfg(feature = "anthropic")]
fn anthropic_model(
    name: &str,
    resolved: Resolved,
    options: &ModelOptions,
) -> Result<Arc<dyn Model>, ProviderError> {
    Ok(Arc::new(crate::anthropic::AnthropicMessages::new(
        name, resolved, options,
    )?))
}

#[cfg(not(feature = "anthropic"))]
fn anthropic_model(
    name: &str,
    resolved: Resolved,
    _options: &ModelOptions,
) -> Result<Arc<dyn Model>, ProviderError> {
    Err(ProviderError::InvalidConfig {
        provider: resolved.service,
        message: format!("`{name}` needs the `anthropic` feature of actuator-providers"),
    })
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

    #[test]
    fn openai_reads_key_and_base_url_with_default() {
        let r = resolve("openai/gpt-4.1-mini", &env(&[("OPENAI_API_KEY", "sk-1")])).unwrap();
        assert_eq!(r.model, "gpt-4.1-mini");
        assert_eq!(r.key.as_deref(), Some("sk-1"));
        assert_eq!(r.base_url, "https://api.openai.com/v1");
        let r = resolve(
            "openai/gpt-4.1-mini",
            &env(&[
                ("OPENAI_API_KEY", "sk-1"),
                ("OPENAI_BASE_URL", "http://127.0.0.1:1/v1"),
            ]),
        )
        .unwrap();
        assert_eq!(r.base_url, "http://127.0.0.1:1/v1");
        let err = resolve("openai/gpt-4.1-mini", &env(&[])).unwrap_err();
        assert_eq!(
            err,
            ProviderError::MissingApiKey {
                provider: "OpenAI".into(),
                var: "OPENAI_API_KEY".into()
            }
        );
        // A key in code wins over the environment, and an empty variable counts as unset.
        let r = resolve(
            "openai/m",
            &env(&[("OPENAI_API_KEY", "env")]).api_key("code"),
        )
        .unwrap();
        assert_eq!(r.key.as_deref(), Some("code"));
        assert!(resolve("openai/m", &env(&[("OPENAI_API_KEY", "  ")])).is_err());
    }

    #[test]
    fn openai_api_services_read_their_own_variables() {
        let opts = env(&[
            ("DEEP_INFRA_API_KEY", "k"),
            ("DEEP_INFRA_BASE_URL", "http://127.0.0.1:2/v1"),
        ]);
        let r = resolve("openai-api/deep-infra/meta-llama/Llama-3-8b", &opts).unwrap();
        assert_eq!(r.service, "deep-infra");
        assert_eq!(r.model, "meta-llama/Llama-3-8b");
        assert_eq!(r.base_url, "http://127.0.0.1:2/v1");
        assert_eq!(r.kind, Kind::Compatible);
        let err = resolve("openai-api/groq/llama", &env(&[("GROQ_API_KEY", "k")])).unwrap_err();
        assert!(err.to_string().contains("GROQ_BASE_URL"), "{err}");
        let err = resolve(
            "openai-api/groq/llama",
            &env(&[("GROQ_BASE_URL", "http://127.0.0.1:3")]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("GROQ_API_KEY"), "{err}");
        assert!(matches!(
            resolve("openai-api/groq", &opts),
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
            let r = resolve(name, &env(&[])).unwrap();
            assert_eq!(r.base_url, url, "{name}");
            assert_eq!(r.key, None);
        }
        let r = resolve(
            "vllm/m",
            &env(&[
                ("VLLM_BASE_URL", "http://127.0.0.1:4/v1"),
                ("VLLM_API_KEY", "v"),
            ]),
        )
        .unwrap();
        assert_eq!(
            (r.base_url.as_str(), r.key.as_deref()),
            ("http://127.0.0.1:4/v1", Some("v"))
        );
        let r = resolve(
            "llama-cpp/m",
            &env(&[("LLAMA_CPP_BASE_URL", "http://127.0.0.1:5/v1")]),
        )
        .unwrap();
        assert_eq!(r.base_url, "http://127.0.0.1:5/v1");
    }

    #[test]
    fn bad_names_say_what_is_expected() {
        let err = resolve("gpt-4", &env(&[])).unwrap_err();
        assert!(err.to_string().contains("provider/model"), "{err}");
        let err = resolve("bard/x", &env(&[])).unwrap_err();
        assert!(
            matches!(err, ProviderError::UnknownProvider { ref provider, .. } if provider == "bard")
        );
        assert!(err.to_string().contains("openai-api/<service>/<model>"));
        assert!(resolve("openai/", &env(&[])).is_err());
        assert!(build("mockllm/", &ModelOptions::new()).is_err());
    }
}
