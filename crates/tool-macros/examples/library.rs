//! A library of tools, as a user crate writes one. Built as a `lib` so that `missing_docs`
//! applies, and checked by `cargo clippy --all-targets -- -D warnings` with the workspace lints
//! plus `clippy::pedantic`: the code `#[tool]` generates must not add any warning.
#![deny(missing_docs)]
#![warn(clippy::pedantic)]
// The functions below are the user's code: trivial bodies without `.await` are fine for them.
#![allow(clippy::unused_async)]

use std::sync::Mutex;

use actuator_tool_core::{ToolCallView, ToolError};
use actuator_tool_macros::tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `y` - Second addend.
#[tool]
pub async fn add(x: i64, y: i64) -> i64 {
    x + y
}

/// Does nothing, synchronously.
#[tool(parallel)]
pub fn noop() {}

/// A search request.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// What to search for.
    pub query: String,
    /// At most this many results.
    pub limit: Option<u32>,
}

/// A search hit.
#[derive(Debug, Serialize)]
pub struct Hit {
    /// The title.
    pub title: String,
}

fn show(_function: &str, _args: &serde_json::Map<String, serde_json::Value>) -> ToolCallView {
    ToolCallView::default()
}

/// Searches the index.
///
/// # Errors
///
/// When the query is empty.
#[tool(name = "search_index", timeout = "2m", max_output = 16384, viewer = show)]
pub async fn search(
    #[tool(flatten)] args: SearchArgs,
    /// Skip this many results.
    #[tool(default = 0)]
    offset: u32,
) -> Result<Vec<Hit>, ToolError> {
    if args.query.is_empty() {
        return Err(ToolError::new("The query is empty."));
    }
    Ok(vec![Hit {
        title: format!("{} {:?} {offset}", args.query, args.limit),
    }])
}

/// A notebook that tools write to.
#[derive(Debug, Default)]
pub struct Notebook {
    notes: Mutex<Vec<String>>,
}

impl Notebook {
    /// Writes a note.
    ///
    /// # Arguments
    /// - note: The note.
    /// - tags: Tags for the note.
    #[tool]
    pub async fn write(&self, note: String, #[tool(default)] tags: Vec<String>) -> usize {
        let mut notes = self
            .notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        notes.push(format!("{note} {tags:?}"));
        notes.len()
    }

    /// Reads every note.
    #[tool]
    pub fn read(&self) -> Vec<String> {
        self.notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}
