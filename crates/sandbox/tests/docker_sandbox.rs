//! DockerSandbox on the real engine: LocalSandbox's semantics and texts for commands (status,
//! streams, input, directory, environment, user, timeout, output limit), files read and
//! written inside the container, sessions, the other services, no network, the connection,
//! and a cleanup that leaves nothing. Commands go through one supervisor per container and
//! user, so after the first each costs milliseconds, not a `docker exec` (printed, not
//! asserted: `cargo xtask bench` measures it).

#![cfg(feature = "docker")]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

mod docker_support;

use std::time::{Duration, Instant};

use actuator_sandbox::docker::{ComposeConfig, ComposeOptions, DockerSandbox};
use actuator_sandbox::{ExecRequest, Sandbox, SandboxError, SessionRequest};
use actuator_tool_core::ToolErrorKind;
use docker_support::{TEST_IMAGE, assert_nothing_left, docker};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn default_sandbox() -> DockerSandbox {
    DockerSandbox::builder(ComposeConfig::generic())
        .options(ComposeOptions::new("sandbox-test"))
        .build()
        .await
        .unwrap()
}

#[tokio::test]
async fn commands_keep_local_sandbox_semantics_and_cost_milliseconds() {
    let Some(_lock) = docker(false) else {
        return;
    };
    let sandbox = default_sandbox().await;
    let project = sandbox.project().to_owned();
    assert_eq!(sandbox.name(), "docker");

    let out = sandbox
        .exec(ExecRequest::new([
            "sh",
            "-c",
            "echo out; echo err >&2; exit 3",
        ]))
        .await
        .unwrap();
    assert_eq!(
        (out.status, out.stdout.as_str(), out.stderr.as_str()),
        (Some(3), "out\n", "err\n")
    );

    let out = sandbox
        .exec(
            ExecRequest::new(["sh", "-c", "cat; echo \"$GREETING\"; pwd"])
                .stdin("from stdin\n")
                .env("GREETING", "hello")
                .cwd("/tmp"),
        )
        .await
        .unwrap();
    assert_eq!(out.stdout, "from stdin\nhello\n/tmp\n");

    // Another user (the image knows `nobody`), through a supervisor of its own.
    let out = sandbox
        .exec(ExecRequest::new(["id", "-un"]).user(Some("nobody".into())))
        .await
        .unwrap();
    assert_eq!(out.stdout, "nobody\n", "{}", out.stderr);

    // A missing program and directory: the same statuses and texts as LocalSandbox.
    let out = sandbox
        .exec(ExecRequest::new(["no-such-program"]))
        .await
        .unwrap();
    assert_eq!(out.status, Some(127));
    assert_eq!(out.stderr, "no-such-program: command not found\n");
    let out = sandbox
        .exec(ExecRequest::new(["true"]).cwd("/no/such/dir"))
        .await
        .unwrap();
    assert_eq!(out.status, Some(1));
    assert_eq!(
        out.stderr,
        "Can't chdir to /no/such/dir: No such file or directory\n"
    );

    // A timeout kills the command's whole group and keeps what it printed.
    let started = Instant::now();
    let err = sandbox
        .exec(
            ExecRequest::new(["sh", "-c", "echo before; sleep 30 & sleep 30"])
                .timeout(Duration::from_millis(500)),
        )
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    match &err {
        SandboxError::Timeout { stdout, .. } => assert_eq!(stdout, "before\n"),
        other => panic!("{other:?}"),
    }
    assert_eq!(err.to_string(), "Command timed out before completing.");
    // Killed is not yet reaped: a `sleep` the kill reached may linger a moment as a zombie
    // (state Z) until the container's init collects it, so only live ones count, and the
    // signal is given a bounded moment to land.
    let live_sleeps = "for s in /proc/[0-9]*/stat; do read -r pid comm state rest < \"$s\" 2>/dev/null && [ \"$comm\" = '(sleep)' ] && [ \"$state\" != Z ] && echo live; done | wc -l";
    let deadline = Instant::now() + Duration::from_secs(5);
    let left = loop {
        let left = sandbox
            .exec(ExecRequest::new(["sh", "-c", live_sleeps]))
            .await
            .unwrap();
        if left.stdout.trim() == "0" || Instant::now() > deadline {
            break left;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(left.stdout.trim(), "0", "the timed-out group was killed");

    // Output past the limit is an error with the output cut.
    let err = sandbox
        .exec(
            ExecRequest::new(["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"])
                .max_output(1000),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, SandboxError::OutputLimit { limit: 1000, .. }),
        "{err:?}"
    );

    // Milliseconds per command once the supervisor runs.
    let started = Instant::now();
    for _ in 0..20 {
        let out = sandbox
            .exec(ExecRequest::new(["echo", "hi"]))
            .await
            .unwrap();
        assert_eq!(out.stdout, "hi\n");
    }
    eprintln!("20 commands: {:?}", started.elapsed());

    sandbox.cleanup().await.unwrap();
    assert_nothing_left(&project);
    // After the cleanup, commands fail with a clear error.
    let err = sandbox.exec(ExecRequest::new(["true"])).await.unwrap_err();
    assert!(matches!(err, SandboxError::Unavailable { .. }), "{err:?}");
}

#[tokio::test]
async fn files_are_read_and_written_inside_the_container() {
    let Some(_lock) = docker(false) else {
        return;
    };
    let sandbox = default_sandbox().await;
    let bytes: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    sandbox
        .write_file("/tmp/deep/dir/data.bin", &bytes)
        .await
        .unwrap();
    assert_eq!(
        sandbox.read_file("/tmp/deep/dir/data.bin").await.unwrap(),
        bytes
    );
    let out = sandbox
        .exec(ExecRequest::new(["wc", "-c", "/tmp/deep/dir/data.bin"]))
        .await
        .unwrap();
    assert_eq!(out.stdout, "70000 /tmp/deep/dir/data.bin\n");

    let err = sandbox.read_file("/tmp/missing.txt").await.unwrap_err();
    match err {
        SandboxError::File { kind, message } => {
            assert_eq!(kind, ToolErrorKind::FileNotFound);
            assert_eq!(message, "File '/tmp/missing.txt' was not found.");
        }
        other => panic!("{other:?}"),
    }
    // A link the container plants is followed inside the container, never on the host.
    sandbox
        .exec(ExecRequest::new(["ln", "-s", "/etc/hostname", "/tmp/link"]))
        .await
        .unwrap();
    let host_name = std::fs::read("/etc/hostname").unwrap_or_default();
    let read = sandbox.read_file("/tmp/link").await.unwrap();
    assert_ne!(read, host_name, "the container's file, not the host's");
    sandbox.cleanup().await.unwrap();
}

#[tokio::test]
async fn a_session_is_a_shell_under_a_terminal() {
    let Some(_lock) = docker(false) else {
        return;
    };
    let sandbox = default_sandbox().await;
    let mut session = sandbox
        .spawn_interactive(SessionRequest::new(["bash", "--norc", "--noprofile"]))
        .await
        .unwrap();
    session
        .input
        .write_all(b"echo $((6 * 7))\nexit\n")
        .await
        .unwrap();
    let mut printed = String::new();
    let read = tokio::time::timeout(
        Duration::from_secs(20),
        session.output.read_to_string(&mut printed),
    )
    .await;
    assert!(read.is_ok(), "the session ended: {printed:?}");
    assert!(printed.contains("42"), "{printed:?}");
    sandbox.cleanup().await.unwrap();
}

#[tokio::test]
async fn other_services_are_reached_by_name_and_there_is_no_network() {
    let Some(_lock) = docker(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("compose.yaml");
    std::fs::write(
        &file,
        format!(
            "services:\n  default:\n    image: {TEST_IMAGE}\n    command: sleep infinity\n    init: true\n    network_mode: none\n  helper:\n    image: {TEST_IMAGE}\n    command: sleep infinity\n    init: true\n    network_mode: none\n"
        ),
    )
    .unwrap();
    let sandbox = DockerSandbox::builder(ComposeConfig::from_file(&file).unwrap())
        .options(ComposeOptions::new("sandbox-test"))
        .build()
        .await
        .unwrap();
    let project = sandbox.project().to_owned();
    assert_eq!(sandbox.service(), "default");
    let out = sandbox
        .exec_in("helper", ExecRequest::new(["sh", "-c", "echo from helper"]))
        .await
        .unwrap();
    assert_eq!(out.stdout, "from helper\n");
    let err = sandbox
        .exec_in("nope", ExecRequest::new(["true"]))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("its services: default, helper"),
        "{err}"
    );
    // network_mode: none: the loopback interface only.
    let out = sandbox
        .exec(ExecRequest::new(["ls", "/sys/class/net"]))
        .await
        .unwrap();
    assert_eq!(out.stdout.trim(), "lo");
    let connection = sandbox.connection().unwrap();
    assert_eq!(connection.kind, "docker");
    assert!(
        connection.command.starts_with("docker exec -it "),
        "{}",
        connection.command
    );
    drop(sandbox);
    // Dropped without cleanup: taken down all the same.
    assert_nothing_left(&project);
}

/// Kills every process whose arguments end in `supervisor /…` (the supervisor's), found in
/// `/proc` (the image has no procps); the pattern is built so this script's own arguments do
/// not hold it.
const KILL_SUPERVISOR: &str = r#"s=super; s="${s}visor /"
for d in /proc/[0-9]*; do
  c=$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null)
  case "$c" in *" $s"*) kill -9 "${d#/proc/}" ;; esac
