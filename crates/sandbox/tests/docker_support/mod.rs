//! What the Docker tests share: the engine and test image, or a skip (a failure with `CI`
//! set); the lock that keeps `cleanup_orphans` (which takes down every project of this crate)
//! from running beside other tests; what a project left behind.
#![allow(dead_code, clippy::unwrap_used, clippy::panic)]

use std::process::Command;
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, flock};

pub const TEST_IMAGE: &str = "actuator-test/debian:bookworm";
pub const CHILD_ENV: &str = "ACTUATOR_DOCKER_TEST_CHILD";

/// Held for a test's duration (see the module docs).
pub struct DockerLock(std::fs::File);

/// The lock if Docker and the test image are here; `None` (skip) if not, outside CI.
pub fn docker(exclusive: bool) -> Option<DockerLock> {
    let problem = match Command::new("docker")
        .args(["image", "inspect", "--format", "{{.Id}}", TEST_IMAGE])
        .output()
    {
        Err(e) => Some(format!("the docker CLI cannot run: {e}")),
        Ok(out) if !out.status.success() => Some(format!(
            "docker has no {TEST_IMAGE} or no daemon answers: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Ok(_) => None,
    };
    if let Some(problem) = problem {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and {problem} (run scripts/setup-test-env)"
        );
        println!("note: skipping: {problem} (run scripts/setup-test-env)");
        return None;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(std::env::temp_dir().join("actuator-docker-tests.lock"))
        .unwrap();
    let op = if exclusive {
        FlockOperation::LockExclusive
    } else {
        FlockOperation::LockShared
    };
    flock(&file, op).unwrap();
    Some(DockerLock(file))
}

/// The ids of `kind` (`container`, `network`, `volume`) labelled with `project`.
pub fn resources(kind: &str, project: &str) -> Vec<String> {
    let label = format!("label=com.docker.compose.project={project}");
    let mut args = vec![kind, "ls", "--quiet", "--filter", label.as_str()];
    if kind == "container" {
        args.push("--all");
    }
    let out = Command::new("docker").args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Everything labelled with `project`, and the images compose built for it.
pub fn everything(project: &str) -> Vec<String> {
    let mut all = Vec::new();
    for kind in ["container", "network", "volume"] {
        all.extend(
            resources(kind, project)
                .into_iter()
                .map(|id| format!("{kind} {id}")),
        );
    }
    let out = Command::new("docker")
        .args(["image", "ls", "--quiet", "--filter"])
        .arg(format!("reference={project}-*"))
        .output()
        .unwrap();
    all.extend(
        String::from_utf8(out.stdout)
            .unwrap()
            .split_whitespace()
            .map(|id| format!("image {id}")),
    );
    all
}

/// Polls until nothing of `project` is left (a dropped project is taken down in the
/// background), at most 30 s.
pub fn assert_nothing_left(project: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = everything(project);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "{project} left behind: {left:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}
