//! An [`AgentChannel`] served on a Unix socket, so that an operator in another process (a
//! terminal: `cargo run --example attach -- SOCKET`) can step in.
//!
//! The protocol is JSON Lines: one object per line each way, at most [`MAX_LINE_BYTES`].
//!
//! | From the operator | What it does | Reply |
//! |---|---|---|
//! | `{"op": "post", "text": "…"}` | [`AgentChannel::post`] | `{"op": "ok"}` or `{"op": "error", "message": "…"}` |
//! | `{"op": "interrupt"}` | [`AgentChannel::interrupt`] | `{"op": "ok"}` |
//! | `{"op": "transcript"}` | [`AgentChannel::transcript`] | `{"op": "transcript", "messages": [ChatMessage…]}` |
//! | `{"op": "answer", "id": 1, "text": "…"}` (`"text": null` declines) | [`AgentChannel::answer`] | `{"op": "ok"}` or an error |
//!
//! The agent's questions and notices come unasked, as they happen:
//! `{"op": "question", "id": 1, "message": "…", "schema": {…}}` and
//! `{"op": "notice", "message": "…"}` (to one connected operator: the first to read it).
//!
//! The socket is made with mode `0600` (its owner only) in a private directory and then linked
//! into place, so it is never reachable by others, whatever the umask; an existing file at
//! its path is never replaced. Put it in a directory only its owner can write.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use super::{AgentChannel, OperatorRequest};

/// The longest line either side sends (a transcript may be long; it is cut to fit).
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// A served channel: stops serving, and removes its socket, when dropped.
#[derive(Debug)]
pub struct ChannelServer {
    path: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl ChannelServer {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ChannelServer {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Serves `channel` on a new Unix socket at `path` (see the [module](self) for the protocol).
///
/// ```no_run
/// # async fn serve() -> std::io::Result<()> {
/// use actuator_agent::{AgentChannel, RunOptions};
/// let channel = AgentChannel::new();
/// let server = actuator_agent::channel::serve_unix(channel.clone(), "/run/user/1000/agent.sock")?;
/// let options = RunOptions::new().resource(channel);
/// // run(&agent, task, options).await …; `cargo run --example attach -- /run/user/1000/agent.sock`
/// # drop((server, options)); Ok(()) }
/// ```
///
/// # Errors
///
/// The socket cannot be made (a file is at `path` already, the directory is missing), or
/// its mode cannot be set; no runtime is running.
pub fn serve_unix(channel: AgentChannel, path: impl AsRef<Path>) -> std::io::Result<ChannelServer> {
    let path = path.as_ref().to_owned();
    // Made in a directory of its own (mode 0700) and given its mode there, then linked into
    // place: at `path` it is never, even for a moment, a socket others may connect to
    // (whatever the umask), and `link` never replaces a file that is there.
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let private = tempfile::Builder::new()
        .prefix(".actuator-socket-")
        .tempdir_in(&parent)?;
    let made = private.path().join("socket");
    let listener = UnixListener::bind(&made)?;
    std::fs::set_permissions(&made, std::fs::Permissions::from_mode(0o600))?;
    std::fs::hard_link(&made, &path)?;
    drop(private);
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(connection(channel.clone(), stream));
        }
    });
    Ok(ChannelServer { path, task })
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Command {
    Post { text: String },
    Interrupt,
    Transcript,
    Answer { id: u64, text: Option<String> },
}

/// One operator's connection: commands in, replies and the agent's requests out.
async fn connection(channel: AgentChannel, stream: UnixStream) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    let (out_tx, mut out_rx) = tokio::sync::mpsc::channel::<Value>(64);
    let writer = tokio::spawn(async move {
        while let Some(value) = out_rx.recv().await {
            let mut line = serde_json::to_vec(&value).unwrap_or_default();
            line.push(b'\n');
            if write.write_all(&line).await.is_err() {
                return;
            }
        }
    });
    let requests = {
        let (channel, out_tx) = (channel.clone(), out_tx.clone());
        tokio::spawn(async move {
            loop {
                let value = match channel.next_request().await {
                    OperatorRequest::Question {
                        id,
                        message,
                        schema,
                    } => json!({"op": "question", "id": id, "message": message, "schema": schema}),
                    OperatorRequest::Notice { message } => {
                        json!({"op": "notice", "message": message})
                    }
                };
                if out_tx.send(value).await.is_err() {
                    return;
                }
            }
        })
    };
    let mut line = Vec::new();
    loop {
        line.clear();
        // Bounded: a line over the limit ends the connection.
        let read = (&mut lines)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .await;
        match read {
            Ok(0) | Err(_) => break,
            Ok(n) if n > MAX_LINE_BYTES => {
                let _ = out_tx
                    .send(json!({"op": "error", "message": format!("a line is at most {MAX_LINE_BYTES} bytes")}))
                    .await;
                break;
            }
            Ok(_) => {}
        }
        let reply = match serde_json::from_slice::<Command>(&line) {
            Err(e) => json!({"op": "error", "message": format!("not a command: {e}")}),
            Ok(Command::Post { text }) => result(channel.post(text)),
            Ok(Command::Interrupt) => {
                channel.interrupt();
                json!({"op": "ok"})
            }
            Ok(Command::Answer { id, text }) => result(channel.answer(id, text)),
            Ok(Command::Transcript) => transcript(&channel),
        };
        if out_tx.send(reply).await.is_err() {
            break;
        }
    }
    requests.abort();
    drop(out_tx);
    let _ = writer.await;
}

fn result(r: Result<(), super::ChannelError>) -> Value {
    match r {
        Ok(()) => json!({"op": "ok"}),
        Err(e) => json!({"op": "error", "message": e.to_string()}),
    }
}

/// The transcript reply, its oldest messages left out when it would be over a line.
fn transcript(channel: &AgentChannel) -> Value {
    let encoded: Vec<Vec<u8>> = channel
        .transcript()
        .iter()
        .filter_map(|m| serde_json::to_vec(m).ok())
        .collect();
    // Keep the newest messages that fit (with room for the reply's own fields).
    let mut room = MAX_LINE_BYTES - 1024;
    let mut kept = 0;
    for m in encoded.iter().rev() {
        if m.len() + 1 > room {
            break;
        }
        room -= m.len() + 1;
        kept += 1;
    }
    let omitted = encoded.len() - kept;
    let messages: Vec<Value> = encoded[omitted..]
        .iter()
        .filter_map(|m| serde_json::from_slice(m).ok())
        .collect();
    json!({"op": "transcript", "messages": messages, "omitted": omitted})
}
