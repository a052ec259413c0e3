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
    ElicitationAction, ElicitationHandler, ElicitationRequest, ElicitationResult, HostError,
    HostFuture, SamplingRequest, SamplingResult,
};

use crate::callers::Callers;
use crate::sampling_policy::{SamplingDecision, SamplingPolicy, approval_question};

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
    /// Whether requests made during a call go to the run that made it.
    pub(crate) to_calling_run: bool,
    pub(crate) sampling_policy: Option<Arc<dyn SamplingPolicy>>,
}

/// Why a request was refused before anyone answered it (the server reads it).
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) String);

impl ServerRequests {
    /// Whether the `sampling` capability is declared.
    pub(crate) fn answers_sampling(&self) -> bool {
        self.sampling.is_some() || self.to_calling_run
    }

    /// Whether the `elicitation` capability is declared.
    pub(crate) fn answers_elicitation(&self) -> bool {
        self.elicitation.is_some() || self.to_calling_run
    }

    /// Answers a sampling request: the policy first, then the calling run's model (when
    /// routed and one run is calling) or the handler.
    pub(crate) async fn sample(
        &self,
        server: &str,
        callers: &Callers,
        request: SamplingRequest,
    ) -> Result<Result<SamplingResult, HostError>, Refused> {
        let decision = self
            .sampling_policy
            .as_ref()
            .map_or(SamplingDecision::Allow, |p| p.decide(server, &request));
        match decision {
            SamplingDecision::Allow => {}
            SamplingDecision::Deny(reason) => return Err(Refused(reason)),
            SamplingDecision::Ask => {
                let asked = approval_question(server, &request);
                let answer = self.elicit(server, callers, asked).await;
                let allowed = matches!(
                    &answer,
                    Ok(ElicitationResult { action: ElicitationAction::Accept, content: Some(c), .. })
                        if c.get("allow").and_then(serde_json::Value::as_bool) == Some(true)
                );
                if !allowed {
                    let why = match answer {
                        Ok(_) => "the person asked did not allow it".to_owned(),
                        Err(e) => format!("nobody could approve it: {e}"),
                    };
                    return Err(Refused(why));
                }
            }
        }
        Ok(match self.route(callers, "sampling") {
            Some(Ok(host)) => host.host().sample(request).await,
            Some(Err(e)) if self.sampling.is_none() => Err(e),
            _ => match &self.sampling {
                Some(handler) => handler.sample(server, request).await,
                None => Err(HostError::Unsupported {
                    what: "sampling",
                    reason: "this client answers no sampling requests".into(),
                }),
            },
        })
    }

    /// Answers an elicitation: the calling run's person (when routed and one run is
    /// calling) or the handler. Not yet completed with defaults nor checked.
    pub(crate) async fn elicit(
        &self,
        server: &str,
        callers: &Callers,
        request: ElicitationRequest,
    ) -> Result<ElicitationResult, HostError> {
        match self.route(callers, "elicitation") {
            Some(Ok(host)) => host.host().elicit(request).await,
            Some(Err(e)) if self.elicitation.is_none() => Err(e),
            _ => match &self.elicitation {
                Some(handler) => handler.elicit(server, request).await,
                None => Err(HostError::Unsupported {
                    what: "elicitation",
                    reason: "this client answers no elicitation requests".into(),
                }),
            },
        }
    }

    fn route(
        &self,
        callers: &Callers,
        what: &'static str,
    ) -> Option<Result<actuator_tool_core::CallHost, HostError>> {
        self.to_calling_run.then(|| callers.caller(what))
    }
}

impl fmt::Debug for ServerRequests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerRequests")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots)
            .field("to_calling_run", &self.to_calling_run)
            .field("sampling_policy", &self.sampling_policy.is_some())
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
            && self.to_calling_run == other.to_calling_run
            && same(&self.sampling_policy, &other.sampling_policy)
    }
}

impl Eq for ServerRequests {}
