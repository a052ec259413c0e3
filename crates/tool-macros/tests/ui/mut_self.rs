use actuator_tool_macros::tool;

struct Counter(u64);

impl Counter {
    /// Counts.
    #[tool]
    async fn bump(&mut self) -> u64 {
        self.0 += 1;
        self.0
    }
}

fn main() {}
