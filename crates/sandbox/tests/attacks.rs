//! Attacks on the host from inside a `LocalSandbox`: links planted where the host writes a
//! call's files, and a supervisor that breaks its protocol (commands can take it over: it
//! runs as their user). Each test would fail (or hang, caught by a watchdog) without the
//! defence it names.

#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use actuator_sandbox::{
    ExecRequest, LocalSandbox, LocalSandboxBuilder, Sandbox, SandboxError, SessionRequest,
};

fn sandbox_with(builder: LocalSandboxBuilder) -> Option<LocalSandbox> {
    actuator_sandbox::testing::confined(builder).unwrap_or_else(|e| panic!("{e}"))
}

fn bash(cmd: &str) -> ExecRequest {
    ExecRequest::new(["bash", "-c", cmd])
}

/// Fails the test if `work` takes longer than `limit` (a hang is the attack's success).
async fn within<T>(limit: Duration, what: &str, work: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(limit, work).await {
        Ok(value) => value,
        Err(_) => panic!("{what} did not return within {limit:?}"),
    }
}

/// A root-owned (when run as root) host file outside every sandbox, and what it holds.
struct Victim {
    _dir: tempfile::TempDir,
    path: PathBuf,
    uid: u32,
    gid: u32,
}

const ORIGINAL: &str = "the host's own bytes\n";

impl Victim {
    fn new() -> Victim {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("victim");
        std::fs::write(&path, ORIGINAL).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        Victim {
            path,
            uid: meta.uid(),
            gid: meta.gid(),
            _dir: dir,
        }
    }

    fn assert_untouched(&self) {
        let meta = std::fs::symlink_metadata(&self.path).unwrap();
        assert!(meta.is_file(), "the host file was replaced");
        assert_eq!(
            std::fs::read_to_string(&self.path).unwrap(),
            ORIGINAL,
            "the host wrote sandbox-chosen bytes to a host file"
        );
        assert_eq!(
            (meta.uid(), meta.gid()),
            (self.uid, self.gid),
            "the host chowned a host file to the sandbox's user"
        );
    }
}

/// A command that finds its own call's id from the name of its standard output
/// (`CTL/ID.out`) and plants links named after the next `count` calls' files, each pointing
/// at `target`. Prints what it managed to plant.
fn plant(target: &Path, exts: &[&str], count: u32) -> String {
    format!(
        r#"me=$(readlink /proc/$$/fd/1); me=${{me% (deleted)}}; ctl=${{me%/*}}; id=${{me##*/}}; id=${{id%.out}}
planted=0
for i in $(seq $((id+1)) $((id+{count}))); do
  for ext in {exts}; do ln -s {target} "$ctl/$i.$ext" 2>/dev/null && planted=$((planted+1)); done
done
echo "planted $planted in $ctl after $id""#,
        exts = exts.join(" "),
        target = target.display(),
    )
}

#[tokio::test]
async fn links_planted_for_the_next_calls_never_make_the_host_write_or_chown_a_host_file() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    let victim = Victim::new();
    // The issue's attack: the next calls' input and script, pointed at a host file.
    let out = sb
        .exec(bash(&plant(&victim.path, &["in", "sh"], 400)).timeout(Duration::from_secs(20)))
        .await
        .unwrap();
    assert!(out.stdout.starts_with("planted 0 "), "{}", out.stdout);
    // The calls whose files the host would write there: a file's text (standard input), a
    // command (its script), and a command with input.
    within(
        Duration::from_secs(60),
        "the calls after the plant",
        async {
            let _ = sb.write_file("notes.txt", b"MODEL-CHOSEN BYTES").await;
            let _ = sb
                .exec(bash("echo hi").timeout(Duration::from_secs(10)))
                .await;
            let _ = sb
                .exec(
                    ExecRequest::new(["python3", "-"])
                        .stdin(b"print('MODEL-CHOSEN CODE')".to_vec())
                        .timeout(Duration::from_secs(10)),
                )
                .await;
        },
    )
    .await;
    victim.assert_untouched();
    // And the sandbox still works.
    let out = sb.exec(bash("cat notes.txt")).await.unwrap();
    assert_eq!(out.stdout, "MODEL-CHOSEN BYTES");
}

