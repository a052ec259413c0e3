//! Parts of W6's request path, timed alone on the provider's own request body (read back from
//! the server's `/last`), to show where a turn's client time goes:
//!
//! - the body as a `serde_json::Value` tree: cloned (a stand-in for building it, which makes
//!   the same tree: one allocation per string, one map per object), written to bytes (what
//!   the transport does before sending), and dropped;
//! - the same 100 messages written straight from borrowed structs (`#[derive(Serialize)]`,
//!   no tree): what the request costs without the intermediate `Value`.

use std::borrow::Cow;
use std::time::Instant;

use actuator_model::{ChatMessage, MessageContent};
use serde::Serialize;
use serde_json::Value;

/// A request body written without a `Value` tree.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<Message<'a>>,
    tools: &'a Value,
    tool_choice: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Message<'a> {
    System {
        content: Cow<'a, str>,
    },
    User {
        content: Cow<'a, str>,
    },
    Assistant {
        content: Cow<'a, str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<Call<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: Cow<'a, str>,
    },
}

#[derive(Serialize)]
struct Call<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: String,
}

fn text(content: &MessageContent) -> Cow<'_, str> {
    match content {
        MessageContent::Text(t) => Cow::Borrowed(t),
        other => Cow::Owned(other.text()),
    }
}

fn message(m: &ChatMessage) -> Message<'_> {
    match m {
        ChatMessage::System(s) => Message::System {
            content: text(&s.content),
        },
        ChatMessage::User(u) => Message::User {
            content: text(&u.content),
        },
        ChatMessage::Assistant(a) => Message::Assistant {
            content: text(&a.content),
            tool_calls: a
                .calls()
                .iter()
                .map(|c| Call {
                    id: &c.id,
                    kind: "function",
                    function: Function {
                        name: &c.function,
                        arguments: c.arguments.as_json().to_owned(),
                    },
                })
                .collect(),
        },
        ChatMessage::Tool(t) => Message::Tool {
            tool_call_id: t.tool_call_id.as_deref().unwrap_or_default(),
            content: text(&t.content),
        },
    }
}

/// The request body for `conversation` written from borrowed structs, with `tools` as the
/// provider rendered them.
pub fn direct(model: &str, conversation: &[ChatMessage], tools: &Value) -> Vec<u8> {
    let body = Body {
        model,
        messages: conversation.iter().map(message).collect(),
        tools,
        tool_choice: "auto",
    };
    serde_json::to_vec(&body).expect("the body is written")
}

/// `runs` timings of `f`, in seconds, after `runs / 10` untimed ones.
fn samples(runs: usize, mut f: impl FnMut() -> f64) -> Vec<f64> {
    for _ in 0..runs / 10 {
        f();
    }
    (0..runs).map(|_| f()).collect()
}

/// Times the parts; returns `(case, samples in seconds)` rows.
pub fn parts(body: &[u8], conversation: &[ChatMessage], runs: usize) -> Vec<(String, Vec<f64>)> {
    let tree: Value = serde_json::from_slice(body).expect("the request body is JSON");
    let clone = samples(runs, || {
        let t0 = Instant::now();
        let copy = tree.clone();
        let t = t0.elapsed().as_secs_f64();
        drop(copy);
        t
    });
    let encode = samples(runs, || {
        let t0 = Instant::now();
        let bytes = serde_json::to_vec(&tree).expect("a Value is written");
        let t = t0.elapsed().as_secs_f64();
        assert!(bytes.len() > 10_000);
        t
    });
    let dropped = samples(runs, || {
        let copy = tree.clone();
        let t0 = Instant::now();
        drop(copy);
        t0.elapsed().as_secs_f64()
    });
    let model = tree["model"].as_str().unwrap_or_default();
    let tools = &tree["tools"];
    let direct = samples(runs, || {
        let t0 = Instant::now();
        let bytes = direct(model, conversation, tools);
        let t = t0.elapsed().as_secs_f64();
        assert!(bytes.len() > 10_000);
        t
    });
    vec![
        (
            "part: the request as a Value tree, cloned (stand-in for building it)".to_owned(),
            clone,
        ),
        (
            "part: the request Value written to bytes".to_owned(),
            encode,
        ),
        ("part: the request Value dropped".to_owned(), dropped),
        (
            "part: the same request written from borrowed structs, no Value".to_owned(),
            direct,
        ),
    ]
}
