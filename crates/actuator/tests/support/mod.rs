//! What the example tests share: running an example as `cargo test` built it.

use std::path::Path;

/// The standard output of example `name` run as built (beside the test binary's `deps/`),
/// with colour off; `None` when the example was not built (then the test is skipped with the
/// reason, or fails under CI, where a missing component is a failure). Panics, failing the
/// test, when the example exits unsuccessfully.
pub fn run_example(name: &str) -> Option<String> {
    // The test binary is target/<profile>/deps/<name>; the example is built beside deps.
    let exe = std::env::current_exe().unwrap();
    let example = exe
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("examples")
        .join(name);
    if !example.exists() {
        let reason = format!("the built example is missing at {}", example.display());
        assert!(std::env::var_os("CI").is_none(), "{reason} (CI is set)");
        eprintln!("skipped: {reason}");
        return None;
    }
    let out = std::process::Command::new(&example)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    Some(String::from_utf8(out.stdout).unwrap())
}
