//! A checkpoint holds the sandbox's files (`DirectoryPart`): a resumed run's files are as they
//! were at its checkpoint, nothing the sandbox wrote is followed out of its directory, and a
//! checkpoint writes only the files that changed.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actuator_agent::checkpoint::{
    CheckpointError, CheckpointStore, Checkpoints, DirectoryPart, FileCheckpoints,
};
use actuator_agent::limits::turn_limit;
use actuator_agent::{RunOptions, react, run};
use actuator_model::{BoxFuture, ChatMessage, FunctionModel, ModelOutput, ToolCall};
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
use common::submit;
use serde_json::json;

/// A store that records the keys it is asked to save.
struct Recording {
    inner: FileCheckpoints,
    saved: Mutex<Vec<String>>,
}

impl CheckpointStore for Recording {
    fn save<'a>(
        &'a self,
        key: &'a str,
        record: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        self.saved.lock().unwrap().push(key.to_owned());
        self.inner.save(key, record)
    }
    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, CheckpointError>> {
        self.inner.load(key)
    }
    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), CheckpointError>> {
        self.inner.remove(key)
    }
}

fn recording(dir: &Path) -> Arc<Recording> {
    Arc::new(Recording {
        inner: FileCheckpoints::new(dir),
        saved: Mutex::default(),
    })
}

/// A tool of no parameters but `name` and `text` (both optional).
fn tool(
    name: &str,
    f: impl Fn(Option<String>, Option<String>) -> BoxFuture<'static, String> + Send + Sync + 'static,
) -> ToolDef {
    let f = Arc::new(f);
    ToolDef::builder(name)
        .description("Does a step.")
        .parameters(
            ToolParams::from_value(&json!({"properties": {
                "name": {"type": "string", "description": "A file."},
                "text": {"type": "string", "description": "Its text."}
            }}))
            .unwrap(),
        )
        .handler(move |mut a: ToolArgs, _c: ToolContext| {
            let f = f.clone();
            async move {
                let name: Option<String> = a.optional("name")?;
                let text: Option<String> = a.optional("text")?;
                Ok::<_, ToolFailure>(f(name, text).await)
            }
        })
        .build()
        .unwrap()
}

