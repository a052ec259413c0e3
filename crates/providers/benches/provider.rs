//! W6: one react turn through the OpenAI Chat Completions provider, against a local server
//! that answers at once with a canned completion; the Python twin is
//! `bench/python-reference/w6_provider.py` (Inspect's `openai` provider), run by `cargo xtask
//! bench` against the same server process.
//!
//! `provider --serve` starts the canned server (`benches/w6/server.rs`) on a free loopback
//! port, prints `LISTENING http://127.0.0.1:PORT` and serves until its stdin closes.
//!
//! `provider --server http://127.0.0.1:PORT [--turns N] [--quick]` measures against it:
//!
//! - **turn**: the model is `openai/gpt-4.1-mini` built with `ModelOptions` (base URL
//!   `{server}/v1`, a dummy key); the conversation is `w6/conversation.rs` (100 messages, about
//!   47 KiB of JSON), the tools `add` and `search` of the shared fixture. One turn is what
//!   react's loop does: `RunContext::generate_shared` (request built, POSTed, answer parsed, a
//!   model event emitted whose input shares what earlier turns recorded, as react's does), the
//!   assistant message appended, `RunContext::execute_tools` (the `add` call landed, its tool
//!   event emitted), the two messages dropped again so every turn sends the same 100 messages. Each turn has a fresh `EventLog` (Inspect's side a fresh
//!   `Transcript`). Multi-thread runtime (what `#[tokio::main]` gives), the turns in
//!   `block_on`.
//! - **client overhead** per turn = the turn's time − the server handler's own time for that
//!   turn's request (read back from the server's `/stats`, paired by order). What is left is
//!   request build, HTTP on both ends of the loopback connection, parse and bookkeeping.
//! - **raw POST floor**: the same request body (the bytes the provider sent, from `/last`)
//!   POSTed with a plain `reqwest::Client` and the answer read as bytes: HTTP alone.
//! - **react agent**: `react()` with the same tools and an `on_continue` that stops after the
//!   first turn, run on a copy of the conversation (its system prompt and `submit` tool added):
//!   one generation and one tool call through the agent itself.
//! - **parts** (`w6/breakdown.rs`): the request body as a `Value` tree cloned, written and
//!   dropped, and the same messages written from borrowed structs instead.
//! - the same turns on a **current-thread** runtime.
//!
//! `--profile` runs only the turns (on the multi-thread runtime) and prints nothing, for
//! `perf record`.
//!
//! Medians after a warm-up (not reported), printed as `RESULT {json}` lines.

#[path = "../../tool-core/benches/fixture/mod.rs"]
mod fixture;
mod w6;

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Instant;

use actuator_agent::{
    RunContext, RunOptions, react,
    react::{ContinueDecision, OnContinue},
    run,
};
use actuator_events::{EventLog, SharedMessages};
use actuator_exec::ExecuteOptions;
use actuator_model::{ChatMessage, GenerateConfig, GenerateRequest, Model};
use actuator_providers::ModelOptions;
use actuator_tool_core::{ToolDef, ToolInfo};
use serde_json::json;

use w6::canned::MODEL;
use w6::server::{Server, Stats};

const TOTAL: &str = "turn (generate + execute_tools), 100 messages: total";
const OVERHEAD: &str = "turn, 100 messages: client overhead (total - server handler time)";
const GENERATE: &str = "turn, 100 messages: generate (request build, HTTP, parse, event)";
const EXECUTE: &str = "turn, 100 messages: execute_tools (1 call add)";
const SERVER: &str = "server handler time per request";
const FLOOR: &str = "raw POST of the same body: client overhead (HTTP client floor)";
const BODY: &str = "request body size";

fn main() {
    // The bench's own plain-HTTP clients are built with `reqwest::Client::new()`, which needs a
    // process-wide crypto provider: this crate enables reqwest's `rustls-no-provider` and hands
    // its own clients the `ring` provider directly.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut args = std::env::args().skip(1);
    let mut server = None;
    let mut turns = 3000;
    let mut serve = false;
    let mut profile = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--serve" => serve = true,
            "--server" => server = args.next(),
            "--turns" => turns = args.next().and_then(|v| v.parse().ok()).unwrap_or(turns),
            "--quick" => turns = 500,
            "--profile" => profile = true,
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    if serve {
        run_server();
        return;
    }
    let Some(server) = server else {
        note("usage: provider --serve | provider --server http://127.0.0.1:PORT [--turns N]");
        std::process::exit(2);
    };
    let server = server.trim_end_matches('/').to_owned();
    let multi = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a multi-thread runtime");
    let bench = Bench::new(&server);
    if profile {
        multi.block_on(bench.profile(turns));
        return;
    }
    multi.block_on(bench.all(turns));
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    let bench = Bench::new(&server);
    current.block_on(bench.current_thread(turns));
}

