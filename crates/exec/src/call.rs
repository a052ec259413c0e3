//! One call's shared ground, below the pipeline and the runner: the [`Runner`] a call is
//! run by (the execution it belongs to), why a call stops the run, what happened to it before
//! its result, and the names it shares with its events and message.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use actuator_events::{ApprovalEvent, LimitExceeded, ReviewEvent};
use actuator_model::{ChatMessage, ChatMessageAssistant, ToolCall};
use actuator_tool_core::{DEFAULT_MAX_TOOL_OUTPUT, FatalToolError, ToolDef};

use crate::options::ExecuteOptions;

/// Why a call stopped the run.
pub(crate) enum Stop {
    Fatal(FatalToolError),
    Limit(Box<LimitExceeded>),
    Terminated,
    BadModify {
        modified: String,
    },
    /// A reviewer ended the run after the call ran (boxed: the result it saw is recorded).
    ReviewTerminated(Box<crate::review::ReviewStop>),
}

/// What the calls of one `execute_tools` run share: the conversation, the tools, the options.
#[derive(Clone, Copy)]
pub(crate) struct Runner<'a> {
    pub(crate) messages: &'a [ChatMessage],
    pub(crate) assistant: &'a ChatMessageAssistant,
    pub(crate) tools: &'a [ToolDef],
    pub(crate) options: &'a ExecuteOptions,
    /// The tools' names for the calls of one stage (or chunk of a spread stage); `None` for
    /// a lone call, which copies its tool's name.
    pub(crate) names: Option<&'a ToolNames>,
}

/// A call's review decisions, behind one thin pointer (a `Vec` or a boxed slice would be two
/// or three words in every call's future).
pub(crate) type Reviews = Box<ReviewList>;

/// The decisions of [`Reviews`].
pub(crate) struct ReviewList(pub(crate) Vec<ReviewEvent>);

/// What happened to one call before it produced a result.
pub(crate) struct Attempt {
    /// Boxed: only calls asked of approvers have one, and an attempt lives in every call's
    /// future.
    pub(crate) approval: Option<Box<ApprovalEvent>>,
    pub(crate) approval_wait: Duration,
    /// The reviewers' decisions, emitted after the call's event: most calls have none, and an
    /// attempt lives in every call's future.
    pub(crate) reviews: Option<Reviews>,
}

impl Runner<'_> {
    /// The tool named `name`.
    pub(crate) fn lookup(&self, name: &str) -> Option<&ToolDef> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// The output limit of a call to `def` (or to no tool).
    pub(crate) fn limit_for(&self, def: Option<&ToolDef>) -> usize {
        def.and_then(ToolDef::max_output)
            .or(self.options.max_output)
            .unwrap_or(DEFAULT_MAX_TOOL_OUTPUT)
    }
}

/// A call's id and tool name, shared by its context, events and message.
#[derive(Clone)]
pub(crate) struct CallNames {
    pub(crate) id: Arc<str>,
    pub(crate) function: Arc<str>,
}

/// Copies of the tools' names, each made when a call of its tool first needs it, shared by the
/// calls of one stage, or of one chunk of a spread stage.
///
/// Not one `Arc` per tool for every run: the calls of one tool run on every worker at once (a
/// spread stage, an eval's concurrent samples), and all of them counting references on one
/// string made each worker wait for the others' cache lines (two threads each running
/// 1000-call stages of one tool took 0.65 µs a call, against 0.44 µs alone). A stage's calls
/// run on one thread at a time, so its own copy is counted without contention, and made once.
pub(crate) struct ToolNames(Box<[OnceLock<Arc<str>>]>);

impl ToolNames {
    /// Empty slots for the names of `tools` tools.
    pub(crate) fn new(tools: usize) -> Self {
        ToolNames((0..tools).map(|_| OnceLock::new()).collect())
    }

    /// The shared copy of the name of `def`, one of `tools`.
    fn get(&self, tools: &[ToolDef], def: &ToolDef) -> Option<Arc<str>> {
        // `def` is an element of `tools` (the checks looked it up there): its index is its
        // offset, without a second search (`<[T]>::element_offset` is newer than our MSRV).
        let offset = std::ptr::from_ref(def)
            .addr()
            .checked_sub(tools.as_ptr().addr())?
            / std::mem::size_of::<ToolDef>().max(1);
        tools.get(offset).filter(|t| std::ptr::eq(*t, def))?;
        let slot = self.0.get(offset)?;
        Some(Arc::clone(slot.get_or_init(|| Arc::from(def.name()))))
    }
}

impl Runner<'_> {
    /// The names of `call`, whose tool is `found` when it has one: the stage's copy of the
    /// tool's name when there is a stage, else a copy of the name the call asked for.
    pub(crate) fn call_names(&self, call: &ToolCall, found: Option<&ToolDef>) -> CallNames {
        let shared = self
            .names
            .zip(found)
            .and_then(|(names, def)| names.get(self.tools, def));
        match shared {
            Some(function) => CallNames {
                id: Arc::from(call.id.as_str()),
                function,
            },
            None => CallNames::of(call),
        }
    }
}

impl CallNames {
    /// The call's id and the name it asked for, copied.
    pub(crate) fn of(call: &ToolCall) -> Self {
        CallNames {
            id: Arc::from(call.id.as_str()),
            function: Arc::from(call.function.as_str()),
        }
    }
}
