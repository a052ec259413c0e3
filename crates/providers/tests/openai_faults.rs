//! Faults below HTTP, from a raw TCP server: a connection reset, a body cut short, and a
//! dropped future closing its connection.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actuator_model::{ChatMessage, GenerateRequest, Model, ModelError};
use actuator_providers::{ModelOptions, ProviderError, RetryPolicy};
use common::chat_completion;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Reads one HTTP request (headers and a Content-Length body).
async fn read_request(stream: &mut TcpStream) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return buf;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if buf.len() >= end + 4 + length {
                return buf;
            }
        }
    }
}

fn ok_response() -> Vec<u8> {
    let body = chat_completion(json!({"role": "assistant", "content": "ok"}), "stop");
    common::spec::assert_valid(
        &common::spec::openai().chat_response,
        &body,
        "CreateChatCompletionResponse",
    );
    let body = body.to_string();
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A server whose n-th connection (0-based) is handled by `handle(n, stream)`.
async fn raw_server<F, Fut>(handle: F) -> (String, Arc<AtomicUsize>)
where
    F: Fn(usize, TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        let handle = Arc::new(handle);
        while let Ok((stream, _)) = listener.accept().await {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            let handle = handle.clone();
            tokio::spawn(async move { handle(n, stream).await });
        }
    });
    (url, count)
}

fn model(url: &str, retry: RetryPolicy) -> Arc<dyn Model> {
    ModelOptions::new()
        .api_key("sk-test")
        .base_url(url)
        .env(|_| None)
        .retry(retry)
        .timeout(Duration::from_secs(10))
        .build("openai/gpt-test")
        .unwrap()
}

fn retries(n: u32) -> RetryPolicy {
    RetryPolicy::default()
        .max_attempts(n)
        .backoff(Duration::from_millis(5), Duration::from_millis(20))
}

async fn ask(model: &dyn Model) -> Result<String, ModelError> {
    model
        .generate(GenerateRequest::new(&[ChatMessage::user("Hi")]))
        .await
        .map(|o| o.completion())
}

#[tokio::test]
async fn a_connection_reset_is_retried() {
    let (url, count) = raw_server(|n, mut stream| async move {
        read_request(&mut stream).await;
        if n == 0 {
            // Reset: close with unread data pending and no response.
            drop(stream);
        } else {
            stream.write_all(&ok_response()).await.unwrap();
        }
    })
    .await;
    assert_eq!(ask(&*model(&url, retries(3))).await.unwrap(), "ok");
    assert_eq!(count.load(Ordering::SeqCst), 2);

    // Without retries, the reset is a connection error that says where.
    let (url, _) = raw_server(|_, mut stream| async move {
        read_request(&mut stream).await;
    })
    .await;
    let err = ask(&*model(&url, RetryPolicy::none())).await.unwrap_err();
    let provider = err.downcast_ref::<ProviderError>().unwrap();
    assert!(
        matches!(provider, ProviderError::Connection { url: u, .. } if u.ends_with("/v1/chat/completions")),
        "{provider:?}"
    );
    // The transport's error is the source, not flattened into the message.
    let source = std::error::Error::source(provider).expect("a connection error has a cause");
    let cause = source
        .downcast_ref::<actuator_model::ErrorCause>()
        .expect("the cause is kept as an ErrorCause");
    assert!(
        cause.downcast_ref::<reqwest::Error>().is_some(),
        "{cause:?}"
    );
    assert!(
        !provider.to_string().contains(&source.to_string()),
        "{provider}"
    );
    assert!(err.is_retryable());
}

#[tokio::test]
async fn a_body_cut_short_is_a_connection_error_and_retried() {
    let (url, count) = raw_server(|n, mut stream| async move {
        read_request(&mut stream).await;
        if n == 0 {
            let full = ok_response();
            // Headers promise the whole body; half of it arrives, then the connection closes.
            let cut = full.len() - 40;
            stream.write_all(&full[..cut]).await.unwrap();
            stream.shutdown().await.unwrap();
        } else {
            stream.write_all(&ok_response()).await.unwrap();
        }
    })
    .await;
    assert_eq!(ask(&*model(&url, retries(3))).await.unwrap(), "ok");
    assert_eq!(count.load(Ordering::SeqCst), 2);

    let (url, _) = raw_server(|_, mut stream| async move {
        read_request(&mut stream).await;
        let full = ok_response();
        stream.write_all(&full[..full.len() - 40]).await.unwrap();
        stream.shutdown().await.unwrap();
    })
    .await;
    let err = ask(&*model(&url, RetryPolicy::none())).await.unwrap_err();
    assert!(
        matches!(
            err.downcast_ref::<ProviderError>(),
            Some(ProviderError::Connection { .. })
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn dropping_the_future_closes_the_connection() {
    let (closed_tx, closed_rx) = tokio::sync::oneshot::channel::<bool>();
    let closed_tx = Arc::new(std::sync::Mutex::new(Some(closed_tx)));
    let (url, _) = raw_server(move |_, mut stream| {
        let closed_tx = closed_tx.clone();
        async move {
            read_request(&mut stream).await;
            // Never answer; see the client hang up.
            let mut byte = [0u8; 1];
            let eof = matches!(
                tokio::time::timeout(Duration::from_secs(10), stream.read(&mut byte)).await,
                Ok(Ok(0) | Err(_))
            );
            if let Some(tx) = closed_tx.lock().unwrap().take() {
                let _ = tx.send(eof);
            }
        }
    })
    .await;
    let model = model(&url, RetryPolicy::none());
    let generation = ask(&*model);
    // Give up on it after a moment: the future is dropped mid-request.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), generation)
            .await
            .is_err()
    );
    let closed = tokio::time::timeout(Duration::from_secs(5), closed_rx).await;
    assert!(
        matches!(closed, Ok(Ok(true))),
        "the server did not see the connection close: {closed:?}"
    );
}
