//! The open provider registry, used as a crate outside Actuator would: a prefix registered
//! with `register_provider` resolves through `get_model`, once, and is listed when a name's
//! prefix is unknown. Each test registers prefixes of its own, as the registry is
//! process-wide.

use std::error::Error as _;
use std::sync::Arc;

use actuator_model::{ChatMessage, ErrorCause, FunctionModel, Model, ModelOutput};
use actuator_providers::{
    ModelOptions, ProviderError, get_model, get_model_with, register_provider, registered_providers,
};

/// A model that answers with its own name and the key its options gave.
fn echo(name: &str, options: &ModelOptions) -> Arc<dyn Model> {
    let answer = format!(
        "{name} with key {}",
        options
            .api_key
            .clone()
            .or_else(|| options.env_var("BEDROCKISH_KEY"))
            .unwrap_or_default()
    );
    let model_name = name.to_owned();
    Arc::new(FunctionModel::new(name, move |_, _| {
        Ok(ModelOutput::from_content(
            model_name.clone(),
            answer.clone(),
        ))
    }))
}

#[tokio::test]
async fn a_registered_prefix_resolves_through_get_model() {
    register_provider("bedrockish", |name, options| Ok(echo(name, options))).unwrap();

    let model = get_model_with(
        "bedrockish/anthropic.claude-3-haiku",
        &ModelOptions::new().env(|var| (var == "BEDROCKISH_KEY").then(|| "from-env".to_owned())),
    )
    .unwrap();
    assert_eq!(model.name(), "bedrockish/anthropic.claude-3-haiku");
    let input = [ChatMessage::user("hi")];
    let out = model
        .generate(actuator_model::GenerateRequest::new(&input))
        .await
        .unwrap();
    assert_eq!(
        out.completion(),
        "bedrockish/anthropic.claude-3-haiku with key from-env"
    );

    // The options reach the factory, by every entry point.
    let options = ModelOptions::new().api_key("in-code");
    let model = options.build("bedrockish/m").unwrap();
    assert_eq!(model.name(), "bedrockish/m");
    assert!(get_model("bedrockish/m").is_ok());
    assert!(registered_providers().iter().any(|p| p == "bedrockish"));
}

#[test]
fn a_prefix_is_registered_once() {
    register_provider("twice", |name, options| Ok(echo(name, options))).unwrap();
    let err = register_provider("twice", |_, _| Err("never called".into())).unwrap_err();
    assert_eq!(
        err,
        ProviderError::DuplicateProvider {
            provider: "twice".into()
        }
    );
    let message = err.to_string();
    assert!(message.contains("`twice`"), "{message}");
    assert!(message.contains("already registered"), "{message}");
    // The first registration still holds.
    assert_eq!(get_model("twice/m").unwrap().name(), "twice/m");
    // A built-in prefix is taken too.
    assert!(matches!(
        register_provider("anthropic", |_, _| Err("never called".into())),
        Err(ProviderError::DuplicateProvider { ref provider }) if provider == "anthropic"
    ));
}

#[test]
fn an_unknown_prefix_lists_the_known_ones_sorted_with_the_registered_ones() {
    register_provider("zz-listed", |name, options| Ok(echo(name, options))).unwrap();
    register_provider("aa-listed", |name, options| Ok(echo(name, options))).unwrap();
    let err = get_model("palm/bison").err().unwrap();
    let ProviderError::UnknownProvider {
        provider,
        model,
        known,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!((provider.as_str(), model.as_str()), ("palm", "palm/bison"));
    for usage in [
        "aa-listed/<model>",
        "zz-listed/<model>",
        "openai/<model>",
        "openai-api/<service>/<model>",
        "mockllm/model",
    ] {
        assert!(known.iter().any(|k| k == usage), "{usage} in {known:?}");
    }
    let prefixes: Vec<&str> = known.iter().map(|k| k.split('/').next().unwrap()).collect();
    assert!(prefixes.is_sorted(), "{prefixes:?}");
    let message = err.to_string();
    assert!(message.contains("aa-listed/<model>"), "{message}");
    assert!(message.contains("register_provider"), "{message}");
}

#[derive(Debug, thiserror::Error)]
#[error("no credentials in the profile")]
struct NoCredentials {
    #[source]
    source: std::io::Error,
}

#[test]
fn a_factorys_error_is_returned_with_its_source() {
    register_provider("failing", |_, _| {
        Err(NoCredentials {
            source: std::io::Error::other("~/.aws/credentials not found"),
        })?
    })
    .unwrap();
    let err = get_model("failing/m").err().unwrap();
    assert!(
        matches!(&err, ProviderError::Factory { provider, model, .. } if provider == "failing" && model == "failing/m"),
        "{err:?}"
    );
    // The message names the provider and model; the cause is the source, not repeated.
    let message = err.to_string();
    assert!(message.contains("`failing`"), "{message}");
    assert!(!message.contains("no credentials"), "{message}");
    let source = err.source().unwrap();
    assert_eq!(source.to_string(), "no credentials in the profile");
    let cause = source.downcast_ref::<ErrorCause>().unwrap();
    assert!(cause.downcast_ref::<NoCredentials>().is_some());
    // ... and the cause's own source after it.
    assert_eq!(
        source.source().unwrap().to_string(),
        "~/.aws/credentials not found"
    );

    // A ProviderError from the factory is passed on as it is.
    register_provider("keyless", |_, _| {
        Err(ProviderError::MissingApiKey {
            provider: "Keyless".into(),
            var: "KEYLESS_API_KEY".into(),
        })?
    })
    .unwrap();
    assert_eq!(
        get_model("keyless/m").err().unwrap(),
        ProviderError::MissingApiKey {
            provider: "Keyless".into(),
            var: "KEYLESS_API_KEY".into()
        }
    );
}
