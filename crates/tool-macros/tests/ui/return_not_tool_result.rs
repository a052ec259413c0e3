use actuator_tool_macros::tool;

struct Report {
    lines: Vec<String>,
}

/// Reports.
#[tool]
async fn report() -> Report {
    Report { lines: Vec::new() }
}

fn main() {}
