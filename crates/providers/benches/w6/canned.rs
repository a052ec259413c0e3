//! The completion W6's server returns to every `POST …/chat/completions`: one call of `add`
//! with `x = 3, y = 4`, with the fields OpenAI sends today (usage details, system
//! fingerprint, service tier) so both clients parse a realistic body. `tests/w6_bench.rs`
//! checks it against `CreateChatCompletionResponse`.

/// The model name both clients ask for (not a reasoning model: Chat Completions on both sides).
pub const MODEL: &str = "gpt-4.1-mini";

/// The canned response body.
pub const CANNED: &str = r#"{"id":"chatcmpl-w6canned","object":"chat.completion","created":1764590400,"model":"gpt-4.1-mini-2025-04-14","system_fingerprint":"fp_w6canned","service_tier":"default","choices":[{"index":0,"message":{"role":"assistant","content":"Adding the two numbers now.","refusal":null,"annotations":[],"tool_calls":[{"id":"call_w6_add","type":"function","function":{"name":"add","arguments":"{\"x\":3,\"y\":4}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":11250,"completion_tokens":21,"total_tokens":11271,"prompt_tokens_details":{"cached_tokens":11008,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}"#;
