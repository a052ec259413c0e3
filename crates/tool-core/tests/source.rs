//! Tool sources and tool sets, in the crate that defines tools (no agent needed to use them).

#![allow(clippy::unwrap_used, clippy::panic)]

use std::error::Error as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actuator_tool_core::source::{ToolSet, ToolSetError, ToolSource, ToolSourceError};
use actuator_tool_core::{
    BoxFuture, ToolArgs, ToolContext, ToolDef, ToolDefError, ToolFailure, check_tool_names,
};

fn echo(name: &str) -> ToolDef {
    ToolDef::builder(name)
        .description("Echoes.")
        .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("echo") })
        .build()
        .unwrap()
}

/// Lists `tool_1 … tool_n` on its n-th listing; fails when told to.
struct Growing {
    listed: AtomicUsize,
    fail: bool,
}

impl Growing {
    fn new(fail: bool) -> Self {
        Growing {
            listed: AtomicUsize::new(0),
            fail,
        }
    }
}

impl ToolSource for Growing {
    fn name(&self) -> &str {
        "growing"
    }

    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDef>, ToolSourceError>> {
        let n = self.listed.fetch_add(1, Ordering::SeqCst) + 1;
        let fail = self.fail;
        Box::pin(async move {
            if fail {
                return Err(ToolSourceError::new("the server went away"));
            }
            Ok((1..=n).map(|i| echo(&format!("tool_{i}"))).collect())
        })
    }
}

#[tokio::test]
async fn a_set_resolves_its_sources_each_time_in_the_order_given() {
    let source = Arc::new(Growing::new(false));
    let set = ToolSet::new()
        .tool(echo("a"))
        .source(source.clone())
        .tool(echo("z"));
    assert!(set.has_sources());
    let names = |tools: Vec<ToolDef>| -> Vec<String> {
        tools.iter().map(|t| t.name().to_owned()).collect()
    };
    assert_eq!(names(set.resolve().await.unwrap()), ["a", "tool_1", "z"]);
    assert_eq!(
        names(set.resolve().await.unwrap()),
        ["a", "tool_1", "tool_2", "z"]
    );
    assert_eq!(source.listed.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_failing_source_is_named_in_the_error() {
    let set = ToolSet::from(Arc::new(Growing::new(true)) as Arc<dyn ToolSource>);
    let err = set.resolve().await.unwrap_err();
    assert!(matches!(&err, ToolSetError::Source { source_name, .. } if source_name == "growing"));
    assert_eq!(
        err.to_string(),
        "Tool source 'growing' could not list its tools: the server went away"
    );
}

#[tokio::test]
async fn a_duplicate_name_reads_once_down_the_error_chain() {
    let set = ToolSet::new()
        .tool(echo("tool_1"))
        .source(Arc::new(Growing::new(false)));
    let err = set.resolve().await.unwrap_err();
    let ToolSetError::Definition(inner) = &err else {
        panic!("expected a D7 error, got {err:?}");
    };
    assert!(matches!(inner, ToolDefError::DuplicateName { name } if name == "tool_1"));
    // The message is the definition error's own, and is not repeated by a source below it.
    assert_eq!(err.to_string(), inner.to_string());
    assert!(err.source().is_none(), "{:?}", err.source());
}

#[test]
fn check_tool_names_finds_the_first_repeat() {
    let tools = [echo("a"), echo("b"), echo("a")];
    assert!(check_tool_names(&tools[..2]).is_ok());
    let err = check_tool_names(&tools).unwrap_err();
    assert!(matches!(err, ToolDefError::DuplicateName { name } if name == "a"));
}
