//! rig: `add` as a typed rig tool, registered in rig-agent's `ToolSet` and dispatched with
//! `ToolSet::execute`, the inline dispatch by name that rig's agent loop runs per tool call.

use rig_agent::tool::ToolSet;
use rig_core::tool::{Tool, ToolContext, ToolResult};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::Outcome;

/// The name the benchmark table and the behaviour table give this path.
pub const FRAMEWORK: &str = "rig-agent 0.44 `ToolSet::execute`";

/// The arguments, as a rig tool declares them: a plain `Deserialize` struct.
#[derive(Debug, Deserialize)]
pub struct AddArgs {
    /// First addend.
    pub x: i64,
    /// Second addend.
    pub y: i64,
}

/// `add(x, y)`, the same work as ours.
pub struct Add;

impl Tool for Add {
    const NAME: &'static str = "add";
    type Args = AddArgs;
    type Output = i64;
    type Error = std::convert::Infallible;

    fn description(&self) -> String {
        "Add two integers.".to_owned()
    }

    /// The schema ours advertises for `add`: rig sends it to the model and does not check
    /// arguments against it.
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "x": {"type": "integer", "description": "First addend."},
                "y": {"type": "integer", "description": "Second addend."}
            },
            "required": ["x", "y"],
            "additionalProperties": false
        })
    }

    async fn call(&self, _context: &mut ToolContext, args: AddArgs) -> Result<i64, Self::Error> {
        Ok(args.x + args.y)
    }
}

/// A `ToolSet` holding `add`.
pub fn toolset() -> ToolSet {
    ToolSet::from_tools(vec![Add])
}

/// One call: the timed operation. `arguments` is the raw text the model sent, which rig's
/// agent passes on as a `String`.
pub async fn call(tools: &ToolSet, arguments: String) -> ToolResult {
    let mut context = ToolContext::new();
    tools.execute(Add::NAME, arguments, &mut context).await
}

/// What `ToolSet::execute` makes of `add` called with `arguments`.
pub async fn outcome(arguments: &str) -> Outcome {
    let result = call(&toolset(), arguments.to_owned()).await;
    Outcome {
        is_error: result.is_error(),
        text: result.output().render(),
    }
}
