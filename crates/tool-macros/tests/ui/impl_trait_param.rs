use actuator_tool_macros::tool;

/// Prints.
///
/// # Arguments
/// * `value` - The value.
#[tool]
async fn show(value: impl std::fmt::Display) -> String {
    value.to_string()
}

fn main() {}
