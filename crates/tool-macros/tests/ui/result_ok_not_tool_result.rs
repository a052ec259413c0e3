use actuator_tool_macros::tool;
use actuator_tool_core::ToolError;

struct Report {
    lines: Vec<String>,
}

/// Reports.
#[tool]
async fn report() -> Result<Report, ToolError> {
    Ok(Report { lines: Vec::new() })
}

fn main() {}
