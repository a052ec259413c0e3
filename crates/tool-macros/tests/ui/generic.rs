use actuator_tool_macros::tool;

/// Echoes.
///
/// # Arguments
/// * `value` - The value.
#[tool]
async fn echo<T: serde::Serialize>(value: T) -> T {
    value
}

fn main() {}
