//! LocalSandbox against the real bubblewrap: results, timeouts, limits, decoding, files.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::{Duration, Instant};

use actuator_sandbox::{
    ExecRequest, LocalSandbox, LocalSandboxBuilder, Sandbox, SandboxError, testing,
};
use actuator_tool_core::ToolErrorKind;

fn sandbox_with(builder: LocalSandboxBuilder) -> Option<LocalSandbox> {
    testing::confined(builder).unwrap_or_else(|e| panic!("{e}"))
}

fn sandbox() -> Option<LocalSandbox> {
    sandbox_with(LocalSandbox::builder())
}

fn bash(cmd: &str) -> ExecRequest {
    ExecRequest::new(["bash", "--login", "-c", cmd])
}

#[tokio::test]
async fn runs_a_command_in_the_workdir() {
    let Some(sb) = sandbox() else { return };
    let out = sb.exec(bash("echo hi; pwd")).await.unwrap();
    assert_eq!(out.stdout, format!("hi\n{}\n", sb.workdir()));
    assert_eq!(out.status, Some(0));
    assert_eq!(sb.name(), "local");
}

#[tokio::test]
async fn a_non_zero_exit_is_a_result_with_stderr() {
    let Some(sb) = sandbox() else { return };
    let out = sb
        .exec(bash("echo out; echo err >&2; exit 3"))
        .await
        .unwrap();
    assert_eq!(out.status, Some(3));
    assert_eq!(out.stdout, "out\n");
    assert_eq!(out.stderr, "err\n");
    assert_eq!(out.combined(), "err\n\nout\n");
}

#[tokio::test]
async fn stdin_env_and_cwd_reach_the_command() {
    let Some(sb) = sandbox() else { return };
    std::fs::create_dir(sb.host_workdir().join("sub")).unwrap();
    let req = ExecRequest::new(["bash", "-c", "cat; echo \" $GREETING $(basename $PWD)\""])
        .stdin("from stdin")
        .env("GREETING", "hello")
        .cwd("sub");
    let out = sb.exec(req).await.unwrap();
    assert_eq!(out.stdout, "from stdin hello sub\n");
}

#[tokio::test]
async fn a_timeout_returns_the_partial_output() {
    let Some(sb) = sandbox() else { return };
    let start = Instant::now();
    let err = sb
        .exec(bash("echo partial; sleep 20").timeout(Duration::from_secs(3)))
        .await
        .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(10));
    match &err {
        SandboxError::Timeout { stdout, .. } => assert_eq!(stdout, "partial\n"),
        other => panic!("expected a timeout, got {other:?}"),
    }
    let tool = err.into_tool_error();
    assert_eq!(tool.kind(), ToolErrorKind::Timeout);
    assert_eq!(tool.message(), "Command timed out before completing.");
    assert_eq!(tool.output(), Some("partial\n"));
}

#[tokio::test]
async fn output_over_the_limit_is_cut_and_reported() {
    let Some(sb) = sandbox() else { return };
    let err = sb
        .exec(bash("yes | head -c 100000").max_output(1000))
        .await
        .unwrap_err();
    let SandboxError::OutputLimit { limit, stdout, .. } = &err else {
        panic!("expected an output limit, got {err:?}");
    };
    assert_eq!(*limit, 1000);
    assert_eq!(stdout.len(), 1000);
    let tool = err.into_tool_error();
    assert_eq!(tool.kind(), ToolErrorKind::Limit);
    assert_eq!(
        tool.message(),
        "The tool exceeded its output limit of 1000 bytes."
    );
    assert_eq!(tool.output().map(str::len), Some(1000));
}

#[tokio::test]
async fn runaway_output_is_bounded_by_the_default_limit() {
    let Some(sb) = sandbox() else { return };
    let err = sb.exec(bash("yes")).await.unwrap_err();
    assert!(matches!(err, SandboxError::OutputLimit { limit, .. } if limit == 10 * 1024 * 1024));
    assert_eq!(
        err.into_tool_error().message(),
        "The tool exceeded its output limit of 10 MiB."
    );
}

#[tokio::test]
async fn non_utf8_output_is_a_unicode_decode_error() {
    let Some(sb) = sandbox() else { return };
    let err = sb.exec(bash(r"printf '\xff\xfe'")).await.unwrap_err();
    let tool = err.into_tool_error();
    assert_eq!(tool.kind(), ToolErrorKind::UnicodeDecode);
    assert_eq!(
        tool.message(),
        "Error decoding bytes to utf-8: invalid start byte"
    );
}

