//! text_editor in a confined sandbox: each command's output and error texts as the
//! reference's sandbox implementation prints them, and path escapes refused.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use actuator_tool_core::ToolErrorKind;
use actuator_tools::{ShellOptions, text_editor};
use common::{err, handle, ok};
use serde_json::json;

fn editor() -> actuator_tool_core::ToolDef {
    text_editor(ShellOptions::new()).unwrap()
}

#[tokio::test]
async fn create_then_view_with_numbered_lines() {
    let Some((h, wd)) = handle() else { return };
    let t = editor();
    let path = format!("{}/a.py", wd.display());
    let out = ok(
        &h,
        &t,
        json!({"command": "create", "path": "a.py", "file_text": "x = 1\n\ty = 2\nprint(x)"}),
    )
    .await;
    assert_eq!(out, format!("File created successfully at: {path}"));
    let out = ok(&h, &t, json!({"command": "view", "path": "a.py"})).await;
    assert_eq!(
        out,
        format!(
            "Here's the result of running `cat -n` on {path}:\n     1\tx = 1\n     2\t        y = 2\n     3\tprint(x)\n"
        )
    );
    let out = ok(
        &h,
        &t,
        json!({"command": "view", "path": path, "view_range": [2, -1]}),
    )
    .await;
    assert_eq!(
        out,
        format!(
            "Here's the result of running `cat -n` on {path}:\n     2\t        y = 2\n     3\tprint(x)\n"
        )
    );
    let out = ok(
        &h,
        &t,
        json!({"command": "view", "path": "a.py", "view_range": [1, 99]}),
    )
    .await;
    assert!(out.ends_with("     3\tprint(x)\n"), "{out}");
}

#[tokio::test]
async fn view_range_errors() {
    let Some((h, wd)) = handle() else { return };
    let t = editor();
    let path = format!("{}/f", wd.display());
    ok(
        &h,
        &t,
        json!({"command": "create", "path": "f", "file_text": "a\nb\nc"}),
    )
    .await;
    let e = err(
        &h,
        &t,
        json!({"command": "view", "path": "f", "view_range": [0, 2]}),
    )
    .await;
    assert_eq!(
        e.message(),
        "Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 3]"
    );
    let e = err(
        &h,
        &t,
        json!({"command": "view", "path": "f", "view_range": [3, 2]}),
    )
    .await;
    assert_eq!(
        e.message(),
        "Invalid `view_range`: [3, 2]. Its second element `2` should be larger or equal than its first `3`"
    );
    let e = err(
        &h,
        &t,
        json!({"command": "view", "path": "f", "view_range": [1]}),
    )
    .await;
    assert_eq!(
        e.message(),
        "Invalid `view_range`. It should be a list of two integers."
    );
    let _ = path;
}

#[tokio::test]
async fn view_a_directory_lists_two_levels_without_hidden_items() {
    let Some((h, wd)) = handle() else { return };
    std::fs::create_dir_all(wd.join("src/deep/deeper")).unwrap();
    std::fs::write(wd.join("src/main.rs"), "").unwrap();
    std::fs::write(wd.join(".hidden"), "").unwrap();
    std::fs::write(wd.join("src/deep/deeper/x"), "").unwrap();
    let out = ok(&h, &editor(), json!({"command": "view", "path": "."})).await;
    let d = wd.display();
    let mut lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.remove(0),
        format!(
            "Here are the files and directories up to 2 levels deep in {d}, excluding hidden items:"
        )
    );
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            format!("{d}"),
            format!("{d}/src"),
            format!("{d}/src/deep"),
            format!("{d}/src/main.rs")
        ]
    );
}

