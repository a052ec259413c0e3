//! # actuator-tools
//!
//! The built-in tools of Inspect AI, with its exact names, descriptions, schemas, parallel
//! flags, output conventions and error texts, running in the run's [`Sandbox`]:
//!
//! | tool | what it does | parallel |
//! |---|---|---|
//! | [`bash`] | `bash --login -c command`; returns `stderr\nstdout` (stdout alone when there is no stderr), never an error on a non-zero exit | yes |
//! | [`python`] | the code on standard input of `python3 -`; the same convention | yes |
//! | [`text_editor`] | `view` (numbered lines, `view_range`), `create`, `str_replace`, `insert`, `undo_edit`, confined to the working directory | no |
//! | [`bash_session`] | a persistent shell per instance: `type`, `type_submit`, `read`, `interrupt`, `restart` | no |
//! | [`think`] | a scratchpad: no effect, returns nothing | yes |
//!
//! Tools find their sandbox in the call's `ToolContext::extensions`: put a
//! [`SandboxHandle`] in the run's resources. Without one, a call returns the
//! `sandbox_unavailable` error.
//!
//! ```no_run
//! use std::time::Duration;
//! use actuator_sandbox::{LocalSandbox, SandboxHandle};
//! use actuator_tools::{BashOptions, bash};
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let tool = bash(BashOptions::new().timeout(Duration::from_secs(30)))?;
//! let mut ctx = actuator_tool_core::ToolContext::new("call_1", "bash");
//! ctx.extensions.insert(SandboxHandle::new(LocalSandbox::new()?));
//! let out = tool.call(serde_json::json!({"command": "echo hi"}), ctx).await?;
//! assert_eq!(out.text(), "hi\n");
//! # Ok(()) }
//! ```
//!
//! [`Sandbox`]: actuator_sandbox::Sandbox
//! [`SandboxHandle`]: actuator_sandbox::SandboxHandle
#![cfg_attr(docsrs, feature(doc_cfg))]

mod common;
pub use common::{ShellOptions, code_viewer};

mod shell;
pub use shell::{BashOptions, bash, python};

mod text_editor;
pub use text_editor::text_editor;

mod bash_session;
pub use bash_session::{BashSessionError, BashSessionOptions, bash_session};

mod think;
pub use think::{ThinkOptions, think};
