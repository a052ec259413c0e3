use actuator_tool_macros::tool;

/// Parses a number.
///
/// # Arguments
/// * `text` - The text.
#[tool]
async fn parse(text: String) -> Result<i64, std::num::ParseIntError> {
    text.parse()
}

fn main() {}
