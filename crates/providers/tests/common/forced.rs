//! A model wrapper that forces the tool choice turn by turn: a 135M-parameter model needs it,
//! and the server then constrains its output to the named tool's schema. Everything else (the
//! arguments, the answer) is the model's. Shared by the real-server tests here and the
//! facade's tools-on-a-real-model test.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actuator_model::{
    BoxFuture, GenerateRequest, Model, ModelError, ModelOutput, resolve_tool_choice,
};
use actuator_tool_core::ToolChoice;

/// Forces the tool choice of turn `n` to the tool `order[n]`; later turns keep the caller's.
pub struct Forced {
    inner: Arc<dyn Model>,
    order: Vec<&'static str>,
    turn: AtomicUsize,
}

impl Forced {
    /// Wraps `inner`, forcing `order` turn by turn.
    pub fn new(inner: Arc<dyn Model>, order: Vec<&'static str>) -> Self {
        Forced {
            inner,
            order,
            turn: AtomicUsize::new(0),
        }
    }

    /// The generations so far.
    pub fn turns(&self) -> usize {
        self.turn.load(Ordering::SeqCst)
    }
}

impl Model for Forced {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        let turn = self.turn.fetch_add(1, Ordering::SeqCst);
        let choice = self.order.get(turn).map_or_else(
            || request.tool_choice.clone(),
            |name| ToolChoice::function(*name),
        );
        Box::pin(async move {
            let (offered, choice) = resolve_tool_choice(request.tools, &choice);
            // The rest of the request (input, config, observer) passes on as it came.
            let request = request.tools(&offered).tool_choice(&choice);
            self.inner.generate(request).await
        })
    }
}
