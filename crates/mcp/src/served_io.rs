//! The transport [`ToolServer::serve_io`](crate::ToolServer::serve_io) serves a connection on:
//! rmcp's newline-delimited JSON transport, with each line looked at before rmcp reads it.
//!
//! rmcp cannot read a request whose `params` are not an object (`resources/read` with `[]`):
//! it answers `-32600 Invalid request` without the request's id, so the client never learns
//! which of its requests failed, nor that the method exists. Such a request, of a method this
//! server answers and with an id rmcp reads, is taken out of the stream here and answered
//! `-32602 invalid params for {method}: {reason}` with its id. Every other line goes on to
//! rmcp unchanged (a request whose params are an object of the wrong shape reaches the
//! handler as a custom request, which answers the same way).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use rmcp::ErrorData;
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, BufReader, ReadBuf};
use tokio::sync::mpsc;
use tokio_util::sync::PollSender;

/// Invalid-params answers that may wait to be written before reading stops.
const MAX_WAITING_ANSWERS: usize = 64;

use crate::served_params::params_mismatch;

/// rmcp's transport over `reader` and `writer`, with requests it could not read answered
/// as invalid params (see the module's documentation).
pub(crate) fn checked_io<R, W>(reader: R, writer: W) -> CheckedIo<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    // Bounded: a client that floods bad lines without reading the answers stops being read
    // once this many wait, rather than growing them without end.
    let (answers, rejected) = mpsc::channel(MAX_WAITING_ANSWERS);
    let inspected = Inspected::new(BufReader::new(reader), answers);
    CheckedIo {
        inner: AsyncRwTransport::new(inspected, writer),
        rejected,
    }
}

/// The answer to `line` when it is a request rmcp cannot read whose method this server
/// answers: invalid params, with the request's id. `None` for any other line.
fn reject(line: &[u8]) -> Option<ServerJsonRpcMessage> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(line) else {
        return None;
    };
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return None;
    }
    let method = message.get("method")?.as_str()?.to_owned();
    let id: RequestId = serde_json::from_value(message.get("id")?.clone()).ok()?;
    // The reason is only worked out for a known method, and only a line rmcp cannot read is
    // taken from it.
    let reason = params_mismatch(&method, message.remove("params"))?;
    if serde_json::from_slice::<ClientJsonRpcMessage>(line).is_ok() {
        return None;
    }
    Some(ServerJsonRpcMessage::error(
        ErrorData::invalid_params(format!("invalid params for {method}: {reason}"), None),
        Some(id),
    ))
}

/// The connection's reader as rmcp reads it: whole lines, each looked at first; a line
/// [`reject`] answers is sent to [`CheckedIo`] instead of rmcp. A line longer than rmcp's
/// limit goes through as it comes, unread (rmcp drops it), so memory stays bounded.
struct Inspected<R> {
    read: BufReader<R>,
    /// The line being collected.
    line: Vec<u8>,
    /// The line outgrew rmcp's limit: its bytes go on as they come, up to its newline.
    passing: bool,
    /// Bytes for rmcp, from `sent` on.
    out: Vec<u8>,
    sent: usize,
    answers: PollSender<ServerJsonRpcMessage>,
    /// An answer made while the queue was full: sent before anything more is read.
    waiting: Option<ServerJsonRpcMessage>,
}

