//! Every row of the reference's error classification table (§6.7), with its exact kind and
//! message, and the io::Error mapping end to end.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::Duration;

use actuator_exec::{ExecError, ExecuteOptions, execute_tools};
use actuator_model::{ChatMessage, ToolCall};
use actuator_tool_core::{FatalToolError, IoErrorExt, ToolDef, ToolError, ToolFailure, ToolOutput};
use common::{constant, conversation, result, tool};
use serde_json::json;

async fn one(def: actuator_tool_core::ToolDef) -> (String, Option<String>, Option<String>) {
    let name = def.name().to_owned();
    let msgs = conversation(&[(name.as_str(), json!({}))]);
    only_result(&msgs, &def).await
}

/// Runs the conversation's one call with `def` as the only tool: the result of its message.
async fn only_result(
    msgs: &[ChatMessage],
    def: &ToolDef,
) -> (String, Option<String>, Option<String>) {
    let out = execute_tools(msgs, std::slice::from_ref(def), &ExecuteOptions::default())
        .await
        .unwrap();
    assert_eq!(out.messages.len(), 1);
    result(&out.messages[0])
}

fn failing(name: &str, err: ToolError) -> actuator_tool_core::ToolDef {
    tool(name, false, move |_a, _c| {
        let err = err.clone();
        async move { Err::<ToolOutput, ToolFailure>(err.into()) }
    })
}

fn row(kind: &str, message: &str) -> (String, Option<String>, Option<String>) {
    (
        String::new(),
        Some(kind.to_owned()),
        Some(message.to_owned()),
    )
}

#[tokio::test(start_paused = true)]
async fn timeout_row() {
    let hangs = tool("hang", false, |_a, _c| async {
        std::future::pending::<()>().await;
        Ok(ToolOutput::Text("never".into()))
    })
    .with_timeout(Some(Duration::from_secs(5)));
    assert_eq!(
        one(hangs).await,
        row("timeout", "Command timed out before completing.")
    );

    // A timeout the tool reports itself keeps its partial output, truncated as usual.
    let partial = failing("partial", ToolError::timeout().with_output("x".repeat(100)))
        .with_max_output(Some(10));
    let (content, kind, message) = one(partial).await;
    assert_eq!(kind.as_deref(), Some("timeout"));
    assert_eq!(
        message.as_deref(),
        Some("Command timed out before completing.")
    );
    assert!(
        content.contains("The output of your call to partial was too long to be displayed."),
        "{content}"
    );
}

