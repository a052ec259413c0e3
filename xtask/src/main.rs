//! Project automation: `cargo xtask <command>`.
#![allow(clippy::print_stderr)]

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("help") | Some("--help") | None => {
            println!("usage: cargo xtask <command>\n\ncommands:\n  help    this text");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("unknown command '{other}'; see `cargo xtask help`");
            ExitCode::from(2)
        }
    }
}
