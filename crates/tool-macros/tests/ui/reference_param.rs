use actuator_tool_macros::tool;

/// Counts characters.
///
/// # Arguments
/// * `text` - The text.
#[tool]
async fn count(text: &str) -> usize {
    text.len()
}

fn main() {}
