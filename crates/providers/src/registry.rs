//! The open provider registry: model names (`provider/model`) to models, through the factory
//! registered for the provider's prefix. Actuator's own providers are registered here the
//! same way as any other crate's, as the reference's `@modelapi` registry holds its own.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use actuator_model::{ErrorCause, Model};

use crate::builtin::{BUILTINS, Made};
use crate::error::ProviderError;
use crate::options::ModelOptions;

/// A registered factory: the model named `name` (`prefix/model`), built with `options`.
type Factory = dyn Fn(&str, &ModelOptions) -> Made + Send + Sync;

/// One registered provider.
struct Entry {
    /// The form of its names, as the unknown-provider error lists it.
    usage: String,
    factory: Arc<Factory>,
}

/// The providers by prefix, sorted (so that the error listing them is).
type Providers = BTreeMap<String, Entry>;

/// The process-wide registry, holding the built-in providers from its first use.
fn providers() -> &'static RwLock<Providers> {
    static PROVIDERS: OnceLock<RwLock<Providers>> = OnceLock::new();
    PROVIDERS.get_or_init(|| {
        let mut providers = Providers::new();
        for builtin in BUILTINS {
            // The built-in prefixes are distinct and valid (a test in builtin.rs checks), so
            // this cannot fail.
            let _ = add(
                &mut providers,
                builtin.prefix,
                builtin.usage.to_owned(),
                Arc::new(builtin.factory),
            );
        }
        RwLock::new(providers)
    })
}

/// Registers `factory` under `prefix`: the one way a provider enters the registry.
fn add(
    providers: &mut Providers,
    prefix: &str,
    usage: String,
    factory: Arc<Factory>,
) -> Result<(), ProviderError> {
    if prefix.is_empty() || prefix.contains('/') || prefix.contains(char::is_whitespace) {
        return Err(ProviderError::InvalidConfig {
            provider: prefix.to_owned(),
            message: "a provider prefix must be non-empty, without `/` or whitespace".into(),
        });
    }
    if providers.contains_key(prefix) {
        return Err(ProviderError::DuplicateProvider {
            provider: prefix.to_owned(),
        });
    }
    providers.insert(prefix.to_owned(), Entry { usage, factory });
    Ok(())
}

/// Makes `get_model("<prefix>/<model>")` (and [`get_model_with`], [`ModelOptions::build`])
/// resolve through `factory`, in this whole process: how a crate outside Actuator adds a
/// provider (the reference's `@modelapi`).
///
/// The factory gets the whole name as given (`bedrock/anthropic.claude-3-haiku`) and the
/// options ([`ModelOptions`]'s fields are Actuator's; keys and base URLs are the factory's to
/// read, from the environment or elsewhere). It may fail with any error: a
/// [`ProviderError`] is passed on as it is, any other error becomes a
/// [`ProviderError::Factory`] with it as the [`source`](std::error::Error::source).
///
/// A prefix is registered once: a second registration of it, a built-in's included, is a
/// [`ProviderError::DuplicateProvider`]. A prefix is non-empty, without `/` or whitespace
/// ([`ProviderError::InvalidConfig`] otherwise).
///
/// ```
/// use std::sync::Arc;
/// use actuator_model::{FunctionModel, Model, ModelOutput};
/// use actuator_providers::{ProviderError, get_model, register_provider};
///
/// register_provider("echo", |name, _options| {
///     let reply = format!("echo from {name}");
///     let model_name = name.to_owned();
///     Ok(Arc::new(FunctionModel::new(name, move |_, _| {
///         Ok(ModelOutput::from_content(model_name.clone(), reply.clone()))
///     })))
/// })
/// .unwrap();
/// assert_eq!(get_model("echo/v1").unwrap().name(), "echo/v1");
///
/// let again = register_provider("echo", |_, _| Err("unreachable".into()));
/// assert!(matches!(again, Err(ProviderError::DuplicateProvider { ref provider }) if provider == "echo"));
/// ```
pub fn register_provider<F>(prefix: &str, factory: F) -> Result<(), ProviderError>
where
    F: Fn(&str, &ModelOptions) -> Result<Arc<dyn Model>, Box<dyn std::error::Error + Send + Sync>>
        + Send
        + Sync
        + 'static,
{
    let mut providers = providers().write().unwrap_or_else(PoisonError::into_inner);
    add(
        &mut providers,
        prefix,
        format!("{prefix}/<model>"),
        Arc::new(factory),
    )
}