done"#;

#[tokio::test]
async fn a_command_that_kills_the_supervisor_costs_only_itself() {
    let Some(_lock) = docker(false) else {
        return;
    };
    let sandbox = default_sandbox().await;
    sandbox.exec(ExecRequest::new(["true"])).await.unwrap();
    // The supervisor runs as the commands' user: a command can kill it. The call fails
    // (its supervisor is gone) and the next command starts a new one.
    let killed = sandbox
        .exec(ExecRequest::new(["sh", "-c", KILL_SUPERVISOR]))
        .await;
    assert!(killed.is_err(), "{killed:?}");
    let out = sandbox
        .exec(ExecRequest::new(["echo", "again"]))
        .await
        .unwrap();
    assert_eq!(out.stdout, "again\n");

    // Killing everything the user can is survived too: the next command has a supervisor.
    let _ = sandbox.exec(ExecRequest::new(["kill", "-9", "-1"])).await;
    let out = sandbox
        .exec(ExecRequest::new(["echo", "still"]))
        .await
        .unwrap();
    assert_eq!(out.stdout, "still\n");

    // A container that stopped (from outside) is a clear error, not a hang.
    let container = sandbox.connection().unwrap().container.unwrap();
    let stopped = std::process::Command::new("docker")
        .args(["stop", "-t", "0", &container])
        .output()
        .unwrap();
    assert!(stopped.status.success());
    let started = Instant::now();
    let err = sandbox.exec(ExecRequest::new(["true"])).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(err.to_string().contains("is not running"), "{err}");
    sandbox.cleanup().await.unwrap();
}