/// `--serve`: the canned server on a free port, until stdin closes.
fn run_server() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let port = listener.local_addr().expect("the bound address").port();
        println!("LISTENING http://127.0.0.1:{port}");
        let _ = std::io::stdout().flush();
        // The parent closing our stdin (or dying) ends the server.
        std::thread::spawn(|| {
            let mut line = String::new();
            while std::io::stdin().lock().read_line(&mut line).unwrap_or(0) > 0 {
                line.clear();
            }
            std::process::exit(0);
        });
        if let Err(e) = Server::default().serve(listener).await {
            note(&format!("the server stopped: {e}"));
            std::process::exit(1);
        }
    });
}

/// One client's setup.
struct Bench {
    server: String,
    model: Arc<dyn Model>,
    tools: Vec<ToolDef>,
    infos: Arc<[Arc<ToolInfo>]>,
    conversation: Vec<ChatMessage>,
    http: reqwest::Client,
    config: GenerateConfig,
}

/// The times of one turn, in seconds.
struct Turn {
    total: f64,
    generate: f64,
    execute: f64,
}

impl Bench {
    fn new(server: &str) -> Self {
        let model = ModelOptions::new()
            .api_key("sk-w6-bench")
            .base_url(format!("{server}/v1"))
            .build(&format!("openai/{MODEL}"))
            .expect("the OpenAI model");
        let tools = vec![fixture::add_tool(), fixture::search_tool()];
        let infos = tools.iter().map(ToolDef::info_arc).collect();
        let conversation = w6::conversation::build();
        assert_eq!(conversation.len(), 100);
        Bench {
            server: server.to_owned(),
            model,
            tools,
            infos,
            conversation,
            http: reqwest::Client::new(),
            config: GenerateConfig::default(),
        }
    }

    /// Every measurement on the multi-thread runtime.
    async fn all(&self, turns: usize) {
        let mut conversation = self.conversation.clone();
        let mut recorded = SharedMessages::new();
        for _ in 0..turns / 10 {
            self.turn(&mut conversation, &mut recorded).await;
        }
        self.reset().await;
        let mut times = Vec::with_capacity(turns);
        for _ in 0..turns {
            times.push(self.turn(&mut conversation, &mut recorded).await);
        }
        let stats = self.stats(turns).await;
        let handler: Vec<f64> = stats.handler_ns.iter().map(|&n| n as f64 * 1e-9).collect();
        let overhead: Vec<f64> = times
            .iter()
            .zip(&handler)
            .map(|(t, h)| t.total - h)
            .collect();
        emit(TOTAL, &times.iter().map(|t| t.total).collect::<Vec<_>>());
        emit(OVERHEAD, &overhead);
        emit(
            GENERATE,
            &times.iter().map(|t| t.generate).collect::<Vec<_>>(),
        );
        emit(
            EXECUTE,
            &times.iter().map(|t| t.execute).collect::<Vec<_>>(),
        );
        emit(SERVER, &handler);
        let mut sizes: Vec<f64> = stats.body_bytes.iter().map(|&b| b as f64).collect();
        sizes.sort_by(f64::total_cmp);
        row(
            BODY,
            json!({"median": sizes[sizes.len() / 2] / 1024.0, "unit": "KiB", "runs": sizes.len()}),
        );

        let body = self.floor(turns).await;
        for (case, samples) in w6::breakdown::parts(&body, &self.conversation, turns) {
            emit(&case, &samples);
        }
        self.react_turns(turns).await;
    }

    /// `--profile`: only the turns, nothing printed, for `perf record`.
    async fn profile(&self, turns: usize) {
        let mut conversation = self.conversation.clone();
        let mut recorded = SharedMessages::new();
        for _ in 0..turns {
            self.turn(&mut conversation, &mut recorded).await;
        }
    }

    /// The turn on a current-thread runtime: the client overhead only.
    async fn current_thread(&self, turns: usize) {
        let mut conversation = self.conversation.clone();
        let mut recorded = SharedMessages::new();
        for _ in 0..turns / 10 {
            self.turn(&mut conversation, &mut recorded).await;
        }
        self.reset().await;
        let times: Vec<Turn> = {
            let mut v = Vec::with_capacity(turns);
            for _ in 0..turns {
                v.push(self.turn(&mut conversation, &mut recorded).await);
            }
            v
        };
        let stats = self.stats(turns).await;
        let overhead: Vec<f64> = times
            .iter()
            .zip(&stats.handler_ns)
            .map(|(t, &h)| t.total - h as f64 * 1e-9)
            .collect();
        emit(
            "turn, current-thread runtime: client overhead (total - server handler time)",
            &overhead,
        );
    }