#[tokio::test]
async fn create_refuses_existing_files_and_missing_paths_are_reported() {
    let Some((h, wd)) = handle() else { return };
    let t = editor();
    let path = format!("{}/f", wd.display());
    ok(
        &h,
        &t,
        json!({"command": "create", "path": "f", "file_text": "x"}),
    )
    .await;
    let e = err(
        &h,
        &t,
        json!({"command": "create", "path": "f", "file_text": "y"}),
    )
    .await;
    assert_eq!(
        e.message(),
        format!("File already exists at: {path}. Cannot overwrite files using command `create`.")
    );
    let e = err(&h, &t, json!({"command": "view", "path": "nope"})).await;
    assert_eq!(
        e.message(),
        format!(
            "The path {}/nope does not exist. Please provide a valid path.",
            wd.display()
        )
    );
    let e = err(
        &h,
        &t,
        json!({"command": "str_replace", "path": ".", "old_str": "a"}),
    )
    .await;
    assert_eq!(
        e.message(),
        format!(
            "The path {} is a directory and only the `view` command can be used on directories",
            wd.display()
        )
    );
    let e = err(&h, &t, json!({"command": "create", "path": "g"})).await;
    assert_eq!(e.kind(), ToolErrorKind::Parsing);
    assert_eq!(
        e.message(),
        "Invalid parameters: 'create.file_text' Input should be a valid string"
    );
    let e = err(&h, &t, json!({"command": "str_replace", "path": "f"})).await;
    assert_eq!(
        e.message(),
        "Invalid parameters: 'str_replace.old_str' Input should be a valid string"
    );
    let e = err(
        &h,
        &t,
        json!({"command": "insert", "path": "f", "new_str": "x"}),
    )
    .await;
    assert_eq!(
        e.message(),
        "Invalid parameters: 'insert.insert_line' Input should be a valid integer"
    );
    let e = err(
        &h,
        &t,
        json!({"command": "insert", "path": "f", "insert_line": 1}),
    )
    .await;
    assert_eq!(
        e.message(),
        "Invalid parameters: 'insert.new_str' Input should be a valid string"
    );
}

