//! The test models that ship with the library: [`ScriptedModel`] (prepared outputs in order)
//! and [`FunctionModel`] (outputs computed from the conversation).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use actuator_tool_core::{BoxFuture, ToolInfo};

use actuator_tool_core::Content;

use crate::error::ModelError;
use crate::message::ChatMessage;
use crate::message::MessageContent;
use crate::model::Model;
use crate::observe::{GenerateObserver, StreamDelta, ToolCallDelta};
use crate::output::ModelOutput;
use crate::request::GenerateRequest;

/// A model that returns prepared outputs in order: the embedded default of the examples and
/// the workhorse of tests. Running out is a [`ModelError::ScriptExhausted`]. When the
/// request's observer wants deltas ([`GenerateObserver::wants_deltas`]), each output is first
/// reported as a streaming provider would: reasoning, text a word at a time, tool calls.
///
/// ```
/// use actuator_model::{ChatMessage, GenerateRequest, Model, ModelOutput, ScriptedModel};
/// # tokio_test_block(async {
/// let model = ScriptedModel::new([ModelOutput::from_content("scripted", "hello")]);
/// let input = [ChatMessage::user("hi")];
/// let out = model.generate(GenerateRequest::new(&input)).await.unwrap();
/// assert_eq!(out.completion(), "hello");
/// assert!(model.generate(GenerateRequest::new(&input)).await.is_err());
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Debug)]
pub struct ScriptedModel {
    name: String,
    state: Mutex<ScriptState>,
}

#[derive(Debug)]
struct ScriptState {
    outputs: VecDeque<ModelOutput>,
    scripted: usize,
    calls: usize,
}

impl ScriptedModel {
    /// A model named `scripted` that returns `outputs` in order.
    pub fn new(outputs: impl IntoIterator<Item = ModelOutput>) -> Self {
        Self::named("scripted", outputs)
    }

    /// A scripted model with a name.
    pub fn named(name: impl Into<String>, outputs: impl IntoIterator<Item = ModelOutput>) -> Self {
        let outputs: VecDeque<ModelOutput> = outputs.into_iter().collect();
        ScriptedModel {
            name: name.into(),
            state: Mutex::new(ScriptState {
                scripted: outputs.len(),
                outputs,
                calls: 0,
            }),
        }
    }

    /// How many generations were requested so far.
    pub fn calls(&self) -> usize {
        self.state.lock().map_or(0, |s| s.calls)
    }

    /// How many outputs are left.
    pub fn remaining(&self) -> usize {
        self.state.lock().map_or(0, |s| s.outputs.len())
    }
}

impl Model for ScriptedModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        let result = match self.state.lock() {
            Ok(mut state) => {
                state.calls += 1;
                match state.outputs.pop_front() {
                    Some(mut out) => {
                        stamp_model(&mut out, &self.name);
                        if let Some(observer) = request.delta_observer() {
                            stream_output(&out, observer);
                        }
                        Ok(out)
                    }
                    None => Err(ModelError::ScriptExhausted {
                        call: state.calls,
                        scripted: state.scripted,
                    }),
                }
            }
            Err(_) => Err(ModelError::other("the scripted model's lock was poisoned")),
        };
        Box::pin(std::future::ready(result))
    }
}

/// Reports `out` as a streaming provider would, to an observer that wants deltas: its
/// reasoning, then its text a word at a time, then each tool call's arguments (named first).
fn stream_output(out: &ModelOutput, observer: &dyn GenerateObserver) {
    let Some(message) = out.message() else {
        return;
    };
    match &message.content {
        MessageContent::Text(text) => stream_text(text, observer),
        MessageContent::Parts(parts) => {
            for part in parts {
                match part {
                    Content::Reasoning { reasoning, .. } if !reasoning.is_empty() => {
                        observer.delta(&StreamDelta::Reasoning(reasoning));
                    }
                    Content::Text { text, .. } => stream_text(text, observer),
                    _ => {}
                }
            }
        }
    }
    for call in message.tool_calls.iter().flatten() {
        observer.delta(&StreamDelta::ToolCall(ToolCallDelta::new(
            Some(&call.id),
            Some(&call.function),
            call.arguments.as_json(),
        )));
    }
}

/// `text` in pieces that each end after a space (the last takes the rest).
fn stream_text(text: &str, observer: &dyn GenerateObserver) {
    for piece in text.split_inclusive(' ') {
        observer.delta(&StreamDelta::Text(piece));
    }
}

fn stamp_model(out: &mut ModelOutput, name: &str) {
    if out.model.is_empty() {
        out.model = name.into();
    }
    for choice in &mut out.choices {
        if choice.message.model.is_none() {
            choice.message.model = Some(out.model.clone());
        }
    }
}

type GenerateFn =
    dyn Fn(&[ChatMessage], &[Arc<ToolInfo>]) -> Result<ModelOutput, ModelError> + Send + Sync;

