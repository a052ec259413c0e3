//! Fuzzes the MCP server's request handling: a `ToolServer` (tools `add`, `echo`, `fail` and
//! `note`, which logs; a resource, a resource template and a prompt, both with completions)
//! served over an in-memory duplex pipe with rmcp's newline-delimited JSON transport, exactly
//! as `serve_stdio` serves it. After a valid `initialize` handshake, each line of the input is
//! sent to the server as one message, then a `ping` probe; then the resource is reported
//! changed (`resource_updated`). A panic, a hang or a broken invariant is a finding; the
//! invariants are listed in docs/fuzzing.md.

#![no_main]

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;
use std::time::Duration;

use actuator_mcp::{
    Prompt, PromptArgument, PromptMessage, Resource, ResourceContent, ResourceTemplate,
    ServeOptions, ToolServer,
};
use actuator_tool_core::{
    LogEntry, LogLevel, ParamsBuilder, ToolArgs, ToolContext, ToolDef, ToolError, ToolFailure,
};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// At most this many lines of an input are sent (the rest is dropped).
const MAX_LINES: usize = 64;
/// The probe's id: fuzz lines that use it are not sent.
const PROBE_ID: &str = "fuzz-probe-7f3a";
/// How long the server may take to answer everything (its tools never wait).
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
});

static SERVER: LazyLock<ToolServer> = LazyLock::new(|| {
    let add = ToolDef::builder("add")
        .description("Add two integers.")
        .parameters(
            ParamsBuilder::new()
                .param::<i64>("x", Some("First addend."))
                .param::<i64>("y", Some("Second addend."))
                .build(),
        )
        .handler(|mut args: ToolArgs, _ctx: ToolContext| async move {
            let x: i64 = args.required("x")?;
            let y: i64 = args.required("y")?;
            Ok::<_, ToolFailure>(x.wrapping_add(y).to_string())
        })
        .build()
        .expect("add is well defined");
    // Returns its text as it is: JSON object text becomes `structuredContent` too.
    let echo = ToolDef::builder("echo")
        .description("Echo a text.")
        .parameters(
            ParamsBuilder::new()
                .param::<String>("text", Some("The text."))
                .param::<Option<Vec<String>>>("tags", Some("Tags."))
                .build(),
        )
        .handler(|mut args: ToolArgs, _ctx: ToolContext| async move {
            let text: String = args.required("text")?;
            Ok::<_, ToolFailure>(text)
        })
        .build()
        .expect("echo is well defined");
    let fail = ToolDef::builder("fail")
        .description("Always fails.")
        .handler(|_args: ToolArgs, _ctx: ToolContext| async move {
            Err::<String, ToolFailure>(ToolError::new("it failed").into())
        })
        .build()
        .expect("fail is well defined");
    // Logs at three levels, so `logging/setLevel` decides what the client sees.
    let note = ToolDef::builder("note")
        .description("Logs a debug, an info and an error line.")
        .handler(|_args: ToolArgs, ctx: ToolContext| async move {
            for level in [LogLevel::Debug, LogLevel::Info, LogLevel::Error] {
                ctx.log(LogEntry::new(level, "noted"));
            }
            Ok::<_, ToolFailure>("noted")
        })
        .build()
        .expect("note is well defined");
    let readme = Resource::text(README, "readme", "text/plain", "Read me.");
    let item = ResourceTemplate::new("fuzz://item/{id}", "item")
        .expect("a level-1 template")
        .mime_type("application/json")
        .read(|read| async move {
            let id = read.params.get("id").cloned().unwrap_or_default();
            let body = json!({"id": id}).to_string();
            Ok(vec![ResourceContent::text(
                read.uri,
                "application/json",
                body,
            )])
        })
        .complete("id", |typed, _| complete(&["1", "12", "123"], typed));
    let greet = Prompt::new("greet")
        .description("Greets someone.")
        .argument(PromptArgument::new("name").description("Who.").required())
        .argument(PromptArgument::new("tone").description("How."))
        .get(|args| async move {
            let name = args.get("name").cloned().unwrap_or_default();
            Ok(vec![PromptMessage::user(format!("Hello, {name}."))])
        })
        .complete("name", |typed, _| {
            complete(&["ada", "alan", "grace"], typed)
        });
    ToolServer::new(
        [add, echo, fail, note],
        ServeOptions::default().name("fuzz"),
    )
    .and_then(|s| s.with_resources([readme]))
    .and_then(|s| s.with_resource_templates([item]))
    .and_then(|s| s.with_prompts([greet]))
    .expect("the fuzz server is well defined")
});

