//! Responses API fixtures shared by the plain and the streamed tests.

use serde_json::{Value, json};

/// A whole `Response` object with `output`, `status` and `incomplete_details`.
pub fn response(output: Value, status: &str, incomplete: Value) -> Value {
    json!({
        "id": "resp_1", "object": "response", "created_at": 1_700_000_000, "status": status,
        "error": null, "incomplete_details": incomplete, "instructions": null, "model": "o4-mini",
        "tools": [], "output": output, "parallel_tool_calls": true, "metadata": {},
        "tool_choice": "auto", "temperature": 1.0, "top_p": 1.0,
        "usage": {
            "input_tokens": 50, "input_tokens_details": {"cached_tokens": 20, "cache_write_tokens": 5},
            "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 80
        },
    })
}

/// A reasoning item, a message and two function calls.
pub fn reasoning_and_calls() -> Value {
    json!([
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Two sums."}], "encrypted_content": "gAAAAenc"},
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Adding.", "annotations": [], "logprobs": []}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add", "arguments": "{\"x\": 3, \"y\": 4}", "status": "completed"},
        {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "read", "arguments": "{\"path\": \"a\", \"limit\": null}", "status": "completed"},
    ])
}