#[tokio::test]
async fn unicode_decode_row() {
    let bad = tool("decode", false, |_a, _c| async {
        let bytes = vec![b'o', b'k', 0xff];
        let text = String::from_utf8(bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        Ok(ToolOutput::Text(text.into()))
    });
    assert_eq!(
        one(bad).await,
        row(
            "unicode_decode",
            "Error decoding bytes to utf-8: invalid start byte"
        )
    );
}

#[tokio::test]
async fn embedded_null_byte_row() {
    let t = failing("nul", ToolError::embedded_null_byte("nul"));
    assert_eq!(
        one(t).await,
        row(
            "parsing",
            "An argument to tool 'nul' contained an embedded null byte."
        )
    );
}

#[tokio::test]
async fn sandbox_unavailable_row() {
    let t = failing(
        "sb",
        ToolError::sandbox_unavailable("The sandbox 'default' is not running."),
    );
    assert_eq!(
        one(t).await,
        row(
            "sandbox_unavailable",
            "The sandbox 'default' is not running."
        )
    );
}

#[tokio::test]
async fn filesystem_rows_end_to_end() {
    let dir = std::env::temp_dir().join(format!("actuator-exec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing.txt");
    let m = missing.clone();
    let not_found = tool("read", false, move |_a, _c| {
        let m = m.clone();
        async move {
            Ok(ToolOutput::Text(
                std::fs::read_to_string(&m).with_path(&m)?.into(),
            ))
        }
    });
    assert_eq!(
        one(not_found).await,
        row(
            "file_not_found",
            &format!("File '{}' was not found.", missing.display())
        )
    );

    let d = dir.clone();
    let is_dir = tool("read_dir_as_file", false, move |_a, _c| {
        let d = d.clone();
        async move {
            Ok(ToolOutput::Text(
                std::fs::read_to_string(&d).with_path(&d)?.into(),
            ))
        }
    });
    assert_eq!(
        one(is_dir).await,
        row(
            "is_a_directory",
            &format!("Is a directory. Filename '{}'.", dir.display())
        )
    );

    let permission = failing(
        "perm",
        ToolError::from(
            Err::<(), _>(std::io::Error::from(std::io::ErrorKind::PermissionDenied))
                .with_path("/etc/x")
                .unwrap_err(),
        ),
    );
    assert_eq!(
        one(permission).await,
        row("permission", "permission denied. Filename '/etc/x'.")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn limit_rows() {
    assert_eq!(
        one(failing("out", ToolError::output_limit(1024, None))).await,
        row("limit", "The tool exceeded its output limit of 1,024.")
    );
    assert_eq!(
        one(failing("msgs", ToolError::limit("message", 10_u64))).await,
        row("limit", "The tool exceeded its message limit of 10.")
    );
}

#[tokio::test]
async fn parsing_rows() {
    let t = common::constant("t", false, "ok");
    // A parse error from the provider.
    let mut msgs = conversation(&[("t", json!({}))]);
    if let Some(ChatMessage::Assistant(a)) = msgs.last_mut() {
        a.tool_calls.as_mut().unwrap()[0].parse_error = Some(
            "Error parsing the following tool call arguments:\n\n{\n\nError details: EOF".into(),
        );
    }
    assert_eq!(
        only_result(&msgs, &t).await,
        row(
            "parsing",
            "Error parsing the following tool call arguments:\n\n{\n\nError details: EOF"
        )
    );
    // Unknown tool.
    let msgs = conversation(&[("nope", json!({}))]);
    assert_eq!(
        only_result(&msgs, &t).await,
        row("parsing", "Tool nope not found")
    );
    // Validation.
    let msgs = conversation(&[("t", json!({"n": "1", "z": 1}))]);
    assert_eq!(
        only_result(&msgs, &t).await,
        row(
            "parsing",
            "Found 2 validation errors parsing tool input arguments:\n- n: '1' is not of type 'integer'\n- z: Additional properties are not allowed ('z' was unexpected)"
        )
    );
    // Nesting beyond 100 levels, checked before lookup. Then beyond the JSON parser's own
    // limit of 128, with the call's parsed object released so that only its text is left
    // (only a call built in code can hold that): the same row, not a failure to read it.
    for (tool, depth, text_only) in [("unknown_tool", 120, false), ("t", 200, true)] {
        let mut deep = json!(1);
        for _ in 0..depth {
            deep = json!([deep]);
        }
        let mut msgs = conversation(&[]);
        msgs[1] = common::assistant(&[(tool, json!({"s": deep}))]);
        if text_only {
            let ChatMessage::Assistant(a) = &mut msgs[1] else {
                panic!()
            };
            a.release_parsed_arguments();
            assert!(a.calls()[0].arguments.to_map().is_err());
        }
        assert_eq!(
            only_result(&msgs, &t).await,
            row(
                "parsing",
                "Error parsing tool call arguments: arguments exceed the maximum supported nesting depth of 100"
            ),
            "{tool} at depth {depth}"
        );
    }
}

#[tokio::test]
async fn approval_and_unknown_rows() {
    assert_eq!(
        one(failing("a", ToolError::approval(None))).await,
        row("approval", "Tool call not approved.")
    );
    assert_eq!(
        one(failing("u", ToolError::new("Service busy."))).await,
        row("unknown", "Service busy.")
    );
}

#[tokio::test]
async fn fatal_errors_and_panics_end_the_run() {
    let fatal = tool("fatal", false, |_a, _c| async {
        Err::<ToolOutput, _>(FatalToolError::msg("database gone").into())
    });
    let msgs = conversation(&[("fatal", json!({}))]);
    match execute_tools(&msgs, &[fatal], &ExecuteOptions::default()).await {
        Err(ExecError::Fatal {
            function,
            cause,
            messages,
            ..
        }) => {
            assert_eq!(function, "fatal");
            assert_eq!(cause.to_string(), "database gone");
            assert!(!cause.is_panic());
            assert!(messages.is_empty());
        }
        other => panic!("{other:?}"),
    }
    let panics = tool("panics", false, |_a, _c| async {
        if true {
            panic!("index out of bounds");
        }
        Ok(ToolOutput::default())
    });
    let msgs = conversation(&[("panics", json!({}))]);
    match execute_tools(&msgs, &[panics], &ExecuteOptions::default()).await {
        Err(ExecError::Fatal { cause, .. }) => {
            assert!(cause.is_panic());
            assert_eq!(
                cause.to_string(),
                "tool 'panics' panicked: index out of bounds"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_panic_in_a_plain_fn_tool_on_the_blocking_pool_is_caught() {
    let blocking = tool("blocking", false, |_a, _c| async {
        actuator_tool_core::__private::run_blocking(|| -> String { panic!("sync boom") })
            .await
            .map(|text| ToolOutput::Text(text.into()))
    });
    let msgs = conversation(&[("blocking", json!({}))]);
    match execute_tools(&msgs, &[blocking], &ExecuteOptions::default()).await {
        Err(ExecError::Fatal { cause, .. }) => {
            assert!(cause.is_panic() && cause.to_string().contains("sync boom"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn nothing_to_run() {
    let t = common::constant("t", false, "ok");
    for msgs in [
        vec![],
        vec![ChatMessage::user("hi")],
        vec![ChatMessage::assistant("no calls")],
    ] {
        let out = execute_tools(&msgs, std::slice::from_ref(&t), &ExecuteOptions::default())
            .await
            .unwrap();
        assert!(out.messages.is_empty() && out.output.is_none());
    }
    // Only the last message counts.
    let mut msgs = conversation(&[("t", json!({}))]);
    msgs.push(ChatMessage::user("after"));
    assert!(
        execute_tools(&msgs, &[t], &ExecuteOptions::default())
            .await
            .unwrap()
            .messages
            .is_empty()
    );
    let _ = ToolCall::new("x", "y", json!({}));
}

#[tokio::test]
async fn duplicate_names_fail_before_anything_runs() {
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let r = ran.clone();
    let a = tool("same", false, move |_a, _c| {
        r.store(true, std::sync::atomic::Ordering::SeqCst);
        async { Ok(ToolOutput::default()) }
    });
    let b = common::constant("same", false, "b");
    let msgs = conversation(&[("same", json!({}))]);
    let err = execute_tools(&msgs, &[a, b], &ExecuteOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Duplicate tool name 'same': every tool offered to a model must have a distinct name."
    );
    assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
}

#[test]
fn the_duplicate_named_is_the_first_repeat_however_many_tools_there_are() {
    // Few tools are compared pairwise, many through a set: both name the same tool.
    for n in [2, 16, 17, 40] {
        let mut tools: Vec<ToolDef> = (0..n)
            .map(|i| constant(&format!("t{i}"), false, "x"))
            .collect();
        assert!(
            actuator_exec::check_tool_names(&tools).is_ok(),
            "{n} distinct"
        );
        tools.push(constant(&format!("t{}", n - 1), false, "x"));
        tools.push(constant("t0", false, "x"));
        let err = actuator_exec::check_tool_names(&tools).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "Duplicate tool name 't{}': every tool offered to a model must have a distinct name.",
                n - 1
            ),
            "{n} tools"
        );
    }
}

#[tokio::test]
async fn output_is_truncated_per_tool_then_run_default() {
    let big = tool("big", false, |_a, _c| async {
        Ok(ToolOutput::Text("é".repeat(20_000).into()))
    });
    let msgs = conversation(&[("big", json!({}))]);
    let log = actuator_events::EventLog::new();
    let opts = ExecuteOptions::default().events(log.clone());
    let out = execute_tools(&msgs, std::slice::from_ref(&big), &opts)
        .await
        .unwrap();
    let text = out.messages[0].text();
    assert!(text.starts_with("\nThe output of your call to big was too long to be displayed.\nHere is a truncated version:\n<START_TOOL_OUTPUT>\n"));
    assert_eq!(log.tool_events()[0].truncated, Some((40_000, 16 * 1024)));
    // A run-level default applies to tools without their own limit; 0 disables.
    let out = execute_tools(
        &msgs,
        std::slice::from_ref(&big),
        &ExecuteOptions::default().max_output(0),
    )
    .await
    .unwrap();
    assert_eq!(out.messages[0].text().len(), 40_000);
    let own = big.with_max_output(Some(100));
    let out = execute_tools(&msgs, &[own], &ExecuteOptions::default().max_output(0))
        .await
        .unwrap();
    assert!(out.messages[0].text().contains("bytes omitted"));
}

#[tokio::test]
async fn a_conversation_taking_tool_with_a_foreign_handler_is_a_clear_fatal_error() {
    // The kind is explicit in ToolDef; a handler type this executor does not know is refused
    // with a message that says how to build one, never silently run as a plain tool.
    struct Foreign;
    let def = actuator_tool_core::ToolDef::builder("odd")
        .description("An odd tool.")
        .conversation_handler(Foreign)
        .build()
        .unwrap();
    assert_eq!(def.kind(), actuator_tool_core::ToolKind::ConversationTaking);
    let err = execute_tools(
        &conversation(&[("odd", json!({}))]),
        &[def],
        &ExecuteOptions::default(),
    )
    .await
    .unwrap_err();
    match &err {
        ExecError::Fatal { cause, .. } => assert!(
            cause
                .to_string()
                .contains("its handler is not an actuator_exec::ConversationHandler"),
            "{cause}"
        ),
        other => panic!("expected a fatal error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_enclosing_limit_hit_inside_a_tool_is_exec_error_limit() {
    use actuator_events::{LimitExceeded, LimitKind, ScopeId};
    let limit = LimitExceeded::new(
        LimitKind::Turn,
        3.0,
        2.0,
        "Turn limit exceeded.",
        ScopeId::next(),
    );
    let hit = limit.clone();
    let runs_agent = tool("runs_agent", false, move |_a, _c| {
        let hit = hit.clone();
        async move { Err(FatalToolError::new(hit).into()) }
    });
    let ok = constant("ok", false, "fine");
    let err = execute_tools(
        &conversation(&[("ok", json!({})), ("runs_agent", json!({}))]),
        &[ok, runs_agent],
        &ExecuteOptions::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.limit(), Some(&limit));
    assert_eq!(err.messages().len(), 1, "the earlier call's result is kept");
    assert!(matches!(err, ExecError::Limit { ref function, .. } if function == "runs_agent"));
}
