//! Every tool of the corpus of real-world tool definitions (the dialect crate's
//! `tests/corpus/`, over three thousand), declared to the Gemini provider: each request it
//! sends is one the Gemini API's schema, generated from Google's SDK (specs/gemini), accepts.
//! The dialect crate checks the same renderings against Gemini's documented rules; this checks
//! them, as the provider sends them, against the API's own description.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
#[allow(dead_code)]
#[path = "../../dialect/tests/corpus/mod.rs"]
mod corpus;

use std::sync::Arc;

use actuator_model::{ChatMessage, GenerateRequest};
use actuator_providers::{ModelOptions, RetryPolicy};
use actuator_tool_core::ToolInfo;
use common::spec::gemini;
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn every_corpus_tool_is_declared_as_the_gemini_api_describes() {
    let (tools, _) = corpus::corpus();
    assert!(tools.len() > 3000, "{}", tools.len());
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]
        })))
        .mount(&server)
        .await;
    let model = ModelOptions::new()
        .api_key("k")
        .base_url(format!("{}/v1beta", server.uri()))
        .env(|_| None)
        .retry(RetryPolicy::none())
        .build("google/gemini-2.5-flash")
        .unwrap();
    // Tools with one name once (the corpus repeats some across sources), 100 to a request.
    let mut seen = std::collections::HashSet::new();
    let infos: Vec<Arc<ToolInfo>> = tools
        .into_iter()
        .filter(|(_, info)| seen.insert(info.name.clone()))
        .map(|(_, info)| Arc::new(info))
        .collect();
    let input = [ChatMessage::user("Hi")];
    for chunk in infos.chunks(100) {
        model
            .generate(GenerateRequest::new(&input).tools(chunk))
            .await
            .unwrap();
    }
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), infos.len().div_ceil(100));
    let mut rejected = Vec::new();
    for request in &requests {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        for declaration in body["tools"][0]["functionDeclarations"].as_array().unwrap() {
            let alone = json!({
                "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
                "tools": [{"functionDeclarations": [declaration]}]
            });
            let errors: Vec<String> = gemini()
                .request
                .iter_errors(&alone)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .take(3)
                .collect();
            if !errors.is_empty() {
                rejected.push(format!("{}: {}", declaration["name"], errors.join("; ")));
            }
        }
    }
    assert!(
        rejected.is_empty(),
        "{} of {} declarations are not what the API describes:\n{}",
        rejected.len(),
        infos.len(),
        rejected
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
