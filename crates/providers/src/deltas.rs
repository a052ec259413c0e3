//! What a streaming parser reports while it reads: each delta goes to the request's observer
//! when it wants deltas ([`GenerateRequest::delta_observer`]), and nowhere, at the cost of one
//! branch, when it does not.

use std::fmt;

use actuator_model::{GenerateObserver, GenerateRequest, StreamDelta, ToolCallDelta};

/// The observer a stream's deltas go to, if any.
#[derive(Clone, Copy, Default)]
pub(crate) struct Deltas<'o>(Option<&'o dyn GenerateObserver>);

impl fmt::Debug for Deltas<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Deltas(wanted)"
        } else {
            "Deltas(none)"
        })
    }
}

impl<'o> Deltas<'o> {
    /// The deltas `request`'s observer wants (asked once, for the whole attempt).
    pub(crate) fn of(request: &GenerateRequest<'o>) -> Self {
        Deltas(request.delta_observer())
    }

    /// Whether anybody hears them: parsers that must build something to report a delta
    /// (a lookup, a copy) ask first.
    pub(crate) fn wanted(&self) -> bool {
        self.0.is_some()
    }

    pub(crate) fn text(&self, text: &str) {
        if let Some(o) = self.0.filter(|_| !text.is_empty()) {
            o.delta(&StreamDelta::Text(text));
        }
    }

    pub(crate) fn reasoning(&self, reasoning: &str) {
        if let Some(o) = self.0.filter(|_| !reasoning.is_empty()) {
            o.delta(&StreamDelta::Reasoning(reasoning));
        }
    }

    pub(crate) fn tool_call(&self, id: Option<&str>, function: Option<&str>, arguments: &str) {
        if let Some(o) = self.0 {
            let function = function.filter(|f| !f.is_empty());
            o.delta(&StreamDelta::ToolCall(ToolCallDelta::new(
                id, function, arguments,
            )));
        }
    }
}
