//! Confinement, as an attacker would test it: writes outside the workdir, the host's home,
//! the network (a loopback server started here), PID isolation, fork bombs, file sizes,
//! processes left behind (checked from outside the sandbox), and a command killing the
//! sandbox's supervisor.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::{Duration, Instant};

use actuator_sandbox::{ExecRequest, LocalSandbox, LocalSandboxBuilder, ResourceLimits, Sandbox};

fn sandbox_with(builder: LocalSandboxBuilder) -> Option<LocalSandbox> {
    actuator_sandbox::testing::confined(builder).unwrap_or_else(|e| panic!("{e}"))
}

fn bash(cmd: &str) -> ExecRequest {
    ExecRequest::new(["bash", "-c", cmd])
}

/// Whether a host process's command line contains `marker` (a unique argument).
fn host_has_process(marker: &str) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .map(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(marker)
            })
            .unwrap_or(false)
    })
}

/// Waits up to 3 s for `marker` to disappear from the host.
async fn gone_from_host(marker: &str) -> bool {
    for _ in 0..30 {
        if !host_has_process(marker) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test]
async fn the_system_is_read_only_and_only_the_workdir_and_tmp_are_writable() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    for target in ["/usr/evil", "/etc/evil", "/evil", "/bin/evil"] {
        let out = sb.exec(bash(&format!("echo x > {target}"))).await.unwrap();
        assert_ne!(out.status, Some(0), "{target} was writable");
    }
    let out = sb
        .exec(bash("echo x > ok && echo y > /tmp/ok && cat ok /tmp/ok"))
        .await
        .unwrap();
    assert_eq!(out.stdout, "x\ny\n");
    assert_eq!(
        std::fs::read_to_string(sb.host_tmp().join("ok")).unwrap(),
        "y\n"
    );
}

#[tokio::test]
async fn escaping_the_workdir_with_dotdot_writes_nothing_on_the_host() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    // Run as root, the workdir's parent is not writable; in a user namespace it may be, but
    // it is then the sandbox's private /tmp: either way nothing reaches the host beside it.
    let _ = sb.exec(bash("echo x > ../escaped")).await.unwrap();
    let _ = sb.exec(bash("echo x > ../../escaped")).await.unwrap();
    assert!(!sb.host_root().join("escaped").exists());
    assert!(!sb.host_root().parent().unwrap().join("escaped").exists());
    // What is above the workdir inside is the sandbox's private /tmp, never the host's.
    let out = sb.exec(bash("echo x > /tmp/escaped")).await.unwrap();
    assert_eq!(out.status, Some(0));
    assert!(sb.host_tmp().join("escaped").exists());
}

#[tokio::test]
async fn the_hosts_home_root_and_tmp_are_not_visible() {
    let host_secret = tempfile::Builder::new()
        .prefix("host-secret-")
        .tempdir()
        .unwrap();
    std::fs::write(host_secret.path().join("secret"), "s3cret").unwrap();
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    // The caller's home, unless it is an ancestor of the workdir (then the sandbox shows the
    // empty mount points leading to the workdir there, nothing of the host's).
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let home = if sb.host_root().starts_with(&home) {
        "/root".to_owned()
    } else {
        home
    };
    let cmd = format!(
        "ls /root; ls /home; cat {}/secret; ls {home}",
        host_secret.path().display(),
    );
    let out = sb.exec(bash(&cmd)).await.unwrap();
    assert!(!out.stdout.contains("s3cret"), "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
    assert!(out.stderr.contains("No such file or directory"), "{out:?}");
}

async fn loopback_reachable(sb: &LocalSandbox) -> (bool, tokio::net::TcpListener) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let cmd = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let out = sb
        .exec(bash(&cmd).timeout(Duration::from_secs(10)))
        .await
        .unwrap();
    (out.stdout == "connected\n", listener)
}

#[tokio::test]
async fn the_network_is_unreachable_unless_enabled() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    let (reachable, _listener) = loopback_reachable(&sb).await;
    assert!(
        !reachable,
        "a host loopback server was reachable from the sandbox"
    );

    let Some(open) = sandbox_with(LocalSandbox::builder().network(true)) else {
        return;
    };
    let (reachable, _listener) = loopback_reachable(&open).await;
    assert!(reachable, "network(true) did not share the host network");
}

#[tokio::test]
async fn the_sandbox_has_its_own_pid_namespace_and_hostname() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    let out = sb
        .exec(bash("ls /proc | grep -c '^[0-9]'; hostname"))
        .await
        .unwrap();
    let mut lines = out.stdout.lines();
    let count: usize = lines.next().unwrap().trim().parse().unwrap();
    assert!(count < 10, "the sandbox sees {count} processes");
    assert_eq!(lines.next(), Some("sandbox"));
}

#[tokio::test]
async fn no_terminal_is_reachable() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    // With a controlling terminal the sandbox gets a session of its own; without one it has
    // none to reach: either way `/dev/tty` (and so TIOCSTI injection) is out of reach.
    let out = sb.exec(bash("echo injected > /dev/tty")).await.unwrap();
    assert_ne!(out.status, Some(0), "{out:?}");
    assert!(out.stderr.contains("No such device or address"), "{out:?}");
}