/// The fixed resource's URI (the one `resource_updated` reports after each input).
const README: &str = "fuzz://readme";

/// The values that start with what was typed.
fn complete(values: &[&str], typed: &str) -> Vec<String> {
    values
        .iter()
        .filter(|v| v.starts_with(typed))
        .map(|v| (*v).to_owned())
        .collect()
}

fuzz_target!(|data: &[u8]| {
    RUNTIME.block_on(exchange(data));
});

/// What one fuzz line asks of the server.
enum Expect {
    /// A request: one answer, with its id (or, when rmcp cannot read it as a request of its
    /// method, an `Invalid request` error with a null id).
    Answer(Value),
    /// A request whose method is under `notifications/`: rmcp answers it (`-32601` for a
    /// notification's name it knows) or drops it (a name it does not know).
    Maybe(Value),
    /// Not a request (a notification, a response, invalid JSON): no answer with an id.
    Nothing,
}

/// A line the server would read as a request: a JSON object with `"jsonrpc": "2.0"`, a string
/// `method`, and an `id` rmcp reads as its `NumberOrString` (see below). A method under
/// `notifications/` with an id may go unanswered: rmcp drops a message it cannot read whose
/// method is a `notifications/…` name it does not know, id or not (its compatibility rule
/// for other protocols' notifications).
fn classify(line: &[u8]) -> Expect {
    let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(strip_bom(line)) else {
        return Expect::Nothing;
    };
    let id = object.get("id").and_then(request_id);
    let method = object.get("method").and_then(Value::as_str);
    match (object.get("jsonrpc") == Some(&json!("2.0")), method, id) {
        (true, Some(m), Some(id)) if m.starts_with("notifications/") => Expect::Maybe(id),
        (true, Some(_), Some(id)) => Expect::Answer(id),
        _ => Expect::Nothing,
    }
}

/// An id as rmcp reads it (its `NumberOrString`): a string, an integer within `i64`, or a
/// number in float form that is an integer below 2^53 in magnitude (answered with the
/// integer's id).
fn request_id(id: &Value) -> Option<Value> {
    match id {
        Value::String(s) => Some(Value::String(s.clone())),
        Value::Number(n) => n
            .as_i64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0)
                    .map(|f| f as i64)
            })
            .map(Value::from),
        _ => None,
    }
}

fn strip_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

/// The id of a `notifications/cancelled` line: a request it names may go unanswered.
fn cancelled_id(line: &[u8]) -> Option<Value> {
    let value: Value = serde_json::from_slice(strip_bom(line)).ok()?;
    if value.get("method")? != "notifications/cancelled" {
        return None;
    }
    request_id(value.get("params")?.get("requestId")?)
}

