//! End to end against a real OpenTelemetry consumer nobody here wrote: Arize Phoenix receives
//! a react run with a sub-agent (`as_tool`) over OTLP/HTTP from `OtelSink`, and the spans are
//! read back through Phoenix's REST API: their names, their parent links, the token counts.
//!
//! Phoenix comes from `scripts/setup-test-env` (target/test-env/venv-phoenix). It runs on free
//! loopback ports, with its own working directory (SQLite storage) and its telemetry and
//! external resources off: nothing leaves loopback. Without the venv the test skips with a
//! printed reason, except when `CI` is set, where its absence is a failure.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actuator::agent::{RunOptions, react, run};
use actuator::model::{ModelOutput, ModelUsage, ScriptedModel, ToolCall};
use actuator::multi::as_tool;
use actuator::otel::OtelSink;
use actuator::prelude::*;
use serde_json::{Value, json};

/// Subtract one number from another.
///
/// # Arguments
/// * `a` - The number to subtract from.
/// * `b` - The number to subtract.
#[tool]
async fn subtract(a: f64, b: f64) -> f64 {
    a - b
}

/// A scripted turn calling `function`, reporting `input`/`output` tokens.
fn turn(id: &str, function: &str, args: Value, tokens: (u64, u64)) -> ModelOutput {
    ModelOutput::for_tool_calls("scripted", "", vec![ToolCall::new(id, function, args)])
        .with_usage(ModelUsage::new(tokens.0, tokens.1))
}

