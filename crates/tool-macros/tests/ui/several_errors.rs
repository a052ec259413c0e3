use actuator_tool_macros::tool;

// Every problem is reported at once, each at its own token; callers of the constructor
// still compile.

/// Lists.
#[tool(name = "", bogus)]
async fn list(limit: u32, (a, b): (u8, u8)) -> u32 {
    limit + u32::from(a) + u32::from(b)
}

fn main() {
    let _ = list_tool();
}