#[tokio::test]
async fn links_planted_for_the_next_calls_streams_never_reach_the_host() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    let victim = Victim::new();
    let out = sb
        .exec(
            bash(&plant(&victim.path, &["out", "err", "in"], 400)).timeout(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    assert!(out.stdout.starts_with("planted 0 "), "{}", out.stdout);
    within(
        Duration::from_secs(60),
        "the calls after the plant",
        async {
            let out = sb.exec(bash("echo out; echo err >&2")).await.unwrap();
            assert_eq!(
                (out.stdout.as_str(), out.stderr.as_str()),
                ("out\n", "err\n")
            );
            let _ = sb
                .spawn_interactive(SessionRequest::new(["cat"]))
                .await
                .unwrap();
        },
    )
    .await;
    victim.assert_untouched();
}

#[tokio::test]
async fn the_control_directory_is_the_hosts_and_read_only_inside() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    let ctl = sb.host_root().join("ctl");
    let meta = std::fs::symlink_metadata(&ctl).unwrap();
    assert!(meta.is_dir());
    assert_eq!(
        meta.uid(),
        rustix_euid(),
        "the control directory changed owner"
    );
    assert_eq!(
        meta.mode() & 0o022,
        0,
        "others can write the control directory"
    );
    let script = format!(
        "touch {ctl}/x 2>&1; mkfifo {ctl}/y 2>&1; mv {ctl}/kill {ctl}/k 2>&1; rm -f {ctl}/kill 2>&1; echo done",
        ctl = ctl.display()
    );
    let out = sb.exec(bash(&script)).await.unwrap();
    assert!(out.stdout.ends_with("done\n"), "{}", out.stdout);
    assert!(!ctl.join("x").exists() && !ctl.join("y").exists());
    assert!(ctl.join("kill").exists(), "a command removed the kill FIFO");
    // Commands still run, with input, output and error.
    let out = sb
        .exec(bash("cat; echo e >&2").stdin(b"in".to_vec()))
        .await
        .unwrap();
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("in", "e\n"));
}

fn rustix_euid() -> u32 {
    std::fs::metadata("/proc/self").unwrap().uid()
}

/// A fake `bwrap` that runs a hostile supervisor (`script`, given the control directory as
/// `$ctl`) the first time it starts, and the real bubblewrap after that.
struct HostileSupervisor {
    dir: tempfile::TempDir,
}

impl HostileSupervisor {
    fn new(script: &str) -> Option<HostileSupervisor> {
        let real = std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join("bwrap"))
                .find(|p| p.is_file())
        });
        let real = match real {
            Some(real) => real,
            None if std::env::var_os("CI").is_some() => {
                panic!("CI is set and bwrap is missing (run scripts/setup-test-env)")
            }
            None => {
                println!("note: skipping: bwrap is missing");
                return None;
            }
        };
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("bwrap");
        let once = dir.path().join("started-once");
        std::fs::write(
            &fake,
            format!(
                "#!/bin/bash\nif [ -e {once} ]; then exec {real} \"$@\"; fi\ntouch {once}\nctl=\"${{@: -1}}\"\n{script}\n",
                once = once.display(),
                real = real.display(),
            ),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        Some(HostileSupervisor { dir })
    }

    fn sandbox(&self) -> LocalSandbox {
        LocalSandbox::builder()
            .bwrap(self.dir.path().join("bwrap"))
            .build()
            .unwrap()
    }
}

