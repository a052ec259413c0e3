//! `cargo xtask bench`: builds the Rust benchmarks in release, runs them, collects their
//! medians, optionally runs the Python reference next to them, and prints one table.
//!
//! Rust figures come from: the divan benches `schema` (tool-core, W1), `dialect` (dialect, W1)
//! and `execute` (exec, W2, W4); the plain-loop bench binaries `batch` (exec, W3), `react`
//! (agent, W5), `checkpoint` (agent: checkpoints at 100 messages), `provider` (providers,
//! W6, see `w6.rs`), `sandbox` (tools, W7),
//! `sandbox_docker` (tools with its `docker` feature, W7d), `sse`
//! (providers: one long server-sent-event line, issue 30) and `merge` (eval: shard logs
//! merged, issue 40, each measure in a child process of its own), `rate_limit` (providers:
//! adaptive concurrency against a server enforcing a concurrency limit, issue 38), which
//! print `RESULT {json}` lines; `w8` (mcp, W8, with the MCP Python SDK: `w8.rs`); the example
//! `w0_first_call` (actuator, W0),
//! spawned many times; and two builds (build cost). See `docs/benchmarks.md`.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use crate::measure::{Measure, Unit, W9_PER_SAMPLE, capture, results, root, sh, w5_label};
use crate::python::{self, PythonOptions};
use crate::report;

const HELP: &str = "usage: cargo xtask bench [options]

Builds the Rust benchmarks in release, runs them, and prints one table of medians:
workload, Actuator, Inspect AI, ratio. Results are also written to target/bench/.

