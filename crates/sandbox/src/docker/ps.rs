//! What `docker compose ps` says of a project's containers.

use serde::Deserialize;

use super::DockerError;
use super::cli;

/// One service's container in a running project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceContainer {
    /// The compose service.
    pub service: String,
    /// The container's id as `docker compose ps` prints it (possibly shortened; `docker`
    /// commands accept it).
    pub id: String,
    /// The container's name (`{project}-{service}-1`).
    pub name: String,
    /// Its state (`running`, `exited`, …).
    pub state: String,
    /// Its health (`healthy`, `unhealthy`, `starting`), empty without a health check.
    pub health: String,
}

/// One entry of `docker compose ps --format json`; fields compose may leave out default.
#[derive(Deserialize)]
struct PsEntry {
    #[serde(rename = "ID", default)]
    id: String,
    #[serde(rename = "Name", default)]
    name: String,
    #[serde(rename = "Service", default)]
    service: String,
    #[serde(rename = "State", default)]
    state: String,
    #[serde(rename = "Health", default)]
    health: String,
}

/// Parses `ps --format json`: one JSON array (Compose before 2.21) or one object per line.
pub(crate) fn parse_ps(
    command: &str,
    stdout: &str,
    truncated: bool,
) -> Result<Vec<ServiceContainer>, DockerError> {
    let (text, unexpected) = cli::json_output(command, stdout, truncated)?;
    let entries: Vec<PsEntry> = if text.starts_with('[') {
        serde_json::from_str(text).map_err(|e| unexpected(e.to_string()))?
    } else {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_str(l).map_err(|e| unexpected(e.to_string())))
            .collect::<Result<_, _>>()?
    };
    Ok(entries
        .into_iter()
        .map(|e| ServiceContainer {
            service: e.service,
            id: e.id,
            name: e.name,
            state: e.state,
            health: e.health,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ps_output_in_either_shape() {
        let lines = r#"{"ID":"a1","Name":"p-default-1","Service":"default","State":"running","Publishers":[]}
{"ID":"b2","Name":"p-web-1","Service":"web","State":"exited"}
"#;
        let array = r#"[{"ID":"a1","Name":"p-default-1","Service":"default","State":"running"},{"ID":"b2","Name":"p-web-1","Service":"web","State":"exited"}]"#;
        let a = parse_ps("ps", lines, false).unwrap();
        let b = parse_ps("ps", array, false).unwrap();
        assert_eq!(a, b);
        assert_eq!(a[1].service, "web");
        assert_eq!(a[1].state, "exited");
        assert!(parse_ps("ps", "", false).unwrap().is_empty());
    }

    #[test]
    fn odd_ps_output_is_an_error_not_a_panic() {
        for odd in ["{", "[1,2]", "null\n", "{\"ID\": 5}", "\u{0}"] {
            let err = parse_ps("docker compose ps", odd, false).unwrap_err();
            assert!(
                matches!(err, DockerError::UnexpectedOutput { .. }),
                "{odd}: {err}"
            );
        }
        let err = parse_ps("ps", "[]", true).unwrap_err();
        assert!(err.to_string().contains("more than"), "{err}");
    }
}
