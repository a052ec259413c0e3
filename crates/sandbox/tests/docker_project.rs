//! Compose projects on the real Docker engine (`scripts/setup-test-env` installs and starts
//! it and builds the test images): the default configuration, a user's compose file with two
//! services, a Dockerfile, the errors, and nothing left behind: each test lists the
//! containers, networks and volumes labelled with its project while it is up and after it is
//! down, dropped, or orphaned by a killed process.
//!
//! Without Docker the tests skip with a note; with `CI` set they fail. They share a file
//! lock: each holds it shared, and the one test that runs `cleanup_orphans` (which takes down
//! every project of this crate) holds it exclusively.

#![cfg(feature = "docker")]
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use actuator_sandbox::docker::{
    ComposeConfig, ComposeOptions, ComposeProject, DockerError, cleanup_orphans, cleanup_project,
};
mod docker_support;
use docker_support::*;

/// How many generated-file directories of `project` are in the temporary directory.
fn files_of(project: &str) -> usize {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{project}-"))
        })
        .count()
}

/// `docker exec` in a container; its standard output, or a panic with its error.
fn exec(container: &str, script: &str) -> String {
    let out = Command::new("docker")
        .args(["exec", container, "sh", "-c", script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn the_default_configuration_runs_without_a_network_and_goes_down_entirely() {
    let Some(_lock) = docker(false) else { return };
    let started = Instant::now();
    let project = ComposeProject::up(&ComposeConfig::generic(), ComposeOptions::new("default"))
        .await
        .unwrap();
    let up = started.elapsed();
    let name = project.name().to_owned();
    let default = project.container("default").unwrap().clone();
    assert_eq!(default.state, "running");
    assert_eq!(resources("container", &name).len(), 1);
    // network_mode: none holds: only the loopback interface inside, no network outside.
    assert_eq!(exec(&default.name, "ls /sys/class/net").trim(), "lo");
    assert!(resources("network", &name).is_empty());
    assert!(exec(&default.name, "python3 --version").starts_with("Python 3"));
    let down_started = Instant::now();
    project.down().await.unwrap();
    println!(
        "a sample's project: up {:?}, down {:?}",
        up,
        down_started.elapsed()
    );
    assert_nothing_left(&name);
}

#[tokio::test]
async fn a_compose_file_with_two_services_reaches_both_and_removes_its_network_and_volume() {
    let Some(_lock) = docker(false) else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "compose.yaml",
        &format!(
            "services:
  web:
    image: {TEST_IMAGE}
    command: tail -f /dev/null
    init: true
    networks: [inner]
  main:
    x-default: true
    image: {TEST_IMAGE}
    command: tail -f /dev/null
    init: true
    networks: [inner]
    volumes: [data:/data]
networks:
  inner:
    internal: true
volumes:
  data: {{}}
"
        ),
    );
    let config = ComposeConfig::from_file(&file).unwrap();
    assert_eq!(config.default_service(), "main");
    assert_eq!(config.services(), ["web", "main"]);
    let project = ComposeProject::up(&config, ComposeOptions::new("two services"))
        .await
        .unwrap();
    let name = project.name().to_owned();
    assert_eq!(project.default_service(), "main");
    let main = project.container("main").unwrap().clone();
    let web = project.container("web").unwrap().clone();
    assert_eq!(
        (main.state.as_str(), web.state.as_str()),
        ("running", "running")
    );
    // The other service is reachable by name on the project's own (internal) network.
    exec(&main.name, "getent hosts web");
    exec(&main.name, "echo kept > /data/f");
    assert_eq!(resources("network", &name).len(), 1);
    assert_eq!(resources("volume", &name).len(), 1);
    project.down().await.unwrap();
    assert_nothing_left(&name);
}

#[tokio::test]
async fn a_dockerfile_is_built_run_and_its_image_removed() {
    let Some(_lock) = docker(false) else { return };
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "marker", "from the build context\n");
    let dockerfile = write(
        dir.path(),
        "Dockerfile",
        &format!("FROM {TEST_IMAGE}\nCOPY marker /marker\n"),
    );
    let config = ComposeConfig::from_file(&dockerfile).unwrap();
    let project = ComposeProject::up(&config, ComposeOptions::new("dockerfile"))
        .await
        .unwrap();
    let name = project.name().to_owned();
    let default = project.container("default").unwrap().clone();
    assert_eq!(
        exec(&default.name, "cat /marker"),
        "from the build context\n"
    );
    assert!(everything(&name).iter().any(|r| r.starts_with("image ")));
    project.down().await.unwrap();
    assert_nothing_left(&name);
}

#[tokio::test]
async fn an_extra_volume_mounts_a_host_directory_into_the_default_service() {
    let Some(_lock) = docker(false) else { return };
    let host = tempfile::tempdir().unwrap();
    write(host.path(), "hello", "from the host\n");
    let options =
        ComposeOptions::new("volume").extra_volume("default", host.path(), "/run/actuator", true);
    let project = ComposeProject::up(&ComposeConfig::generic(), options)
        .await
        .unwrap();
    let name = project.name().to_owned();
    let default = project.container("default").unwrap().clone();
    assert_eq!(
        exec(&default.name, "cat /run/actuator/hello"),
        "from the host\n"
    );
    let write = Command::new("docker")
        .args([
            "exec",
            &default.name,
            "sh",
            "-c",
            "echo x > /run/actuator/new",
        ])
        .output()
        .unwrap();
    assert!(!write.status.success(), "the mount is read-only");
    project.down().await.unwrap();
    assert_nothing_left(&name);
}

#[tokio::test]
async fn a_dropped_project_is_taken_down() {
    let Some(_lock) = docker(false) else { return };
    let project = ComposeProject::up(&ComposeConfig::generic(), ComposeOptions::new("dropped"))
        .await
        .unwrap();
    let name = project.name().to_owned();
    assert_eq!(resources("container", &name).len(), 1);
    assert_eq!(files_of(&name), 1);
    drop(project);
    assert_nothing_left(&name);
    // The background down removes the generated files once compose has read them.
    let deadline = Instant::now() + Duration::from_secs(10);
    while files_of(&name) != 0 {
        assert!(Instant::now() < deadline, "{name}'s files are left");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test]
async fn a_project_whose_default_service_cannot_start_is_an_error_and_leaves_nothing() {
    let Some(_lock) = docker(false) else { return };
    let dir = tempfile::tempdir().unwrap();
    // `true` exits at once: the default service is not running after `up`.
    let file = write(
        dir.path(),
        "compose.yaml",
        &format!(
            "services:\n  default:\n    image: {TEST_IMAGE}\n    command: \"true\"\n    network_mode: none\n"
        ),
    );
    let config = ComposeConfig::from_file(&file).unwrap();
    let err = ComposeProject::up(&config, ComposeOptions::new("fails"))
        .await
        .unwrap_err();
    let DockerError::NotRunning { project, state, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(state, "exited", "{err}");
    assert_nothing_left(project);
}

#[tokio::test]
async fn up_past_its_timeout_is_killed_and_taken_down() {
    let Some(_lock) = docker(false) else { return };
    let dir = tempfile::tempdir().unwrap();
    // A health check that never passes: `up --wait` would wait for it.
    let file = write(
        dir.path(),
        "compose.yaml",
        &format!(
            "services:
  default:
    image: {TEST_IMAGE}
    command: tail -f /dev/null
    init: true
    network_mode: none
    healthcheck:
      test: [\"CMD\", \"false\"]
      interval: 1s
      retries: 1000
"
        ),
    );
    let config = ComposeConfig::from_file(&file).unwrap();
    let started = Instant::now();
    let err = ComposeProject::up(
        &config,
        ComposeOptions::new("slow").up_timeout(Duration::from_secs(3)),
    )
    .await
    .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // The up timed out, or compose's own wait (the same bound) gave up first and the
    // default service is not healthy yet; either way the project is gone.
    let project = match &err {
        DockerError::Timeout { command, .. } => {
            command.split_whitespace().nth(3).unwrap().to_owned()
        }
        DockerError::NotRunning { project, .. } => project.clone(),
        other => panic!("{other}"),
    };
    assert_nothing_left(&project);
}

#[test]
fn malformed_and_incomplete_compose_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.yaml",
        "services:\n  default:\n    image: [unclosed\n",
    );
    let err = ComposeConfig::from_file(&bad).unwrap_err();
    let DockerError::Malformed { file, line, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(file, &bad);
    assert!(line.is_some_and(|l| l >= 3), "{err}");
    assert!(err.to_string().contains("bad.yaml"), "{err}");

    let none = write(dir.path(), "none.yaml", "networks: {}\n");
    assert!(matches!(
        ComposeConfig::from_file(&none),
        Err(DockerError::NoServices { .. })
    ));
    let empty = write(dir.path(), "empty.yaml", "");
    assert!(matches!(
        ComposeConfig::from_file(&empty),
        Err(DockerError::NoServices { .. })
    ));
    let list = write(dir.path(), "list.yaml", "- a\n- b\n");
    assert!(matches!(
        ComposeConfig::from_file(&list),
        Err(DockerError::Malformed { .. })
    ));

    let no_default = write(
        dir.path(),
        "nodefault.yaml",
        "services:\n  a: {}\n  b: {}\n",
    );
    let err = ComposeConfig::from_file(&no_default).unwrap_err();
    assert!(matches!(err, DockerError::NoDefaultService { .. }), "{err}");
    assert!(err.to_string().contains("x-default: true"), "{err}");
    assert!(err.to_string().contains("a, b"), "{err}");

    let two = write(
        dir.path(),
        "two.yaml",
        "services:\n  a:\n    x-default: true\n  b:\n    x-default: true\n",
    );
    assert!(matches!(
        ComposeConfig::from_file(&two),
        Err(DockerError::AmbiguousDefault { .. })
    ));

    // x-default wins over the name `default`, as in the reference.
    let both = write(
        dir.path(),
        "both.yaml",
        "services:\n  default: {}\n  main:\n    x-default: true\n",
    );
    let config = ComposeConfig::from_file(&both).unwrap();
    assert_eq!(config.default_service(), "main");
    assert_eq!(config.other_services().collect::<Vec<_>>(), ["default"]);

    let missing = ComposeConfig::from_file(dir.path().join("absent.yaml")).unwrap_err();
    assert!(matches!(missing, DockerError::Read { .. }), "{missing}");

    let huge = write(
        dir.path(),
        "huge.yaml",
        &"#".repeat(usize::try_from(actuator_sandbox::docker::MAX_COMPOSE_FILE).unwrap() + 1),
    );
    assert!(matches!(
        ComposeConfig::from_file(&huge),
        Err(DockerError::TooLarge { .. })
    ));
}

#[test]
fn a_directory_resolves_to_its_compose_file_or_dockerfile() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "Dockerfile", "FROM scratch\n");
    let config = ComposeConfig::from_dir(dir.path()).unwrap();
    assert!(config.generated_yaml().unwrap().contains("build:"));
    let compose = write(
        dir.path(),
        "docker-compose.yml",
        "services:\n  default:\n    image: x\n",
    );
    let config = ComposeConfig::from_dir(dir.path()).unwrap();
    assert_eq!(config.file(), Some(compose.as_path()));
}

/// A process that brings up a project and is killed (SIGKILL: no Drop, no clean-up) leaves
/// it running; `cleanup_orphans` takes it down, and leaves up the project of a process that
/// still runs (this one: another evaluation on the same machine). The test re-runs itself as
/// the process that is killed.
#[tokio::test]
async fn cleanup_orphans_removes_a_killed_processs_project_and_leaves_a_live_ones() {
    const TEST: &str = "cleanup_orphans_removes_a_killed_processs_project_and_leaves_a_live_ones";
    if std::env::var_os(CHILD_ENV).is_some() {
        let project = ComposeProject::up(&ComposeConfig::generic(), ComposeOptions::new("orphan"))
            .await
            .unwrap();
        println!("PROJECT={}", project.name());
        tokio::time::sleep(Duration::from_secs(600)).await;
        return;
    }
    let Some(_lock) = docker(true) else { return };
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--nocapture", "--test-threads", "1"])
        .env(CHILD_ENV, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // libtest prints the test's name on the same line first.
            if let Some((_, name)) = line.split_once("PROJECT=") {
                let _ = tx.send(name.trim().to_owned());
            }
        }
    });
    let name = rx.recv_timeout(Duration::from_secs(120));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let name = name.expect("the child did not bring up its project");
    // Killed: the project stays.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(resources("container", &name).len(), 1, "{name}");

    assert_eq!(
        files_of(&name),
        1,
        "the killed process's generated compose file"
    );

    // A project whose process is alive: this one's.
    let live = ComposeProject::up(&ComposeConfig::generic(), ComposeOptions::new("live"))
        .await
        .unwrap();
    let removed = cleanup_orphans().await.unwrap();
    assert!(removed.contains(&name), "{removed:?}");
    assert!(!removed.iter().any(|r| r == live.name()), "{removed:?}");
    assert_eq!(
        resources("container", live.name()).len(),
        1,
        "the live project is up"
    );
    assert!(
        !cleanup_project(live.name()).await.unwrap(),
        "its owner is alive"
    );
    assert_eq!(resources("container", live.name()).len(), 1);
    let live_name = live.name().to_owned();
    live.down().await.unwrap();
    assert_nothing_left(&live_name);
    assert_nothing_left(&name);
    assert_eq!(files_of(&name), 0, "its generated files are removed too");
    assert!(!cleanup_project(&name).await.unwrap(), "already gone");
}

