use actuator_tool_macros::tool;

struct Searcher;

impl Searcher {
    /// Searches.
    #[tool]
    async fn search(self) -> String {
        String::new()
    }
}

fn main() {}
