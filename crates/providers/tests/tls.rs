//! The providers' TLS: rustls on the `ring` provider, handed to each client (no process-wide
//! crypto provider is installed, here or anywhere in this test binary), with certificates
//! checked against the platform's roots. A client builds for `https://` and `http://` base
//! URLs alike, and a server whose certificate no root vouches for is refused in the handshake.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use actuator_model::{ChatMessage, GenerateRequest, Model};
use actuator_providers::{ModelOptions, RetryPolicy};
use tokio::net::TcpListener;
use tokio_rustls::rustls;

fn build(model: &str, base: &str) -> Arc<dyn Model> {
    ModelOptions::new()
        .api_key("sk-test")
        .base_url(base)
        .env(|_| None)
        .timeout(Duration::from_secs(10))
        .retry(RetryPolicy::default().max_attempts(1))
        .build(model)
        .unwrap_or_else(|e| panic!("{model} at {base}: {e}"))
}

#[test]
fn clients_build_for_https_and_http_without_a_process_wide_crypto_provider() {
    for base in ["https://api.example.test/v1", "http://127.0.0.1:9/v1"] {
        for model in ["openai/gpt-test", "anthropic/claude-test"] {
            build(model, base);
        }
    }
    // Building them installed nothing process-wide either.
    assert!(rustls::crypto::CryptoProvider::get_default().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_no_root_vouches_for_is_refused() {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let key =
        rustls::pki_types::PrivateKeyDer::try_from(certified.signing_key.serialize_der()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![certified.cert.der().clone()], key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        acceptor.accept(stream).await.map(|_| ())
    });

    let model = build("openai/gpt-test", &format!("https://localhost:{port}/v1"));
    let answer = actuator_model::generate(
        model.as_ref(),
        GenerateRequest::new(&[ChatMessage::user("hello")]),
    )
    .await;
    assert!(answer.is_err(), "an untrusted certificate was accepted");
    let handshake = tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .unwrap()
        .unwrap();
    assert!(
        handshake.is_err(),
        "the client completed a handshake with an untrusted certificate"
    );
}