#[tokio::test]
async fn a_fork_bomb_is_bounded_by_the_process_limit_and_the_timeout() {
    let limits = ResourceLimits::default().max_processes(Some(64));
    let Some(sb) = sandbox_with(LocalSandbox::builder().limits(limits)) else {
        return;
    };
    let start = Instant::now();
    let result = sb
        .exec(bash("bomb() { bomb | bomb & }; bomb; sleep 5").timeout(Duration::from_secs(2)))
        .await;
    drop(result);
    assert!(start.elapsed() < Duration::from_secs(15));
    // The limit, not the host, stopped it: a shell under the limit cannot start 100 children.
    let out = sb
        .exec(
            bash("for i in $(seq 100); do sleep 1 & done 2>&1; wait")
                .timeout(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    assert!(
        out.stdout.contains("Resource temporarily unavailable")
            || out.stderr.contains("Resource temporarily unavailable"),
        "{out:?}"
    );
}

#[tokio::test]
async fn file_size_is_limited() {
    let limits = ResourceLimits::default().max_file_size(Some(1 << 20));
    let Some(sb) = sandbox_with(LocalSandbox::builder().limits(limits)) else {
        return;
    };
    let out = sb
        .exec(bash("head -c 5000000 /dev/zero > big; stat -c %s big"))
        .await
        .unwrap();
    assert_eq!(out.stdout.trim(), (1 << 20).to_string());
}

/// Waits up to 3 s for `marker` to appear on the host.
async fn seen_on_host(marker: &str) -> bool {
    for _ in 0..30 {
        if host_has_process(marker) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test]
async fn a_background_process_outlives_its_command_until_the_sandbox_goes() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    // One without nohup, one with: neither dies when its command's shell exits.
    let (plain, hup) = ("47.123", "47.124");
    let out = sb
        .exec(bash(&format!(
            "sleep {plain} >/dev/null 2>&1 & echo $! > plain.pid; \
             nohup sleep {hup} >/dev/null 2>&1 & echo started"
        )))
        .await
        .unwrap();
    assert_eq!(out.stdout, "started\n");
    // Still there after the command returned, seen from the host...
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(host_has_process(&format!("sleep {plain}")));
    assert!(host_has_process(&format!("sleep {hup}")));
    // ...and from a later command, in the same PID namespace.
    let out = sb
        .exec(bash(
            "kill -0 \"$(cat plain.pid)\" && echo alive; ps -eo args",
        ))
        .await
        .unwrap();
    assert!(out.stdout.starts_with("alive\n"), "{out:?}");
    assert!(out.stdout.contains(&format!("sleep {hup}")), "{out:?}");
    // The run ends: everything it left goes with the sandbox.
    drop(sb);
    assert!(gone_from_host(&format!("sleep {plain}")).await);
    assert!(gone_from_host(&format!("sleep {hup}")).await);
}

#[tokio::test]
async fn a_command_that_kills_the_supervisor_gets_a_fresh_sandbox_next() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    let marker = "51.515";
    let _ = sb
        .exec(bash(&format!("nohup sleep {marker} >/dev/null 2>&1 &")))
        .await
        .unwrap();
    assert!(seen_on_host(&format!("sleep {marker}")).await);
    // Everything the sandbox's user may signal, the supervisor included.
    let result = sb
        .exec(bash("kill -9 -1; sleep 5").timeout(Duration::from_secs(20)))
        .await;
    assert!(result.is_err(), "{result:?}");
    // The old sandbox is gone with what ran in it; the next command gets a new one.
    assert!(gone_from_host(&format!("sleep {marker}")).await);
    std::fs::write(sb.host_workdir().join("kept"), "files stay\n").unwrap();
    let out = sb.exec(bash("cat kept")).await.unwrap();
    assert_eq!(out.stdout, "files stay\n");
}

#[tokio::test]
async fn a_timed_out_command_leaves_nothing_running() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    let marker = "48.321";
    let _ = sb
        .exec(bash(&format!("sleep {marker} & sleep {marker}")).timeout(Duration::from_millis(500)))
        .await
        .unwrap_err();
    assert!(gone_from_host(&format!("sleep {marker}")).await);
}

#[tokio::test]
async fn a_dropped_call_leaves_nothing_running() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    let marker = "49.213";
    let cmd = format!("sleep {marker}");
    let call = sb.exec(bash(&format!("{cmd} & {cmd}")));
    // Seen running first, so the call is dropped after its command started.
    let watch = async {
        assert!(seen_on_host(&cmd).await);
    };
    tokio::select! {
        result = call => panic!("the call finished: {result:?}"),
        () = watch => {}
    }
    assert!(gone_from_host(&cmd).await);
    // A call dropped before its command even started leaves nothing either.
    let early = format!("sleep {marker}1");
    let call = sb.exec(bash(&early));
    let _ = tokio::time::timeout(Duration::from_micros(1), call).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(gone_from_host(&early).await);
}

#[tokio::test]
async fn dropping_the_sandbox_kills_its_sessions() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    let marker = "50.777";
    let mut session = sb
        .spawn_interactive(actuator_sandbox::SessionRequest::new(["bash", "--norc"]))
        .await
        .unwrap();
    use tokio::io::AsyncWriteExt;
    session
        .input
        .write_all(format!("sleep {marker}\n").as_bytes())
        .await
        .unwrap();
    session.input.flush().await.unwrap();
    let mut seen = false;
    for _ in 0..30 {
        if host_has_process(&format!("sleep {marker}")) {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(seen, "the session never started the command");
    // The session outlives its guard only as long as the sandbox: the run ends here.
    std::mem::forget(session.guard);
    drop(sb);
    assert!(gone_from_host(&format!("sleep {marker}")).await);
}