/// The prefixes [`get_model`] resolves, sorted: the built-in ones and those registered with
/// [`register_provider`].
///
/// ```
/// let prefixes = actuator_providers::registered_providers();
/// assert!(prefixes.iter().any(|p| p == "openai"));
/// assert!(prefixes.is_sorted());
/// ```
pub fn registered_providers() -> Vec<String> {
    let providers = providers().read().unwrap_or_else(PoisonError::into_inner);
    providers.keys().cloned().collect()
}

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
/// | `<prefix>/<model>` | a provider added with [`register_provider`] | its own | its own |
///
/// `<SERVICE>` is the service name in capitals with `-` as `_` (`openai-api/deep-infra/…` reads
/// `DEEP_INFRA_API_KEY`). Give anything in code instead with [`ModelOptions`] and
/// [`get_model_with`]. An unknown prefix is a [`ProviderError::UnknownProvider`] listing the
/// known ones.
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
    build(name, &ModelOptions::new())
}

/// The model named `name` (see [`get_model`]) with options given in code.
pub fn get_model_with(name: &str, options: &ModelOptions) -> Result<Arc<dyn Model>, ProviderError> {
    build(name, options)
}

impl ModelOptions {
    /// Builds the model named `name` (see [`get_model`] for the names).
    pub fn build(&self, name: &str) -> Result<Arc<dyn Model>, ProviderError> {
        build(name, self)
    }
}

/// The model named `name`, from the factory registered for its prefix.
fn build(name: &str, options: &ModelOptions) -> Result<Arc<dyn Model>, ProviderError> {
    let invalid = |reason: &str| ProviderError::InvalidModelName {
        model: name.to_owned(),
        reason: reason.to_owned(),
    };
    let (prefix, model) = name
        .split_once('/')
        .ok_or_else(|| invalid("expected `provider/model`, for example `openai/gpt-4.1-mini`"))?;
    if model.is_empty() {
        return Err(invalid("the model after the provider's `/` is missing"));
    }
    // The factory is called outside the lock: it may take long, or resolve another model.
    let factory = {
        let providers = providers().read().unwrap_or_else(PoisonError::into_inner);
        match providers.get(prefix) {
            Some(entry) => Arc::clone(&entry.factory),
            None => {
                return Err(ProviderError::UnknownProvider {
                    provider: prefix.to_owned(),
                    model: name.to_owned(),
                    known: providers.values().map(|e| e.usage.clone()).collect(),
                });
            }
        }
    };
    factory(name, options).map_err(|error| match error.downcast::<ProviderError>() {
        Ok(error) => *error,
        Err(error) => ProviderError::Factory {
            provider: prefix.to_owned(),
            model: name.to_owned(),
            source: ErrorCause::from_boxed(error),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build_err(name: &str) -> ProviderError {
        build(name, &ModelOptions::new().env(|_| None))
            .err()
            .unwrap()
    }

    #[test]
    fn bad_names_say_what_is_expected() {
        let err = build_err("gpt-4");
        assert!(err.to_string().contains("provider/model"), "{err}");
        let err = build_err("bard/x");
        assert!(
            matches!(err, ProviderError::UnknownProvider { ref provider, .. } if provider == "bard")
        );
        assert!(err.to_string().contains("openai-api/<service>/<model>"));
        assert!(matches!(
            build_err("openai/"),
            ProviderError::InvalidModelName { .. }
        ));
        assert!(matches!(
            build_err("mockllm/"),
            ProviderError::InvalidModelName { .. }
        ));
    }

    #[test]
    fn prefixes_must_be_one_word() {
        for prefix in ["", "a/b", "a b"] {
            let err = register_provider(prefix, |_, _| Err("unused".into())).unwrap_err();
            assert!(
                matches!(err, ProviderError::InvalidConfig { .. }),
                "{prefix:?}: {err}"
            );
        }
    }

    #[test]
    fn built_in_prefixes_cannot_be_taken() {
        let err = register_provider("openai", |_, _| Err("unused".into())).unwrap_err();
        assert_eq!(
            err,
            ProviderError::DuplicateProvider {
                provider: "openai".into()
            }
        );
    }
}
