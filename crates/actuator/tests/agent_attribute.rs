//! `#[agent]` through the facade: as `#[actuator::agent]` (next to the `actuator::agent`
//! module of the same name) and from the prelude, with no direct dependency on
//! `actuator-agent` (the expansion finds `::actuator::agent`).
#![allow(clippy::unwrap_used, missing_docs)]

mod by_path {
    use actuator::agent::{AgentError, AgentState};
    use actuator::model::ChatMessage;

    /// Says hello to someone.
    ///
    /// # Arguments
    /// * `who` - Whom to greet.
    #[actuator::agent]
    pub async fn hello(
        mut state: AgentState,
        #[agent(default = "world".to_owned())] who: String,
    ) -> Result<AgentState, AgentError> {
        state
            .messages
            .push(ChatMessage::assistant(format!("hello, {who}")));
        Ok(state)
    }
}

mod from_prelude {
    use actuator::prelude::*;

    /// Says goodbye.
    #[agent(name = "farewell")]
    pub async fn bye(mut state: AgentState, cx: RunContext) -> Result<AgentState, AgentError> {
        let _ = cx.resource::<u8>();
        state.messages.push(ChatMessage::assistant("bye"));
        Ok(state)
    }
}

#[tokio::test]
async fn the_attribute_works_through_the_facade() {
    use actuator::prelude::*;

    let hello = by_path::hello_agent();
    assert_eq!(hello.name(), "hello");
    assert_eq!(hello.parameters().properties["who"]["default"], "world");
    let out = run(&hello, "hi", &[]).await.unwrap();
    assert_eq!(out.state.output().completion(), "hello, world");
    let mut args = serde_json::Map::new();
    args.insert("who".into(), "Ada".into());
    let out = RunContext::new()
        .run(&hello, "hi", RunOptions::new().args(args))
        .await
        .unwrap();
    assert_eq!(out.state.output().completion(), "hello, Ada");

    let bye = from_prelude::bye_agent();
    assert_eq!(bye.name(), "farewell");
    assert_eq!(bye.description(), Some("Says goodbye."));
    let out = run(&bye, "hi", &[]).await.unwrap();
    assert_eq!(out.state.output().completion(), "bye");
}
