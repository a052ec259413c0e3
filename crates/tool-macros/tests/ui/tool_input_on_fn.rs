use actuator_tool_macros::tool_input;

/// Not a type.
#[tool_input]
fn filter() {}

fn main() {}
