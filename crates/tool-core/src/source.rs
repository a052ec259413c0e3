//! Tool sources: tool sets that can change between turns (an MCP server adds a tool, a user
//! enables one), resolved once per turn together with the fixed tools ([`ToolSet`]).
//!
//! They describe tools, not agents: an agent resolves a [`ToolSet`] each turn, and an MCP
//! client is a [`ToolSource`], without either crate depending on the other.

use std::collections::HashSet;
use std::sync::Arc;

use crate::def::{BoxFuture, ToolDef};
use crate::error::ToolDefError;

/// Something that yields the current tools: the reference's `ToolSource`.
///
/// An agent asks once per turn ([`ToolSet::resolve`]); what it returns is offered to the model
/// and runs that turn's calls. A source that cannot list its tools returns an error, which ends
/// that turn with [`ToolSetError::Source`] (never a panic).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use actuator_tool_core::source::{ToolSource, ToolSourceError};
/// use actuator_tool_core::{BoxFuture, ToolArgs, ToolContext, ToolDef, ToolFailure};
///
/// /// Offers one more `ping_N` tool each time it is asked.
/// struct Growing(AtomicUsize);
///
/// impl ToolSource for Growing {
///     fn name(&self) -> &str { "growing" }
///     fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDef>, ToolSourceError>> {
///         let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
///         Box::pin(async move {
///             (0..n).map(|i| {
///                 ToolDef::builder(format!("ping_{i}")).description("Pings.")
///                     .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("pong") })
///                     .build()
///                     .map_err(|e| ToolSourceError::new(e.to_string()))
///             }).collect()
///         })
///     }
/// }
/// ```
pub trait ToolSource: Send + Sync {
    /// A name for errors and logs (an MCP server's name, …).
    fn name(&self) -> &str;

    /// The tools as they are now.
    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDef>, ToolSourceError>>;
}

/// Why a [`ToolSource`] could not list its tools.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolSourceError {
    message: String,
}

impl ToolSourceError {
    /// An error with a message saying what went wrong (and, where it helps, what to do).
    pub fn new(message: impl Into<String>) -> Self {
        ToolSourceError {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Why a [`ToolSet`] could not be resolved for a turn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolSetError {
    /// A source failed to list its tools.
    #[error("Tool source '{source_name}' could not list its tools: {error}")]
    Source {
        /// The source's [`ToolSource::name`].
        source_name: String,
        /// What it reported.
        error: ToolSourceError,
    },
    /// The resolved tools are not a valid set: two share a name (D7), or one is defined
    /// wrongly. Its message is the definition error's own (which names the tool); its
    /// `source()` is that error's source, so the text is not repeated down the chain.
    #[error(transparent)]
    Definition(#[from] ToolDefError),
}

#[derive(Clone)]
enum Entry {
    Tool(ToolDef),
    Source(Arc<dyn ToolSource>),
}

/// Fixed tools and tool sources together, in the order given.
///
/// [`resolve`](ToolSet::resolve) asks each source for its current tools, keeps the order,
/// and checks the result: no two tools may share a name (D7) and each must pass
/// [`ToolDef::check`]. A set without sources resolves to its tools without asking anything.
///
/// ```
/// use actuator_tool_core::source::ToolSet;
/// use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure};
/// let ping = ToolDef::builder("ping").description("Pings.")
///     .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("pong") })
///     .build().unwrap();
/// let set = ToolSet::new().tool(ping.clone()).tool(ping);
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let err = set.resolve().await.unwrap_err();
/// assert!(err.to_string().contains("ping"));
/// # });
/// ```
#[derive(Clone, Default)]
pub struct ToolSet {
    entries: Vec<Entry>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self
            .entries
            .iter()
            .map(|e| match e {
                Entry::Tool(t) => t.name().to_owned(),
                Entry::Source(s) => format!("<source {}>", s.name()),
            })
            .collect();
        f.debug_struct("ToolSet").field("entries", &names).finish()
    }
}

impl ToolSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool.
    #[must_use]
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.entries.push(Entry::Tool(tool));
        self
    }

    /// Adds tools.
    #[must_use]
    pub fn tools(mut self, tools: impl IntoIterator<Item = ToolDef>) -> Self {
        self.entries.extend(tools.into_iter().map(Entry::Tool));
        self
    }

    /// Adds a source, asked for its tools at every resolution.
    #[must_use]
    pub fn source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.entries.push(Entry::Source(source));
        self
    }

