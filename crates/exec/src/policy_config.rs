//! Approval policies from configuration: the reference's policy files (JSON, or YAML with the
//! `yaml` feature), with approvers looked up by name in an [`ApproverRegistry`].
//!
//! ```yaml
//! approvers:
//!   - name: human
//!     tools: web_browser*, bash, python
//!   - name: auto
//!     tools: "*"
//!     decision: approve
//! ```
//!
//! Each entry names an approver, the tools it decides for (a string of comma-separated
//! patterns, or a list of them, as [`ApprovalPolicy::new`] takes), and its parameters, either
//! under `params` or as any other key (`decision` above), as the reference collects them.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::approval::{ApprovalDecision, ApprovalPolicy, Approver, auto_approver};

/// Why a policy configuration could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApprovalConfigError {
    /// The file could not be read.
    #[error("Approval policy file not found or unreadable: {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// The system's reason.
        reason: String,
    },
    /// The text is not a policy configuration.
    #[error(
        "Invalid approval policy configuration: {reason}. Expected {{\"approvers\": [{{\"name\": ..., \"tools\": ...}}, ...]}}."
    )]
    Invalid {
        /// What the parser said.
        reason: String,
    },
    /// A YAML file was given but the `yaml` feature is off.
    #[error(
        "Approval policy '{path}' is YAML, but actuator-exec was built without its `yaml` feature: enable it, or write the policy as JSON."
    )]
    YamlDisabled {
        /// The file.
        path: String,
    },
    /// An approver name that the registry does not know.
    #[error(
        "Unknown approver '{name}' in the approval policy. Known approvers: {known}. Register others with ApproverRegistry::register."
    )]
    UnknownApprover {
        /// The name.
        name: String,
        /// The names the registry knows.
        known: String,
    },
    /// An approver refused its parameters, or a tool pattern is invalid.
    #[error("Approver '{name}' in the approval policy: {reason}")]
    BadApprover {
        /// The approver's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

type ApproverFactory =
    Arc<dyn Fn(&Map<String, Value>) -> Result<Arc<dyn Approver>, String> + Send + Sync>;

/// Approvers by name, for policy files: `auto` (parameter `decision`, default `approve`) and
/// `human` (asks on the terminal; with the `terminal` feature) are built in; register your own with
/// [`register`](Self::register).
#[derive(Clone)]
pub struct ApproverRegistry {
    factories: BTreeMap<String, ApproverFactory>,
}

impl std::fmt::Debug for ApproverRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.factories.keys()).finish()
    }
}

impl Default for ApproverRegistry {
    fn default() -> Self {
        let mut registry = ApproverRegistry {
            factories: BTreeMap::new(),
        };
        registry.register("auto", |params| {
            let decision = match params.get("decision") {
                None => ApprovalDecision::Approve,
                Some(v) => serde_json::from_value(v.clone()).map_err(|_| {
                    format!(
                        "'decision' must be one of approve, modify, reject, terminate, escalate, not {v}"
                    )
                })?,
            };
            Ok(auto_approver(decision))
        });
        #[cfg(feature = "terminal")]
        registry.register("human", |_params| {
            Ok(Arc::new(crate::terminal::TerminalApprover::new()))
        });
        registry
    }
}

impl ApproverRegistry {
    /// The built-in approvers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers an approver: `make` builds it from the entry's parameters (an error text
    /// when they are wrong). Replaces an approver of the same name.
    pub fn register(
        &mut self,
        name: impl Into<String>,
        make: impl Fn(&Map<String, Value>) -> Result<Arc<dyn Approver>, String> + Send + Sync + 'static,
    ) -> &mut Self {
        self.factories.insert(name.into(), Arc::new(make));
        self
    }

