//! [`ComposeConfig`]: a sandbox's compose configuration, read the way the reference reads it
//! (a compose file, a bare Dockerfile, or the default image), and its default service.

use std::path::{Path, PathBuf};

use serde_norway::Value;

use super::DockerError;

/// The compose file names looked for in a directory, in the reference's order.
pub const COMPOSE_FILES: [&str; 4] = [
    "compose.yaml",
    "compose.yml",
    "docker-compose.yaml",
    "docker-compose.yml",
];

/// The Dockerfile name looked for in a directory.
pub const DOCKERFILE: &str = "Dockerfile";

/// The reference's default image (`aisiuk/inspect-tool-support`), which the generated default
/// compose file runs.
pub const DEFAULT_IMAGE: &str = "aisiuk/inspect-tool-support";

/// The largest compose file read (1 MiB): compose files are configuration, and a larger
/// one is refused rather than parsed.
pub const MAX_COMPOSE_FILE: u64 = 1024 * 1024;

const COMPOSE_COMMENT: &str = "# actuator auto-generated docker compose file\n\
                               # (removed when its sandbox environment is cleaned up)\n";

/// The generic compose file (the reference's `COMPOSE_GENERIC_YAML`): the default image, kept
/// running, with no network.
fn generic_yaml() -> String {
    format!(
        "{COMPOSE_COMMENT}services:
  default:
    image: \"{DEFAULT_IMAGE}\"
    command: \"tail -f /dev/null\"
    init: true
    network_mode: none
    stop_grace_period: 1s
"
    )
}

/// The compose file for a bare Dockerfile (the reference's `COMPOSE_DOCKERFILE_YAML`),
/// built with the Dockerfile's directory as the context.
fn dockerfile_yaml(dockerfile: &str) -> String {
    // A JSON string is a valid YAML double-quoted scalar, so any file name is quoted safely.
    let quoted = serde_json::Value::from(dockerfile).to_string();
    format!(
        "{COMPOSE_COMMENT}services:
  default:
    build:
      context: \".\"
      dockerfile: {quoted}
    command: \"tail -f /dev/null\"
    init: true
    network_mode: none
    stop_grace_period: 1s
"
    )
}

/// Where a configuration's compose text comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// The user's compose file, handed to compose as it is.
    File(PathBuf),
    /// Generated text; compose runs it with `project_dir` as its project directory (the
    /// Dockerfile's directory), or the project's own directory.
    Generated {
        yaml: String,
        project_dir: Option<PathBuf>,
    },
}

/// A sandbox's compose configuration: which compose text a project runs, its services, and
/// which of them is the default.
///
/// The default service is the one marked `x-default: true`, else the one named `default`, as
/// in the reference; a file with neither is an error, as is one marking two.
///
/// ```
/// use actuator_sandbox::docker::ComposeConfig;
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(
///     dir.path().join("compose.yaml"),
///     "services:\n  web:\n    image: nginx\n  main:\n    image: python\n    x-default: true\n",
/// )
/// .unwrap();
/// let config = ComposeConfig::from_dir(dir.path()).unwrap();
/// assert_eq!(config.default_service(), "main");
/// assert_eq!(config.other_services().collect::<Vec<_>>(), ["web"]);
///
/// // No compose file and no Dockerfile: the reference's default image.
/// let empty = tempfile::tempdir().unwrap();
/// let config = ComposeConfig::from_dir(empty.path()).unwrap();
/// assert_eq!(config, ComposeConfig::generic());
/// assert!(config.generated_yaml().unwrap().contains("network_mode: none"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComposeConfig {
    source: Source,
    default_service: String,
    services: Vec<String>,
}

impl Default for ComposeConfig {
    fn default() -> Self {
        Self::generic()
    }
}