#[tokio::test]
async fn files_round_trip_and_missing_files_are_file_not_found() {
    let Some(sb) = sandbox() else { return };
    sb.write_file("dir/a.txt", b"contents\n").await.unwrap();
    assert_eq!(sb.read_file("dir/a.txt").await.unwrap(), b"contents\n");
    let out = sb.exec(bash("cat dir/a.txt")).await.unwrap();
    assert_eq!(out.stdout, "contents\n");
    let err = sb
        .read_file("nope.txt")
        .await
        .unwrap_err()
        .into_tool_error();
    assert_eq!(err.kind(), ToolErrorKind::FileNotFound);
    assert_eq!(err.message(), "File 'nope.txt' was not found.");
    let err = sb.write_file("/usr/evil", b"x").await.unwrap_err();
    assert_eq!(err.into_tool_error().kind(), ToolErrorKind::Permission);
}

#[tokio::test]
async fn a_file_over_the_read_limit_is_the_reference_error_without_its_contents() {
    let Some(sb) = sandbox() else { return };
    let limit = 100 * 1024 * 1024;
    let out = sb
        .exec(bash(&format!("head -c {} /dev/zero > big", limit + 1)))
        .await
        .unwrap();
    assert!(out.success(), "{out:?}");
    let err = sb.read_file("big").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "The sandbox output stream limit of 100 MiB was exceeded."
    );
    match err {
        SandboxError::OutputLimit {
            limit: l,
            stdout,
            stderr,
        } => assert_eq!((l, stdout.len(), stderr.len()), (limit, 0, 0)),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_nul_byte_in_an_argument_is_refused() {
    let Some(sb) = sandbox() else { return };
    let err = sb.exec(bash("echo a\0b")).await.unwrap_err();
    assert!(matches!(err, SandboxError::NulByte));
}

#[tokio::test]
async fn another_user_is_refused_with_the_reference_text() {
    let Some(sb) = sandbox() else { return };
    let err = sb
        .exec(bash("id").user(Some("alice".into())))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "LocalSandbox cannot execute as \"alice\"; only the current effective user is supported."
    );
}

#[tokio::test]
async fn a_missing_bwrap_says_how_to_install_it_or_opt_out() {
    let err = LocalSandbox::builder()
        .bwrap("/nonexistent/bwrap")
        .build()
        .unwrap_err();
    assert!(matches!(err, SandboxError::BubblewrapMissing));
    let text = err.to_string();
    assert!(text.contains("apt-get install bubblewrap"), "{text}");
    assert!(
        text.contains("LocalSandbox::builder().unconfined()"),
        "{text}"
    );
    assert_eq!(
        err.into_tool_error().kind(),
        ToolErrorKind::SandboxUnavailable
    );
}

#[tokio::test]
async fn a_bwrap_that_refuses_to_start_is_reported() {
    let err = LocalSandbox::builder()
        .bwrap("/bin/false")
        .build()
        .unwrap_err();
    let SandboxError::BubblewrapRefused { stderr } = &err else {
        panic!("expected a refusal, got {err:?}");
    };
    assert!(stderr.contains("exit"), "{stderr}");
    assert!(err.to_string().contains("unconfined()"));
}

#[tokio::test]
async fn unconfined_mode_is_explicit_and_runs_plain_subprocesses() {
    use actuator_sandbox::Confinement;
    let sb = LocalSandbox::builder().unconfined().build().unwrap();
    assert_eq!(sb.confinement(), Confinement::Unconfined);
    let out = sb.exec(bash("echo hi; pwd")).await.unwrap();
    assert_eq!(out.stdout, format!("hi\n{}\n", sb.workdir()));
    let Some(confined) = sandbox() else { return };
    assert_eq!(confined.confinement(), Confinement::Bubblewrap);
}