/// `target/test-env`: the test binary is `target/<profile>/deps/<name>`.
fn phoenix_venv() -> Option<PathBuf> {
    let exe = std::env::current_exe().unwrap();
    let dir = exe
        .ancestors()
        .nth(3)
        .unwrap()
        .join("test-env/venv-phoenix");
    if dir.join(".actuator-complete").exists() {
        return Some(dir);
    }
    let reason = format!(
        "{} is missing: run scripts/setup-test-env to install Arize Phoenix",
        dir.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("CI is set and {reason}");
    }
    eprintln!("skipped: {reason}");
    None
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `phoenix serve`, killed on drop (also when the test panics).
struct Phoenix {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Phoenix {
    fn start(venv: &std::path::Path) -> Phoenix {
        let dir = tempfile::tempdir().unwrap();
        let log = std::fs::File::create(dir.path().join("phoenix.log")).unwrap();
        let port = free_port();
        let child = Command::new(venv.join("bin/phoenix"))
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            // Offline: no usage reports, no fonts or scripts from elsewhere, none of the
            // features that reach out (the assistant, the MCP server, Prometheus).
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("PHOENIX_ALLOW_EXTERNAL_RESOURCES", "false")
            .env("PHOENIX_DISABLE_AGENT_ASSISTANT", "true")
            .env("PHOENIX_ENABLE_MCP_SERVER", "false")
            .env("PHOENIX_ENABLE_PROMETHEUS", "false")
            .env("DO_NOT_TRACK", "1")
            .env_remove("PHOENIX_COLLECTOR_ENDPOINT")
            .env_remove("PHOENIX_SQL_DATABASE_URL")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start phoenix: {e}"));
        let mut phoenix = Phoenix { child, port, dir };
        phoenix.wait_ready(Duration::from_secs(120));
        phoenix
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("phoenix.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    fn wait_ready(&mut self, limit: Duration) {
        let started = Instant::now();
        let client = client();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("phoenix exited with {status}:\n{}", self.log_tail());
            }
            let health = client
                .get(self.url("/healthz"))
                .timeout(Duration::from_secs(5))
                .send();
            if health.is_ok_and(|r| r.status().is_success()) {
                eprintln!("phoenix ready after {:.1?}", started.elapsed());
                return;
            }
            assert!(
                started.elapsed() < limit,
                "phoenix was not ready after {limit:?}:\n{}",
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The spans of the default project, read until `want` are there (Phoenix stores what it
    /// receives asynchronously), at most `limit`.
    fn spans(&self, want: usize, limit: Duration) -> Vec<Value> {
        let started = Instant::now();
        let client = client();
        loop {
            let body: Value = client
                .get(self.url("/v1/projects/default/spans?limit=1000"))
                .timeout(Duration::from_secs(10))
                .send()
                .and_then(reqwest::blocking::Response::json)
                .unwrap_or(Value::Null);
            let spans = body["data"].as_array().cloned().unwrap_or_default();
            if spans.len() >= want || started.elapsed() > limit {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain-HTTP client: reqwest's `rustls-no-provider` (the providers' feature) wants a TLS
/// set-up even for `http://`, and this is the one the workspace's clients share.
fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .tls_backend_preconfigured(actuator_model::tls::client_config(false, Vec::new()).unwrap())
        .build()
        .unwrap()
}

/// An attribute of a span as Phoenix returns it: flat (`"a.b": 1`) or nested (`{"a":{"b":1}}`).
fn attribute<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    let attributes = &span["attributes"];
    attributes
        .get(key)
        .or_else(|| key.split('.').try_fold(attributes, |v, part| v.get(part)))
}

#[test]
fn phoenix_receives_a_react_run_with_a_sub_agent() {
    let Some(venv) = phoenix_venv() else {
        return;
    };
    let phoenix = Phoenix::start(&venv);

    let calculator = react()
        .name("calculator")
        .description("Does arithmetic on request.")
        .tools([subtract_tool()])
        .model(Arc::new(ScriptedModel::named(
            "mockllm/scripted",
            [
                turn("c1", "subtract", json!({"a": 330, "b": 138.5}), (30, 3)),
                turn("c2", "submit", json!({"answer": "191.5"}), (40, 4)),
            ],
        )))
        .build()
        .unwrap();
    let supervisor = react()
        .name("supervisor")
        .tools([as_tool(Arc::new(calculator)).build().unwrap()])
        .model(Arc::new(ScriptedModel::named(
            "mockllm/scripted",
            [
                turn(
                    "s1",
                    "calculator",
                    json!({"input": "330 - 138.5?"}),
                    (100, 10),
                ),
                turn("s2", "submit", json!({"answer": "191.5 m"}), (120, 12)),
            ],
        )))
        .build()
        .unwrap();

    let sink = Arc::new(
        OtelSink::builder()
            .endpoint(phoenix.url("/v1/traces"))
            .service_name("actuator-otel-test")
            .build()
            .unwrap(),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime
        .block_on(run(
            &supervisor,
            "How much taller is the Eiffel Tower than the Great Pyramid?",
            RunOptions::default().events(sink.clone()),
        ))
        .unwrap();
    assert_eq!(result.state.output().completion(), "191.5 m");
    sink.force_flush().unwrap();
    sink.shutdown().unwrap();

    // supervisor: 2 chats, the calculator call (its agent: 2 chats, subtract, submit), submit.
    let spans = phoenix.spans(10, Duration::from_secs(30));
    let names: Vec<&str> = spans.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(spans.len(), 10, "{names:?}\n{}", phoenix.log_tail());
    let by_name =
        |name: &str| -> Vec<&Value> { spans.iter().filter(|s| s["name"] == name).collect() };
    let id = |span: &Value| span["context"]["span_id"].as_str().unwrap().to_owned();
    let parent = |span: &Value| span["parent_id"].as_str().map(str::to_owned);

    let root = by_name("invoke_agent supervisor");
    assert_eq!(root.len(), 1, "{names:?}");
    let root = root[0];
    assert_eq!(parent(root), None);
    let trace = root["context"]["trace_id"].as_str().unwrap();
    assert!(
        spans.iter().all(|s| s["context"]["trace_id"] == trace),
        "one trace per run"
    );
    assert_eq!(
        attribute(root, "gen_ai.operation.name"),
        Some(&json!("invoke_agent"))
    );

    let call = by_name("execute_tool calculator");
    assert_eq!(call.len(), 1, "{names:?}");
    assert_eq!(parent(call[0]), Some(id(root)));
    assert_eq!(
        attribute(call[0], "gen_ai.tool.call.id"),
        Some(&json!("s1"))
    );
    let sub = by_name("invoke_agent calculator");
    assert_eq!(sub.len(), 1, "{names:?}");
    assert_eq!(
        parent(sub[0]),
        Some(id(call[0])),
        "the sub-agent is its call's child"
    );
    let subtract = by_name("execute_tool subtract");
    assert_eq!(subtract.len(), 1, "{names:?}");
    assert_eq!(parent(subtract[0]), Some(id(sub[0])));
    let submits = by_name("execute_tool submit");
    assert_eq!(submits.len(), 2, "{names:?}");
    let mut submit_parents: Vec<_> = submits.iter().map(|s| parent(s)).collect();
    submit_parents.sort();
    let mut want = vec![Some(id(root)), Some(id(sub[0]))];
    want.sort();
    assert_eq!(submit_parents, want);

    // Each chat's tokens, under the agent that made it.
    let chats = by_name("chat scripted");
    assert_eq!(chats.len(), 4, "{names:?}");
    let mut tokens: HashMap<Option<String>, Vec<(i64, i64)>> = HashMap::new();
    for chat in &chats {
        assert_eq!(
            attribute(chat, "gen_ai.provider.name"),
            Some(&json!("mockllm"))
        );
        assert_eq!(
            attribute(chat, "gen_ai.request.model"),
            Some(&json!("scripted"))
        );
        assert_eq!(
            attribute(chat, "gen_ai.response.finish_reasons"),
            Some(&json!(["tool_calls"]))
        );
        let count = |key| attribute(chat, key).and_then(Value::as_i64).unwrap();
        tokens.entry(parent(chat)).or_default().push((
            count("gen_ai.usage.input_tokens"),
            count("gen_ai.usage.output_tokens"),
        ));
    }
    for list in tokens.values_mut() {
        list.sort_unstable();
    }
    assert_eq!(tokens[&Some(id(root))], vec![(100, 10), (120, 12)]);
    assert_eq!(tokens[&Some(id(sub[0]))], vec![(30, 3), (40, 4)]);
    // No message contents unless asked.
    assert!(
        spans
            .iter()
            .all(|s| attribute(s, "gen_ai.input.messages").is_none()),
        "contents are off by default"
    );
}
