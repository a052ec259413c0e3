use actuator_tool_macros::tool;

/// Measures.
///
/// # Arguments
/// * `text` - The text.
#[tool]
async fn measure(ref text: String) -> usize {
    text.len()
}

fn main() {}