#[tokio::test]
async fn dropping_the_sandbox_deletes_its_directory() {
    let Some(sb) = sandbox() else { return };
    sb.write_file("f", b"x").await.unwrap();
    let root = sb.host_root().to_path_buf();
    assert!(root.join("work/f").exists());
    drop(sb);
    assert!(!root.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_parallel_commands_each_get_their_own_output() {
    let Some(sb) = sandbox() else { return };
    let sb = std::sync::Arc::new(sb);
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..100 {
        let sb = sb.clone();
        calls.spawn(async move {
            let req = bash(&format!(
                "echo out {i}; echo err {i} >&2; exit $(({i} % 7))"
            ))
            .stdin(format!("in {i}"))
            .timeout(Duration::from_secs(60));
            (i, sb.exec(req).await)
        });
    }
    let mut seen = 0;
    while let Some(joined) = calls.join_next().await {
        let (i, out) = joined.unwrap();
        let out = out.unwrap_or_else(|e| panic!("call {i}: {e}"));
        assert_eq!(out.stdout, format!("out {i}\n"));
        assert_eq!(out.stderr, format!("err {i}\n"));
        assert_eq!(out.status, Some(i % 7));
        seen += 1;
    }
    assert_eq!(seen, 100);
}

#[tokio::test]
async fn commands_get_exactly_the_sandbox_environment_and_the_requested_variables() {
    let Some(sb) = sandbox() else { return };
    let req = ExecRequest::new(["env"])
        .env("GREETING", "it's \"quoted\" $HOME")
        .env("NOT-A-SHELL-NAME", "1");
    let out = sb.exec(req).await.unwrap();
    let mut vars: Vec<&str> = out.stdout.lines().collect();
    vars.sort_unstable();
    let home = format!("HOME={}", sb.workdir());
    assert_eq!(
        vars,
        [
            "GREETING=it's \"quoted\" $HOME",
            &home,
            "LANG=C.UTF-8",
            "NOT-A-SHELL-NAME=1",
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "TMPDIR=/tmp",
        ]
    );
}

#[tokio::test]
async fn a_missing_program_or_working_directory_is_a_result_with_a_message() {
    let Some(sb) = sandbox() else { return };
    let out = sb
        .exec(ExecRequest::new(["no-such-program"]))
        .await
        .unwrap();
    assert_eq!(out.status, Some(127));
    assert_eq!(out.stderr, "no-such-program: command not found\n");
    let out = sb
        .exec(ExecRequest::new(["pwd"]).cwd("missing"))
        .await
        .unwrap();
    assert_eq!(out.status, Some(1));
    assert!(out.stderr.contains("No such file or directory"), "{out:?}");
    // A name that is also a shell builtin runs the program, not the builtin.
    let out = sb
        .exec(ExecRequest::new(["echo", "--version"]))
        .await
        .unwrap();
    assert!(out.stdout.contains("GNU coreutils"), "{out:?}");
}

#[tokio::test]
async fn a_program_that_cannot_be_run_is_the_reference_permission_error() {
    let Some(sb) = sandbox() else { return };
    sb.write_file("data.txt", b"not a program").await.unwrap();
    for program in ["/etc/passwd", "./data.txt", "/etc"] {
        match sb.exec(ExecRequest::new([program])).await {
            Err(SandboxError::File { kind, message }) => {
                assert_eq!(kind, ToolErrorKind::Permission);
                assert_eq!(
                    message,
                    format!("Permission denied executing command: {program}")
                );
            }
            other => panic!("{program}: {other:?}"),
        }
    }
    // A program that exits 126 by itself is a result, and a missing one still 127.
    let out = sb.exec(bash("echo x >&2; exit 126")).await.unwrap();
    assert_eq!((out.status, out.stderr.as_str()), (Some(126), "x\n"));
    let out = sb
        .exec(ExecRequest::new(["/no/such/program"]))
        .await
        .unwrap();
    assert_eq!(out.status, Some(127));
}

#[tokio::test]
async fn finished_calls_leave_no_files_in_the_control_directory() {
    let Some(sb) = sandbox() else { return };
    sb.exec(bash("cat").stdin("x")).await.unwrap();
    sb.exec(ExecRequest::new(["no-such-program"]))
        .await
        .unwrap();
    sb.exec(ExecRequest::new(["pwd"]).cwd("missing"))
        .await
        .unwrap();
    let _ = sb
        .exec(bash("sleep 10").timeout(Duration::from_millis(300)))
        .await
        .unwrap_err();
    let _ = sb.exec(bash("yes").max_output(10)).await.unwrap_err();
    let ctl = sb.host_root().join("ctl");
    let mut left = Vec::new();
    for _ in 0..30 {
        left = std::fs::read_dir(&ctl)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        if left == ["kill"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, ["kill"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_that_end_at_once_all_report_their_status() {
    // A command that exits before its shell starts waiting for it must still be reported
    // (bash's `wait -f` loops forever on such a job: "No record of process").
    let Some(sb) = sandbox() else { return };
    let sb = std::sync::Arc::new(sb);
    let calls: Vec<_> = (0..300)
        .map(|i| {
            let sb = std::sync::Arc::clone(&sb);
            tokio::spawn(async move {
                let request = if i % 2 == 0 {
                    ExecRequest::new(["no-such-program"])
                } else {
                    ExecRequest::new(["pwd"]).cwd("missing")
                };
                sb.exec(request).await.unwrap().status
            })
        })
        .collect();
    let statuses = tokio::time::timeout(Duration::from_secs(60), async {
        let mut statuses = Vec::new();
        for call in calls {
            statuses.push(call.await.unwrap());
        }
        statuses
    })
    .await
    .expect("a call that ended at once never reported its status");
    for (i, status) in statuses.into_iter().enumerate() {
        let expected = if i % 2 == 0 { 127 } else { 1 };
        assert_eq!(status, Some(expected), "call {i}");
    }
}