options:
  --quick               fewer samples (a few minutes); skips the build-cost step
  --with-python         also run the Python reference (Inspect AI 0.3.285) in a virtualenv
                        under target/python-reference and put its medians in the table
  --python-ref DIR      the reference folder (default: bench/python-reference in the repository)
  --python BIN          the interpreter that makes the virtualenv (default: python3)
  --python-results FILE use an existing results/latest.json instead of running Python
  --fresh-venv          recreate the virtualenv even if it matches the lock file
  --peer                also run the openai-agents peer of the Python reference (not in the
                        table; needs --with-python)
  --peers               also build and run the Rust peers of W2 (rig-agent's ToolSet::execute,
                        rmcp's ToolRouter) from peers/, in target/peers: rows beside our W2 row
                        and a table of what each does with invalid arguments and unknown keys
                        (independent of --only: `--peers --only w2` runs both W2 benches)
  --build-cost          measure the clean and incremental build times (default unless --quick):
                        `cargo build -p actuator`, and a first app (facade default + providers)
                        beside the same app on rig 0.44 and beside rig-core's default features
  --build-rounds N      clean builds of each first app, in turn, the order reversed every round
                        (default 1); each figure is the median
  --no-build-cost       skip them
  --only LIST           only these steps: comma-separated of w0,w1,w2,w3,w4,w5,w6,w7,w7d,w8,w9,
                        sse, checkpoint, merge, ratelimit, build (passed on to the Python
                        reference as its workloads W0, W1, …; sse, checkpoint, merge and
                        ratelimit have no Python
                        counterpart; w7d
                        is W7 in Docker, skipped without Docker unless named here or CI is set)";

/// The command line.
#[derive(Debug)]
struct Options {
    quick: bool,
    with_python: bool,
    python_ref: Option<PathBuf>,
    python: String,
    python_results: Option<PathBuf>,
    fresh_venv: bool,
    peer: bool,
    peers: bool,
    build_cost: Option<bool>,
    build_rounds: usize,
    only: Option<Vec<String>>,
}

impl Options {
    fn parse(args: &[String]) -> Result<Option<Options>, String> {
        let mut o = Options {
            quick: false,
            with_python: false,
            python_ref: None,
            python: "python3".to_owned(),
            python_results: None,
            fresh_venv: false,
            peer: false,
            peers: false,
            build_cost: None,
            build_rounds: 1,
            only: None,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |name: &str| {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            match a.as_str() {
                "-h" | "--help" => return Ok(None),
                "--quick" => o.quick = true,
                "--with-python" => o.with_python = true,
                "--python-ref" => o.python_ref = Some(PathBuf::from(value(a)?)),
                "--python" => o.python = value(a)?,
                "--python-results" => o.python_results = Some(PathBuf::from(value(a)?)),
                "--fresh-venv" => o.fresh_venv = true,
                "--peer" => o.peer = true,
                "--peers" => o.peers = true,
                "--build-cost" => o.build_cost = Some(true),
                "--no-build-cost" => o.build_cost = Some(false),
                "--build-rounds" => {
                    o.build_rounds = value(a)?
                        .parse()
                        .ok()
                        .filter(|&n: &usize| n > 0)
                        .ok_or("--build-rounds needs a whole number above 0")?;
                }
                "--only" => {
                    o.only = Some(
                        value(a)?
                            .split(',')
                            .map(|s| s.trim().to_lowercase())
                            .collect(),
                    );
                }
                other => return Err(format!("unknown option '{other}'\n\n{HELP}")),
            }
        }
        Ok(Some(o))
    }

    fn runs(&self, step: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|s| s == step))
    }

    /// Whether `step` was asked for by name (`--only …,step,…`): then a missing component
    /// it needs is an error, not a skipped step.
    pub(crate) fn asked(&self, step: &str) -> bool {
        self.only
            .as_ref()
            .is_some_and(|only| only.iter().any(|s| s == step))
    }

    fn build_cost(&self) -> bool {
        self.build_cost.unwrap_or(!self.quick) && self.runs("build")
    }
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// The exit status of a bench binary that cannot run because a component it needs is missing
/// (the sandbox bench without bubblewrap, the Docker one without Docker), as the binary
/// documents.
const MISSING_COMPONENT: i32 = 3;

/// Runs a bench binary as [`capture`] does, but `None` when it exits with
/// [`MISSING_COMPONENT`] and the step is not `required`: the step is then skipped, so that
/// a machine without the test set-up still gets the rest of the table.
fn capture_unless_missing(
    cmd: &mut Command,
    step: &str,
    required: bool,
) -> Result<Option<String>, String> {
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    match out.status.code() {
        Some(MISSING_COMPONENT) if !required => Ok(None),
        Some(MISSING_COMPONENT) => Err(format!(
            "{step}: a component it needs is missing (see above); run scripts/setup-test-env"
        )),
        _ if !out.status.success() => Err(format!("{cmd:?} failed: {}", out.status)),
        _ => String::from_utf8(out.stdout)
            .map(Some)
            .map_err(|e| e.to_string()),
    }
}

/// The entry point of `cargo xtask bench`.
pub fn main(args: &[String]) -> Result<(), String> {
    let Some(options) = Options::parse(args)? else {
        println!("{HELP}");
        return Ok(());
    };
    let root = root();
    let started = Instant::now();
    let mut rust: BTreeMap<String, Measure> = BTreeMap::new();

    // The build-cost step builds in its own folders: `--only build` compiles no benchmark.
    const BENCH_STEPS: [&str; 15] = [
        "w0",
        "w1",
        "w2",
        "w3",
        "w4",
        "w5",
        "w6",
        "w7",
        "w7d",
        "w8",
        "w9",
        "sse",
        "checkpoint",
        "merge",
        "ratelimit",
    ];
    let bins = if BENCH_STEPS.iter().any(|s| options.runs(s)) {
        build(&root)?
    } else {
        BTreeMap::new()
    };
    let bin = |name: &str| {
        bins.get(name)
            .cloned()
            .ok_or_else(|| format!("the build produced no '{name}' executable"))
    };
    let samples = if options.quick { 20 } else { 100 };

    if options.runs("w0") {
        step("W0: process start to first tool call");
        w0(
            &bin("w0_first_call")?,
            if options.quick { 15 } else { 40 },
            &mut rust,
        )?;
    }
    if options.runs("w1") {
        step("W1: schema and dialects (divan) and first construction in fresh processes");
        let schema = bin("schema")?;
        first_construction(&schema, if options.quick { 10 } else { 30 }, &mut rust)?;
        divan(&schema, samples, &mut rust)?;
        divan(&bin("dialect")?, samples, &mut rust)?;
    }
    if options.runs("w2") || options.runs("w4") {
        step("W2, W4: execute_tools, parts and truncation (divan)");
        divan(&bin("execute")?, samples, &mut rust)?;
    }
    let mut peers = Vec::new();
    if options.peers {
        step("W2 peers: rig-agent and rmcp on the same `add` (peers/, divan)");
        peers = crate::peers::run(&root, samples, &mut rust)?;
    }
    if options.runs("w3") {
        step("W3: batches of calls (multi-thread runtime)");
        let mut cmd = Command::new(bin("batch")?);
        if options.quick {
            cmd.arg("--quick");
        }
        results(&capture(&mut cmd)?, &mut rust);
    }
    if options.runs("w5") {
        step("W5: react agents, one process per K, peak RSS read from /proc");
        w5(&bin("react")?, options.quick, &mut rust)?;
        // Issue 37: the OTLP exporter on (batching to a receiver on loopback) against events
        // off, interleaved in one process as the events ratio above.
        let runs = if options.quick { "200" } else { "1000" };
        results(
            &capture(Command::new(bin("react_otel")?).args(["--k", "1", "--runs", runs]))?,
            &mut rust,
        );
    }
    if options.runs("checkpoint") {
        step(
            "Checkpoints at 100 messages: a save, a journal write, a resume (file store and memory), and W5's time per turn with a checkpoint every turn, interleaved",
        );
        let mut cmd = Command::new(bin("checkpoint")?);
        if options.quick {
            cmd.arg("--quick");
        }
        results(&capture(&mut cmd)?, &mut rust);
    }
    // The canned server stays up until the Python reference has run against it too.
    let w6_server = if options.runs("w6") {
        step("W6: one react turn through the OpenAI provider, canned local server, 100 messages");
        Some(crate::w6::run(&bin("provider")?, options.quick, &mut rust)?)
    } else {
        None
    };
    if options.runs("w7") {
        step("W7: bash in a LocalSandbox (bubblewrap), one call and 100 parallel");
        let mut cmd = Command::new(bin("sandbox")?);
        if options.quick {
            cmd.arg("--quick");
        }
        let required = options.asked("w7") || std::env::var_os("CI").is_some();
        match capture_unless_missing(&mut cmd, "W7", required)? {
            Some(out) => results(&out, &mut rust),
            None => eprintln!("   W7 skipped: bubblewrap is missing (run scripts/setup-test-env)"),
        }
    }
    if options.runs("w7d") {
        step(
            "W7d: bash in a DockerSandbox (the reference's default compose file): one call, 100 parallel, a sample's set-up and tear-down",
        );
        let mut cmd = Command::new(bin("sandbox_docker")?);
        if options.quick {
            cmd.arg("--quick");
        }
        let required = options.asked("w7d") || std::env::var_os("CI").is_some();
        match capture_unless_missing(&mut cmd, "W7d", required)? {
            Some(out) => results(&out, &mut rust),
            None => eprintln!("   W7d skipped: Docker is missing (run scripts/setup-test-env)"),
        }
    }
    if options.runs("w8") {
        step("W8: MCP tools/call over stdio, Actuator's server and client beside the Python SDK's");
        let asked = options.asked("w8");
        crate::w8::run(&bin("w8")?, &root, options.quick, asked, &mut rust)?;
    }
    if options.runs("sse") {
        step("SSE: one long server-sent-event line through the OpenAI provider (1, 4, 16 MiB)");
        let mut cmd = Command::new(bin("sse")?);
        let (sizes, runs) = if options.quick {
            ("1,4", "3")
        } else {
            ("1,4,16", "5")
        };
        cmd.args(["--sizes", sizes, "--runs", runs]);
        results(&capture(&mut cmd)?, &mut rust);
    }
    if options.runs("w9") {
        step(
            "W9: an evaluation of 10 000 samples (1 000 with --quick), 100 and then 1 000 in flight, log written and read back",
        );
        // The yielding model keeps every allowed sample alive at once, as a model behind a
        // network does (and as Inspect's samples are): the ready one runs them one by one.
        for in_flight in ["100", "1000"] {
            let mut cmd = Command::new(bin("eval")?);
            cmd.args(["--model", "yield", "--max-samples", in_flight]);
            if options.quick {
                cmd.arg("--quick");
            }
            results(&capture(&mut cmd)?, &mut rust);
        }
        w9_per_sample_in_flight(&mut rust);
    }
    if options.runs("merge") {
        step(
            "Merge: 64 shard logs of 1 000 samples into one (16 with --quick), beside one shard read whole and all of them",
        );
        // The shard logs are written once and kept for later runs.
        let cache = root.join("target").join("bench").join("merge-shards");
        let mut cmd = Command::new(bin("merge")?);
        cmd.arg("--cache").arg(cache);
        if options.quick {
            cmd.arg("--quick");
        }
        results(&capture(&mut cmd)?, &mut rust);
    }
    if options.runs("ratelimit") {
        step(
            "Rate limit: adaptive concurrency against a server taking 16 requests at once (100 ms each, 429 beyond), 400 requests",
        );
        let mut cmd = Command::new(bin("rate_limit")?);
        cmd.args(["--runs", if options.quick { "1" } else { "3" }]);
        results(&capture(&mut cmd)?, &mut rust);
    }
    if options.build_cost() {
        step(
            "build cost: clean `cargo build -p actuator`, an incremental rebuild, first apps (ours, rig's)",
        );
        crate::build_cost::run(&root, options.build_rounds, &mut rust)?;
    }

    let (inspect, meta) = match (&options.python_results, options.with_python) {
        (Some(path), _) => python::read_results(path).map(|(r, m)| (Some(r), m))?,
        (None, true) => {
            let reference = options
                .python_ref
                .clone()
                .unwrap_or_else(|| root.join("bench").join("python-reference"));
            let path = python::run(
                &root,
                &PythonOptions {
                    reference,
                    python: options.python.clone(),
                    quick: options.quick,
                    fresh_venv: options.fresh_venv,
                    peer: options.peer,
                    only: options.only.clone(),
                    env: w6_server
                        .as_ref()
                        .map(crate::w6::Server::python_env)
                        .unwrap_or_default(),
                },
            )?;
            python::read_results(&path).map(|(r, m)| (Some(r), m))?
        }
        (None, false) => (None, Value::Null),
    };
    drop(w6_server);

    let table = report::table(&rust, inspect.as_ref());
    let targets = report::targets(&rust, inspect.as_ref()) + &crate::peers::behaviour_table(&peers);
    let machine = machine();
    println!("\n{table}\n{targets}");
    println!(
        "machine: {machine}; Rust run quick={}; total {:.0} s",
        options.quick,
        started.elapsed().as_secs_f64()
    );

    let out = root.join("target").join("bench");
    fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let rust_json: serde_json::Map<String, Value> = rust
        .iter()
        .map(|(k, m)| {
            let unit = match m.unit {
                Unit::Seconds => "s",
                Unit::Bytes => "B",
                Unit::PerSecond => "1/s",
                Unit::SamplesPerSecond => "samples/s",
                Unit::Ratio => "x",
            };
            (k.clone(), json!({"median": m.value, "unit": unit}))
        })
        .collect();
    let all = json!({"machine": machine, "quick": options.quick, "rust": rust_json,
                     "python_meta": meta});
    let text = serde_json::to_string_pretty(&all).map_err(|e| e.to_string())?;
    fs::write(out.join("latest.json"), text).map_err(|e| e.to_string())?;
    fs::write(
        out.join("latest.md"),
        format!("machine: {machine}\n\n{table}\n{targets}"),
    )
    .map_err(|e| e.to_string())?;
    println!("written: target/bench/latest.md, target/bench/latest.json");
    Ok(())
}

fn step(text: &str) {
    eprintln!("\n== {text}");
}

/// Builds the bench targets and the W0 example in release; returns executables by name.
fn build(root: &Path) -> Result<BTreeMap<String, PathBuf>, String> {
    step("building the benchmarks (release)");
    let mut bins = BTreeMap::new();
    let mut bench = Command::new(cargo());
    bench.current_dir(root).args([
        "bench",
        "--no-run",
        "--message-format=json-render-diagnostics",
        "-p",
        "actuator-tool-core",
        "-p",
        "actuator-dialect",
        "-p",
        "actuator-exec",
        "-p",
        "actuator-agent",
        "-p",
        "actuator-tools",
        "-p",
        "actuator-eval",
        "-p",
        "actuator-mcp",
        "-p",
        "actuator-providers",
        "-p",
        "actuator-otel",
        // W7d's bench (`required-features`); Docker itself is needed only to run it.
        "--features",
        "actuator-tools/docker",
        "--benches",
    ]);
    let mut example = Command::new(cargo());
    example.current_dir(root).args([
        "build",
        "--release",
        "--message-format=json-render-diagnostics",
        "-p",
        "actuator",
        "--example",
        "w0_first_call",
    ]);
    for cmd in [&mut bench, &mut example] {
        for line in capture(cmd)?.lines() {
            let Ok(msg) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if let (Some(name), Some(exe)) =
                (msg["target"]["name"].as_str(), msg["executable"].as_str())
            {
                bins.insert(name.to_owned(), PathBuf::from(exe));
            }
        }
    }
    Ok(bins)
}

/// The median of some values.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Wall time of `runs` spawns of a command (after one warm-up), median.
fn spawn_median(mut make: impl FnMut() -> Command, runs: usize) -> Result<f64, String> {
    let mut walls = Vec::with_capacity(runs);
    for i in 0..=runs {
        let mut cmd = make();
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        let t0 = Instant::now();
        sh(&mut cmd)?;
        if i > 0 {
            walls.push(t0.elapsed().as_secs_f64());
        }
    }
    Ok(median(&mut walls))
}

fn w0(exe: &Path, runs: usize, rust: &mut BTreeMap<String, Measure>) -> Result<(), String> {
    let out = capture(&mut Command::new(exe))?;
    if out.trim() != "3" {
        return Err(format!("w0_first_call printed {out:?}, expected 3"));
    }
    let call = spawn_median(|| Command::new(exe), runs)?;
    let floor = spawn_median(
        || {
            let mut c = Command::new(exe);
            c.arg("--floor");
            c
        },
        runs,
    )?;
    let truth = spawn_median(|| Command::new("true"), runs)?;
    rust.insert("W0|first tool call".into(), Measure::seconds(call));
    rust.insert("W0|floor".into(), Measure::seconds(floor));
    rust.insert("W0|true".into(), Measure::seconds(truth));
    eprintln!(
        "   first call {:.2} ms, same binary --floor {:.2} ms, `true` {:.2} ms",
        call * 1e3,
        floor * 1e3,
        truth * 1e3
    );
    Ok(())
}

fn first_construction(
    exe: &Path,
    runs: usize,
    rust: &mut BTreeMap<String, Measure>,
) -> Result<(), String> {
    let mut built = Vec::new();
    let mut validated = Vec::new();
    for _ in 0..runs {
        let out = capture(Command::new(exe).arg("--first-construction"))?;
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix("FIRST "))
            .ok_or("schema --first-construction printed no FIRST line")?;
        let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        built.push(v["search_tool_ns"].as_f64().unwrap_or(f64::NAN) * 1e-9);
        validated.push(v["first_validate_ns"].as_f64().unwrap_or(f64::NAN) * 1e-9);
    }
    rust.insert(
        "W1|first search_tool() in a fresh process".into(),
        Measure::seconds(median(&mut built)),
    );
    rust.insert(
        "W1|first validate in a fresh process".into(),
        Measure::seconds(median(&mut validated)),
    );
    Ok(())
}

