//! W6's canned server: a small HTTP/1.1 server (hyper, already in the tree through wiremock)
//! that answers every `POST …/chat/completions` at once with [`CANNED`], and times itself.
//!
//! - `POST …/chat/completions`: reads the whole body, answers `200` with the canned completion.
//!   The handler's own time (from the moment hyper hands it the request, headers parsed, to
//!   the response built, the body read in between) and the body's size are recorded.
//! - `GET /stats`: `{"handler_ns": [...], "body_bytes": [...]}`, one entry per completion
//!   request since the last reset, in order.
//! - `POST /reset`: forgets the recorded requests.
//! - `GET /last`: the last completion request's body, as it came.
//!
//! Both W6 clients (the Rust bench and `w6_provider.py`) run against one instance of it,
//! one after the other.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::canned::CANNED;

/// What the server recorded since the last reset.
#[derive(Default)]
struct Recorded {
    handler_ns: Vec<u64>,
    body_bytes: Vec<u64>,
    last: Bytes,
}

/// The server's shared state.
#[derive(Default, Clone)]
pub struct Server {
    recorded: Arc<Mutex<Recorded>>,
}

impl Server {
    /// Accepts connections on `listener` forever, one task per connection.
    pub async fn serve(self, listener: TcpListener) -> std::io::Result<()> {
        loop {
            let (stream, _) = listener.accept().await?;
            // Small responses: send them at once rather than waiting for an ACK (Nagle).
            stream.set_nodelay(true)?;
            let server = self.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let server = server.clone();
                    async move { Ok::<_, Infallible>(server.handle(req).await) }
                });
                // A client closing its connection ends this task; nothing to report.
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    }

    async fn handle(&self, req: Request<Incoming>) -> Response<Full<Bytes>> {
        let started = Instant::now();
        let method = req.method().clone();
        let path = req.uri().path().to_owned();
        let body = match req.into_body().collect().await {
            Ok(body) => body.to_bytes(),
            Err(e) => return reply(StatusCode::BAD_REQUEST, format!("body: {e}")),
        };
        match (method, path.as_str()) {
            (Method::POST, p) if p.ends_with("/chat/completions") => {
                let response = Response::builder()
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from_static(CANNED.as_bytes())))
                    .unwrap_or_default();
                let elapsed = started.elapsed().as_nanos() as u64;
                if let Ok(mut r) = self.recorded.lock() {
                    r.handler_ns.push(elapsed);
                    r.body_bytes.push(body.len() as u64);
                    r.last = body;
                }
                response
            }
            (Method::GET, "/stats") => {
                let text = self.recorded.lock().map_or_else(
                    |_| "{}".to_owned(),
                    |r| {
                        serde_json::json!({"handler_ns": r.handler_ns, "body_bytes": r.body_bytes})
                            .to_string()
                    },
                );
                reply(StatusCode::OK, text)
            }
            (Method::POST, "/reset") => {
                if let Ok(mut r) = self.recorded.lock() {
                    *r = Recorded::default();
                }
                reply(StatusCode::OK, "{}".to_owned())
            }
            (Method::GET, "/last") => {
                let last = self
                    .recorded
                    .lock()
                    .map(|r| r.last.clone())
                    .unwrap_or_default();
                Response::builder()
                    .header("content-type", "application/json")
                    .body(Full::new(last))
                    .unwrap_or_default()
            }
            (m, p) => reply(StatusCode::NOT_FOUND, format!("no route for {m} {p}")),
        }
    }
}

fn reply(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(text)))
        .unwrap_or_default()
}

/// The recorded requests, as `GET /stats` returns them.
#[derive(Debug, serde::Deserialize)]
pub struct Stats {
    /// The handler's time per completion request, in nanoseconds.
    pub handler_ns: Vec<u64>,
    /// The size of each completion request's body, in bytes.
    pub body_bytes: Vec<u64>,
}
