use actuator_tool_macros::tool_input;

/// Which results to keep.
#[tool_input(rename_all = "camelCase")]
struct Filter {
    /// Only results in this language.
    language: Option<String>,
}

fn main() {}
