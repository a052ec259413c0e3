//! A task: a dataset, a solver, scorers, and the limits and epochs each sample runs under.

use std::sync::Arc;

use actuator_agent::limits::Limit;
use actuator_model::BoxFuture;
use actuator_multi::Solver;
use actuator_sandbox::{SandboxError, SandboxHandle};

use crate::log::SandboxSpec;
use crate::sample::Dataset;
use crate::scorer::{Scorer, SharedScorer};

/// What an evaluation runs: every sample of `dataset`, `epochs` times, solved by `solver` under
/// `limits`, then judged by every scorer.
///
/// ```
/// use std::sync::Arc;
/// use actuator_eval::{Dataset, Sample, Task, scorers::{IncludesOptions, includes}};
/// use actuator_multi::as_solver;
/// # let agent: Arc<dyn actuator_agent::Agent> = Arc::new(actuator_agent::agent_fn("echo", |s, _cx, _a| async move { Ok(s) }));
/// let task = Task::new("arithmetic", Dataset::new([Sample::new("What is 3 + 4?", "7")]), Arc::new(as_solver(agent).build().unwrap()))
///     .scorer(includes(IncludesOptions::default()))
///     .epochs(2);
/// assert_eq!(task.name, "arithmetic");
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct Task {
    /// The task's name (the log's `task`).
    pub name: String,
    /// The samples.
    pub dataset: Dataset,
    /// What works on each sample.
    pub solver: Arc<dyn Solver>,
    /// The solver's name in the log's plan.
    pub solver_name: String,
    /// The scorers.
    pub scorers: Vec<SharedScorer>,
    /// Limits each sample runs under (message, token, time, …); a sample that hits one is
    /// scored on what it did and the limit is recorded.
    pub limits: Vec<Limit>,
    /// How often each sample runs.
    pub epochs: u32,
    /// Makes each sample's sandbox (a run resource its tools find), when the task has one.
    pub sandbox: Option<SandboxFactory>,
    /// How the log names the sandbox ([`Task::docker`] sets it).
    pub sandbox_spec: Option<SandboxSpec>,
}

/// Makes a fresh sandbox for one sample ([`Task::sandbox`], [`Task::sandbox_async`]); when
/// the sample ends it is cleaned up ([`Sandbox::cleanup`](actuator_sandbox::Sandbox::cleanup))
/// and dropped, its processes and files with it.
pub type SandboxFactory =
    Arc<dyn Fn() -> BoxFuture<'static, Result<SandboxHandle, SandboxError>> + Send + Sync>;

impl std::fmt::Debug for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task")
            .field("name", &self.name)
            .field("samples", &self.dataset.samples.len())
            .field("solver", &self.solver_name)
            .field(
                "scorers",
                &self
                    .scorers
                    .iter()
                    .map(|s| s.name().to_owned())
                    .collect::<Vec<_>>(),
            )
            .field("limits", &self.limits)
            .field("epochs", &self.epochs)
            .field("sandbox", &self.sandbox.is_some())
            .finish()
    }
}

impl Task {
    /// A task with no scorers, no limits and one epoch.
    pub fn new(name: impl Into<String>, dataset: Dataset, solver: Arc<dyn Solver>) -> Self {
        Task {
            name: name.into(),
            dataset,
            solver,
            solver_name: "solver".into(),
            scorers: Vec::new(),
            limits: Vec::new(),
            epochs: 1,
            sandbox: None,
            sandbox_spec: None,
        }
    }

