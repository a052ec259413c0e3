//! W6 in `cargo xtask bench`: starts the canned Chat Completions server (`provider --serve`,
//! `crates/providers/benches/provider.rs`), runs the Rust client against it, and keeps the
//! server up until the Python reference has run: its address goes to `run_all.py` as
//! `W6_BASE_URL`, so `w6_provider.py` (Inspect's `openai` provider) measures against the same
//! server process.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::measure::{Measure, capture, results};

/// How long the server may take to say where it listens.
const START: Duration = Duration::from_secs(20);

/// The running canned server; dropping it stops it.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    url: String,
}

impl Server {
    /// Starts the server (`provider --serve`) and waits, bounded, for its `LISTENING <url>`
    /// line.
    fn start(mut cmd: Command) -> Result<Server, String> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or("the W6 server has no stdout")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut server = Server {
            child,
            stdin,
            url: String::new(),
        };
        let line = rx
            .recv_timeout(START)
            .map_err(|_| format!("the W6 server did not start within {START:?}"))?;
        server.url = listening_url(&line)?;
        Ok(server)
    }

    /// The environment `run_all.py` gets, so `w6_provider.py` finds this server.
    pub fn python_env(&self) -> Vec<(String, String)> {
        vec![("W6_BASE_URL".to_owned(), self.url.clone())]
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Closing its stdin ends the server; kill it if it has not gone within a few seconds.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address in the server's first line, `LISTENING <url>`.
fn listening_url(line: &str) -> Result<String, String> {
    line.trim()
        .strip_prefix("LISTENING ")
        .filter(|url| url.starts_with("http://"))
        .map(str::to_owned)
        .ok_or_else(|| format!("the W6 server printed {line:?}, not `LISTENING http://…`"))
}

/// Starts the server, runs the Rust side of W6 against it, and returns the server (still up
/// for the Python reference).
pub fn run(
    exe: &Path,
    quick: bool,
    rust: &mut BTreeMap<String, Measure>,
) -> Result<Server, String> {
    let mut serve = Command::new(exe);
    serve.arg("--serve");
    let server = Server::start(serve)?;
    eprintln!("   canned server at {}", server.url);
    let mut cmd = Command::new(exe);
    cmd.args(["--server", &server.url]);
    if quick {
        cmd.arg("--quick");
    }
    results(&capture(&mut cmd)?, rust);
    Ok(server)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listening_line_gives_the_url() {
        assert_eq!(
            listening_url("LISTENING http://127.0.0.1:4242\n").as_deref(),
            Ok("http://127.0.0.1:4242")
        );
        assert!(listening_url("error: no port\n").is_err());
        assert!(listening_url("").is_err());
    }

    #[test]
    fn a_started_server_is_found_and_stopped_when_dropped() {
        // A stand-in server: says where it listens, then lives until its stdin closes.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo LISTENING http://127.0.0.1:9; cat > /dev/null"]);
        let server = Server::start(cmd).expect("the stand-in server starts");
        assert_eq!(
            server.python_env(),
            [("W6_BASE_URL".to_owned(), "http://127.0.0.1:9".to_owned())]
        );
        let pid = server.child.id();
        assert!(Path::new(&format!("/proc/{pid}")).exists());
        drop(server);
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
    }

    #[test]
    fn a_server_that_prints_something_else_is_an_error() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo oops"]);
        let err = Server::start(cmd).err().unwrap_or_default();
        assert!(err.contains("oops"), "{err}");
    }
}
