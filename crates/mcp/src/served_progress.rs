//! The progress of a served call: what the tool reports ([`ToolContext::report_progress`]
//! (actuator_tool_core::ToolContext::report_progress)) goes to the client as
//! `notifications/progress` with the call's progress token, when the client asked for progress.

use std::time::Duration;

use actuator_tool_core::{ProgressReport, ProgressSink, ToolProgress};
use rmcp::Peer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RoleServer;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Reports waiting to be sent, at most: a client that reads slowly loses reports, never the
/// call, and the server's memory does not grow with a tool that reports in a loop.
const QUEUED: usize = 64;

/// How long the server waits, once the call is done, for the reports still queued to go out
/// (they go before the result, as a client expects).
const FLUSH: Duration = Duration::from_secs(1);

struct Forward(mpsc::Sender<ProgressReport>);

impl ProgressSink for Forward {
    fn progress(&self, _tool: &str, _call_id: &str, report: ProgressReport) {
        // Full: dropped (see QUEUED). Closed: the call is over.
        let _ = self.0.try_send(report);
    }
}

/// The progress of one served call.
pub(crate) struct CallProgress {
    /// What the tool's context holds.
    pub(crate) sink: ToolProgress,
    sending: JoinHandle<()>,
}

impl CallProgress {
    /// Forwards the call's reports to `peer` under `token`.
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (tx, mut rx) = mpsc::channel::<ProgressReport>(QUEUED);
        let sending = tokio::spawn(async move {
            while let Some(report) = rx.recv().await {
                let mut param = ProgressNotificationParam::new(token.clone(), report.progress);
                param.total = report.total;
                param.message = report.message;
                if let Err(e) = peer.notify_progress(param).await {
                    tracing::debug!("a progress notification could not be sent: {e}");
                    return;
                }
            }
        });
        CallProgress {
            sink: ToolProgress::new(Forward(tx)),
            sending,
        }
    }

    /// Once the call is done: lets the queued reports go out (bounded by [`FLUSH`]).
    pub(crate) async fn finish(self) {
        let CallProgress { sink, mut sending } = self;
        drop(sink);
        if tokio::time::timeout(FLUSH, &mut sending).await.is_err() {
            // A tool kept its context (and so the sender) past the call: stop sending.
            sending.abort();
        }
    }
}
