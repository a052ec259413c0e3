//! The pieces of a generation while it streams: the reference's `on_stream` events (text,
//! reasoning and tool-call deltas, and the retry boundary), tagged with the generation they
//! belong to.

use actuator_model::StreamDelta;
use serde::{Deserialize, Serialize};

/// One piece of a streaming generation (the reference's `StreamEvent` union, with its
/// `type` tags and field names).
///
/// ```
/// use actuator_events::StreamEvent;
/// let text = StreamEvent::Text { text: "Hel".into() };
/// assert_eq!(serde_json::to_value(&text).unwrap(), serde_json::json!({"type": "text", "text": "Hel"}));
/// assert!(text.is_delta());
/// assert!(!StreamEvent::Retry { attempt: 2 }.is_delta());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StreamEvent {
    /// Text to append to the generation's text so far.
    Text {
        /// The fragment.
        text: String,
    },
    /// Reasoning to append to the generation's reasoning so far.
    Reasoning {
        /// The fragment.
        reasoning: String,
    },
    /// A fragment of a tool call's arguments (partial JSON: append to the call's earlier
    /// fragments; complete only when the call is).
    ToolCall {
        /// The call's id, when the provider has reported it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The function called, when the provider has reported it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        function: Option<String>,
        /// The fragment.
        #[serde(default)]
        arguments: String,
    },
    /// The provider retries after an attempt that already streamed: discard what this
    /// generation streamed so far; what follows is attempt `attempt` (2 for the first retry).
    Retry {
        /// The attempt about to run (1-based).
        attempt: u32,
    },
}

impl StreamEvent {
    /// Whether this is a delta (text, reasoning, tool call), which a slow subscriber may be
    /// spared, rather than a retry boundary, which it must see.
    pub fn is_delta(&self) -> bool {
        !matches!(self, StreamEvent::Retry { .. })
    }
}

impl StreamEvent {
    /// The owned event of a provider's delta (`None` for a kind of delta this version does
    /// not know).
    ///
    /// ```
    /// use actuator_events::StreamEvent;
    /// use actuator_model::StreamDelta;
    /// let event = StreamEvent::from_delta(&StreamDelta::Text("Hel"));
    /// assert_eq!(event, Some(StreamEvent::Text { text: "Hel".into() }));
    /// ```
    pub fn from_delta(delta: &StreamDelta<'_>) -> Option<Self> {
        Some(match delta {
            StreamDelta::Text(text) => StreamEvent::Text {
                text: (*text).to_owned(),
            },
            StreamDelta::Reasoning(reasoning) => StreamEvent::Reasoning {
                reasoning: (*reasoning).to_owned(),
            },
            StreamDelta::ToolCall(call) => StreamEvent::ToolCall {
                id: call.id.map(str::to_owned),
                function: call.function.map(str::to_owned),
                arguments: call.arguments.to_owned(),
            },
            _ => return None,
        })
    }
}

/// A [`StreamEvent`] of the generation `generation`: the number its
/// [`ModelEvent`](crate::ModelEvent) carries in `generation` (it follows the deltas), unique in
/// the process (a count, not a random id: a generation whose deltas are wanted pays neither an
/// allocation nor a random number for it).
///
/// ```
/// use actuator_events::{ModelStreamEvent, StreamEvent};
/// let event = ModelStreamEvent::new(1, StreamEvent::Reasoning { reasoning: "hmm".into() });
/// let json = serde_json::to_value(&event).unwrap();
/// assert_eq!(json, serde_json::json!({"generation": 1, "type": "reasoning", "reasoning": "hmm"}));
/// assert_eq!(serde_json::from_value::<ModelStreamEvent>(json).unwrap(), event);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelStreamEvent {
    /// The generation it belongs to.
    pub generation: u64,
    /// What streamed.
    #[serde(flatten)]
    pub stream: StreamEvent,
}

impl ModelStreamEvent {
    /// `stream`, a piece of generation `generation`.
    pub fn new(generation: u64, stream: StreamEvent) -> Self {
        ModelStreamEvent { generation, stream }
    }
}
