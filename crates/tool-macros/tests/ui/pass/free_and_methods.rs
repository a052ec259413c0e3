//! Builds without warnings: free functions, methods, defaults, flatten and every option.
#![deny(warnings)]

use std::sync::Arc;

use actuator_tool_core::{ToolCallView, ToolError};
use actuator_tool_macros::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Filter {
    /// Only this kind.
    pub kind: Option<String>,
}

fn viewer(_function: &str, _args: &serde_json::Map<String, serde_json::Value>) -> ToolCallView {
    ToolCallView::default()
}

/// Searches.
///
/// # Arguments
/// * `query` - What to find.
/// * `limit` - How many.
#[tool(name = "find", parallel, max_output = 100, timeout = "5s", viewer = viewer)]
pub async fn search(
    query: String,
    #[tool(default = 5)] limit: u32,
    #[tool(flatten)] filter: Filter,
) -> Result<Vec<String>, ToolError> {
    Ok(vec![format!("{query} {limit} {:?}", filter.kind)])
}

/// Does nothing.
#[tool]
fn nothing() {}

/// Shadows: a parameter named like the function and like generated names.
///
/// # Arguments
/// * `add` - A number.
/// * `args` - Another.
#[tool]
fn add(add: i64, args: i64) -> i64 {
    add + args
}

pub struct Store {
    name: String,
}

impl Store {
    /// The store's name.
    #[tool]
    pub async fn name(&self) -> String {
        self.name.clone()
    }

    /// Adds a suffix.
    ///
    /// # Arguments
    /// * `suffix` - The suffix.
    #[tool]
    fn suffixed(&self, #[tool(default)] suffix: String) -> String {
        format!("{}{suffix}", self.name)
    }
}

/// A generic store: its tools work as long as their parameter types do not depend on `T`.
pub struct Generic<T> {
    items: Vec<T>,
}

impl<T: Send + Sync + 'static> Generic<T> {
    /// Counts the items.
    ///
    /// # Arguments
    /// * `plus` - Added to the count.
    #[tool]
    pub async fn len(&self, #[tool(default = Self::BASE)] plus: usize) -> usize {
        self.items.len() + plus
    }

    const BASE: usize = 0;
}

fn main() {
    let generic = Arc::new(Generic { items: vec![1_u8] });
    let _ = generic.len_tool();
    let store = Arc::new(Store { name: "s".into() });
    let tools = [
        search_tool(),
        nothing_tool(),
        add_tool(),
        store.name_tool(),
        store.suffixed_tool(),
    ];
    assert_eq!(tools.len(), 5);
}
