//! The built-in tools driven by a real model: SmolLM2-135M-Instruct behind llama-cpp-python's
//! OpenAI-compatible server (from `scripts/setup-test-env`) calls `bash` in a `LocalSandbox`,
//! the call lands on the confined shell, and the agent submits. The tool choice is forced turn
//! by turn (`bash`, then `submit`), as a 135M-parameter model needs; the command is the model's.
//! Without the server the test skips with a printed reason, except with `CI` set.

#![cfg(all(feature = "tools", feature = "providers"))]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

// The providers' server helpers (this test uses only the llama.cpp server of them) and their
// forced-tool-choice wrapper.
#[path = "../../providers/tests/common/forced.rs"]
mod forced;
#[allow(dead_code)]
#[path = "../../providers/tests/common/servers.rs"]
mod servers;

use std::sync::Arc;
use std::time::Duration;

use actuator::agent::{RunOptions, limits::turn_limit, react, run};
use actuator::model::{ChatMessage, GenerateConfig};
use actuator::providers::{ModelOptions, RetryPolicy};
use actuator::sandbox::{LocalSandbox, SandboxHandle};
use actuator::tools::{BashOptions, bash};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_model_runs_bash_in_the_sandbox_and_submits() {
    let Some(llama) = servers::llama_server() else {
        return;
    };
    let sandbox = match LocalSandbox::new() {
        Ok(s) => s,
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let model = ModelOptions::new()
        .base_url(format!("{}/v1", llama.url()))
        .env(|_| None)
        .config(GenerateConfig::default().max_tokens(64).temperature(0.0))
        .timeout(Duration::from_secs(120))
        .retry(RetryPolicy::none())
        .build("llama-cpp-python/smollm2")
        .unwrap();
    let forced = Arc::new(forced::Forced::new(model, vec!["bash", "submit"]));
    let agent = react()
        .prompt(
            "You can run shell commands with the bash tool. Run one, then submit what it printed.",
        )
        .tools([bash(BashOptions::new()).unwrap()])
        .model(forced.clone())
        .build()
        .unwrap();
    let run = run(
        &agent,
        "Print the word hello with echo.",
        RunOptions::new()
            .limits([turn_limit(4)])
            .resource(SandboxHandle::new(sandbox)),
    )
    .await
    .unwrap();
    let messages = &run.state.messages;
    for m in messages {
        eprintln!("{:>9}: {}", m.role(), m.text());
    }
    let call = messages
        .iter()
        .filter_map(ChatMessage::as_assistant)
        .flat_map(|a| a.calls())
        .find(|c| c.function == "bash")
        .expect("the model called bash");
    assert!(call.parse_error.is_none(), "{call:?}");
    assert!(
        call.arguments.to_map().unwrap()["command"].is_string(),
        "{call:?}"
    );
    let answer = messages
        .iter()
        .filter_map(ChatMessage::as_tool)
        .find(|t| t.tool_call_id.as_deref() == Some(call.id.as_str()))
        .expect("the bash call was answered");
    // The command ran in the sandbox: whatever the model wrote, a shell answered (a non-zero
    // exit is output, not an error; only a timeout or a refused argument would be one).
    assert!(answer.error.is_none(), "{answer:?}");
    assert!(forced.turns() >= 2, "the agent went on to submit");
}
