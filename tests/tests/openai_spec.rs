//! The OpenAI strict rendering of every catalogue tool is a valid `FunctionObject` (and
//! `ChatCompletionTool`) of OpenAI's own API description.

#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "../../crates/dialect/tests/openai_spec/mod.rs"]
mod openai_spec;

use actuator_tests::all_tools;

#[test]
fn every_catalogue_tool_renders_as_an_openai_function_object() {
    let tools = all_tools();
    assert!(tools.len() >= 30);
    for tool in &tools {
        openai_spec::check(tool.name(), tool.info());
    }
}