/// Re-runs `test` in a child process with `env`, which sees `CHILD_ENV` set; asserts it
/// passed.
fn run_as_child(test: &str, env: &[(&str, std::ffi::OsString)]) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads", "1"])
        .env(CHILD_ENV, "1")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The real CLI with no daemon behind `DOCKER_HOST`: the error says how to start one.
#[tokio::test]
async fn an_unreachable_daemon_is_an_error_that_says_how_to_start_it() {
    const TEST: &str = "an_unreachable_daemon_is_an_error_that_says_how_to_start_it";
    if std::env::var_os(CHILD_ENV).is_some() {
        let before = files_of("actuator-nodaemon");
        let err = ComposeProject::up(&ComposeConfig::generic(), ComposeOptions::new("nodaemon"))
            .await
            .unwrap_err();
        // Nothing was created, so nothing waits on a down: its files are gone at once.
        assert_eq!(files_of("actuator-nodaemon"), before);
        assert!(
            matches!(err, DockerError::DaemonUnreachable { .. }),
            "{err}"
        );
        let text = err.to_string();
        assert!(
            text.contains("dockerd") && text.contains("systemctl start docker"),
            "{text}"
        );
        let err = cleanup_orphans().await.unwrap_err();
        assert!(
            matches!(err, DockerError::DaemonUnreachable { .. }),
            "{err}"
        );
        return;
    }
    let Some(_lock) = docker(false) else { return };
    let dir = tempfile::tempdir().unwrap();
    let host = format!("unix://{}", dir.path().join("no.sock").display());
    run_as_child(TEST, &[("DOCKER_HOST", host.into())]);
}

