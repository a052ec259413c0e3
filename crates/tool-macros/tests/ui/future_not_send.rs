use actuator_tool_macros::tool;
use std::rc::Rc;

/// Holds an `Rc` across an await: tools run on a multi-threaded executor.
#[tool]
async fn holds() -> u8 {
    let rc = Rc::new(1_u8);
    std::future::ready(()).await;
    *rc
}

fn main() {}