impl<R> Inspected<R> {
    fn new(read: BufReader<R>, answers: mpsc::Sender<ServerJsonRpcMessage>) -> Self {
        Inspected {
            read,
            line: Vec::new(),
            passing: false,
            out: Vec::new(),
            sent: 0,
            answers: PollSender::new(answers),
            waiting: None,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Inspected<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.sent < this.out.len() {
                let n = buf.remaining().min(this.out.len() - this.sent);
                buf.put_slice(&this.out[this.sent..this.sent + n]);
                this.sent += n;
                if this.sent == this.out.len() {
                    this.out.clear();
                    this.sent = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.waiting.is_some() {
                // Full: wait until CheckedIo has written some; a closed queue means the
                // connection is going, and the answer goes with it.
                if ready!(this.answers.poll_reserve(cx)).is_ok()
                    && let Some(answer) = this.waiting.take()
                {
                    let _ = this.answers.send_item(answer);
                }
                this.waiting = None;
            }
            let available = ready!(Pin::new(&mut this.read).poll_fill_buf(cx))?;
            if available.is_empty() {
                if this.line.is_empty() {
                    return Poll::Ready(Ok(())); // the end
                }
                // An unfinished last line: rmcp's to drop.
                this.out = std::mem::take(&mut this.line);
                continue;
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            if this.passing || this.line.len().saturating_add(take) > DEFAULT_MAX_LINE_LENGTH {
                this.out.append(&mut this.line);
                this.out.extend_from_slice(&available[..take]);
                this.passing = newline.is_none();
                Pin::new(&mut this.read).consume(take);
                continue;
            }
            this.line.extend_from_slice(&available[..take]);
            Pin::new(&mut this.read).consume(take);
            if newline.is_some() {
                let line = std::mem::take(&mut this.line);
                match reject(&line) {
                    // Answered by CheckedIo, once the queue has room.
                    Some(answer) => this.waiting = Some(answer),
                    None => this.out = line,
                }
            }
        }
    }
}

/// rmcp's transport, answering the requests [`Inspected`] took out of the stream.
pub(crate) struct CheckedIo<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    inner: AsyncRwTransport<RoleServer, Inspected<R>, W>,
    rejected: mpsc::Receiver<ServerJsonRpcMessage>,
}

impl<R, W> CheckedIo<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Sends the answers waiting; `false` when the connection cannot be written.
    async fn answer_waiting(&mut self) -> bool {
        while let Ok(answer) = self.rejected.try_recv() {
            if self.inner.send(answer).await.is_err() {
                return false;
            }
        }
        true
    }
}

impl<R, W> Transport<RoleServer> for CheckedIo<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            // rmcp's receive keeps a partly read line when it is dropped here.
            let message = tokio::select! {
                biased;
                Some(answer) = self.rejected.recv() => {
                    self.inner.send(answer).await.ok()?;
                    continue;
                }
                message = self.inner.receive() => message,
            };
            // Lines taken out before this message (or before the end) are answered first.
            if !self.answer_waiting().await {
                return None;
            }
            return message;
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rejected(line: &Value) -> Option<Value> {
        reject(line.to_string().as_bytes()).map(|m| serde_json::to_value(m).unwrap_or_default())
    }

    #[test]
    fn only_known_requests_rmcp_cannot_read_are_taken_out() {
        let answer =
            rejected(&json!({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": []}));
        let answer = answer.unwrap_or_default();
        assert_eq!(answer["id"], 4);
        assert_eq!(answer["error"]["code"], -32602);
        // rmcp reads these (the last as a custom request the handler answers).
        for line in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "a"}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 5}}),
        ] {
            assert_eq!(rejected(&line), None, "{line}");
        }
        // Not a request of a known method with an id rmcp reads: left to rmcp.
        for line in [
            json!({"jsonrpc": "2.0", "id": 5, "method": "no/such", "params": []}),
            json!({"jsonrpc": "2.0", "method": "resources/read", "params": []}),
            json!({"jsonrpc": "2.0", "id": true, "method": "resources/read", "params": []}),
            json!({"jsonrpc": "1.0", "id": 6, "method": "resources/read", "params": []}),
        ] {
            assert_eq!(rejected(&line), None, "{line}");
        }
    }

    /// One read of a connection whose whole input is bad requests queues at most
    /// `MAX_WAITING_ANSWERS` answers, then waits for them to be written.
    #[tokio::test]
    async fn a_flood_of_bad_requests_waits_once_the_answers_queue_is_full() {
        let mut flood = String::new();
        for id in 0..1_000 {
            flood.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"resources/read\",\"params\":[]}}\n"
            ));
        }
        let (answers, mut rejected) = mpsc::channel(MAX_WAITING_ANSWERS);
        let read = BufReader::with_capacity(1 << 20, std::io::Cursor::new(flood.into_bytes()));
        let mut inspected = Inspected::new(read, answers);
        let mut buf = [0u8; 64];
        let mut read_buf = ReadBuf::new(&mut buf);
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let poll = Pin::new(&mut inspected).poll_read(&mut cx, &mut read_buf);
        assert!(poll.is_pending(), "it read on with the queue full");
        let mut queued = 0;
        while rejected.try_recv().is_ok() {
            queued += 1;
        }
        assert_eq!(queued, MAX_WAITING_ANSWERS);
    }
}
