//! What a served call's tool can reach of its MCP session ([`CallSession`]): its progress
//! goes out as `notifications/progress` with the call's progress token (when the client
//! asked for progress), its logs as `notifications/message` at or above the session's
//! `logging/setLevel`, and it can ask the client's model (`sampling/createMessage`) and the
//! client's user (`elicitation/create`) when the client declared those capabilities.

// Sampling, logging and resources/subscribe are deprecated by SEP-2577 for the protocol
// version after 2025-11-25; every version this crate speaks has them.
#![allow(deprecated)]

use std::sync::Arc;
use std::time::Duration;

use actuator_tool_core::{
    CallHost, ElicitationAction, ElicitationRequest, ElicitationResult, HostError, HostFuture,
    LogEntry, ProgressReport, ProgressSink, SamplingRequest, SamplingResult, ToolHost,
    ToolProgress,
};
use rmcp::Peer;
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken,
};
use rmcp::service::RoleServer;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::sampling::{request_to_wire, result_from_wire};
use crate::served_session::SessionState;

/// Notifications waiting to be sent, at most: a client that reads slowly loses progress
/// reports and log entries, never the call, and the server's memory does not grow with a
/// tool that reports in a loop.
const QUEUED: usize = 64;

/// How long the server waits, once the call is done, for the notifications still queued to
/// go out (they go before the result, as a client expects).
const FLUSH: Duration = Duration::from_secs(1);

enum Note {
    Progress(ProgressReport),
    Log(LogEntry),
}

struct Progress(mpsc::Sender<Note>);

impl ProgressSink for Progress {
    fn progress(&self, _tool: &str, _call_id: &str, report: ProgressReport) {
        // Full: dropped (see QUEUED). Closed: the call is over.
        let _ = self.0.try_send(Note::Progress(report));
    }
}

/// The session as the tool sees it.
struct SessionHost {
    notes: mpsc::Sender<Note>,
    peer: Peer<RoleServer>,
    session: Arc<SessionState>,
}

impl ToolHost for SessionHost {
    fn log(&self, _tool: &str, _call_id: &str, entry: LogEntry) -> bool {
        if entry.level < self.session.log_level() {
            return false;
        }
        self.notes.try_send(Note::Log(entry)).is_ok()
    }

    fn sample(&self, request: SamplingRequest) -> HostFuture<'_, SamplingResult> {
        Box::pin(sample(&self.peer, request))
    }

    fn elicit(&self, request: ElicitationRequest) -> HostFuture<'_, ElicitationResult> {
        Box::pin(elicit(&self.peer, request))
    }
}

async fn sample(
    peer: &Peer<RoleServer>,
    request: SamplingRequest,
) -> Result<SamplingResult, HostError> {
    let declared = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.sampling.is_some());
    if !declared {
        return Err(HostError::Unsupported {
            what: "sampling",
            reason: "the MCP client did not declare the sampling capability".into(),
        });
    }
    let params = request_to_wire(&request);
    let params: CreateMessageRequestParams = serde_json::from_value(params)
        .map_err(|e| HostError::failed_from("the sampling request could not be built", e))?;
    let answer = peer
        .create_message(params)
        .await
        .map_err(|e| HostError::failed_from("the MCP client's sampling failed", e))?;
    let answer = serde_json::to_value(&answer)
        .map_err(|e| HostError::failed_from("the sampling answer could not be read", e))?;
    Ok(result_from_wire(&answer))
}