#[tokio::test]
async fn a_command_that_ends_before_opening_its_streams_returns_at_once() {
    // Every request answered with an exit, no streams ever opened (what a planted script
    // link used to cause): the host must not wait for a writer that never comes.
    let Some(hostile) =
        HostileSupervisor::new("echo ready\nwhile read -r id; do echo \"$id x 127\"; done")
    else {
        return;
    };
    let sb = hostile.sandbox();
    let out = within(
        Duration::from_secs(10),
        "a call whose streams never open",
        async { sb.exec(bash("echo hi")).await.unwrap() },
    )
    .await;
    assert_eq!(out.status, Some(127));
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", ""));
    let err = within(
        Duration::from_secs(10),
        "a session whose streams never open",
        async { sb.spawn_interactive(SessionRequest::new(["cat"])).await },
    )
    .await
    .err()
    .unwrap();
    assert!(err.to_string().contains("could not start"), "{err}");
}

#[tokio::test]
async fn an_endless_event_line_stops_the_sandbox_and_the_next_command_gets_a_new_one() {
    let Some(hostile) = HostileSupervisor::new(
        "echo ready\nread -r id\nhead -c 100000000 /dev/zero | tr '\\0' 7\nsleep 600",
    ) else {
        return;
    };
    let sb = hostile.sandbox();
    let started = Instant::now();
    let err = within(
        Duration::from_secs(20),
        "a call under an endless event",
        async {
            sb.exec(bash("echo hi").timeout(Duration::from_secs(60)))
                .await
                .unwrap_err()
        },
    )
    .await;
    assert!(
        matches!(&err, SandboxError::SupervisorMisbehaved { detail } if detail.contains("longer than")),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    let out = sb.exec(bash("echo fresh")).await.unwrap();
    assert_eq!(out.stdout, "fresh\n");
}

#[tokio::test]
async fn a_forged_event_stops_the_sandbox_and_the_next_command_gets_a_new_one() {
    let Some(hostile) =
        HostileSupervisor::new("echo ready\nread -r id\necho \"$id z not-an-event\"\nsleep 600")
    else {
        return;
    };
    let sb = hostile.sandbox();
    let err = within(
        Duration::from_secs(20),
        "a call under a forged event",
        async { sb.exec(bash("echo hi")).await.unwrap_err() },
    )
    .await;
    assert!(
        matches!(&err, SandboxError::SupervisorMisbehaved { detail } if detail.contains("malformed")),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("next command starts a new sandbox")
    );
    let out = sb.exec(bash("echo fresh")).await.unwrap();
    assert_eq!(out.stdout, "fresh\n");
}

#[test]
fn a_supervisor_that_stops_taking_requests_never_blocks_the_caller() {
    let Some(hostile) = HostileSupervisor::new("echo ready\nexec sleep 600") else {
        return;
    };
    let sb = hostile.sandbox();
    // The watchdog is a thread of its own: a blocked write would block the test's runtime.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let outcome = rt.block_on(async {
            // A 64 KiB pipe holds about 10,000 request lines; each call gives up at once.
            for n in 0..40_000 {
                match sb.exec(bash("true").timeout(Duration::ZERO)).await {
                    Err(SandboxError::Timeout { .. }) => {}
                    Err(SandboxError::SupervisorMisbehaved { detail }) => {
                        let fresh = sb.exec(bash("echo fresh")).await.unwrap();
                        return Ok((n, detail, fresh.stdout));
                    }
                    other => return Err(format!("call {n}: {other:?}")),
                }
            }
            Err("the full request pipe was never noticed".to_owned())
        });
        let _ = done.send(outcome);
    });
    let outcome = finished
        .recv_timeout(Duration::from_secs(120))
        .expect("a call blocked on the supervisor's full request pipe");
    let (n, detail, fresh) = outcome.unwrap();
    assert!(n > 1000, "stopped after only {n} calls");
    assert!(detail.contains("stopped taking requests"), "{detail}");
    assert_eq!(fresh, "fresh\n");
}

#[tokio::test]
async fn a_command_that_signals_its_own_group_returns_with_its_status() {
    // `trap 'kill 0' EXIT` is a common way to clean up background jobs: it signals the
    // command's whole process group, which must not take the host's bookkeeping with it.
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    let out = within(
        Duration::from_secs(20),
        "a command that runs `kill 0`",
        async {
            sb.exec(bash("trap 'kill 0' EXIT; sleep 30 & echo hi"))
                .await
                .unwrap()
        },
    )
    .await;
    assert_eq!(out.stdout, "hi\n");
    assert_eq!(out.status, Some(143), "killed by its own SIGTERM");
}

