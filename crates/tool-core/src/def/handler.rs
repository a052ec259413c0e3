//! [`ToolHandler`]: what runs when a tool is called, and the one future type.

use std::future::Future;
use std::pin::Pin;

use crate::args::ToolArgs;
use crate::content::{IntoToolOutput, ToolOutput};
use crate::context::ToolContext;
use crate::error::ToolFailure;

/// A boxed, sendable future borrowing for `'a` (`'static` where it owns everything). The one
/// future type of every Actuator trait: handlers, models, agents, approvers.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What runs when a tool is called: it receives the (already validated) arguments and returns
/// the output or a failure.
///
/// Any `Fn(ToolArgs, ToolContext) -> impl Future<Output = Result<impl IntoToolOutput,
/// ToolFailure>>` is a handler.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool handler",
    note = "a handler is a `Fn(ToolArgs, ToolContext) -> impl Future<Output = Result<impl IntoToolOutput, ToolFailure>> + Send + Sync + 'static`"
)]
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the call.
    fn call(
        &self,
        args: ToolArgs,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolFailure>>;
}

impl<F, Fut, R> ToolHandler for F
where
    F: Fn(ToolArgs, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ToolFailure>> + Send + 'static,
    R: IntoToolOutput,
{
    fn call(
        &self,
        args: ToolArgs,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolFailure>> {
        let fut = self(args, ctx);
        Box::pin(async move { fut.await?.into_tool_output() })
    }
}
