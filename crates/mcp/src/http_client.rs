//! The HTTP client under rmcp's streamable-HTTP transport: plain HTTP always; HTTPS with the
//! `https` feature, on rustls with the `ring` provider (passed to the client, not installed
//! process-wide), the platform's certificate roots and any the server's settings add. It
//! follows redirects only on the server's own origin (see `redirect.rs`).

use crate::error::McpError;
use actuator_model::credentials::Secrets;

/// Whether `url` asks for TLS.
fn is_https(url: &str) -> bool {
    url.get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
}

/// The client for one server at `url`, trusting `roots` (PEM) beside the platform's, its
/// refused redirects redacted of `secrets`.
#[cfg(not(feature = "https"))]
pub(crate) fn client(
    server: &str,
    url: &str,
    roots: &[Vec<u8>],
    secrets: Secrets,
) -> Result<reqwest::Client, McpError> {
    let _ = roots;
    if is_https(url) {
        return Err(McpError::config(format!(
            "MCP server '{server}' is at an https:// URL ({url}), which needs the `https` feature of actuator-mcp (`mcp-https` of actuator)"
        )));
    }
    reqwest::Client::builder()
        .redirect(crate::redirect::same_origin_only(secrets))
        .build()
        .map_err(|e| {
            McpError::config_from(
                format!("the HTTP client for MCP server '{server}' could not be built"),
                e,
            )
        })
}

/// The client for one server at `url`, trusting `roots` (PEM) beside the platform's, its
/// refused redirects redacted of `secrets`.
#[cfg(feature = "https")]
pub(crate) fn client(
    server: &str,
    url: &str,
    roots: &[Vec<u8>],
    secrets: Secrets,
) -> Result<reqwest::Client, McpError> {
    let config_error = |what: &str, e: crate::error::BoxError| {
        McpError::config_from(
            format!("{what} for MCP server '{server}' could not be set up"),
            e,
        )
    };
    let extra = if is_https(url) {
        parse_roots(server, roots)?
    } else {
        Vec::new()
    };
    let tls = actuator_model::tls::client_config(is_https(url), extra).map_err(|e| match e {
        actuator_model::tls::TlsError::Roots(cause) => McpError::Connect {
            server: server.to_owned(),
            reason: format!("no certificate roots to verify its TLS certificate with: {cause}"),
        },
        other => config_error("the TLS settings", other.into()),
    })?;
    reqwest::Client::builder()
        .redirect(crate::redirect::same_origin_only(secrets))
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| config_error("the HTTP client", e.into()))
}

/// The certificates of PEM texts; a text without one, or with a broken one, is an error.
#[cfg(feature = "https")]
fn parse_roots(
    server: &str,
    roots: &[Vec<u8>],
) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, McpError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;

    let mut certs = Vec::new();
    for (i, pem) in roots.iter().enumerate() {
        let before = certs.len();
        for cert in CertificateDer::pem_slice_iter(pem) {
            certs.push(cert.map_err(|e| {
                McpError::config_from(
                    format!(
                        "root certificate {} of MCP server '{server}' is not valid PEM",
                        i + 1
                    ),
                    e,
                )
            })?);
        }
        if certs.len() == before {
            return Err(McpError::config(format!(
                "root certificate {} of MCP server '{server}' has no PEM CERTIFICATE block",
                i + 1
            )));
        }
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_is_recognised_in_any_case() {
        assert!(is_https("https://example.com/mcp"));
        assert!(is_https("HTTPS://example.com/mcp"));
        assert!(!is_https("http://127.0.0.1/mcp"));
        assert!(!is_https("http"));
    }

    #[cfg(not(feature = "https"))]
    #[test]
    fn https_without_the_feature_says_which_feature() {
        let err = client("remote", "https://example.com/mcp", &[], Secrets::default()).unwrap_err();
        assert!(err.to_string().contains("`https` feature"), "{err}");
    }

    #[cfg(feature = "https")]
    #[test]
    fn a_root_that_is_not_pem_is_a_configuration_error() {
        let err = client(
            "remote",
            "https://example.com/mcp",
            &[b"not a certificate".to_vec()],
            Secrets::default(),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("root certificate 1 of MCP server 'remote' has no PEM CERTIFICATE block"),
            "{err}"
        );
    }
}