#[tokio::test]
async fn str_replace_needs_exactly_one_match() {
    let Some((h, wd)) = handle() else { return };
    let t = editor();
    let path = format!("{}/f", wd.display());
    ok(
        &h,
        &t,
        json!({"command": "create", "path": "f", "file_text": "a\nfoo\nb\nfoo bar\n"}),
    )
    .await;
    let e = err(
        &h,
        &t,
        json!({"command": "str_replace", "path": "f", "old_str": "foo", "new_str": "x"}),
    )
    .await;
    assert_eq!(
        e.message(),
        "No replacement was performed. Multiple occurrences of old_str `foo` in lines [2, 4]. Please ensure it is unique"
    );
    let e = err(
        &h,
        &t,
        json!({"command": "str_replace", "path": "f", "old_str": "zzz"}),
    )
    .await;
    assert_eq!(
        e.message(),
        format!("No replacement was performed, old_str `zzz` did not appear verbatim in {path}.")
    );
    let e = err(
        &h,
        &t,
        json!({"command": "str_replace", "path": "f", "old_str": ""}),
    )
    .await;
    assert_eq!(
        e.message(),
        "str_replace: The `old_str` parameter cannot be empty. Consider using the `insert` command instead."
    );
    let out = ok(
        &h,
        &t,
        json!({"command": "str_replace", "path": "f", "old_str": "foo bar", "new_str": "baz"}),
    )
    .await;
    assert_eq!(
        out,
        format!(
            "The file {path} has been edited. Here's the result of running `cat -n` on a snippet of {path}:\n     1\ta\n     2\tfoo\n     3\tb\n     4\tbaz\n     5\t\nReview the changes and make sure they are as expected. Edit the file again if necessary."
        )
    );
    assert_eq!(
        std::fs::read_to_string(wd.join("f")).unwrap(),
        "a\nfoo\nb\nbaz\n"
    );
    // No new_str: the match is removed.
    ok(
        &h,
        &t,
        json!({"command": "str_replace", "path": "f", "old_str": "baz\n"}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(wd.join("f")).unwrap(),
        "a\nfoo\nb\n"
    );
}

#[tokio::test]
async fn insert_after_a_line_and_insert_text_is_rewired() {
    let Some((h, wd)) = handle() else { return };
    let t = editor();
    ok(
        &h,
        &t,
        json!({"command": "create", "path": "f", "file_text": "1\n2\n3"}),
    )
    .await;
    let out = ok(
        &h,
        &t,
        json!({"command": "insert", "path": "f", "insert_line": 1, "new_str": "one-and-a-half"}),
    )
    .await;
    assert_eq!(
        out,
        format!(
            "The file {}/f has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n     1\t1\n     2\tone-and-a-half\n     3\t2\n     4\t3\nReview the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
            wd.display()
        )
    );
    ok(
        &h,
        &t,
        json!({"command": "insert", "path": "f", "insert_line": 0, "insert_text": "zero"}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(wd.join("f")).unwrap(),
        "zero\n1\none-and-a-half\n2\n3"
    );
    let e = err(
        &h,
        &t,
        json!({"command": "insert", "path": "f", "insert_line": 9, "new_str": "x"}),
    )
    .await;
    assert_eq!(
        e.message(),
        "Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 5]"
    );
}

#[tokio::test]
async fn undo_edit_restores_and_deletes_created_files() {
    let Some((h, wd)) = handle() else { return };
    let t = editor();
    let path = format!("{}/f", wd.display());
    ok(
        &h,
        &t,
        json!({"command": "create", "path": "f", "file_text": "old"}),
    )
    .await;
    ok(
        &h,
        &t,
        json!({"command": "str_replace", "path": "f", "old_str": "old", "new_str": "new"}),
    )
    .await;
    let out = ok(&h, &t, json!({"command": "undo_edit", "path": "f"})).await;
    assert_eq!(
        out,
        format!(
            "Last edit to {path} undone successfully. Here's the result of running `cat -n` on {path}:\n     1\told\n"
        )
    );
    let out = ok(&h, &t, json!({"command": "undo_edit", "path": "f"})).await;
    assert_eq!(out, format!("File deleted at: {path}"));
    assert!(!wd.join("f").exists());
    ok(
        &h,
        &t,
        json!({"command": "create", "path": "g", "file_text": "x"}),
    )
    .await;
    std::fs::write(wd.join("h"), "made by hand").unwrap();
    let e = err(&h, &t, json!({"command": "undo_edit", "path": "h"})).await;
    assert_eq!(
        e.message(),
        format!(
            "No edit history found for {}/h. The text editor only retains the last 10 edits per file.",
            wd.display()
        )
    );
}

#[tokio::test]
async fn paths_escaping_the_workdir_are_refused() {
    let Some((h, wd)) = handle() else { return };
    let t = editor();
    for path in [
        "../outside.txt",
        "/etc/passwd",
        "/root",
        "/tmp/x",
        "sub/../../x",
    ] {
        let e = err(&h, &t, json!({"command": "view", "path": path})).await;
        assert_eq!(
            e.kind(),
            ToolErrorKind::Permission,
            "{path}: {}",
            e.message()
        );
        assert!(
            e.message().contains("is outside the working directory"),
            "{}",
            e.message()
        );
        let e = err(
            &h,
            &t,
            json!({"command": "create", "path": path, "file_text": "x"}),
        )
        .await;
        assert_eq!(e.kind(), ToolErrorKind::Permission, "{path}");
    }
    // A symlink pointing out is followed, then refused.
    std::os::unix::fs::symlink("/etc/passwd", wd.join("link")).unwrap();
    std::os::unix::fs::symlink("/etc", wd.join("etc")).unwrap();
    for path in ["link", "etc/hostname"] {
        let e = err(&h, &t, json!({"command": "view", "path": path})).await;
        assert_eq!(e.kind(), ToolErrorKind::Permission, "{path}");
        let e = err(
            &h,
            &t,
            json!({"command": "str_replace", "path": path, "old_str": "root", "new_str": "x"}),
        )
        .await;
        assert_eq!(e.kind(), ToolErrorKind::Permission, "{path}");
    }
    assert!(!wd.parent().unwrap().join("outside.txt").exists());
}

#[tokio::test]
async fn null_bytes_are_a_parsing_error() {
    let Some((h, _)) = handle() else { return };
    let e = err(
        &h,
        &editor(),
        json!({"command": "create", "path": "f", "file_text": "a\u{0}"}),
    )
    .await;
    assert_eq!(
        e.message(),
        "An argument to tool 'text_editor' contained an embedded null byte."
    );
}