#[tokio::test]
async fn the_control_directory_is_read_only_in_the_container() {
    let Some(_lock) = docker(false) else {
        return;
    };
    let sandbox = default_sandbox().await;
    // The supervisor's control directory: where the command's own script is read from.
    let out = sandbox
        .exec(ExecRequest::new([
            "sh",
            "-c",
            r#"ctl=$(dirname "$(readlink /proc/$$/fd/1)"); echo "$ctl"
touch "$ctl/planted" 2>&1; ln -s /etc/shadow "$ctl/kill2" 2>&1; rm -f "$ctl/kill" 2>&1; true"#,
        ]))
        .await
        .unwrap();
    let mut lines = out.stdout.lines();
    let ctl = std::path::PathBuf::from(lines.next().unwrap());
    assert!(
        out.stdout.matches("Read-only file system").count() >= 3,
        "{}",
        out.stdout
    );
    // The host's directory holds only what the host made.
    assert!(!ctl.join("planted").exists() && !ctl.join("kill2").exists());
    assert!(ctl.join("kill").exists(), "the kill FIFO is still there");
    let out = sandbox
        .exec(ExecRequest::new(["echo", "fine"]))
        .await
        .unwrap();
    assert_eq!(out.stdout, "fine\n");
    sandbox.cleanup().await.unwrap();
}

#[tokio::test]
async fn a_sandbox_limit_makes_the_next_build_wait_until_one_is_dropped() {
    let Some(_lock) = docker(false) else {
        return;
    };
    let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(1));
    let build = || {
        DockerSandbox::builder(ComposeConfig::generic())
            .options(ComposeOptions::new("sandbox-test"))
            .limit(std::sync::Arc::clone(&limit))
            .build()
    };
    let first = build().await.unwrap();
    // The one permit is held: a second sandbox is not made while the first lives.
    let waited = tokio::time::timeout(Duration::from_secs(3), build()).await;
    assert!(waited.is_err(), "a second sandbox was built past the limit");
    first.cleanup().await.unwrap();
    drop(first);
    let second = tokio::time::timeout(Duration::from_secs(120), build())
        .await
        .expect("the permit came back when the first sandbox went")
        .unwrap();
    second.cleanup().await.unwrap();
}
