//! The providers Actuator ships: each a factory like any other crate's, put in the registry
//! (`registry.rs`, above) when it is first used.

use std::sync::Arc;

use actuator_model::{FunctionModel, Model, ModelOutput, ScriptedModel};

use crate::error::ProviderError;
use crate::options::ModelOptions;
use crate::resolve::{self, LOCAL, Resolved};

/// What a factory returns: a model, or any error (a [`ProviderError`] is passed on as it is).
pub(crate) type Made = Result<Arc<dyn Model>, Box<dyn std::error::Error + Send + Sync>>;

/// One built-in provider: its prefix, the form of its names as the unknown-provider error
/// lists it, and its factory.
pub(crate) struct Builtin {
    pub(crate) prefix: &'static str,
    pub(crate) usage: &'static str,
    pub(crate) factory: fn(&str, &ModelOptions) -> Made,
}

/// Every built-in provider, registered before any other.
pub(crate) const BUILTINS: &[Builtin] = &[
    Builtin {
        prefix: "openai",
        usage: "openai/<model>",
        factory: openai,
    },
    Builtin {
        prefix: "anthropic",
        usage: "anthropic/<model>",
        factory: anthropic,
    },
    Builtin {
        prefix: "google",
        usage: "google/<model>",
        factory: google,
    },
    Builtin {
        prefix: "openai-api",
        usage: "openai-api/<service>/<model>",
        factory: openai_api,
    },
    Builtin {
        prefix: "vllm",
        usage: "vllm/<model>",
        factory: local,
    },
    Builtin {
        prefix: "ollama",
        usage: "ollama/<model>",
        factory: local,
    },
    Builtin {
        prefix: "llama-cpp",
        usage: "llama-cpp/<model>",
        factory: local,
    },
    Builtin {
        prefix: "llama-cpp-python",
        usage: "llama-cpp-python/<model>",
        factory: local,
    },
    Builtin {
        prefix: "mockllm",
        usage: "mockllm/model",
        factory: mockllm,
    },
];

/// `name` split at its first `/` (the registry only hands on names that have one).
fn split(name: &str) -> (&str, &str) {
    name.split_once('/').unwrap_or((name, ""))
}

fn openai(name: &str, options: &ModelOptions) -> Made {
    let resolved = resolve::openai(split(name).1, options)?;
    Ok(chat_completions(name, resolved, options)?)
}

fn openai_api(name: &str, options: &ModelOptions) -> Made {
    let resolved = resolve::openai_api(name, split(name).1, options)?;
    Ok(chat_completions(name, resolved, options)?)
}

fn local(name: &str, options: &ModelOptions) -> Made {
    let (service, model) = split(name);
    let default_url = LOCAL
        .iter()
        .find(|(prefix, _)| *prefix == service)
        .map_or("", |(_, url)| url);
    let resolved = resolve::local(service, default_url, model, options);
    Ok(chat_completions(name, resolved, options)?)
}

fn anthropic(name: &str, options: &ModelOptions) -> Made {
    let resolved = resolve::anthropic(split(name).1, options)?;
    Ok(messages(name, resolved, options)?)
}

fn google(name: &str, options: &ModelOptions) -> Made {
    let resolved = resolve::google(split(name).1, options)?;
    Ok(gemini(name, resolved, options)?)
}

/// `mockllm/<model>`: the scripted outputs of [`ModelOptions::script`], or the same text
/// answer forever.
fn mockllm(name: &str, options: &ModelOptions) -> Made {
    Ok(match &options.script {
        Some(outputs) => Arc::new(ScriptedModel::named(name, outputs.clone())),
        None => {
            let text = format!("Default output from {name}");
            let model_name = name.to_owned();
            Arc::new(FunctionModel::new(name, move |_, _| {
                Ok(ModelOutput::from_content(model_name.clone(), text.clone()))
            }))
        }
    })
}

#[cfg(feature = "openai")]
fn chat_completions(
    name: &str,
    resolved: Resolved,
    options: &ModelOptions,
) -> Result<Arc<dyn Model>, ProviderError> {
    Ok(Arc::new(crate::openai::OpenAiChat::new(
        name, resolved, options,
    )?))
}

#[cfg(not(feature = "openai"))]
fn chat_completions(
    name: &str,
    resolved: Resolved,
    _options: &ModelOptions,
) -> Result<Arc<dyn Model>, ProviderError> {
    Err(needs_feature(name, resolved, "openai"))
}

#[cfg(feature = "anthropic")]
fn messages(
    name: &str,
    resolved: Resolved,
    options: &ModelOptions,
) -> Result<Arc<dyn Model>, ProviderError> {
    Ok(Arc::new(crate::anthropic::AnthropicMessages::new(
        name, resolved, options,
    )?))
}

#[cfg(not(feature = "anthropic"))]
fn messages(
    name: &str,
    resolved: Resolved,
    _options: &ModelOptions,
) -> Result<Arc<dyn Model>, ProviderError> {
    Err(needs_feature(name, resolved, "anthropic"))
}

#[cfg(feature = "google")]
fn gemini(
    name: &str,
    resolved: Resolved,
    options: &ModelOptions,
) -> Result<Arc<dyn Model>, ProviderError> {
    Ok(Arc::new(crate::google::GoogleGemini::new(
        name, resolved, options,
    )?))
}

#[cfg(not(feature = "google"))]
fn gemini(
    name: &str,
    resolved: Resolved,
    _options: &ModelOptions,
) -> Result<Arc<dyn Model>, ProviderError> {
    Err(needs_feature(name, resolved, "google"))
}

/// The error for a built-in provider whose cargo feature is off.
#[cfg(any(
    not(feature = "openai"),
    not(feature = "anthropic"),
    not(feature = "google")
))]
fn needs_feature(name: &str, resolved: Resolved, feature: &str) -> ProviderError {
    ProviderError::InvalidConfig {
        provider: resolved.service,
        message: format!("`{name}` needs the `{feature}` feature of actuator-providers"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_distinct_and_every_local_server_has_a_default_url() {
        let mut prefixes: Vec<_> = BUILTINS.iter().map(|b| b.prefix).collect();
        prefixes.sort_unstable();
        prefixes.dedup();
        assert_eq!(prefixes.len(), BUILTINS.len());
        for (prefix, _) in LOCAL {
            let builtin = BUILTINS.iter().find(|b| b.prefix == *prefix).unwrap();
            assert!(builtin.usage.starts_with(prefix));
        }
    }
}
