use actuator_tool_macros::tool;

struct Store<T> {
    items: Vec<T>,
}

impl<T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + Sync + 'static> Store<T> {
    /// Counts items equal to this one.
    ///
    /// # Arguments
    /// * `item` - The item.
    #[tool]
    async fn count(&self, item: T) -> usize {
        let _ = item;
        self.items.len()
    }
}

fn main() {}
