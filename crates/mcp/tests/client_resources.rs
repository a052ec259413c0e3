//! A server's resources and prompts from our client: listed, read and rendered directly, and
//! offered to a model as the `list_resources` / `read_resource` tools.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
#[path = "common/conformance.rs"]
mod conformance;

use std::collections::BTreeMap;

use actuator_mcp::{
    HttpOptions, McpClient, McpServer, ServeOptions, ToolServer, mcp_tools, serve_http,
};
use actuator_tool_core::{Content, SamplingRole};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_prompts_are_reachable_and_offered_as_tools() {
    let http = serve_http(conformance::conformance_server(), HttpOptions::default())
        .await
        .unwrap();
    let client = McpClient::new(McpServer::http(http.url()).name("fixture"));

    let listed = client.list_resources().await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "test://static-text",
            "test://static-binary",
            "test://watched-resource"
        ]
    );
    let text = client.read_resource("test://static-text").await.unwrap();
    assert_eq!(
        text,
        [Content::text(
            "This is the content of the static text resource."
        )]
    );
    let binary = client.read_resource("test://static-binary").await.unwrap();
    assert!(matches!(&binary[0], Content::Image(m) if m.media_type == "image/png"));
    let prompt = client
        .get_prompt(
            "test_prompt_with_arguments",
            BTreeMap::from([("arg1".into(), "x".into()), ("arg2".into(), "y".into())]),
        )
        .await
        .unwrap();
    assert_eq!(prompt.len(), 1);
    assert_eq!(prompt[0].role, SamplingRole::User);
    assert_eq!(
        prompt[0].content.as_text(),
        Some("Prompt with arguments: arg1='x', arg2='y'")
    );

    // As tools: the server's own, then the two resource tools, prefixed like the others.
    let tools = mcp_tools(&client)
        .prefix("fx_")
        .resources()
        .list()
        .await
        .unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert!(
        names.ends_with(&["fx_list_resources", "fx_read_resource"]),
        "{names:?}"
    );
    let listing = common::exec_one(&tools, "fx_list_resources", json!({})).await;
    assert!(
        listing
            .content
            .text()
            .contains("test://static-text (Static Text Resource) [text/plain]: A static text resource for testing"),
        "{}",
        listing.content.text()
    );
    let read = common::exec_one(
        &tools,
        "fx_read_resource",
        json!({"uri": "test://template/5/data"}),
    )
    .await;
    assert!(
        read.content.text().contains(r#""id":"5""#),
        "{}",
        read.content.text()
    );
    let missing =
        common::exec_one(&tools, "fx_read_resource", json!({"uri": "test://nowhere"})).await;
    let error = missing.error.expect("a tool error");
    assert!(
        error.message.contains("Resource test://nowhere not found"),
        "{}",
        error.message
    );
    client.close().await;
    http.shutdown().await;
}

#[tokio::test]
async fn a_server_without_resources_gets_no_resource_tools() {
    let http = serve_http(
        ToolServer::new([], ServeOptions::default()).unwrap(),
        HttpOptions::default(),
    )
    .await
    .unwrap();
    let client = McpClient::new(McpServer::http(http.url()));
    let tools = mcp_tools(&client).resources().list().await.unwrap();
    assert!(tools.is_empty());
    client.close().await;
}
