//! Review policies from configuration: the reference's review policy files (JSON, or YAML with
//! the `yaml` feature), in the approval policy files' format under `reviewers`, with reviewers
//! looked up by name in a [`ReviewerRegistry`].
//!
//! ```yaml
//! reviewers:
//!   - name: output_monitor
//!     tools: bash, python
//!   - name: secret_scanner
//!     tools: "*"
//!     patterns: ["BEGIN PRIVATE KEY"]
//! ```
//!
//! Each entry names a reviewer, the tools whose results it reviews (a string of
//! comma-separated patterns, or a list of them, as [`ReviewPolicy::new`] takes), and its
//! parameters, under `params` or as any other key, as the reference collects them.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::policy_config::{PolicyEntry, local_path};
use crate::review::{ReviewPolicy, Reviewer};

/// Why a review policy configuration could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReviewConfigError {
    /// The file could not be read (the reference's `Review policy file not found`).
    #[error("Review policy file not found or unreadable: {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// The system's reason.
        reason: String,
    },
    /// The text is not a review policy configuration.
    #[error(
        "Invalid review policy: {reason}. Expected {{\"reviewers\": [{{\"name\": ..., \"tools\": ...}}, ...]}}."
    )]
    Invalid {
        /// What the parser said.
        reason: String,
    },
    /// A YAML file was given but the `yaml` feature is off.
    #[error(
        "Review policy '{path}' is YAML, but actuator-exec was built without its `yaml` feature: enable it, or write the policy as JSON."
    )]
    YamlDisabled {
        /// The file.
        path: String,
    },
    /// A reviewer name that the registry does not know.
    #[error(
        "Unknown reviewer '{name}' in the review policy. Known reviewers: {known}. Register others with ReviewerRegistry::register."
    )]
    UnknownReviewer {
        /// The name.
        name: String,
        /// The names the registry knows.
        known: String,
    },
    /// A reviewer refused its parameters, or a tool pattern is invalid.
    #[error("Reviewer '{name}' in the review policy: {reason}")]
    BadReviewer {
        /// The reviewer's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

type ReviewerFactory =
    Arc<dyn Fn(&Map<String, Value>) -> Result<Arc<dyn Reviewer>, String> + Send + Sync>;

/// Reviewers by name, for review policy files: `human` (the reference's one: asks on the
/// terminal, parameter `choices`, default `["continue", "terminate"]`; with the `terminal`
/// feature) is built in; register yours with [`register`](Self::register).
///
/// ```
/// use std::sync::Arc;
/// use actuator_exec::{Review, ReviewRequest, Reviewer, ReviewerRegistry};
/// use actuator_model::BoxFuture;
/// struct Pass;
/// impl Reviewer for Pass {
///     fn review<'a>(&'a self, _r: ReviewRequest<'a>) -> BoxFuture<'a, Review> {
///         Box::pin(async { Review::proceed() })
///     }
/// }
/// let mut registry = ReviewerRegistry::new();
/// registry.register("pass", |_params| Ok(Arc::new(Pass)));
/// let policies = registry.policies_from_json(r#"{"reviewers": [
///     {"name": "pass", "tools": "bash, python"},
///     {"name": "pass", "tools": ["web_*"], "params": {"strict": true}}
/// ]}"#).unwrap();
/// assert_eq!(policies.len(), 2);
/// assert_eq!(policies[0].reviewer_name(), "pass");
/// let err = registry.policies_from_json(r#"{"reviewers": [{"name": "robot", "tools": "*"}]}"#).unwrap_err();
/// assert!(err.to_string().starts_with("Unknown reviewer 'robot'"), "{err}");
/// ```
#[derive(Clone)]
pub struct ReviewerRegistry {
    factories: BTreeMap<String, ReviewerFactory>,
}

impl Default for ReviewerRegistry {
    fn default() -> Self {
        #[allow(unused_mut)]
        let mut registry = ReviewerRegistry {
            factories: BTreeMap::new(),
        };
        #[cfg(feature = "terminal")]
        registry.register("human", |params| {
            let choices = match params.get("choices") {
                None => Vec::new(),
                Some(v) => serde_json::from_value::<Vec<crate::ReviewDecision>>(v.clone())
                    .map_err(|_| {
                        format!(
                            "'choices' must be a list of continue, terminate, escalate, not {v}"
                        )
                    })?,
            };
            Ok(Arc::new(
                crate::terminal_review::TerminalReviewer::new().choices(choices),
            ))
        });
        registry
    }
}

impl std::fmt::Debug for ReviewerRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.factories.keys()).finish()
    }
}

impl ReviewerRegistry {
    /// The built-in reviewers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a reviewer: `make` builds it from the entry's parameters (an error text when
    /// they are wrong). Replaces a reviewer of the same name.
    pub fn register(
        &mut self,
        name: impl Into<String>,
        make: impl Fn(&Map<String, Value>) -> Result<Arc<dyn Reviewer>, String> + Send + Sync + 'static,
    ) -> &mut Self {
        self.factories.insert(name.into(), Arc::new(make));
        self
    }

    /// Reads policies from a file: YAML for `.yaml`/`.yml` (with the `yaml` feature), else
    /// JSON; a path or a local `file://` URI, as for approval policies.
    pub fn read_policies(
        &self,
        path: impl AsRef<Path>,
    ) -> Result<Vec<ReviewPolicy>, ReviewConfigError> {
        let shown = path.as_ref().display().to_string();
        let local = local_path(path.as_ref()).map_err(|e| ReviewConfigError::Read {
            path: shown.clone(),
            reason: match e {
                crate::ApprovalConfigError::Read { reason, .. } => reason,
                other => other.to_string(),
            },
        })?;
        let path = local.as_path();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ReviewConfigError::Read {
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

    /// Policies from JSON text (see the type's example).
    pub fn policies_from_json(&self, text: &str) -> Result<Vec<ReviewPolicy>, ReviewConfigError> {
        let config: ReviewConfig =
            serde_json::from_str(text).map_err(|e| ReviewConfigError::Invalid {
                reason: e.to_string(),
            })?;
        self.build(config)
    }

    #[cfg(feature = "yaml")]
    fn policies_from_yaml(
        &self,
        text: &str,
        _path: &str,
    ) -> Result<Vec<ReviewPolicy>, ReviewConfigError> {
        let config: ReviewConfig =
            serde_norway::from_str(text).map_err(|e| ReviewConfigError::Invalid {
                reason: e.to_string(),
            })?;
        self.build(config)
    }

    #[cfg(not(feature = "yaml"))]
    fn policies_from_yaml(
        &self,
        _text: &str,
        path: &str,
    ) -> Result<Vec<ReviewPolicy>, ReviewConfigError> {
        Err(ReviewConfigError::YamlDisabled {
            path: path.to_owned(),
        })
    }

    fn build(&self, config: ReviewConfig) -> Result<Vec<ReviewPolicy>, ReviewConfigError> {
        config
            .reviewers
            .into_iter()
            .map(|entry| {
                let make = self.factories.get(&entry.name).ok_or_else(|| {
                    ReviewConfigError::UnknownReviewer {
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
                let bad = |reason: String| ReviewConfigError::BadReviewer {
                    name: name.clone(),
                    reason,
                };
                let reviewer = make(&entry.all_params()).map_err(bad)?;
                ReviewPolicy::new(reviewer, entry.tool_specs())
                    .map(|p| p.named(name.clone()))
                    .map_err(|e| bad(e.to_string()))
            })
            .collect()
    }
}

#[derive(Deserialize)]
struct ReviewConfig {
    reviewers: Vec<PolicyEntry>,
}