    /// Adds a tool (in place).
    pub fn push_tool(&mut self, tool: ToolDef) {
        self.entries.push(Entry::Tool(tool));
    }

    /// Adds a source (in place).
    pub fn push_source(&mut self, source: Arc<dyn ToolSource>) {
        self.entries.push(Entry::Source(source));
    }

    /// Whether the set has any source (otherwise it always resolves to the same tools).
    pub fn has_sources(&self) -> bool {
        self.entries.iter().any(|e| matches!(e, Entry::Source(_)))
    }

    /// The fixed tools (those not from a source), in order.
    pub fn fixed_tools(&self) -> impl Iterator<Item = &ToolDef> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Tool(t) => Some(t),
            Entry::Source(_) => None,
        })
    }

    /// The sources, in order.
    pub fn sources(&self) -> impl Iterator<Item = &Arc<dyn ToolSource>> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Source(s) => Some(s),
            Entry::Tool(_) => None,
        })
    }

    /// The current tools: fixed tools and each source's tools in the order they were added,
    /// checked as a set (D7, [`ToolDef::check`]).
    pub async fn resolve(&self) -> Result<Vec<ToolDef>, ToolSetError> {
        let mut tools = Vec::with_capacity(self.entries.len());
        for entry in &self.entries {
            match entry {
                Entry::Tool(t) => tools.push(t.clone()),
                Entry::Source(s) => {
                    let listed = s.tools().await.map_err(|error| ToolSetError::Source {
                        source_name: s.name().to_owned(),
                        error,
                    })?;
                    tools.extend(listed);
                }
            }
        }
        check_tool_names(&tools)?;
        for tool in &tools {
            tool.check()?;
        }
        Ok(tools)
    }
}

impl From<Vec<ToolDef>> for ToolSet {
    fn from(tools: Vec<ToolDef>) -> Self {
        ToolSet::new().tools(tools)
    }
}

impl From<&[ToolDef]> for ToolSet {
    fn from(tools: &[ToolDef]) -> Self {
        ToolSet::new().tools(tools.iter().cloned())
    }
}

impl From<Arc<dyn ToolSource>> for ToolSet {
    fn from(source: Arc<dyn ToolSource>) -> Self {
        ToolSet::new().source(source)
    }
}

/// Checks that no two tools share a name (D7): the check [`ToolSet::resolve`], the executor
/// and an MCP server make before offering tools.
///
/// ```
/// use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, check_tool_names};
/// let ping = ToolDef::builder("ping").description("Pings.")
///     .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("pong") })
///     .build().unwrap();
/// assert!(check_tool_names(std::slice::from_ref(&ping)).is_ok());
/// let err = check_tool_names(&[ping.clone(), ping]).unwrap_err();
/// assert!(err.to_string().contains("'ping'"));
/// ```
pub fn check_tool_names(tools: &[ToolDef]) -> Result<(), ToolDefError> {
    let duplicate = |name: &str| ToolDefError::DuplicateName {
        name: name.to_owned(),
    };
    // Every `execute_tools` call checks: a few tools are compared pairwise, without the set's
    // allocation and hashing.
    if tools.len() <= PAIRWISE_NAME_CHECK {
        for (i, tool) in tools.iter().enumerate() {
            if tools[..i].iter().any(|t| t.name() == tool.name()) {
                return Err(duplicate(tool.name()));
            }
        }
        return Ok(());
    }
    let mut seen = HashSet::with_capacity(tools.len());
    for tool in tools {
        if !seen.insert(tool.name()) {
            return Err(duplicate(tool.name()));
        }
    }
    Ok(())
}

/// Up to this many tools, [`check_tool_names`] compares names pairwise.
const PAIRWISE_NAME_CHECK: usize = 16;
