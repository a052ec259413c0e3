//! What a new user does: a crate of their own, outside this workspace, depending on the facade
//! by path with the README's features, whose `main.rs` is the README's first real-model
//! program, copied from the README as it is. It is built, then run against the llama.cpp
//! server the test environment starts (it must answer and exit 0), and with a configuration
//! broken three ways (no server, no key, `bash` without a sandbox), where it must exit
//! non-zero, within a bounded time, with an error naming the cause.
//!
//! The crate builds into `target/newcomer/` with the workspace's `Cargo.lock` and `--offline`
//! (nothing is fetched: the workspace's build has every package): about two minutes the first
//! time, seconds after.

#![cfg(all(feature = "providers", feature = "tools", feature = "macros"))]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

#[allow(dead_code)]
#[path = "../../providers/tests/common/servers.rs"]
mod servers;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The workspace's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The README's first ```rust block with a `fn main`: the program a newcomer copies.
fn readme_program() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut block: Option<String> = None;
    for line in readme.lines() {
        match &mut block {
            None if line.trim_start().starts_with("```rust") => block = Some(String::new()),
            Some(text) if line.trim_start().starts_with("```") => {
                if text.contains("async fn main()") {
                    return block.unwrap();
                }
                block = None;
            }
            Some(text) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    panic!("the README has no complete program (a ```rust block with `async fn main()`)");
}

/// `target/newcomer`, beside the test binaries' own target directory (a directory of its own:
/// the `cargo test` running this holds the workspace's).
fn newcomer_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().join("newcomer")
}

static BUILD: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Writes the newcomer's crate (its `main` the README's program; a second binary the same
/// program with `bash` among its tools and no sandbox) and builds it; the binaries' directory.
fn build() -> PathBuf {
    let mut built = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(dir) = &*built {
        return dir.clone();
    }
    let dir = newcomer_dir();
    let app = dir.join("app");
    std::fs::create_dir_all(app.join("src/bin")).unwrap();
    let facade = root().join("crates/actuator").canonicalize().unwrap();
    let manifest = format!(
        r#"[package]
name = "newcomer"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
actuator = {{ path = "{}", features = ["providers"] }}
tokio = {{ version = "1", features = ["macros", "rt-multi-thread"] }}

[workspace]
"#,
        facade.display()
    );
    write_if_changed(&app.join("Cargo.toml"), &manifest);
    // The workspace's lock file: the same versions, and nothing to fetch.
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).unwrap();
    write_if_changed(&app.join("Cargo.lock"), &lock);
    let program = readme_program();
    write_if_changed(&app.join("src/main.rs"), &program);
    let tools = ".tools([add_tool()])";
    assert!(
        program.contains(tools),
        "the README program's tools are not `{tools}`"
    );
    let with_bash = program.replace(
        tools,
        ".tools([add_tool(), bash(actuator::tools::BashOptions::new())?])",
    );
    write_if_changed(&app.join("src/bin/with_bash.rs"), &with_bash);

    let started = Instant::now();
    let output = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--bins"])
        .current_dir(&app)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the README's program does not build in a crate of its own:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!(
        "newcomer crate built in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let bins = dir.join("target/debug");
    *built = Some(bins.clone());
    bins
}

/// Writes `text` unless the file holds it already (so a rebuild has nothing to do).
fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap();
    }
}

struct Ran {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Runs `binary` with only `env` for the model's settings (none of the caller's keys or
/// URLs), killing it after `limit`.
fn run_bin(binary: &str, env: &[(&str, &str)], limit: Duration) -> Ran {
    let path = build().join(binary);
    let mut command = Command::new(&path);
    for var in [
        "MODEL",
        "MODEL_BASE_URL",
        "MODEL_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "LLAMA_CPP_PYTHON_BASE_URL",
        "RUST_LOG",
    ] {
        command.env_remove(var);
    }
    command
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{binary} ran for more than {limit:?}:\n{}\n{}",
                out.join().unwrap(),
                err.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ran {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        took: started.elapsed(),
    }
}

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn the_readme_program_answers_on_a_real_model_and_exits_0() {
    let Some(llama) = servers::llama_server() else {
        return;
    };
    let base = format!("{}/v1", llama.url());
    let ran = run_bin(
        "newcomer",
        &[
            ("MODEL", "llama-cpp-python/smollm2"),
            ("MODEL_BASE_URL", &base),
        ],
        Duration::from_secs(240),
    );
    eprintln!("{}\n{}", ran.stdout, ran.stderr);
    assert!(ran.status.success(), "exit {:?}", ran.status);
    assert!(ran.stdout.contains("answer: "), "{}", ran.stdout);
    // The transcript showed the run as it went: the question and the call of `add`.
    assert!(ran.stdout.contains("What is 3 + 4?"), "{}", ran.stdout);
    assert!(ran.stdout.contains("add("), "{}", ran.stdout);
    eprintln!("answered in {:.1} s", ran.took.as_secs_f64());
}

#[test]
fn without_a_server_the_program_names_the_server_and_fails() {
    let base = format!("http://127.0.0.1:{}/v1", closed_port());
    let ran = run_bin(
        "newcomer",
        &[("MODEL", "llama-cpp/local"), ("MODEL_BASE_URL", &base)],
        Duration::from_secs(60),
    );
    assert!(!ran.status.success(), "{}", ran.stdout);
    assert!(!ran.stdout.contains("answer:"), "{}", ran.stdout);
    assert!(ran.stderr.contains(&base), "{}", ran.stderr);
    assert!(
        ran.stderr.to_lowercase().contains("connection refused"),
        "the root cause is lost: {}",
        ran.stderr
    );
    // Each retry was shown as it happened, with its wait.
    assert!(ran.stdout.contains("retrying in"), "{}", ran.stdout);
    eprintln!("failed in {:.1} s:\n{}", ran.took.as_secs_f64(), ran.stderr);
}

#[test]
fn without_a_key_the_program_names_the_variable_at_once() {
    let ran = run_bin(
        "newcomer",
        &[("MODEL", "openai/gpt-4.1-mini")],
        Duration::from_secs(30),
    );
    assert!(!ran.status.success(), "{}", ran.stdout);
    assert!(ran.stderr.contains("OPENAI_API_KEY"), "{}", ran.stderr);
    assert!(ran.took < Duration::from_secs(10), "{:?}", ran.took);
}

#[test]
fn without_a_sandbox_the_program_names_the_tool() {
    // No model is reached: the run is refused before it starts.
    let base = format!("http://127.0.0.1:{}/v1", closed_port());
    let ran = run_bin(
        "with_bash",
        &[("MODEL", "llama-cpp/local"), ("MODEL_BASE_URL", &base)],
        Duration::from_secs(30),
    );
    assert!(!ran.status.success(), "{}", ran.stdout);
    assert!(
        ran.stderr.contains("the tool 'bash' needs a sandbox"),
        "{}",
        ran.stderr
    );
    assert!(ran.stderr.contains("SandboxHandle::new"), "{}", ran.stderr);
    assert!(!ran.stderr.contains("refused"), "{}", ran.stderr);
}
