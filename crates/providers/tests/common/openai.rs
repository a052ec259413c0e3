//! Helpers for the OpenAI stub tests.

use std::sync::Arc;
use std::time::Duration;

use actuator_model::{
    ChatMessage, GenerateConfig, GenerateRequest, Model, ModelError, ModelOutput,
};
use actuator_providers::{ModelOptions, ProviderError, RetryPolicy};
use actuator_tool_core::{ToolChoice, ToolInfo};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub fn fast_retries(attempts: u32) -> RetryPolicy {
    RetryPolicy::default()
        .max_attempts(attempts)
        .backoff(Duration::from_millis(5), Duration::from_millis(20))
}

pub fn model_at(url: &str, options: ModelOptions) -> Arc<dyn Model> {
    options
        .api_key("sk-test")
        .base_url(format!("{url}/v1"))
        .env(|_| None)
        .build("openai/gpt-test")
        .unwrap()
}

pub async fn stub(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

pub async fn generate(
    model: &dyn Model,
    input: &[ChatMessage],
    tools: &[Arc<ToolInfo>],
    choice: &ToolChoice,
    config: &GenerateConfig,
) -> Result<ModelOutput, ModelError> {
    let request = GenerateRequest::new(input)
        .tools(tools)
        .tool_choice(choice)
        .config(config);
    model.generate(request).await
}

pub async fn ask(model: &dyn Model) -> Result<ModelOutput, ModelError> {
    generate(
        model,
        &[ChatMessage::user("Hi")],
        &[],
        &ToolChoice::Auto,
        &GenerateConfig::default(),
    )
    .await
}

pub fn provider_error(err: &ModelError) -> &ProviderError {
    err.downcast_ref::<ProviderError>()
        .unwrap_or_else(|| panic!("not a ProviderError: {err:?}"))
}
