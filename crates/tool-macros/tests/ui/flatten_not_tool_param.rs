use actuator_tool_macros::tool;

#[derive(serde::Deserialize)]
struct Args {
    query: String,
}

/// Searches.
#[tool]
async fn search(#[tool(flatten)] args: Args) -> String {
    args.query
}

fn main() {}
