//! The tools our server offers in the interop tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure};
use actuator_tool_macros::tool;

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `y` - Second addend.
#[tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

// Its schema is the tool's output schema: the Python SDK's client checks each result's
// `structuredContent` against it.
/// A point on the diagonal.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Point {
    x: i64,
    y: i64,
}

/// The point (x, x).
///
/// # Arguments
/// * `x` - Both coordinates.
#[tool]
async fn point(x: i64) -> Point {
    Point { x, y: x }
}

/// Sets its flag when dropped (a call cancelled before it finished).
struct Guard(Arc<AtomicBool>);
impl Drop for Guard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// `slow`: takes a minute; `cancelled` is set when a call is dropped before it finishes.
pub fn slow_tool(cancelled: Arc<AtomicBool>) -> ToolDef {
    ToolDef::builder("slow")
        .description("Takes a minute.")
        .handler(move |_args: ToolArgs, _ctx: ToolContext| {
            let guard = Guard(Arc::clone(&cancelled));
            async move {
                tokio::time::sleep(Duration::from_secs(60)).await;
                std::mem::forget(guard);
                Ok::<_, ToolFailure>("slept")
            }
        })
        .build()
        .expect("a valid tool")
}

/// `count`: reports its progress three times (what a client that asked for progress sees as
/// `notifications/progress`), then says it is done.
pub fn count_tool() -> ToolDef {
    ToolDef::builder("count")
        .description("Counts to three, reporting its progress.")
        .handler(|_args: ToolArgs, ctx: ToolContext| async move {
            for step in 1..=3 {
                ctx.report_progress(
                    actuator_tool_core::ProgressReport::new(f64::from(step))
                        .total(3.0)
                        .message(format!("step {step}")),
                );
            }
            Ok::<_, ToolFailure>("counted")
        })
        .build()
        .expect("a valid tool")
}

/// Panics.
#[tool]
async fn explode() -> String {
    panic!("boom")
}

/// The served tools; `cancelled` is the slow tool's flag.
pub fn tools(cancelled: Arc<AtomicBool>) -> Vec<ToolDef> {
    vec![
        add_tool(),
        point_tool(),
        slow_tool(cancelled),
        explode_tool(),
        count_tool(),
    ]
}