impl ComposeConfig {
    /// The reference's default configuration: one service, `default`, running
    /// [`DEFAULT_IMAGE`] with `command: tail -f /dev/null`, `init`, `network_mode: none` and a
    /// one-second stop grace period.
    ///
    /// ```
    /// let config = actuator_sandbox::docker::ComposeConfig::generic();
    /// assert_eq!(config.default_service(), "default");
    /// assert!(config.file().is_none());
    /// ```
    pub fn generic() -> Self {
        ComposeConfig {
            source: Source::Generated {
                yaml: generic_yaml(),
                project_dir: None,
            },
            default_service: "default".to_owned(),
            services: vec!["default".to_owned()],
        }
    }

    /// A compose file, or a Dockerfile when the name says so (`Dockerfile`, `Dockerfile.x`,
    /// `x.Dockerfile`), as the reference tells them apart.
    ///
    /// ```
    /// use actuator_sandbox::docker::ComposeConfig;
    /// let dir = tempfile::tempdir().unwrap();
    /// let file = dir.path().join("compose.yaml");
    /// std::fs::write(&file, "services:\n  default:\n    image: python\n").unwrap();
    /// let config = ComposeConfig::from_file(&file).unwrap();
    /// assert_eq!(config.file(), Some(file.as_path()));
    /// assert_eq!(config.services(), ["default"]);
    /// ```
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, DockerError> {
        let path = absolute(path.as_ref())?;
        if is_dockerfile(&path) {
            return Self::from_dockerfile(&path);
        }
        let text = read_bounded(&path)?;
        let (default_service, services) = parse_services(&path, &text)?;
        Ok(ComposeConfig {
            source: Source::File(path),
            default_service,
            services,
        })
    }

    /// A bare Dockerfile: a generated compose file builds it (context: its directory) as the
    /// `default` service, with the default configuration's command, init, network and grace
    /// period.
    ///
    /// ```
    /// use actuator_sandbox::docker::ComposeConfig;
    /// let dir = tempfile::tempdir().unwrap();
    /// let file = dir.path().join("Dockerfile");
    /// std::fs::write(&file, "FROM debian:bookworm\n").unwrap();
    /// let config = ComposeConfig::from_dockerfile(&file).unwrap();
    /// assert!(config.generated_yaml().unwrap().contains("dockerfile: \"Dockerfile\""));
    /// assert_eq!(config.project_dir(), Some(dir.path()));
    /// ```
    pub fn from_dockerfile(path: impl AsRef<Path>) -> Result<Self, DockerError> {
        let path = absolute(path.as_ref())?;
        // Read it now so a missing or unreadable Dockerfile fails here, not in `up`.
        read_bounded(&path)?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| DockerError::NonUtf8Path { path: path.clone() })?;
        let project_dir = path.parent().map(Path::to_path_buf);
        Ok(ComposeConfig {
            source: Source::Generated {
                yaml: dockerfile_yaml(name),
                project_dir,
            },
            default_service: "default".to_owned(),
            services: vec!["default".to_owned()],
        })
    }

    /// What the reference finds in a directory: the first of [`COMPOSE_FILES`] present,
    /// else a [`DOCKERFILE`], else the [generic](ComposeConfig::generic) configuration.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Self, DockerError> {
        let dir = dir.as_ref();
        for name in COMPOSE_FILES {
            let file = dir.join(name);
            if file.is_file() {
                return Self::from_file(file);
            }
        }
        let dockerfile = dir.join(DOCKERFILE);
        if dockerfile.is_file() {
            return Self::from_dockerfile(dockerfile);
        }
        Ok(Self::generic())
    }

    /// The default service: the one tools run in when they name none.
    pub fn default_service(&self) -> &str {
        &self.default_service
    }

    /// Every service, in the file's order.
    pub fn services(&self) -> &[String] {
        &self.services
    }

    /// The services other than the default, in the file's order (reachable by name).
    pub fn other_services(&self) -> impl Iterator<Item = &str> {
        self.services
            .iter()
            .map(String::as_str)
            .filter(|s| *s != self.default_service)
    }

    /// The user's compose file, when the configuration is one.
    pub fn file(&self) -> Option<&Path> {
        match &self.source {
            Source::File(path) => Some(path),
            Source::Generated { .. } => None,
        }
    }

    /// The generated compose text, for the default configuration and a bare Dockerfile.
    pub fn generated_yaml(&self) -> Option<&str> {
        match &self.source {
            Source::File(_) => None,
            Source::Generated { yaml, .. } => Some(yaml),
        }
    }

    /// The directory compose resolves relative paths against: the compose file's, or the
    /// Dockerfile's; `None` for the default configuration (nothing in it is relative).
    pub fn project_dir(&self) -> Option<&Path> {
        match &self.source {
            Source::File(path) => path.parent(),
            Source::Generated { project_dir, .. } => project_dir.as_deref(),
        }
    }
}

