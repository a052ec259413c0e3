//! Finding the interop components `scripts/setup-test-env` installs (under
//! `target/test-env`), and running them with bounded waits.
//!
//! Without them a test is skipped with a printed reason, except under CI (`CI` set), where a
//! missing component is a failure.

#![allow(dead_code, clippy::print_stderr)]

use std::path::{Path, PathBuf};

use actuator_mcp::McpServer;

/// `target/test-env`, wherever the target directory is.
pub fn env_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir),
        Some(dir) => workspace.join(dir),
        None => workspace.join("target"),
    };
    target.join("test-env")
}

/// `path` when it exists; otherwise a failure under CI, else `None` with the reason printed.
pub fn component(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    let reason = format!(
        "{what} is not installed at {}: run scripts/setup-test-env",
        path.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{reason} (CI is set, so a missing component is a failure)");
    }
    eprintln!("skipped: {reason}");
    None
}

/// The venv's python, with the MCP Python SDK and mcp-server-time.
pub fn python() -> Option<PathBuf> {
    component(
        env_dir().join("venv-mcp/bin/python"),
        "The MCP Python SDK venv",
    )
}

fn npm_entry(package: &str) -> Option<PathBuf> {
    component(
        env_dir().join(format!(
            "npm-mcp/node_modules/@modelcontextprotocol/{package}/dist/index.js"
        )),
        &format!("@modelcontextprotocol/{package}"),
    )
}

/// server-everything over stdio, run with node directly.
pub fn everything() -> Option<McpServer> {
    let entry = npm_entry("server-everything")?;
    Some(
        McpServer::stdio("node", [entry.display().to_string(), "stdio".to_owned()])
            .name("everything")
            .env("NO_UPDATE_NOTIFIER", "1")
            .connect_timeout(std::time::Duration::from_secs(30)),
    )
}

/// server-filesystem serving `dir`, run with node directly.
pub fn filesystem(dir: &Path) -> Option<McpServer> {
    let entry = npm_entry("server-filesystem")?;
    Some(
        McpServer::stdio(
            "node",
            [entry.display().to_string(), dir.display().to_string()],
        )
        .name("filesystem")
        .env("NO_UPDATE_NOTIFIER", "1")
        .connect_timeout(std::time::Duration::from_secs(30)),
    )
}

/// mcp-server-time (UTC) from the venv.
pub fn time_server() -> Option<McpServer> {
    let python = python()?;
    Some(
        McpServer::stdio(
            python.display().to_string(),
            ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        )
        .name("time")
        .connect_timeout(std::time::Duration::from_secs(30)),
    )
}

/// A Python script of `tests/py/` run with the venv's python.
pub fn py_script(name: &str) -> Option<(PathBuf, PathBuf)> {
    let python = python()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(name);
    Some((python, script))
}

/// A plain reqwest client for raw HTTP requests. With the `https` feature reqwest has TLS
/// but no built-in crypto provider (the library passes its own to its clients), so a client
/// made with `Client::new` needs a process-wide one.
pub fn raw_http() -> reqwest::Client {
    #[cfg(feature = "https")]
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// A free loopback port (bound and released; good enough for a test that binds it next).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    listener.local_addr().expect("local addr").port()
}

/// Kills the child when dropped (also on panic).
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs one call through the executor (validation, timeout, classification as for any tool)
/// and returns its tool message.
pub async fn exec_one(
    tools: &[actuator_tool_core::ToolDef],
    name: &str,
    arguments: serde_json::Value,
) -> actuator_model::ChatMessageTool {
    use actuator_model::{ChatMessage, ChatMessageAssistant, ToolCall};
    let mut assistant = ChatMessageAssistant::new("");
    assistant.tool_calls = Some(vec![ToolCall::new("call_1", name, arguments)]);
    let messages = vec![
        ChatMessage::user("go"),
        ChatMessage::Assistant(Box::new(assistant)),
    ];
    let result = actuator_exec::execute_tools(&messages, tools, &Default::default())
        .await
        .expect("no fatal error");
    match result.messages.into_iter().next() {
        Some(ChatMessage::Tool(t)) => *t,
        other => panic!("expected a tool message, got {other:?}"),
    }
}

/// Waits (bounded) until something accepts connections on `127.0.0.1:port`.
pub async fn wait_for_port(port: u16, within: std::time::Duration) {
    let deadline = std::time::Instant::now() + within;
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nothing listened on 127.0.0.1:{port} within {within:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// server-everything over streamable HTTP on a free loopback port, killed when dropped.
pub async fn everything_http() -> Option<(KillOnDrop, String)> {
    let entry = npm_entry("server-everything")?;
    let port = free_port();
    let child = std::process::Command::new("node")
        .arg(entry)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .env("NO_UPDATE_NOTIFIER", "1")
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start node");
    let guard = KillOnDrop(child);
    wait_for_port(port, std::time::Duration::from_secs(20)).await;
    Some((guard, format!("http://127.0.0.1:{port}/mcp")))
}
