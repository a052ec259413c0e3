//! Streamed `generateContent` (`:streamGenerateContent?alt=sse`): each event is a piece of the
//! response, joined into the same [`ModelOutput`] a whole response gives, its text reported as
//! it arrives to an observer that wants it.

use actuator_model::ModelOutput;
use serde_json::Value;

use super::response::{Aggregate, Response, output};
use crate::deltas::Deltas;
use crate::error::{ProviderError, snippet};
use crate::http::{Failure, SseSink, StatusFailure};

/// The pieces of one streamed response so far.
#[derive(Debug, Default)]
pub(crate) struct ContentStream<'o> {
    provider: String,
    deltas: Deltas<'o>,
    aggregate: Aggregate,
}

impl<'o> ContentStream<'o> {
    pub(crate) fn new(provider: &str, deltas: Deltas<'o>) -> Self {
        ContentStream {
            provider: provider.to_owned(),
            deltas,
            aggregate: Aggregate::default(),
        }
    }

    /// The joined output.
    pub(crate) fn finish(self, model_name: &str) -> ModelOutput {
        output(self.aggregate.into_response(), model_name)
    }
}

impl SseSink for ContentStream<'_> {
    fn event(&mut self, _event: &str, data: &str) -> Result<bool, Failure> {
        if data.trim().is_empty() {
            return Ok(false);
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            Failure::Other(ProviderError::MalformedResponse {
                provider: self.provider.clone(),
                message: format!("a stream event is not JSON ({e}): {}", snippet(data, 300)),
            })
        })?;
        // An error in the stream is the error body a failed request has.
        if let Some(error) = value.get("error") {
            let status = error["code"]
                .as_u64()
                .and_then(|c| u16::try_from(c).ok())
                .unwrap_or(500);
            let kind = error["status"].as_str().map(str::to_owned);
            return Err(Failure::Status(StatusFailure {
                status,
                retry_after: None,
                message: error["message"]
                    .as_str()
                    .unwrap_or("the stream ended with an error")
                    .to_owned(),
                code: kind.clone(),
                kind,
            }));
        }
        let piece: Response = serde_json::from_value(value).map_err(|e| {
            Failure::Other(ProviderError::MalformedResponse {
                provider: self.provider.clone(),
                message: format!(
                    "a stream event is not a generateContent response ({e}): {}",
                    snippet(data, 300)
                ),
            })
        })?;
        let calls_before = piece
            .candidates
            .first()
            .and_then(|c| c.content.as_ref())
            .map(|c| {
                c.parts
                    .iter()
                    .filter_map(|p| p.function_call.as_ref())
                    .map(|f| (f.id.clone(), f.name.clone(), f.args.to_string()))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        for (thought, text) in self.aggregate.push(piece) {
            if thought {
                self.deltas.reasoning(&text);
            } else {
                self.deltas.text(&text);
            }
        }
        // A call arrives whole in one piece.
        for (id, name, args) in calls_before {
            self.deltas.tool_call(id.as_deref(), Some(&name), &args);
        }
        Ok(false)
    }

    fn complete(&self) -> bool {
        self.aggregate.finished()
    }
}