    /// Gives every sample a sandbox of its own, made by `make` when the sample starts (a
    /// sample whose sandbox cannot be made fails with the sandbox's error).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_eval::{Dataset, Sample, Task, chain};
    /// use actuator_sandbox::{LocalSandbox, SandboxHandle};
    /// let task = Task::new("shell", Dataset::new([Sample::new("ls", "")]), Arc::new(chain(Vec::new())))
    ///     .sandbox(|| LocalSandbox::new().map(SandboxHandle::new));
    /// assert!(task.sandbox.is_some());
    /// ```
    #[must_use]
    pub fn sandbox(
        mut self,
        make: impl Fn() -> Result<SandboxHandle, SandboxError> + Send + Sync + 'static,
    ) -> Self {
        self.sandbox = Some(Arc::new(move || {
            let made = make();
            Box::pin(async move { made })
        }));
        self
    }

    /// Gives each sample a compose project of its own from `config` (Inspect's
    /// `sandbox=("docker", "compose.yaml")`), at most [`max_sandboxes`] at once across the
    /// task's samples, taken down when the sample ends; the log names it as the reference
    /// does (`{"type": "docker", "config": "compose.yaml"}`).
    ///
    /// [`max_sandboxes`]: actuator_sandbox::docker::max_sandboxes
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_eval::{Dataset, Sample, Task, chain};
    /// use actuator_sandbox::docker::ComposeConfig;
    /// let task = Task::new("shell", Dataset::new([Sample::new("ls", "")]), Arc::new(chain(Vec::new())))
    ///     .docker(ComposeConfig::generic());
    /// assert_eq!(task.sandbox_spec.unwrap().kind, "docker");
    /// ```
    #[cfg(feature = "docker")]
    #[cfg_attr(docsrs, doc(cfg(feature = "docker")))]
    #[must_use]
    pub fn docker(mut self, config: actuator_sandbox::docker::ComposeConfig) -> Self {
        use actuator_sandbox::docker::{ComposeOptions, DockerSandbox, max_sandboxes};
        let name = config
            .file()
            .and_then(|f| f.file_name())
            .map(|f| f.to_string_lossy().into_owned());
        self.sandbox_spec = Some(SandboxSpec::new("docker", name));
        let limit = max_sandboxes();
        let task = self.name.clone();
        self.sandbox_async(move || {
            let builder = DockerSandbox::builder(config.clone())
                .options(ComposeOptions::new(task.clone()))
                .limit(Arc::clone(&limit));
            async move { builder.build().await.map(SandboxHandle::new) }
        })
    }

    /// Gives each sample a fresh sandbox made by an async `make` (a container brought up for
    /// it, say), at most as many at once as samples run.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_eval::{Dataset, Sample, Task, chain};
    /// use actuator_sandbox::{LocalSandbox, SandboxHandle};
    /// let task = Task::new("shell", Dataset::new([Sample::new("ls", "")]), Arc::new(chain(Vec::new())))
    ///     .sandbox_async(|| async { LocalSandbox::new().map(SandboxHandle::new) });
    /// assert!(task.sandbox.is_some());
    /// ```
    #[must_use]
    pub fn sandbox_async<F, Fut>(mut self, make: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<SandboxHandle, SandboxError>> + Send + 'static,
    {
        self.sandbox = Some(Arc::new(move || Box::pin(make())));
        self
    }

    /// Adds a scorer.
    #[must_use]
    pub fn scorer(mut self, scorer: impl Scorer + 'static) -> Self {
        self.scorers.push(Arc::new(scorer));
        self
    }

    /// Adds a shared scorer.
    #[must_use]
    pub fn shared_scorer(mut self, scorer: SharedScorer) -> Self {
        self.scorers.push(scorer);
        self
    }

    /// Adds per-sample limits.
    #[must_use]
    pub fn limits(mut self, limits: impl IntoIterator<Item = Limit>) -> Self {
        self.limits.extend(limits);
        self
    }

    /// Runs each sample `epochs` times (at least once).
    #[must_use]
    pub fn epochs(mut self, epochs: u32) -> Self {
        self.epochs = epochs.max(1);
        self
    }

    /// Names the solver in the log's plan.
    #[must_use]
    pub fn solver_name(mut self, name: impl Into<String>) -> Self {
        self.solver_name = name.into();
        self
    }
}
