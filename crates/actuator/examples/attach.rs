//! Step into a running agent from a terminal, over its channel's socket.
//!
//! In one terminal, an agent that serves its channel (a stand-in model that asks back about
//! each thing the operator says; no API key):
//!
//! ```text
//! cargo run --example attach -- --serve /tmp/agent.sock
//! ```
//!
//! In another, attach to it and type:
//!
//! ```text
//! cargo run --example attach -- /tmp/agent.sock
//! hello                 a message, delivered at the top of the agent's next turn
//! /answer 1 more        answer the agent's question 1 (/decline 1 declines it)
//! /interrupt            cut the turn in flight short (the agent then waits for a message)
//! /transcript           the conversation so far
//! /answer 2 done        the demo agent submits when told "done"
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use actuator::agent::channel::{AskUserOptions, ask_user_with, serve_unix};
use actuator::agent::{AgentChannel, RunOptions, react, run};
use actuator::model::{ChatMessage, FunctionModel, ModelOutput, ToolCall};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::main]
#[allow(clippy::print_stderr)] // the example's error, for the person at the terminal
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [flag, path] if flag == "--serve" => serve(PathBuf::from(path)).await,
        [path] => attach(PathBuf::from(path)).await,
        _ => Err("usage: attach SOCKET | attach --serve SOCKET".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("attach: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The operator's side: stdin lines to commands, the agent's lines to stdout.
async fn attach(path: PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    let stream = tokio::net::UnixStream::connect(&path).await.map_err(|e| {
        format!(
            "cannot connect to {}: {e} (is the agent serving it?)",
            path.display()
        )
    })?;
    let (read, mut write) = stream.into_split();
    let printer = tokio::spawn(async move {
        let mut lines = BufReader::new(read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(value) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            match value["op"].as_str() {
                Some("question") => println!(
                    "? [{}] {}",
                    value["id"],
                    value["message"].as_str().unwrap_or("")
                ),
                Some("notice") => println!("! {}", value["message"].as_str().unwrap_or("")),
                Some("transcript") => {
                    for m in value["messages"].as_array().into_iter().flatten() {
                        let content = match &m["content"] {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        println!("  {}: {content}", m["role"].as_str().unwrap_or("?"));
                    }
                }
                Some("error") => println!("error: {}", value["message"].as_str().unwrap_or("")),
                _ => {}
            }
        }
        println!("(the agent closed the connection)");
    });
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = stdin.next_line().await? {
        let command = match line.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["/interrupt"] => json!({"op": "interrupt"}),
            ["/transcript"] => json!({"op": "transcript"}),
            ["/decline", id] => json!({"op": "answer", "id": id.parse::<u64>()?, "text": null}),
            ["/answer", id, ..] => {
                let text = line.splitn(3, ' ').nth(2).unwrap_or("");
                json!({"op": "answer", "id": id.parse::<u64>()?, "text": text})
            }
            [] => continue,
            _ => json!({"op": "post", "text": line}),
        };
        let mut bytes = serde_json::to_vec(&command)?;
        bytes.push(b'\n');
        write.write_all(&bytes).await?;
    }
    printer.abort();
    Ok(())
}

/// The agent's side: a react agent whose channel is served at `path`.
async fn serve(path: PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    let channel = AgentChannel::new();
    let _server = serve_unix(channel.clone(), &path)?;
    println!(
        "serving the agent's channel at {} (attach to it from another terminal)",
        path.display()
    );
    // A stand-in for a real model: it waits for the operator's first message (the run has no
    // task), then asks back about each answer until told "done".
    let model = FunctionModel::new("demo/echo", |messages: &[ChatMessage], _tools| {
        let last = messages.last().map(ChatMessage::text).unwrap_or_default();
        let call = if last.trim() == "done" {
            ToolCall::new(
                format!("s{}", messages.len()),
                "submit",
                json!({"answer": "Finished, as told."}),
            )
        } else {
            let question = format!("You said: {last}. What next? (\"done\" finishes)");
            ToolCall::new(
                format!("q{}", messages.len()),
                "ask_user",
                json!({"message": question}),
            )
        };
        Ok(ModelOutput::for_tool_calls("demo/echo", "", vec![call]))
    });
    let agent = react()
        .no_prompt()
        .tools([ask_user_with(
            AskUserOptions::new().timeout(Duration::from_secs(600)),
        )?])
        .model(Arc::new(model))
        .build()?;
    let out = run(
        &agent,
        Vec::<ChatMessage>::new(),
        RunOptions::new().resource(channel),
    )
    .await?;
    println!("answer: {}", out.state.output().completion());
    Ok(())
}
