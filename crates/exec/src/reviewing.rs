//! The executor's side of review and canonical arguments: a call's arguments canonicalised
//! before approval (step 4b of the pipeline), and an executed call's result reviewed before the
//! model reads it (step 9).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use actuator_events::ReviewEvent;
use actuator_model::{MessageContent, ToolArguments, ToolCall, ToolCallError};
use actuator_tool_core::__private::panic_message;
use actuator_tool_core::{
    CanonicalArguments, FatalToolError, ToolDef, ToolError, ToolOutput, truncate_tool_output,
};
use futures_util::FutureExt;
use serde_json::{Map, Value};

use crate::approval::default_view;
use crate::call::{Attempt, ReviewList, Runner, Stop};
use crate::pipeline::{Failed, Landed, object, tool_view};
use crate::review::{ReviewDecision, ReviewRequest, ReviewStop, apply_review_policies};

/// A call with its canonical arguments, and those arguments as the tool will take them.
pub(crate) struct Canonical {
    pub(crate) call: ToolCall,
    pub(crate) arguments: Arc<Value>,
}

impl Runner<'_> {
    /// The call with `canonical(arguments)` (step 4b), checked against the tool's schema again;
    /// a canonicaliser's error is the model's, its panic stops the run as a tool's does.
    pub(crate) fn canonicalise(
        &self,
        call: &ToolCall,
        def: &ToolDef,
        canonical: &CanonicalArguments,
        arguments: &Map<String, Value>,
    ) -> Result<Box<Canonical>, Failed> {
        let fail = |e: ToolError| Failed::tool(e, self.limit_for(Some(def)));
        let map = std::panic::catch_unwind(AssertUnwindSafe(|| canonical.apply(arguments)))
            .map_err(|payload| {
                Failed::stop(Stop::Fatal(FatalToolError::panic(format!(
                    "the canonical arguments of tool '{}' panicked: {}",
                    call.function,
                    panic_message(payload.as_ref())
                ))))
            })?
            .map_err(fail)?;
        let mut canonical_call = call.clone();
        canonical_call.arguments = ToolArguments::from(&map);
        let value = Value::Object(map);
        actuator_tool_core::check_nesting_depth(&value).map_err(fail)?;
        def.validate(&value).map_err(fail)?;
        Ok(Box::new(Canonical {
            call: canonical_call,
            arguments: Arc::new(value),
        }))
    }

    /// Step 9: the review policies' decision on an executed call's result (`outcome`, which
    /// is a result or a tool error: a call stopped before or while running is not reviewed, as
    /// in the reference). The decisions are recorded on `attempt`; `Err` when a reviewer ends
    /// the run (or panics: contained, and the run stops as for a tool's panic).
    pub(crate) async fn review(
        &self,
        call: &ToolCall,
        arguments: &Arc<Value>,
        def: &ToolDef,
        outcome: &Result<Landed, Failed>,
        attempt: &mut Attempt,
    ) -> Result<(), Failed> {
        let (content, error, truncated, raw) = match outcome {
            Ok(Landed::Output { output, limit }) => {
                let (content, truncated) = truncated_output(&call.function, output, *limit);
                (content, None, truncated, None)
            }
            Ok(Landed::Conversation(out)) => {
                let raw = match &out.content {
                    MessageContent::Text(t) => ToolOutput::Text(t.clone()),
                    MessageContent::Parts(p) => ToolOutput::Content(p.clone()),
                };
                (out.content.clone(), None, None, Some(raw))
            }
            Err(Failed::Tool(err, limit)) => {
                let raw = ToolOutput::Text(err.output().unwrap_or_default().into());
                let (content, truncated) = match err.output() {
                    Some(_) => truncated_output(&call.function, &raw, *limit),
                    None => (MessageContent::default(), None),
                };
                (
                    content,
                    Some(ToolCallError::from(&**err)),
                    truncated,
                    Some(raw),
                )
            }
            Err(_) => return Ok(()),
        };
        let output = match (&raw, outcome) {
            (Some(raw), _) => raw,
            (None, Ok(Landed::Output { output, .. })) => output,
            (None, _) => return Ok(()),
        };
        // A viewer that panics here shows the default view: the call has run, and what the
        // reviewer must see is its result.
        let view = tool_view(call, def, object(arguments)).unwrap_or_else(|_| default_view(call));
        let text = self.assistant.content.text();
        let request = ReviewRequest {
            message: &text,
            call,
            result: &content,
            error: error.as_ref(),
            truncated,
            output,
            view: &view,
            history: self.messages,
        };
        let waited = Instant::now();
        let decided = AssertUnwindSafe(apply_review_policies(&self.options.review, request))
            .catch_unwind()
            .await;
        // Reviewing is waiting, not working (the reference suspends the working limit).
        attempt.approval_wait += waited.elapsed();
        let decided = decided.map_err(|p| {
            Failed::stop(Stop::Fatal(FatalToolError::panic(format!(
                "a reviewer panicked: {}",
                panic_message(p.as_ref())
            ))))
        })?;
        let terminate = decided
            .last()
            .is_some_and(|d| d.review.decision == ReviewDecision::Terminate);
        if self.options.events.is_some() {
            attempt.reviews = Some(Box::new(ReviewList(
                decided
                    .into_iter()
                    .map(|d| {
                        let mut e = ReviewEvent::new(
                            call.id.as_str(),
                            call.function.as_str(),
                            Arc::clone(arguments),
                            d.reviewer,
                            d.review.decision,
                        );
                        e.message.clone_from(&text);
                        e.explanation = d.review.explanation;
                        e.metadata = d.review.metadata;
                        e.span_id.clone_from(&self.options.span_id);
                        e
                    })
                    .collect(),
            )));
        }
        if terminate {
            return Err(Failed::stop(Stop::ReviewTerminated(Box::new(ReviewStop {
                content,
                error,
                truncated,
            }))));
        }
        Ok(())
    }
}

/// The output as the model will read it: truncated to the call's limit (the runner's own
/// truncation, which the result goes through after the review lets it pass).
fn truncated_output(
    function: &str,
    output: &ToolOutput,
    limit: usize,
) -> (MessageContent, Option<(usize, usize)>) {
    match output {
        ToolOutput::Text(text) => match truncate_tool_output(function, text, limit) {
            Some(t) => (
                MessageContent::Text(t.output.into()),
                Some((t.original_bytes, t.limit)),
            ),
            None => (MessageContent::Text(text.clone()), None),
        },
        ToolOutput::Content(parts) => (MessageContent::Parts(parts.clone()), None),
    }
}