async fn elicit(
    peer: &Peer<RoleServer>,
    request: ElicitationRequest,
) -> Result<ElicitationResult, HostError> {
    let declared = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.elicitation.is_some());
    if !declared {
        return Err(HostError::Unsupported {
            what: "elicitation",
            reason: "the MCP client did not declare the elicitation capability".into(),
        });
    }
    // Checked before asking: an answer to a schema we cannot check would be taken on trust.
    let validator = jsonschema::validator_for(&request.requested_schema).map_err(|e| {
        HostError::failed(format!(
            "the elicitation schema is not valid JSON Schema: {e}"
        ))
    })?;
    let params: ElicitRequestParams = serde_json::from_value(json!({
        "mode": "form",
        "message": request.message,
        "requestedSchema": request.requested_schema,
    }))
    .map_err(|e| {
        HostError::failed_from(
            "the elicitation schema is not one MCP allows (a flat object of strings, numbers, \
             booleans and enums)",
            e,
        )
    })?;
    let answer = peer
        .create_elicitation(params)
        .await
        .map_err(|e| HostError::failed_from("the MCP client's elicitation failed", e))?;
    let answer = serde_json::to_value(&answer)
        .map_err(|e| HostError::failed_from("the elicitation answer could not be read", e))?;
    let action: ElicitationAction = serde_json::from_value(answer["action"].clone())
        .map_err(|e| HostError::failed_from("the elicitation answer has no valid action", e))?;
    match action {
        ElicitationAction::Accept => {
            let content = answer["content"].clone();
            // The client is not trusted: its answer must match what was asked.
            if let Err(e) = validator.validate(&content) {
                return Err(HostError::failed(format!(
                    "the client's answer does not match the requested schema: {e}"
                )));
            }
            match content {
                Value::Object(content) => Ok(ElicitationResult::accept(content)),
                _ => Err(HostError::failed(
                    "the client accepted without an answer object",
                )),
            }
        }
        ElicitationAction::Decline => Ok(ElicitationResult::decline()),
        ElicitationAction::Cancel => Ok(ElicitationResult::cancel()),
    }
}

/// The session of one served call.
pub(crate) struct CallSession {
    /// What the tool's context holds: its host, and its progress sink when the client asked
    /// for progress.
    pub(crate) host: CallHost,
    pub(crate) progress: Option<ToolProgress>,
    sending: JoinHandle<()>,
}

impl CallSession {
    /// Opens the call's session with `peer`; progress goes out under `token` when given.
    pub(crate) fn start(
        peer: Peer<RoleServer>,
        token: Option<ProgressToken>,
        session: Arc<SessionState>,
    ) -> Self {
        let (tx, mut rx) = mpsc::channel::<Note>(QUEUED);
        let notify = peer.clone();
        let progress_token = token.clone();
        let sending = tokio::spawn(async move {
            while let Some(note) = rx.recv().await {
                let sent = match note {
                    Note::Progress(report) => {
                        let Some(token) = &progress_token else {
                            continue;
                        };
                        let mut param =
                            ProgressNotificationParam::new(token.clone(), report.progress);
                        param.total = report.total;
                        param.message = report.message;
                        notify.notify_progress(param).await
                    }
                    Note::Log(entry) => {
                        let mut param = json!({"level": entry.level.as_str(), "data": entry.data});
                        if let Some(logger) = entry.logger {
                            param["logger"] = json!(logger);
                        }
                        match serde_json::from_value::<LoggingMessageNotificationParam>(param) {
                            Ok(param) => notify.notify_logging_message(param).await,
                            Err(e) => {
                                tracing::debug!("a log entry could not be sent: {e}");
                                continue;
                            }
                        }
                    }
                };
                if let Err(e) = sent {
                    tracing::debug!("a notification could not be sent: {e}");
                    return;
                }
            }
        });
        CallSession {
            progress: token.map(|_| ToolProgress::new(Progress(tx.clone()))),
            host: CallHost::new(SessionHost {
                notes: tx,
                peer,
                session,
            }),
            sending,
        }
    }

    /// Once the call is done: lets the queued notifications go out (bounded by [`FLUSH`]).
    pub(crate) async fn finish(self) {
        let CallSession {
            host,
            progress,
            mut sending,
        } = self;
        drop(host);
        drop(progress);
        if tokio::time::timeout(FLUSH, &mut sending).await.is_err() {
            // A tool kept its context (and so a sender) past the call: stop sending.
            sending.abort();
        }
    }
}