/// A `docker` without the compose plugin (the real CLI behind a wrapper that refuses
/// `compose` the way the CLI does when the plugin is absent).
#[tokio::test]
async fn a_missing_compose_plugin_is_an_error_that_says_how_to_install_it() {
    const TEST: &str = "a_missing_compose_plugin_is_an_error_that_says_how_to_install_it";
    if std::env::var_os(CHILD_ENV).is_some() {
        let err = ComposeProject::up(&ComposeConfig::generic(), ComposeOptions::new("nocompose"))
            .await
            .unwrap_err();
        assert!(matches!(err, DockerError::ComposeMissing { .. }), "{err}");
        assert!(err.to_string().contains("cli-plugins"), "{err}");
        return;
    }
    let Some(_lock) = docker(false) else { return };
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v docker"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let wrapper = write(
        dir.path(),
        "docker",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = compose ]; then echo \"docker: 'compose' is not a docker command.\" >&2; exit 1; fi\nexec {} \"$@\"\n",
            real.trim()
        ),
    );
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut path = std::ffi::OsString::from(dir.path());
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    run_as_child(TEST, &[("PATH", path)]);
}

/// A project that will not go down (its compose file was broken after `up`) does not keep
/// `cleanup_orphans` from taking down the others; its error is returned after them.
#[tokio::test]
async fn cleanup_orphans_goes_on_past_a_project_that_will_not_go_down() {
    let Some(_lock) = docker(true) else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "compose.yaml",
        &format!(
            "services:\n  default:\n    image: {TEST_IMAGE}\n    command: tail -f /dev/null\n    init: true\n    network_mode: none\n"
        ),
    );
    let broken = ComposeProject::up(
        &ComposeConfig::from_file(&file).unwrap(),
        ComposeOptions::new("broken"),
    )
    .await
    .unwrap();
    let fine = ComposeProject::up(&ComposeConfig::generic(), ComposeOptions::new("fine"))
        .await
        .unwrap();
    let (broken_name, fine_name) = (broken.name().to_owned(), fine.name().to_owned());
    // As a killed process would: neither is taken down by this process, and neither has an
    // owner any more (the kernel drops a dead process's lock; here its file goes).
    std::mem::forget(broken);
    std::mem::forget(fine);
    for name in [&broken_name, &fine_name] {
        std::fs::remove_file(owner_lock(name)).unwrap();
    }
    std::fs::write(&file, "services: [broken\n").unwrap();

    let err = cleanup_orphans().await.unwrap_err();
    assert!(err.to_string().contains(&broken_name), "{err}");
    assert_nothing_left(&fine_name);
    assert_eq!(resources("container", &broken_name).len(), 1);

    // Without its compose file, compose takes it down by its labels.
    std::fs::remove_file(&file).unwrap();
    assert!(cleanup_project(&broken_name).await.unwrap());
    assert_nothing_left(&broken_name);
}

/// The file whose lock marks `project`'s owner as alive (`$TMPDIR/actuator-compose-<uid>`).
fn owner_lock(project: &str) -> std::path::PathBuf {
    let uid = String::from_utf8(Command::new("id").arg("-u").output().unwrap().stdout).unwrap();
    std::env::temp_dir()
        .join(format!("actuator-compose-{}", uid.trim()))
        .join(format!("{project}.lock"))
}
