//! What a server may ask of our client: its model (`sampling/createMessage`), its user
//! (`elicitation/create`), its roots (`roots/list`). Each is answered only when the
//! [`McpServer`](crate::McpServer) was given a handler, and only then declared as a
//! capability; a server that asks anyway gets "method not found".
//!
//! An elicitation answer is completed and checked before it goes back
//! ([`ElicitationRequest::complete`](actuator_tool_core::ElicitationRequest::complete)): fields
//! the handler left out take the schema's defaults (SEP-1034), and the answer must match the
//! schema the server asked with, so a handler's mistake is an error here, not a surprise on
//! the server.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use actuator_tool_core::{
    ElicitationHandler, HostError, HostFuture, SamplingRequest, SamplingResult,
};

/// Answers a server's `sampling/createMessage` (for example with the agent's model).
/// Any `Fn(SamplingRequest) -> impl Future<Output = Result<SamplingResult, HostError>>` is
/// one.
pub trait SamplingHandler: Send + Sync + 'static {
    /// The answer to `request` from the server named `server`.
    fn sample(&self, server: &str, request: SamplingRequest)
    -> HostFuture<'static, SamplingResult>;
}

impl<F, Fut> SamplingHandler for F
where
    F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<SamplingResult, HostError>> + Send + 'static,
{
    fn sample(
        &self,
        _server: &str,
        request: SamplingRequest,
    ) -> HostFuture<'static, SamplingResult> {
        Box::pin(self(request))
    }
}

/// A root the client tells servers about (`roots/list`): a directory they may work in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpRoot {
    /// Its `file://` URI.
    pub uri: String,
    /// A name to show.
    pub name: Option<String>,
}

impl McpRoot {
    /// The directory `path` as a root (`file://` + its absolute path).
    ///
    /// ```
    /// use actuator_mcp::McpRoot;
    /// let root = McpRoot::directory("/work/repo").name("repo");
    /// assert_eq!(root.uri, "file:///work/repo");
    /// ```
    pub fn directory(path: impl AsRef<std::path::Path>) -> Self {
        McpRoot {
            uri: format!("file://{}", path.as_ref().display()),
            name: None,
        }
    }

    /// Names it.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// The handlers an [`McpServer`](crate::McpServer) was given.
#[derive(Clone, Default)]
pub(crate) struct ServerRequests {
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) roots: Option<Arc<[McpRoot]>>,
}

impl fmt::Debug for ServerRequests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerRequests")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots)
            .finish()
    }
}

impl PartialEq for ServerRequests {
    fn eq(&self, other: &Self) -> bool {
        fn same<T: ?Sized>(a: &Option<Arc<T>>, b: &Option<Arc<T>>) -> bool {
            match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
        }
        same(&self.sampling, &other.sampling)
            && same(&self.elicitation, &other.elicitation)
            && self.roots == other.roots
    }
}

impl Eq for ServerRequests {}