/// Runs a divan bench binary and records every median as `divan|{path}`.
fn divan(exe: &Path, samples: u32, rust: &mut BTreeMap<String, Measure>) -> Result<(), String> {
    let out = capture(Command::new(exe).args([
        "--bench",
        "--color",
        "never",
        "--sample-count",
        &samples.to_string(),
    ]))?;
    eprint!("{out}");
    let medians = crate::divan::parse(&out);
    if medians.is_empty() {
        return Err(format!(
            "no divan medians in the output of {}",
            exe.display()
        ));
    }
    for m in medians {
        rust.insert(format!("divan|{}", m.path), Measure::seconds(m.seconds));
    }
    Ok(())
}

fn w5(exe: &Path, quick: bool, rust: &mut BTreeMap<String, Measure>) -> Result<(), String> {
    // (K, runs, runs when quick, yielding model, events)
    let configs: [(usize, usize, usize, bool, bool); 7] = [
        (1, 20, 5, false, false),
        (100, 5, 2, false, false),
        (10_000, 1, 1, false, false),
        (1, 20, 5, true, false),
        (100, 5, 2, true, false),
        (10_000, 1, 1, true, false),
        (1, 20, 5, false, true),
    ];
    for (k, runs, quick_runs, yielding, events) in configs {
        let runs = if quick { quick_runs } else { runs };
        let command = |runs: usize| {
            let mut cmd = Command::new(exe);
            cmd.args(["--k", &k.to_string(), "--runs", &runs.to_string(), "--hold"]);
            if yielding {
                cmd.args(["--model", "yield"]);
            }
            if events {
                cmd.arg("--events");
            }
            cmd
        };
        let (stdout, peak) = run_holding(&mut command(runs))?;
        results(&stdout, rust);
        // The peak RSS is read from a process that runs the K agents once (after the warm-up
        // agent): one of several runs would also count the timings the bench keeps of the
        // runs before it (about 3 KiB per agent at K=100 over 5 runs, by DHAT) and what the
        // allocator kept of them, neither of which is the K agents' memory.
        let peak = if runs > 1 {
            run_holding(&mut command(1))?.1
        } else {
            peak
        };
        let label = w5_label(k, yielding, events);
        eprintln!("   {label}: peak RSS {:.1} MiB", peak / 1048576.0);
        rust.insert(
            format!("W5|{label}: peak RSS (VmHWM)"),
            Measure::bytes(peak),
        );
    }
    // The cost of events as a ratio: with and without, alternately in one process, so that
    // the machine's drifting speed does not skew it.
    let runs = if quick { "200" } else { "1000" };
    results(
        &capture(Command::new(exe).args(["--k", "1", "--runs", runs, "--interleave"]))?,
        rust,
    );
    // The same with each run's events going to a live subscriber instead (issue 37).
    results(
        &capture(Command::new(exe).args([
            "--k",
            "1",
            "--runs",
            runs,
            "--interleave",
            "--subscriber",
        ]))?,
        rust,
    );
    for yielding in [false, true] {
        let one = rust.get(&format!(
            "W5|{}: peak RSS (VmHWM)",
            w5_label(1, yielding, false)
        ));
        let Some(one) = one.copied() else { continue };
        for k in [100usize, 10_000] {
            let key = format!("W5|{}: peak RSS (VmHWM)", w5_label(k, yielding, false));
            if let Some(many) = rust.get(&key).copied() {
                let per = (many.value - one.value) / (k - 1) as f64;
                rust.insert(
                    format!(
                        "W5|{}: peak-RSS growth per extra agent (K={k} vs K=1)",
                        w5_label(k, yielding, false)
                    ),
                    Measure::bytes(per),
                );
            }
        }
    }
    Ok(())
}

