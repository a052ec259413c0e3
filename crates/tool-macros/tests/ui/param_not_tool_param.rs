use actuator_tool_macros::tool;

#[derive(serde::Deserialize)]
struct Query {
    text: String,
}

/// Searches.
///
/// # Arguments
/// * `query` - The query.
#[tool]
async fn search(query: Query) -> String {
    query.text
}

fn main() {}
