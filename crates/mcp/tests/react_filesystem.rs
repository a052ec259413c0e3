//! A react agent on the scripted model using server-filesystem's tools end to end: the
//! source is listed per turn, the model's call lands on the server, the result reaches the
//! conversation.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_agent::{react, run};
use actuator_mcp::{McpClient, mcp_tools};
use actuator_model::{ChatMessage, ModelOutput, ScriptedModel, ToolCall};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn react_reads_and_writes_files_through_the_mcp_filesystem_server() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("question.txt"), "What is 6 x 7?\n").unwrap();
    let Some(server) = common::filesystem(&root) else {
        return;
    };
    let client = McpClient::new(server);
    let question = root.join("question.txt").display().to_string();
    let answer = root.join("answer.txt").display().to_string();
    let model = ScriptedModel::new([
        ModelOutput::for_tool_calls(
            "scripted",
            "Let me read the question.",
            vec![ToolCall::new(
                "c1",
                "fs_read_text_file",
                json!({"path": question}),
            )],
        ),
        ModelOutput::for_tool_calls(
            "scripted",
            "Now the answer.",
            vec![ToolCall::new(
                "c2",
                "fs_write_file",
                json!({"path": answer, "content": "42"}),
            )],
        ),
        ModelOutput::for_tool_call("scripted", "submit", json!({"answer": "42"})),
    ]);
    let agent = react()
        .tool_source(Arc::new(
            mcp_tools(&client)
                .prefix("fs_")
                .filter(["read_text_file", "write_file"])
                .unwrap(),
        ))
        .model(Arc::new(model))
        .build()
        .unwrap();
    let result = run(&agent, "Answer the question in question.txt.", &[])
        .await
        .unwrap();
    assert_eq!(result.state.output().completion(), "42");
    let tool_texts: Vec<String> = result
        .state
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool(t) => {
                assert_eq!(t.error, None, "{:?}", t.content);
                Some(t.content.text())
            }
            _ => None,
        })
        .collect();
    assert_eq!(tool_texts.len(), 2);
    assert!(
        tool_texts[0].contains("What is 6 x 7?"),
        "{}",
        tool_texts[0]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("answer.txt")).unwrap(),
        "42"
    );
    client.close().await;
}