async fn exchange(data: &[u8]) {
    let (client, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    let served = tokio::spawn(SERVER.clone().serve_io(server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();

    let init = json!({"jsonrpc": "2.0", "id": PROBE_ID, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "fuzz", "version": "0"}}});
    let mut first = init.to_string().into_bytes();
    first.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    client_write
        .write_all(&first)
        .await
        .expect("the handshake is sent");
    let answer = tokio::time::timeout(ANSWER_WITHIN, lines.next_line())
        .await
        .expect("initialize is answered in time")
        .expect("the pipe is readable")
        .expect("initialize is answered");
    let answer: Value = serde_json::from_str(&answer).expect("initialize's answer is JSON");
    assert_eq!(answer["id"], PROBE_ID, "{answer}");
    assert!(answer["result"].is_object(), "{answer}");

    // What each line expects, and the bytes to send (lines naming the probe's id are left out).
    // `sent`: how many requests used each id. The protocol forbids reusing an id in a session;
    // rmcp answers a reused id at least once (not necessarily once per request), so each id
    // must get at least one answer and at most one per request that used it.
    let mut sent: HashMap<String, usize> = HashMap::new();
    let mut required: HashSet<String> = HashSet::new();
    let mut may_go_unanswered: Vec<String> = Vec::new();
    let mut out = Vec::with_capacity(data.len() + 128);
    for line in data.split(|b| *b == b'\n').take(MAX_LINES) {
        if line
            .windows(PROBE_ID.len())
            .any(|w| w == PROBE_ID.as_bytes())
        {
            continue;
        }
        match classify(line) {
            Expect::Answer(id) => {
                *sent.entry(id.to_string()).or_default() += 1;
                required.insert(id.to_string());
            }
            Expect::Maybe(id) => *sent.entry(id.to_string()).or_default() += 1,
            Expect::Nothing => {}
        }
        if let Some(id) = cancelled_id(line) {
            may_go_unanswered.push(id.to_string());
        }
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    let probe = json!({"jsonrpc": "2.0", "id": PROBE_ID, "method": "ping"});
    out.extend_from_slice(probe.to_string().as_bytes());
    out.push(b'\n');
    // Written concurrently with the reading below, so a full pipe cannot deadlock us.
    let writer = tokio::spawn(async move {
        let _ = client_write.write_all(&out).await;
        client_write
    });

    let mut answers: HashMap<String, usize> = HashMap::new();
    let mut null_errors = 0usize;
    let mut probe_answered = false;
    // Ids still waiting for an answer; those a later cancellation names need not be waited for.
    let waiting = |answers: &HashMap<String, usize>| -> Vec<String> {
        required
            .iter()
            .filter(|id| !answers.contains_key(*id) && !may_go_unanswered.contains(id))
            .cloned()
            .collect()
    };
    let read = tokio::time::timeout(ANSWER_WITHIN, async {
        while !(probe_answered && waiting(&answers).len() <= null_errors) {
            let Some(line) = lines.next_line().await.expect("the pipe is readable") else {
                break;
            };
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("the server wrote a line that is not JSON ({e}): {line}")
            });
            check_well_formed(&message);
            if message.get("method").is_some() {
                continue; // a notification (logging, progress) or a request to the client
            }
            let id = message.get("id").unwrap_or(&Value::Null);
            if id.is_null() {
                assert_eq!(message["error"]["code"], -32600, "{message}");
                null_errors += 1;
            } else if *id == json!(PROBE_ID) {
                probe_answered = true;
            } else {
                let key = id.to_string();
                let allowed = sent.get(&key).copied().unwrap_or(0);
                let count = answers.entry(key).or_default();
                *count += 1;
                assert!(
                    *count <= allowed,
                    "an answer to a request that was not sent (or answered twice): {message}"
                );
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "the server did not answer within {ANSWER_WITHIN:?}: probe answered {probe_answered}, \
         {null_errors} invalid-request errors, unanswered ids {:?} of {:?}",
        waiting(&answers),
        required
    );
    assert!(probe_answered, "the probe ping was not answered");

    // A change to the resource reaches this connection's session at most: every connection
    // has its own, and the sessions of earlier inputs have ended.
    // The pipe is read meanwhile, so a full pipe cannot hold the notification up.
    let told = tokio::time::timeout(ANSWER_WITHIN, async {
        let update = SERVER.resource_updated(README);
        tokio::pin!(update);
        loop {
            tokio::select! {
                told = &mut update => return told,
                line = lines.next_line() => match line {
                    Ok(Some(line)) => check_well_formed(
                        &serde_json::from_str(&line).unwrap_or_else(|e| {
                            panic!("the server wrote a line that is not JSON ({e}): {line}")
                        }),
                    ),
                    _ => return update.await,
                },
            }
        }
    })
    .await
    .expect("resource_updated returns in time");
    assert!(
        told <= 1,
        "{told} sessions were told of one connection's subscription"
    );

    // Closing the client's side ends the server cleanly.
    let mut client_write = writer.await.expect("the writer task ends");
    let _ = client_write.shutdown().await;
    drop(client_write);
    drop(lines);
    let ended = tokio::time::timeout(ANSWER_WITHIN, served)
        .await
        .expect("the server ends when its client goes away")
        .expect("the server task does not panic");
    let _ = ended;
}

/// A JSON-RPC 2.0 message: a response (exactly one of `result`, with a non-null `id`, or
/// `error`, with an integer `code` and a string `message`) or a request / notification
/// (`method`).
fn check_well_formed(message: &Value) {
    assert_eq!(message["jsonrpc"], "2.0", "{message}");
    if message.get("method").is_some() {
        assert!(message["method"].is_string(), "{message}");
        return;
    }
    match (message.get("result"), message.get("error")) {
        (Some(result), None) => {
            assert!(
                message.get("id").is_some_and(|id| !id.is_null()),
                "{message}"
            );
            assert!(result.is_object(), "{message}");
        }
        // An error about a message whose id could not be read has a null id, or (rmcp, after
        // the MCP schema of 2025-11-25, where an error's id is optional) none.
        (None, Some(error)) => {
            assert!(error["code"].is_i64(), "{message}");
            assert!(error["message"].is_string(), "{message}");
        }
        _ => panic!("a response needs exactly one of result and error: {message}"),
    }
}