/// (RSS(1000 at once) − RSS(100 at once)) / 900: what one more sample in flight costs,
/// its conversation included (issue 39's target: at most 64 KiB).
fn w9_per_sample_in_flight(rust: &mut BTreeMap<String, Measure>) {
    let key = |at_once: &str| {
        format!("W9|eval 10 000 samples{at_once}, yielding model: peak RSS (VmHWM)")
    };
    if let (Some(hundred), Some(thousand)) = (
        rust.get(&key("")).copied(),
        rust.get(&key(", 1000 at once")).copied(),
    ) {
        rust.insert(
            W9_PER_SAMPLE.to_owned(),
            Measure::bytes((thousand.value - hundred.value) / 900.0),
        );
    }
}

/// Runs a bench binary started with `--hold`: collects its stdout up to `HOLD`, reads its peak
/// RSS (`VmHWM`) from `/proc/<pid>/status` while it waits, then lets it exit.
fn run_holding(cmd: &mut Command) -> Result<(String, f64), String> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut text = String::new();
    let mut peak = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| e.to_string())?;
        if line == "HOLD" {
            peak = Some(vm_hwm(child.id())?);
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(b"\n");
            }
        }
        text.push_str(&line);
        text.push('\n');
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("{cmd:?} failed: {status}"));
    }
    let peak = peak.ok_or("the bench binary exited without printing HOLD")?;
    Ok((text, peak))
}

