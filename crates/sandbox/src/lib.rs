//! # actuator-sandbox
//!
//! Where Actuator's built-in tools run.
//!
//! - [`Sandbox`]: an object-safe trait (exec with argv, stdin, cwd, env, user, timeout and an
//!   output limit; `read_file`; `write_file`; interactive processes; a name), so other
//!   backends (docker, Kubernetes, a remote service) fit later without touching the tools.
//! - [`LocalSandbox`]: the embedded default. A per-run working directory, and one
//!   [bubblewrap](https://github.com/containers/bubblewrap) sandbox per run in which every
//!   command runs: read-only system directories (`/usr`, `/etc`), the working directory and
//!   a private `/tmp` as the only writable places, no network unless enabled, its own PID
//!   namespace (and session, when the caller has a terminal), killed with its parent, and resource limits (processes, file
//!   size, memory) set with `prlimit`. When the caller is root, commands run as an
//!   unprivileged user (`nobody` by default). A small bash supervisor inside forks each
//!   command as its own process group, so a process left in the background keeps running
//!   until the sandbox is dropped, which ends the whole PID namespace.
//! - `docker` (feature `docker`): the foundation of Docker sandboxes: compose configurations
//!   read as the reference reads them (a compose file, a Dockerfile, or its default image),
//!   and one compose project per sample, brought up and always taken down through the real
//!   `docker compose` CLI.
//! - [`SandboxHandle`]: the run resource through which tools find their run's sandbox
//!   (`RunOptions::resource(SandboxHandle::new(sandbox))`; tools read it from
//!   `ToolContext::extensions`).
//!
//! ```no_run
//! use actuator_sandbox::{ExecRequest, LocalSandbox, Sandbox};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), actuator_sandbox::SandboxError> {
//! let sandbox = LocalSandbox::new()?; // fails with install advice when bwrap is missing
//! let out = sandbox.exec(ExecRequest::new(["bash", "-c", "echo hi"])).await?;
//! assert_eq!(out.stdout, "hi\n");
//! # Ok(()) }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
pub use error::{SandboxError, combine_output, format_size};

mod sandbox;
pub use sandbox::{
    DEFAULT_MAX_EXEC_OUTPUT, ExecOutput, ExecRequest, InteractiveProcess, NO_SANDBOX_MESSAGE,
    Sandbox, SandboxConnection, SandboxHandle, SessionRequest,
};

mod local;
mod shell;
pub use local::{Confinement, LocalSandbox, LocalSandboxBuilder, ResourceLimits};

#[cfg(feature = "docker")]
#[cfg_attr(docsrs, doc(cfg(feature = "docker")))]
pub mod docker;

pub mod testing;