/// Whether process `pid` (as the sandbox numbers it) still runs, asked inside the sandbox
/// (a zombie waiting for its parent counts as gone).
async fn runs(sb: &LocalSandbox, pid: &str) -> bool {
    let check = format!(
        "if [ -e /proc/{pid} ] && ! grep -q '^State:[[:space:]]*Z' /proc/{pid}/status; \
         then echo alive; else echo gone; fi"
    );
    sb.exec(bash(&check)).await.unwrap().stdout == "alive\n"
}

/// A command that exits while a process it started holds its output open: the call returns
/// about a second (`EXIT_DRAIN`) after the command's exit with what it wrote, and the
/// process it left is killed with its group. Without the bound, the call waited for the
/// process (30 s here), or for its timeout, for output nobody waits for.
async fn a_background_job_holding_the_output_does_not_hold_the_call(sb: LocalSandbox) {
    let started = Instant::now();
    let out = within(
        Duration::from_secs(15),
        "a command whose background job holds its output",
        async { sb.exec(bash("sleep 30 & echo $!")).await.unwrap() },
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status, Some(0), "the command itself finished: {out:?}");
    let pid = out.stdout.trim().to_owned();
    assert!(pid.parse::<u32>().is_ok(), "{out:?}");
    // The group is killed as the call returns; give the kill a moment to land.
    let mut alive = true;
    for _ in 0..50 {
        alive = runs(&sb, &pid).await;
        if !alive {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!alive, "the background job outlived its call");
}

#[tokio::test]
async fn a_confined_background_job_holding_the_output_does_not_hold_the_call() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    a_background_job_holding_the_output_does_not_hold_the_call(sb).await;
}

#[tokio::test]
async fn an_unconfined_background_job_holding_the_output_does_not_hold_the_call() {
    let sb = LocalSandbox::builder().unconfined().build().unwrap();
    a_background_job_holding_the_output_does_not_hold_the_call(sb).await;
}

#[tokio::test]
async fn output_written_just_after_the_exit_is_still_read() {
    // The bound is a drain, not a cut at the exit: what a background job writes within it
    // is kept.
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    let out = sb
        .exec(bash("(sleep 0.2; echo late) & echo early"))
        .await
        .unwrap();
    assert_eq!(out.stdout, "early\nlate\n");
}

#[tokio::test]
async fn a_command_that_kills_whatever_waits_for_it_returns_at_once() {
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    let started = Instant::now();
    let result = within(
        Duration::from_secs(30),
        "a command that kills its parent",
        async { sb.exec(bash("kill -9 $PPID; echo after")).await },
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(15));
    match result {
        Err(SandboxError::SupervisorMisbehaved { detail }) => {
            assert!(detail.contains("without reporting"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
    let out = sb.exec(bash("echo fresh")).await.unwrap();
    assert_eq!(out.stdout, "fresh\n");
}

#[tokio::test]
async fn the_supervisors_host_log_does_not_grow_with_each_command() {
    // The supervisor's standard error is a file on the host: nothing per command goes there
    // (job notices, a failed command's complaints), or a long run fills the host's disk.
    let Some(sb) = sandbox_with(LocalSandbox::builder()) else {
        return;
    };
    for _ in 0..100 {
        sb.exec(bash("echo hi; exit 3")).await.unwrap();
        let _ = sb
            .exec(ExecRequest::new(["no-such-program"]))
            .await
            .unwrap();
        let _ = sb.exec(bash("kill -9 $$")).await.unwrap();
    }
    let log = std::fs::metadata(sb.host_root().join("supervisor.log"))
        .unwrap()
        .len();
    assert!(log < 1024, "the host log grew to {log} bytes");
}
