//! Our client over HTTPS (the `https` feature): our server behind a TLS terminator on
//! loopback, with a certificate issued in the test by a CA made in the test. Trusted through
//! `McpServer::root_certificate_pem`, the tools list and run; an untrusted certificate is a
//! clear connection error.

#![cfg(feature = "https")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
#[path = "common/served.rs"]
mod served;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actuator_mcp::{
    HttpOptions, McpClient, McpServer, ServeOptions, ToolServer, mcp_tools, serve_http,
};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use serde_json::json;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A CA: its certificate (PEM) and what it signs with.
struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn make_ca(name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Ca {
        pem: cert.pem(),
        issuer: Issuer::new(params, key),
    }
}

/// A TLS terminator on a free loopback port: each connection's TLS ends here and its bytes go
/// on to `backend`. Counts the handshakes that completed.
async fn terminator(ca: &Ca, backend: SocketAddr) -> (SocketAddr, Arc<AtomicUsize>) {
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &ca.issuer)
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(leaf.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handshakes = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&handshakes);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let counted = Arc::clone(&counted);
            tokio::spawn(async move {
                // A client that does not trust the certificate ends the handshake here.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                counted.fetch_add(1, Ordering::SeqCst);
                let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    (addr, handshakes)
}

async fn our_server() -> actuator_mcp::HttpServer {
    let server = ToolServer::new(
        served::tools(Arc::default()),
        ServeOptions::default().name("served"),
    )
    .unwrap();
    serve_http(server, HttpOptions::default()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_and_run_over_https_with_a_trusted_root() {
    let http = our_server().await;
    let ca = make_ca("actuator test CA");
    let (addr, handshakes) = terminator(&ca, http.local_addr()).await;
    let client = McpClient::new(
        McpServer::http(format!("https://{addr}/mcp"))
            .name("secure")
            .root_certificate_pem(ca.pem.clone()),
    );
    let tools = mcp_tools(&client).list().await.unwrap();
    assert!(tools.iter().any(|t| t.name() == "add"));
    let add = common::exec_one(&tools, "add", json!({"x": 3, "y": 4})).await;
    assert_eq!(add.error, None, "{:?}", add.content);
    assert_eq!(add.content.text(), "7");
    assert!(
        handshakes.load(Ordering::SeqCst) >= 1,
        "nothing went through TLS"
    );
    client.close().await;
    http.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_certificate_is_a_clear_connection_error() {
    let http = our_server().await;
    let ca = make_ca("actuator test CA");
    let (addr, handshakes) = terminator(&ca, http.local_addr()).await;
    let url = format!("https://{addr}/mcp");

    // Trusting another CA (and the platform's roots) is not trusting this one.
    let other = make_ca("some other CA");
    let client = McpClient::new(
        McpServer::http(url.clone())
            .name("secure")
            .root_certificate_pem(other.pem),
    );
    let err = client.connect().await.unwrap_err().to_string();
    assert!(err.contains("MCP server 'secure'"), "{err}");
    assert!(err.contains("certificate"), "{err}");
    assert!(err.contains("UnknownIssuer"), "{err}");

    // The platform's roots alone do not trust it either.
    let bare = McpClient::new(McpServer::http(url).name("secure"));
    let err = mcp_tools(&bare).list().await.unwrap_err().to_string();
    assert!(err.contains("certificate"), "{err}");
    assert_eq!(handshakes.load(Ordering::SeqCst), 0);
    http.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_that_is_not_a_certificate_is_a_configuration_error() {
    let client = McpClient::new(
        McpServer::http("https://127.0.0.1:9/mcp")
            .name("secure")
            .root_certificate_pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
    );
    let err = client.connect().await.unwrap_err().to_string();
    assert!(
        err.contains("root certificate 1 of MCP server 'secure' has no PEM CERTIFICATE block"),
        "{err}"
    );
}