    /// Reads policies from a file: YAML for `.yaml`/`.yml` (with the `yaml` feature), else
    /// JSON. The file is a path or, as the reference accepts, a `file://` URI
    /// (`file:///etc/approval.yaml`, `file://localhost/…`, percent-escapes decoded).
    ///
    /// ```
    /// use actuator_exec::ApproverRegistry;
    /// let dir = std::env::temp_dir().join(format!("policies-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let file = dir.join("my policies.json");
    /// std::fs::write(&file, r#"{"approvers": [{"name": "auto", "tools": "*"}]}"#).unwrap();
    /// let uri = format!("file://{}", file.display().to_string().replace(' ', "%20"));
    /// let policies = ApproverRegistry::new().read_policies(&uri).unwrap();
    /// assert_eq!(policies.len(), 1);
    /// let err = ApproverRegistry::new().read_policies("file://elsewhere/p.json").unwrap_err();
    /// assert!(err.to_string().contains("only local files"), "{err}");
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn read_policies(
        &self,
        path: impl AsRef<Path>,
    ) -> Result<Vec<ApprovalPolicy>, ApprovalConfigError> {
        let local = local_path(path.as_ref())?;
        let path = local.as_path();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ApprovalConfigError::Read {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        let yaml = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"));
        if yaml {
            self.policies_from_yaml(&text, &shown)
        } else {
            self.policies_from_json(&text)
        }
    }

    /// Policies from JSON text.
    ///
    /// ```
    /// use actuator_exec::ApproverRegistry;
    /// let policies = ApproverRegistry::new().policies_from_json(r#"{"approvers": [
    ///     {"name": "auto", "tools": "read_*, list_dir", "decision": "approve"},
    ///     {"name": "auto", "tools": ["*"], "params": {"decision": "reject"}}
    /// ]}"#).unwrap();
    /// assert_eq!(policies.len(), 2);
    /// let err = ApproverRegistry::new().policies_from_json(r#"{"approvers": [{"name": "robot", "tools": "*"}]}"#).unwrap_err();
    /// assert!(err.to_string().starts_with("Unknown approver 'robot'"));
    /// ```
    pub fn policies_from_json(
        &self,
        text: &str,
    ) -> Result<Vec<ApprovalPolicy>, ApprovalConfigError> {
        let config: PolicyConfig =
            serde_json::from_str(text).map_err(|e| ApprovalConfigError::Invalid {
                reason: e.to_string(),
            })?;
        self.build(config)
    }

    #[cfg(feature = "yaml")]
    fn policies_from_yaml(
        &self,
        text: &str,
        _path: &str,
    ) -> Result<Vec<ApprovalPolicy>, ApprovalConfigError> {
        let config: PolicyConfig =
            serde_norway::from_str(text).map_err(|e| ApprovalConfigError::Invalid {
                reason: e.to_string(),
            })?;
        self.build(config)
    }

    #[cfg(not(feature = "yaml"))]
    fn policies_from_yaml(
        &self,
        _text: &str,
        path: &str,
    ) -> Result<Vec<ApprovalPolicy>, ApprovalConfigError> {
        Err(ApprovalConfigError::YamlDisabled {
            path: path.to_owned(),
        })
    }

    fn build(&self, config: PolicyConfig) -> Result<Vec<ApprovalPolicy>, ApprovalConfigError> {
        config
            .approvers
            .into_iter()
            .map(|entry| {
                let make = self.factories.get(&entry.name).ok_or_else(|| {
                    ApprovalConfigError::UnknownApprover {
                        name: entry.name.clone(),
                        known: self
                            .factories
                            .keys()
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", "),
                    }
                })?;
                let name = entry.name.clone();
                let bad = |reason: String| ApprovalConfigError::BadApprover {
                    name: name.clone(),
                    reason,
                };
                let approver = make(&entry.all_params()).map_err(bad)?;
                ApprovalPolicy::new(approver, entry.tool_specs())
                    .map(|p| p.named(name.clone()))
                    .map_err(|e| bad(e.to_string()))
            })
            .collect()
    }
}

#[derive(Deserialize)]
struct PolicyConfig {
    approvers: Vec<PolicyEntry>,
}

#[derive(Deserialize)]
pub(crate) struct PolicyEntry {
    pub(crate) name: String,
    pub(crate) tools: Tools,
    #[serde(default)]
    pub(crate) params: Map<String, Value>,
    /// Any other key is a parameter too, as in the reference.
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
}

impl PolicyEntry {
    /// The entry's parameters: `params` and every other key.
    pub(crate) fn all_params(&self) -> Map<String, Value> {
        let mut params = self.params.clone();
        params.extend(self.extra.clone());
        params
    }

    /// The entry's tool patterns.
    pub(crate) fn tool_specs(self) -> Vec<String> {
        match self.tools {
            Tools::One(t) => vec![t],
            Tools::Many(ts) => ts,
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum Tools {
    One(String),
    Many(Vec<String>),
}

/// The path a `file://` URI names (the reference reads policy files through fsspec, which
/// takes them), or `path` itself when it is not one. Only local files: a URI naming another
/// host is refused.
pub(crate) fn local_path(path: &Path) -> Result<std::path::PathBuf, ApprovalConfigError> {
    let Some(rest) = path.to_str().and_then(|p| p.strip_prefix("file://")) else {
        return Ok(path.to_owned());
    };
    let (host, file) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) || file.is_empty() {
        return Err(ApprovalConfigError::Read {
            path: path.display().to_string(),
            reason: "only local files can be read (file:///path or file://localhost/path)"
                .to_owned(),
        });
    }
    let decoded = percent_encoding::percent_decode_str(file)
        .decode_utf8()
        .map_err(|e| ApprovalConfigError::Read {
            path: path.display().to_string(),
            reason: format!("the URI's path is not UTF-8 once decoded: {e}"),
        })?;
    Ok(std::path::PathBuf::from(decoded.into_owned()))
}
