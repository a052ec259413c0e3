//! What each framework does with a valid call, a wrongly typed argument and an unknown key.

use serde_json::{Value, json};

use crate::{INVALID_ARGUMENT, Outcome, UNKNOWN_KEY, VALID, mcp, ours, rig};

/// The three argument texts, with the names the report gives them.
pub const CASES: [(&str, &str); 3] = [
    ("valid", VALID),
    ("invalid argument", INVALID_ARGUMENT),
    ("unknown key", UNKNOWN_KEY),
];

/// One framework's outcome on one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The framework, as the benchmark table names it.
    pub framework: &'static str,
    /// The case (`valid`, `invalid argument`, `unknown key`).
    pub case: &'static str,
    /// The arguments sent.
    pub arguments: &'static str,
    /// What came back.
    pub outcome: Outcome,
}

impl Row {
    /// The `BEHAVIOUR {json}` line the bench prints and `cargo xtask bench --peers` reads.
    pub fn to_json(&self) -> Value {
        json!({
            "framework": self.framework,
            "case": self.case,
            "arguments": self.arguments,
            "is_error": self.outcome.is_error,
            "text": self.outcome.text,
        })
    }
}

/// Every framework on every case, inside a Tokio runtime (the rmcp harness spawns its
/// service loop).
pub async fn all() -> Vec<Row> {
    let harness = mcp::Harness::start();
    let mut rows = Vec::new();
    for (case, arguments) in CASES {
        let outcomes = [
            (ours::FRAMEWORK, ours::outcome(arguments).await),
            (rig::FRAMEWORK, rig::outcome(arguments).await),
            (mcp::FRAMEWORK, mcp::outcome(&harness, arguments).await),
        ];
        for (framework, outcome) in outcomes {
            rows.push(Row {
                framework,
                case,
                arguments,
                outcome,
            });
        }
    }
    rows
}
