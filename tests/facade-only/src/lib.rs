//! Tools written with nothing but the `actuator` facade: struct and enum parameters derive
//! through `#[tool_input]`, with `#[serde(…)]` attributes, as a parameter and flattened.

use actuator::prelude::*;

/// How results are ordered.
#[tool_input]
#[serde(rename_all = "snake_case")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The best match first.
    Relevance,
    /// The newest first.
    Newest,
}

/// Which results to keep.
#[tool_input]
#[derive(Debug)]
pub struct Filter {
    /// Only results in this language.
    pub language: Option<String>,
    /// At most this many results.
    #[serde(default, rename = "max")]
    pub limit: u32,
}

/// Paging, flattened into the tool's own parameters.
#[tool_input]
pub struct Page {
    /// The page to return, from 1.
    pub page: u32,
}

/// Search the documentation.
///
/// # Arguments
/// * `query` - What to search for.
/// * `filter` - Which results to keep.
/// * `order` - How results are ordered.
#[tool]
pub fn search(query: String, filter: Filter, order: Order, #[tool(flatten)] page: Page) -> String {
    format!(
        "{query} {:?} max={} {order:?} page={}",
        filter.language, filter.limit, page.page
    )
}
