//! The TLS settings of the HTTP clients that reach model providers and MCP servers (feature
//! `tls`): one set-up for both, so they trust the same roots and build one crypto provider.
//!
//! rustls runs on the `ring` provider, passed to each client rather than installed
//! process-wide, so nothing depends on which other crates a program enables. An `https://`
//! server is verified against the platform's certificate roots (plus any the caller adds, a
//! private CA); a plain-HTTP one needs none, but reqwest still wants a TLS configuration, or it
//! would look for a process-wide provider. ALPN offers HTTP/1.1 only: the clients are built
//! without reqwest's `http2` feature.

use std::sync::Arc;

use rustls::pki_types::CertificateDer;

/// Why the TLS settings could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The protocol versions could not be set up on the crypto provider.
    #[error("the TLS protocol settings cannot be built")]
    Protocols(#[source] rustls::Error),
    /// No certificate roots to verify a server with (the platform's could not be loaded, or an
    /// added root was refused).
    #[error("no certificate roots to verify the server's TLS certificate with")]
    Roots(#[source] rustls::Error),
}

/// The client TLS configuration for a server reached over `https` (or not), trusting
/// `extra_roots` beside the platform's.
///
/// ```
/// let config = actuator_model::tls::client_config(false, Vec::new()).unwrap();
/// assert_eq!(config.alpn_protocols, [b"http/1.1".to_vec()]);
/// ```
pub fn client_config(
    https: bool,
    extra_roots: Vec<CertificateDer<'static>>,
) -> Result<rustls::ClientConfig, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Protocols)?;
    let mut tls = if https {
        let verifier = if extra_roots.is_empty() {
            rustls_platform_verifier::Verifier::new(provider)
        } else {
            rustls_platform_verifier::Verifier::new_with_extra_roots(extra_roots, provider)
        }
        .map_err(TlsError::Roots)?;
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth()
    } else {
        builder
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth()
    };
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tls)
}