/// A process's peak resident set size in bytes, from `/proc/<pid>/status`.
fn vm_hwm(pid: u32) -> Result<f64, String> {
    let path = format!("/proc/{pid}/status");
    let status = fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map(|kib| kib * 1024.0)
        .ok_or_else(|| format!("no VmHWM in {path}"))
}

/// `nproc`, the CPU model, the memory and the kernel, read from /proc.
fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("?", str::trim)
        .to_owned();
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_gib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1048576.0);
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{cpus} CPUs ({model}), {mem_gib:.1} GiB, Linux {}",
        kernel.trim()
    )
}

#[cfg(test)]
mod w9_tests {
    use super::*;

    #[test]
    fn memory_per_sample_in_flight_is_the_growth_from_100_to_1000_over_900() {
        let mut rust = BTreeMap::new();
        w9_per_sample_in_flight(&mut rust);
        assert!(rust.is_empty(), "nothing derived without both runs");
        let mib = |v: f64| Measure::bytes(v * 1048576.0);
        rust.insert(
            "W9|eval 10 000 samples, yielding model: peak RSS (VmHWM)".to_owned(),
            mib(27.0),
        );
        rust.insert(
            "W9|eval 10 000 samples, 1000 at once, yielding model: peak RSS (VmHWM)".to_owned(),
            mib(31.5),
        );
        w9_per_sample_in_flight(&mut rust);
        let per = rust[W9_PER_SAMPLE].value;
        assert!((per - 4.5 * 1048576.0 / 900.0).abs() < 1e-6, "{per}");
    }
}
