//! Helpers for tests that need a confined sandbox: the project's rule is that a missing
//! component fails under CI and is skipped, with a note, elsewhere.

use crate::{LocalSandbox, LocalSandboxBuilder, SandboxError};

/// Builds a confined sandbox for a test.
///
/// - `Ok(Some(sandbox))` when bubblewrap works;
/// - `Ok(None)` when it is missing or refuses and the `CI` environment variable is unset,
///   after printing a note (the test should return early: a skip);
/// - `Err(message)` when it is missing or refuses and `CI` is set (the test must fail).
///
/// ```
/// use actuator_sandbox::{LocalSandbox, testing};
/// let Some(sandbox) = testing::confined(LocalSandbox::builder()).expect("bubblewrap") else {
///     return; // skipped: no bubblewrap here
/// };
/// # drop(sandbox);
/// ```
pub fn confined(builder: LocalSandboxBuilder) -> Result<Option<LocalSandbox>, String> {
    match builder.build() {
        Ok(sandbox) => Ok(Some(sandbox)),
        Err(err @ (SandboxError::BubblewrapMissing | SandboxError::BubblewrapRefused { .. })) => {
            if std::env::var_os("CI").is_some() {
                Err(format!(
                    "CI is set, so a missing component is a failure: {err} (run scripts/setup-test-env)"
                ))
            } else {
                println!("note: skipping a confined-sandbox test: {err}");
                Ok(None)
            }
        }
        Err(other) => Err(format!("the sandbox could not be built: {other}")),
    }
}
