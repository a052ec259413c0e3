//! Our HTTP server when the process runs out of file descriptors: accepting fails with
//! `EMFILE` while a connection waits in the listen queue, and once descriptors are free again
//! the waiting connection and new ones are served (the accept loop never stops).
//!
//! Alone in its file: it lowers the process's open-file limit while it runs.

#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(target_os = "linux")]

use std::time::Duration;

use actuator_mcp::{HttpOptions, ServeOptions, ToolServer, serve_http};
use rustix::process::{Resource, getrlimit, setrlimit};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn open_files() -> u64 {
    std::fs::read_dir("/proc/self/fd").unwrap().count() as u64
}

fn is_emfile(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(24)
}

/// An HTTP request on `stream`, and the status line of its answer.
async fn status_line(mut stream: TcpStream) -> String {
    stream
        .write_all(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let text = String::from_utf8_lossy(&answer);
    text.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepting_resumes_after_the_process_runs_out_of_file_descriptors() {
    let server = ToolServer::new([], ServeOptions::default()).unwrap();
    let http = serve_http(server, HttpOptions::default()).await.unwrap();
    let addr = http.local_addr();
    assert!(
        status_line(TcpStream::connect(addr).await.unwrap())
            .await
            .starts_with("HTTP/1.1 ")
    );

    let original = getrlimit(Resource::Nofile);
    let mut low = original;
    low.current = Some(open_files() + 16);
    setrlimit(Resource::Nofile, low).unwrap();

    // Fill the file table with connections (some accepted by the server, which takes a
    // descriptor each), then free one descriptor and connect again until a connection is
    // made with no descriptor left for the server to accept it with.
    let mut held = Vec::new();
    let waiting = 'fill: {
        for _ in 0..200 {
            match TcpStream::connect(addr).await {
                Ok(stream) => held.push(stream),
                Err(e) if is_emfile(&e) => {
                    held.pop();
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    let Ok(stream) = TcpStream::connect(addr).await else {
                        continue;
                    };
                    // No descriptor left: the server cannot accept `stream`.
                    if std::net::TcpListener::bind("127.0.0.1:0").is_err_and(|e| is_emfile(&e)) {
                        break 'fill stream;
                    }
                    held.push(stream);
                }
                Err(e) => panic!("connect: {e}"),
            }
        }
        panic!("the file table never filled up");
    };
    // The server now fails to accept (EMFILE) and backs off; it must not give up.
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(held);
    setrlimit(Resource::Nofile, original).unwrap();

    let answered = tokio::time::timeout(Duration::from_secs(10), async {
        let waited = status_line(waiting).await;
        let fresh = status_line(TcpStream::connect(addr).await.unwrap()).await;
        (waited, fresh)
    })
    .await
    .expect("the server accepts again within 10 s");
    assert!(answered.0.starts_with("HTTP/1.1 "), "{answered:?}");
    assert!(answered.1.starts_with("HTTP/1.1 "), "{answered:?}");
    tokio::time::timeout(Duration::from_secs(10), http.shutdown())
        .await
        .expect("the server stops");
}