    /// One turn as react's loop does it; the conversation is left as it was.
    async fn turn(
        &self,
        conversation: &mut Vec<ChatMessage>,
        recorded: &mut SharedMessages,
    ) -> Turn {
        let cx = RunContext::with_events(EventLog::new());
        let t0 = Instant::now();
        let output = cx
            .generate_shared(
                &*self.model,
                GenerateRequest::new(conversation)
                    .shared_tools(&self.infos)
                    .config(&self.config),
                recorded,
            )
            .await
            .expect("a generation");
        let message = output.message().cloned().expect("an assistant message");
        conversation.push(ChatMessage::Assistant(Box::new(message)));
        let t1 = Instant::now();
        let result = cx
            .execute_tools(conversation, &self.tools, &ExecuteOptions::default())
            .await
            .expect("the tool call");
        let t2 = Instant::now();
        assert_eq!(result.messages.len(), 1);
        assert_eq!(result.messages[0].text(), "7");
        conversation.pop();
        drop(result);
        drop(cx);
        Turn {
            total: (t2 - t0).as_secs_f64(),
            generate: (t1 - t0).as_secs_f64(),
            execute: (t2 - t1).as_secs_f64(),
        }
    }

    /// The provider's own request body POSTed with a plain client: HTTP alone. Returns that
    /// body.
    async fn floor(&self, turns: usize) -> hyper::body::Bytes {
        let body = self
            .http
            .get(format!("{}/last", self.server))
            .send()
            .await
            .expect("GET /last")
            .bytes()
            .await
            .expect("the last body");
        assert!(body.len() > 10_000, "the last request body is {body:?}");
        let url = format!("{}/v1/chat/completions", self.server);
        let client = reqwest::Client::new();
        let post = || async {
            let t0 = Instant::now();
            let answer = client
                .post(&url)
                .header("content-type", "application/json")
                .header("authorization", "Bearer sk-w6-bench")
                .body(body.clone())
                .send()
                .await
                .expect("a raw POST")
                .bytes()
                .await
                .expect("the answer");
            let t = t0.elapsed().as_secs_f64();
            assert_eq!(answer.len(), w6::canned::CANNED.len());
            t
        };
        for _ in 0..turns / 10 {
            post().await;
        }
        self.reset().await;
        let mut times = Vec::with_capacity(turns);
        for _ in 0..turns {
            times.push(post().await);
        }
        let stats = self.stats(turns).await;
        let overhead: Vec<f64> = times
            .iter()
            .zip(&stats.handler_ns)
            .map(|(t, &h)| t - h as f64 * 1e-9)
            .collect();
        emit(FLOOR, &overhead);
        body
    }

    /// One turn through the react agent itself, stopped by `on_continue` after it.
    async fn react_turns(&self, turns: usize) {
        let stop = OnContinue::Fn(Arc::new(|_| Box::pin(async { ContinueDecision::Stop })));
        let agent = react()
            .model(Arc::clone(&self.model))
            .tools(self.tools.clone())
            .on_continue(stop)
            .build()
            .expect("the react agent");
        let once = || async {
            let input = self.conversation.clone();
            let t0 = Instant::now();
            let run = run(&agent, input, RunOptions::new().events(EventLog::new()))
                .await
                .expect("the agent run");
            let t = t0.elapsed().as_secs_f64();
            let last = run.state.messages.last().map(ChatMessage::text);
            assert_eq!(last.as_deref(), Some("7"));
            t
        };
        for _ in 0..turns / 10 {
            once().await;
        }
        self.reset().await;
        let mut times = Vec::with_capacity(turns);
        for _ in 0..turns {
            times.push(once().await);
        }
        let stats = self.stats(turns).await;
        let overhead: Vec<f64> = times
            .iter()
            .zip(&stats.handler_ns)
            .map(|(t, &h)| t - h as f64 * 1e-9)
            .collect();
        emit("react agent, one turn (on_continue stops): total", &times);
        emit(
            "react agent, one turn: client overhead (total - server handler time)",
            &overhead,
        );
    }

    async fn reset(&self) {
        self.http
            .post(format!("{}/reset", self.server))
            .send()
            .await
            .expect("POST /reset");
    }

    /// The server's records; exactly `turns` requests must have reached it.
    async fn stats(&self, turns: usize) -> Stats {
        let stats: Stats = self
            .http
            .get(format!("{}/stats", self.server))
            .send()
            .await
            .expect("GET /stats")
            .json()
            .await
            .expect("the stats");
        assert_eq!(stats.handler_ns.len(), turns, "one request per turn");
        stats
    }
}

/// A note for people, on stdout so the workspace lint against `eprintln!` is kept.
fn note(text: &str) {
    println!("# {text}");
}

/// Prints one `RESULT` line: median and nearest-rank p90 of `samples` seconds, in µs.
fn emit(case: &str, samples: &[f64]) {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = |q: f64| {
        let r = ((q / 100.0 * sorted.len() as f64) + 0.4999999).round() as usize;
        sorted[r.clamp(1, sorted.len()) - 1]
    };
    row(
        case,
        json!({
            "median": rank(50.0) * 1e6,
            "p90": rank(90.0) * 1e6,
            "min": sorted[0] * 1e6,
            "runs": sorted.len(),
            "unit": "us",
        }),
    );
}

fn row(case: &str, mut fields: serde_json::Value) {
    fields["workload"] = json!("W6");
    fields["case"] = json!(case);
    println!("RESULT {fields}");
}
