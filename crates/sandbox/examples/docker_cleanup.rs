//! The reference's `inspect sandbox cleanup docker`: takes down the compose projects that
//! Docker sandboxes of a killed process left behind (every `actuator-*` project, or the one
//! named on the command line). Run it when no evaluation is running:
//!
//! ```text
//! cargo run -p actuator-sandbox --features docker --example docker_cleanup [PROJECT]
//! ```
//!
//! Exits with status 1 (and says why) when Docker cannot be reached.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line program

use std::process::ExitCode;

use actuator_sandbox::docker::{cleanup_orphans, cleanup_project};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let result = match std::env::args().nth(1) {
        Some(name) => cleanup_project(&name)
            .await
            .map(|removed| if removed { vec![name] } else { Vec::new() }),
        None => cleanup_orphans().await,
    };
    match result {
        Ok(removed) if removed.is_empty() => {
            println!("No Docker sandbox projects to clean up.");
            ExitCode::SUCCESS
        }
        Ok(removed) => {
            for name in removed {
                println!("Removed {name}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("docker_cleanup: {e}");
            ExitCode::FAILURE
        }
    }
}