/// Calls each of `script` in turn (one a turn), then submits "done".
fn scripted(script: Vec<(&'static str, serde_json::Value)>) -> FunctionModel {
    FunctionModel::new("mockllm/model", move |messages: &[ChatMessage], _tools| {
        let done = messages
            .iter()
            .filter(|m| matches!(m, ChatMessage::Tool(_)))
            .count();
        Ok(match script.get(done) {
            Some((name, args)) => ModelOutput::for_tool_calls(
                "mockllm/model",
                "",
                vec![ToolCall::new(format!("{name}_{done}"), *name, args.clone())],
            ),
            None => submit("done"),
        })
    })
}

/// Every file under `dir`, with its bytes.
fn all_bytes(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let m = std::fs::symlink_metadata(&p).unwrap();
        if m.is_dir() {
            out.extend(all_bytes(&p));
        } else if m.is_file() {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    out
}

#[tokio::test]
async fn a_resumed_run_finds_the_files_as_they_were_and_nothing_is_followed_out() {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("work");
    let store_dir = root.path().join("store");
    std::fs::create_dir_all(work.join("d/e")).unwrap();
    let secret = root.path().join("host-secret.txt");
    std::fs::write(&secret, "HOST-SECRET-CONTENT").unwrap();
    // What the model left in its sandbox: a link to a host file, a pipe (a reader that
    // opened it would wait for ever), a nested file, a name that is not UTF-8.
    std::os::unix::fs::symlink(&secret, work.join("leak")).unwrap();
    rustix_mkfifo(&work.join("pipe"));
    std::fs::write(work.join("d/e/f.txt"), "nested").unwrap();
    let odd = std::ffi::OsStr::from_bytes(b"odd-\xff-name");
    std::fs::write(work.join(odd), "odd").unwrap();

    let slow_calls = Arc::new(AtomicUsize::new(0));
    let slow_started = Arc::new(tokio::sync::Notify::new());
    let agent = || {
        let (w1, w2) = (work.clone(), work.clone());
        let (calls, started) = (slow_calls.clone(), slow_started.clone());
        react()
            .no_prompt()
            .tools([
                tool("write", move |name, text| {
                    let w = w1.clone();
                    Box::pin(async move {
                        std::fs::write(w.join(name.unwrap()), text.unwrap()).unwrap();
                        "written".to_owned()
                    })
                }),
                tool("slow", move |_, _| {
                    let (w, calls, started) = (w2.clone(), calls.clone(), started.clone());
                    Box::pin(async move {
                        // Half its work done when the process dies.
                        std::fs::write(w.join("partial.txt"), "half").unwrap();
                        std::fs::write(w.join("a.txt"), "overwritten").unwrap();
                        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                            started.notify_one();
                            tokio::time::sleep(Duration::from_secs(60)).await;
                        }
                        "slow done".to_owned()
                    })
                }),
            ])
            .model(scripted(vec![
                ("write", json!({"name": "a.txt", "text": "one"})),
                ("slow", json!({})),
            ]))
            .build()
            .unwrap()
    };
    let store = recording(&store_dir);
    let checkpoints = || {
        Checkpoints::new(store.clone(), "files")
            .part(Arc::new(DirectoryPart::new("workdir", work.clone())))
    };

    let first = checkpoints();
    let first_agent = agent();
    tokio::select! {
        _ = run(&first_agent, "Go.", RunOptions::new().resource(first).limits([turn_limit(10)])) => {
            panic!("the run finished before it was stopped")
        }
        () = slow_started.notified() => {}
    }
    // The store holds the files the run had, never what a link points to.
    let stored = all_bytes(&store_dir);
    assert!(!stored.is_empty());
    for (path, bytes) in &stored {
        assert!(
            !bytes
                .windows(b"HOST-SECRET-CONTENT".len())
                .any(|w| w == b"HOST-SECRET-CONTENT"),
            "{} holds the host file a link points to",
            path.display()
        );
    }

    // After the checkpoint, the sandbox swapped a file the restore writes for a link to the
    // host's secret, and a directory for a link to the host's tree.
    std::fs::remove_file(work.join("a.txt")).unwrap();
    std::os::unix::fs::symlink(&secret, work.join("a.txt")).unwrap();
    std::fs::remove_dir_all(work.join("d")).unwrap();
    std::os::unix::fs::symlink(root.path(), work.join("d")).unwrap();

    // "A new process": the files go back to the checkpoint taken before `slow` ran.
    let again = checkpoints();
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        run(
            &agent(),
            "Go.",
            RunOptions::new()
                .resource(again.clone())
                .limits([turn_limit(10)]),
        ),
    )
    .await
    .expect("the restore or the run hung")
    .unwrap();
    assert_eq!(out.state.output().completion(), "done");
    assert_eq!(again.resumed().unwrap().in_flight.len(), 1);
    assert_eq!(std::fs::read_to_string(work.join("a.txt")).unwrap(), "one");
    assert!(
        std::fs::symlink_metadata(work.join("a.txt"))
            .unwrap()
            .is_file()
            && std::fs::symlink_metadata(work.join("d")).unwrap().is_dir(),
        "the planted links are replaced, not written through"
    );
    assert!(
        !root.path().join("e").exists(),
        "nothing was made through the link to the host's tree"
    );
    assert!(
        !work.join("partial.txt").exists(),
        "the interrupted call's half is undone"
    );
    assert_eq!(std::fs::read_link(work.join("leak")).unwrap(), secret);
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "HOST-SECRET-CONTENT"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("d/e/f.txt")).unwrap(),
        "nested"
    );
    assert_eq!(std::fs::read_to_string(work.join(odd)).unwrap(), "odd");
    assert!(!work.join("pipe").exists(), "a pipe is not kept");
    assert_eq!(
        slow_calls.load(Ordering::SeqCst),
        1,
        "slow did not run again"
    );
    // Finished: its checkpoints and their files are gone.
    assert!(
        all_bytes(&store_dir).is_empty(),
        "{:?}",
        all_bytes(&store_dir)
    );
}

fn rustix_mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn a_checkpoint_writes_only_the_files_that_changed() {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    for i in 0..10 {
        std::fs::write(work.join(format!("f{i}.txt")), format!("file {i}")).unwrap();
    }
    let store = recording(&root.path().join("store"));
    let w = work.clone();
    let agent = react()
        .no_prompt()
        .tools([tool("write", move |name, text| {
            let w = w.clone();
            Box::pin(async move {
                std::fs::write(w.join(name.unwrap()), text.unwrap()).unwrap();
                "written".to_owned()
            })
        })])
        .model(scripted(vec![
            ("write", json!({"name": "f0.txt", "text": "changed once"})),
            ("write", json!({"name": "f0.txt", "text": "changed twice"})),
            ("write", json!({"name": "new.txt", "text": "file 3"})), // content f3 has
        ]))
        .build()
        .unwrap();
    let checkpoints = Checkpoints::new(store.clone(), "incremental")
        .keep_finished()
        .part(Arc::new(DirectoryPart::new("workdir", work.clone())));
    run(
        &agent,
        "Go.",
        RunOptions::new()
            .resource(checkpoints.clone())
            .limits([turn_limit(10)]),
    )
    .await
    .unwrap();
    let blobs: Vec<String> = store
        .saved
        .lock()
        .unwrap()
        .iter()
        // Content blobs (named by their SHA-256), not the list of those a save is writing.
        .filter(|k| k.starts_with("incremental#workdir#") && !k.ends_with("uncommitted"))
        .cloned()
        .collect();
    // The ten files once, then each change once; the new file's content was stored already.
    assert_eq!(blobs.len(), 12, "{blobs:?}");
    // What the last record does not use is removed: the store holds the files now there.
    let on_disk = std::fs::read_dir(root.path().join("store"))
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("incremental_workdir_")
                && n.ends_with(".ckpt")
                && !n.contains("uncommitted")
        })
        .count();
    assert_eq!(on_disk, 10, "f0's two older contents are gone");
    checkpoints.clear().await.unwrap();
    assert!(all_bytes(&root.path().join("store")).is_empty());
}
