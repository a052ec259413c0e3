use actuator_tool_macros::tool;

/// Parses a number.
///
/// # Arguments
/// * `text` - The text.
#[tool]
async fn parse(text: String) -> Result<i64, String> {
    text.parse().map_err(|_| format!("not a number: {text}"))
}

fn main() {}
