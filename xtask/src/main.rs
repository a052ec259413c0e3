//! Project automation: `cargo xtask <command>`.
#![allow(clippy::print_stderr)]

mod bench;
mod build_cost;
mod divan;
mod measure;
mod peers;
mod python;
mod report;
mod specs;
mod w6;
mod w8;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  help    this text
  bench   build and run the benchmarks (release) and print one table; see `cargo xtask bench --help`
  specs   cut the OpenAI spec subset the tests use out of the full file; see `cargo xtask specs --help`";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("help") | Some("--help") | None => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some("bench") => match bench::main(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Some("specs") => match specs::main(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Some(other) => {
            eprintln!("unknown command '{other}'; see `cargo xtask help`");
            ExitCode::from(2)
        }
    }
}
