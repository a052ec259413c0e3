//! Our client answering what a server asks (sampling, elicitation, roots), driven by an MCP
//! server on the official Python SDK (`tests/py/asking_server.py`).

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use actuator_mcp::{McpClient, McpRoot, McpServer, mcp_tools};
use actuator_tool_core::{
    ElicitationRequest, ElicitationResult, SamplingRequest, SamplingResult, SamplingRole,
};
use serde_json::{Map, Value, json};

fn asking_server() -> Option<McpServer> {
    let (python, script) = common::py_script("asking_server.py")?;
    Some(
        McpServer::stdio(python.display().to_string(), [script.display().to_string()])
            .name("asking")
            .connect_timeout(std::time::Duration::from_secs(30)),
    )
}

async fn call(client: &McpClient, name: &str, args: Value) -> actuator_model::ChatMessageTool {
    let tools = mcp_tools(client).list().await.unwrap();
    common::exec_one(&tools, name, args).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_server_asks_our_model_our_user_and_our_roots() {
    let Some(server) = asking_server() else {
        return;
    };
    let asked = Arc::new(Mutex::new(Vec::<SamplingRequest>::new()));
    let seen = Arc::clone(&asked);
    let server = server
        .sampling(move |request: SamplingRequest| {
            seen.lock().unwrap().push(request);
            async move { Ok(SamplingResult::new("Paris.", "scripted").stop_reason("endTurn")) }
        })
        .elicitation(|request: ElicitationRequest| async move {
            // Answer one field; the others take the schema's defaults.
            assert_eq!(request.message, "Deploy where?");
            Ok(ElicitationResult::accept(Map::from_iter([(
                "confirm".to_owned(),
                json!(true),
            )])))
        })
        .roots([McpRoot::directory("/work/repo").name("repo")]);
    let client = McpClient::new(server);

    let answer = call(
        &client,
        "ask_model",
        json!({"question": "Capital of France?"}),
    )
    .await;
    assert_eq!(answer.content.text(), "scripted: Paris.");
    {
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].max_tokens, 30);
        assert_eq!(asked[0].system_prompt.as_deref(), Some("Answer briefly."));
        assert_eq!(asked[0].messages[0].role, SamplingRole::User);
        assert_eq!(
            asked[0].messages[0].content.as_text(),
            Some("Capital of France?")
        );
    }

    let deployed = call(&client, "ask_user", json!({})).await;
    let deployed: Value = serde_json::from_str(&deployed.content.text()).unwrap();
    assert_eq!(
        deployed,
        json!({"action": "accept", "data": {"branch": "main", "replicas": 2, "confirm": true}})
    );

    let roots = call(&client, "roots", json!({})).await;
    assert_eq!(roots.content.text(), r#"[["file:///work/repo", "repo"]]"#);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_handlers_the_server_is_refused_and_the_tool_says_so() {
    let Some(server) = asking_server() else {
        return;
    };
    let client = McpClient::new(server);
    let answer = call(&client, "ask_model", json!({"question": "?"})).await;
    // The SDK's request is refused (method not found, which it reports by the method's
    // name); its tool result is an error the model reads.
    let error = answer.error.expect("an error");
    assert!(
        error.message.contains("sampling/createMessage"),
        "{}",
        error.message
    );
    client.close().await;
}