/// A model that computes each output from the conversation and the tools on offer.
///
/// ```
/// use actuator_model::{FunctionModel, ModelOutput};
/// // Answers with the number of messages it was shown.
/// let model = FunctionModel::new("counter", |input, _tools| {
///     Ok(ModelOutput::from_content("counter", input.len().to_string()))
/// });
/// # let _ = model;
/// ```
pub struct FunctionModel {
    name: String,
    f: Arc<GenerateFn>,
}

impl std::fmt::Debug for FunctionModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionModel")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl FunctionModel {
    /// A model named `name` whose outputs `f` computes.
    pub fn new(
        name: impl Into<String>,
        f: impl Fn(&[ChatMessage], &[Arc<ToolInfo>]) -> Result<ModelOutput, ModelError>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        FunctionModel {
            name: name.into(),
            f: Arc::new(f),
        }
    }
}

impl Model for FunctionModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        let result = (self.f)(request.input, request.tools).map(|mut out| {
            stamp_model(&mut out, &self.name);
            if let Some(observer) = request.delta_observer() {
                stream_output(&out, observer);
            }
            out
        });
        Box::pin(std::future::ready(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GenerateConfig;
    use crate::model::shared_model;

    fn say(text: &str) -> ModelOutput {
        ModelOutput::from_content("m", text)
    }

    #[tokio::test]
    async fn arc_and_box_of_a_model_are_models_that_forward_to_it() {
        let input = [ChatMessage::user("hi")];
        let config = GenerateConfig::default();
        let inner = Arc::new(ScriptedModel::named("inner", [say("a"), say("b")]));
        let boxed: Box<dyn Model> = Box::new(Arc::clone(&inner));
        let out = boxed
            .generate(GenerateRequest::new(&input).config(&config))
            .await
            .unwrap();
        assert_eq!(boxed.name(), "inner");
        assert_eq!(out.completion(), "a");
        let shared = shared_model(Arc::clone(&inner));
        let out = shared
            .generate(GenerateRequest::new(&input).config(&config))
            .await
            .unwrap();
        assert_eq!(out.completion(), "b");
        assert_eq!(inner.calls(), 2);
    }

    #[test]
    fn shared_model_keeps_an_arc_dyn_model_as_it_is() {
        let shared: Arc<dyn Model> = Arc::new(ScriptedModel::new([]));
        assert!(Arc::ptr_eq(&shared_model(Arc::clone(&shared)), &shared));
    }

    /// Keeps the deltas it hears.
    #[derive(Default)]
    struct Deltas(Mutex<Vec<String>>);

    impl GenerateObserver for Deltas {
        fn retrying(&self, _: &crate::RetryReport) {}
        fn waited(&self, _: &crate::RetryReport, _: std::time::Duration) {}
        fn wants_deltas(&self) -> bool {
            true
        }
        fn delta(&self, delta: &StreamDelta<'_>) {
            let text = match delta {
                StreamDelta::Text(t) => format!("text:{t}"),
                StreamDelta::Reasoning(r) => format!("reasoning:{r}"),
                StreamDelta::ToolCall(c) => {
                    format!(
                        "call:{}:{}:{}",
                        c.id.unwrap(),
                        c.function.unwrap(),
                        c.arguments
                    )
                }
            };
            self.0.lock().unwrap().push(text);
        }
    }

    #[tokio::test]
    async fn a_scripted_output_streams_to_an_observer_that_wants_deltas_and_only_then() {
        let mut out = ModelOutput::from_content("m", "two words");
        out.choices[0].message.tool_calls = Some(vec![crate::ToolCall::new(
            "call_1",
            "add",
            serde_json::json!({"x": 1}),
        )]);
        let model = ScriptedModel::new([out.clone(), out]);
        let heard = Deltas::default();
        let streamed = model
            .generate(GenerateRequest::new(&[]).observer(&heard))
            .await
            .unwrap();
        assert_eq!(streamed.completion(), "two words");
        assert_eq!(
            *heard.0.lock().unwrap(),
            ["text:two ", "text:words", r#"call:call_1:add:{"x":1}"#]
        );
        // An observer that does not want deltas hears none.
        struct Deaf;
        impl GenerateObserver for Deaf {
            fn retrying(&self, _: &crate::RetryReport) {}
            fn waited(&self, _: &crate::RetryReport, _: std::time::Duration) {}
            fn delta(&self, _: &StreamDelta<'_>) {
                panic!("a delta reached an observer that did not want deltas");
            }
        }
        model
            .generate(GenerateRequest::new(&[]).observer(&Deaf))
            .await
            .unwrap();
        // A function model streams what it computes the same way.
        let function = FunctionModel::new("f", |_, _| Ok(ModelOutput::from_content("f", "a b")));
        let heard = Deltas::default();
        function
            .generate(GenerateRequest::new(&[]).observer(&heard))
            .await
            .unwrap();
        assert_eq!(*heard.0.lock().unwrap(), ["text:a ", "text:b"]);
    }
}
