//! What the Docker tests share: the engine and test image, or a skip (a failure with `CI`
//! set); the lock that keeps `cleanup_orphans` (which takes down every project of this crate)
//! from running beside other tests; what a project left behind.
#![allow(dead_code, clippy::unwrap_used, clippy::panic)]

use std::process::Command;
use std::time::{Duration, Instant};

pub use actuator_sandbox::testing::DOCKER_TEST_IMAGE as TEST_IMAGE;
pub const CHILD_ENV: &str = "ACTUATOR_DOCKER_TEST_CHILD";

/// The engine and the tests' lock, or a skip outside CI (see `testing::docker_engine`).
pub fn docker(exclusive: bool) -> Option<actuator_sandbox::testing::DockerTestLock> {
    actuator_sandbox::testing::docker_engine(exclusive).unwrap()
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