/// The reference's test for a Dockerfile name: `Dockerfile`, `Dockerfile.x` or `x.Dockerfile`.
pub(crate) fn is_dockerfile(path: &Path) -> bool {
    path.file_stem().is_some_and(|s| s == DOCKERFILE)
        || path.extension().is_some_and(|e| e == DOCKERFILE)
}

fn absolute(path: &Path) -> Result<PathBuf, DockerError> {
    std::path::absolute(path).map_err(|source| DockerError::Read {
        file: path.to_path_buf(),
        source,
    })
}

/// Reads a configuration file, refusing one over [`MAX_COMPOSE_FILE`].
fn read_bounded(path: &Path) -> Result<String, DockerError> {
    use std::io::Read as _;
    let read_err = |source| DockerError::Read {
        file: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_err)?;
    let mut text = String::new();
    file.take(MAX_COMPOSE_FILE + 1)
        .read_to_string(&mut text)
        .map_err(read_err)?;
    if text.len() as u64 > MAX_COMPOSE_FILE {
        return Err(DockerError::TooLarge {
            file: path.to_path_buf(),
            limit: MAX_COMPOSE_FILE,
        });
    }
    Ok(text)
}

/// The default service and every service of a compose file's text.
pub(crate) fn parse_services(
    file: &Path,
    text: &str,
) -> Result<(String, Vec<String>), DockerError> {
    let malformed = |line: Option<usize>, reason: String| DockerError::Malformed {
        file: file.to_path_buf(),
        line,
        reason,
    };
    let doc: Value = serde_norway::from_str(text)
        .map_err(|e| malformed(e.location().map(|l| l.line()), e.to_string()))?;
    let root = match doc {
        Value::Mapping(root) => root,
        Value::Null => {
            return Err(DockerError::NoServices {
                file: file.to_path_buf(),
            });
        }
        _ => return Err(malformed(None, "the top level is not a mapping".to_owned())),
    };
    let services = match root.get("services") {
        Some(Value::Mapping(services)) if !services.is_empty() => services,
        None | Some(Value::Null) => {
            return Err(DockerError::NoServices {
                file: file.to_path_buf(),
            });
        }
        Some(Value::Mapping(_)) => {
            return Err(DockerError::NoServices {
                file: file.to_path_buf(),
            });
        }
        Some(_) => return Err(malformed(None, "`services` is not a mapping".to_owned())),
    };
    let mut names = Vec::with_capacity(services.len());
    let mut marked = Vec::new();
    for (name, service) in services {
        let Value::String(name) = name else {
            return Err(malformed(None, "a service name is not a string".to_owned()));
        };
        match service {
            Value::Mapping(service) => {
                if service.get("x-default") == Some(&Value::Bool(true)) {
                    marked.push(name.clone());
                }
            }
            // Compose accepts an empty service (`name:`); it fails later for want of an image.
            Value::Null => {}
            _ => {
                return Err(malformed(
                    None,
                    format!("service '{name}' is not a mapping"),
                ));
            }
        }
        names.push(name.clone());
    }
    let default = match marked.len() {
        1 => marked.remove(0),
        0 if names.iter().any(|n| n == "default") => "default".to_owned(),
        0 => {
            return Err(DockerError::NoDefaultService {
                file: file.to_path_buf(),
                services: names,
            });
        }
        _ => {
            return Err(DockerError::AmbiguousDefault {
                file: file.to_path_buf(),
                services: marked,
            });
        }
    };
    Ok((default, names))
}
