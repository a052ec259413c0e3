//! [`ResourceRequirement`]: a run resource a tool cannot work without (a sandbox, a session),
//! declared on the tool so that a run lacking it is refused before the model sees anything,
//! instead of ending with an answer after the model alone read the tool's error.

use std::any::TypeId;
use std::borrow::Cow;
use std::fmt;

use crate::context::Extensions;

/// A run resource (a value of one type in the run's resources, which tools find in their
/// [`ToolContext::extensions`](crate::ToolContext::extensions)) that a tool needs.
///
/// Declared with [`ToolDef::with_requirement`](crate::ToolDef::with_requirement); the layer
/// that starts runs (`actuator_agent::run`, `eval`) refuses a run whose tools need a resource
/// it lacks, naming the tool and saying how to provide it.
///
/// ```
/// use actuator_tool_core::{Extensions, ResourceRequirement};
///
/// struct Database;
/// let needs = ResourceRequirement::of::<Database>(
///     "a database connection",
///     "add one to the run's resources: RunOptions::new().resource(Database::connect()?)",
/// );
/// let mut resources = Extensions::new();
/// assert!(!needs.is_met_by(&resources));
/// resources.insert(Database);
/// assert!(needs.is_met_by(&resources));
/// assert!(needs.is_for::<Database>());
/// assert_eq!(needs.what(), "a database connection");
/// ```
#[derive(Clone)]
pub struct ResourceRequirement {
    type_id: TypeId,
    type_name: &'static str,
    what: Cow<'static, str>,
    how: Cow<'static, str>,
}

impl ResourceRequirement {
    /// A requirement for a resource of type `T`: `what` names it for people ("a sandbox"),
    /// `how` says how to provide one (the code to write).
    pub fn of<T: Send + Sync + 'static>(
        what: impl Into<Cow<'static, str>>,
        how: impl Into<Cow<'static, str>>,
    ) -> Self {
        ResourceRequirement {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            what: what.into(),
            how: how.into(),
        }
    }

    /// Whether `resources` holds the required value.
    pub fn is_met_by(&self, resources: &Extensions) -> bool {
        resources.contains_type(self.type_id)
    }

    /// Whether the required resource is a `T`.
    pub fn is_for<T: 'static>(&self) -> bool {
        self.type_id == TypeId::of::<T>()
    }

    /// What the resource is, for people ("a sandbox").
    pub fn what(&self) -> &str {
        &self.what
    }

    /// How to provide one.
    pub fn how(&self) -> &str {
        &self.how
    }

    /// The Rust type of the required resource.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl fmt::Debug for ResourceRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceRequirement")
            .field("type", &self.type_name)
            .field("what", &self.what)
            .finish_non_exhaustive()
    }
}

impl PartialEq for ResourceRequirement {
    /// Two requirements are the same when they require the same type.
    fn eq(&self, other: &Self) -> bool {
        self.type_id == other.type_id
    }
}

impl Eq for ResourceRequirement {}

/// A tool's requirement, with the tool's name: what an agent reports about the tools it will
/// offer, so a run can be refused before it starts.
///
/// ```
/// use actuator_tool_core::{Extensions, ResourceRequirement, ToolRequirement};
/// struct Sandbox;
/// let need = ToolRequirement::new("bash", ResourceRequirement::of::<Sandbox>("a sandbox", "give it one"));
/// let message = need.missing_message();
/// assert!(message.contains("'bash' needs a sandbox"), "{message}");
/// assert!(message.contains("give it one"), "{message}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolRequirement {
    /// The tool that needs the resource.
    pub tool: String,
    /// The resource it needs.
    pub requirement: ResourceRequirement,
}

impl ToolRequirement {
    /// `tool` needs `requirement`.
    pub fn new(tool: impl Into<String>, requirement: ResourceRequirement) -> Self {
        ToolRequirement {
            tool: tool.into(),
            requirement,
        }
    }

    /// The tools' requirements, each tool's in order, a tool named twice once.
    pub fn of_tools<'a>(tools: impl IntoIterator<Item = &'a crate::ToolDef>) -> Vec<Self> {
        let mut out: Vec<ToolRequirement> = Vec::new();
        for tool in tools {
            for requirement in tool.requirements() {
                let need = ToolRequirement::new(tool.name(), requirement.clone());
                if !out.contains(&need) {
                    out.push(need);
                }
            }
        }
        out
    }

    /// What a run that lacks the resource is told: the tool, what it needs, and how to
    /// provide it.
    pub fn missing_message(&self) -> String {
        format!(
            "the tool '{}' needs {}, and the run has none: {}",
            self.tool,
            self.requirement.what(),
            self.requirement.how()
        )
    }
}
