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

/// The image the Docker tests run (a local Debian with python3, built by
/// `scripts/test-env/docker.sh`; also tagged as the reference's default image).
#[cfg(feature = "docker")]
pub const DOCKER_TEST_IMAGE: &str = "actuator-test/debian:bookworm";

/// Held by a Docker test for its duration: a shared lock on a file in the temporary
/// directory, which the tests that take down every project ([`cleanup_orphans`]) hold
/// exclusively, so they never remove another test's project.
///
/// [`cleanup_orphans`]: crate::docker::cleanup_orphans
#[cfg(feature = "docker")]
#[derive(Debug)]
pub struct DockerTestLock(#[allow(dead_code)] std::fs::File);

/// The Docker engine for a test, by the project's rule for missing components.
///
/// - `Ok(Some(lock))` when the `docker` CLI answers and has [`DOCKER_TEST_IMAGE`] (the lock
///   is shared, or exclusive when `exclusive`);
/// - `Ok(None)` when it does not and `CI` is unset, after printing a note (skip);
/// - `Err(message)` when it does not and `CI` is set (the test must fail).
///
/// ```no_run
/// let Some(_lock) = actuator_sandbox::testing::docker_engine(false).expect("docker") else {
///     return; // skipped: no Docker here
/// };
/// ```
#[cfg(feature = "docker")]
pub fn docker_engine(exclusive: bool) -> Result<Option<DockerTestLock>, String> {
    use rustix::fs::{FlockOperation, flock};
    let problem = match std::process::Command::new("docker")
        .args(["image", "inspect", "--format", "{{.Id}}", DOCKER_TEST_IMAGE])
        .output()
    {
        Err(e) => Some(format!("the docker CLI cannot run: {e}")),
        Ok(out) if !out.status.success() => Some(format!(
            "docker has no {DOCKER_TEST_IMAGE} or no daemon answers: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Ok(_) => None,
    };
    if let Some(problem) = problem {
        if std::env::var_os("CI").is_some() {
            return Err(format!(
                "CI is set, so a missing component is a failure: {problem} (run scripts/setup-test-env)"
            ));
        }
        println!("note: skipping a Docker test: {problem} (run scripts/setup-test-env)");
        return Ok(None);
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(std::env::temp_dir().join("actuator-docker-tests.lock"))
        .map_err(|e| format!("the Docker tests' lock file cannot be opened: {e}"))?;
    let op = if exclusive {
        FlockOperation::LockExclusive
    } else {
        FlockOperation::LockShared
    };
    flock(&file, op).map_err(|e| format!("the Docker tests' lock cannot be taken: {e}"))?;
    Ok(Some(DockerTestLock(file)))
}
