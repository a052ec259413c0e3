//! The table `cargo xtask bench` prints: which Rust figure is compared with which Python row,
//! and the targets each figure is held against.

use std::collections::BTreeMap;

use crate::measure::{Measure, Unit, ratio, show, show_ratio, w5_label};

/// One line of the table.
struct Row {
    /// What is measured.
    label: &'static str,
    /// The Rust figure's key (`divan|{path}` or `{workload}|{case}`).
    rust: String,
    /// The Python figure's key (`{workload}|{case}` of `results/latest.json`), if it has one.
    inspect: Option<&'static str>,
    /// A Python figure measured by the Rust run itself (W8's MCP SDK), by its key there.
    same_run: Option<&'static str>,
}

fn row(label: &'static str, rust: impl Into<String>, inspect: Option<&'static str>) -> Row {
    Row {
        label,
        rust: rust.into(),
        inspect,
        same_run: None,
    }
}

/// A row whose Python figure the same step measured (not Inspect's run).
fn same_run(label: &'static str, rust: &'static str, python: &'static str) -> Row {
    Row {
        same_run: Some(python),
        ..row(label, rust, None)
    }
}

/// The key of W5's interleaved events on ÷ off ratio.
const W5_EVENTS_RATIO: &str =
    "W5|react K=1, interleaved: events on / off, time per turn (median of per-run ratios)";

/// The key of W5's interleaved streaming subscriber ÷ events off ratio (issue 37).
const W5_SUBSCRIBER_RATIO: &str = "W5|react K=1, interleaved: streaming subscriber / events off, time per turn (median of per-run ratios)";

/// Issue 16's W3 figure: 1000 parallel 10 ms calls less the bare `join_all` of the same
/// sleeps run the same way (in a spawned task), the two in turn.
const W3_OVER_SPAWNED: &str =
    "W3|sleep10 x1000, interleaved: execute_tools - join_all in a spawned task";

/// W7d's keys (issue 34 §3), the same on both sides: the Rust bench `sandbox_docker` and the
/// Python `w7d_docker.py` name their cases alike.
const W7D_CALL: &str = "W7d|bash('echo hi') end to end, docker sandbox";
const W7D_HUNDRED: &str = "W7d|100 parallel bash calls: wall, docker sandbox";
const W7D_SET_UP: &str = "W7d|sample sandbox set-up, docker";
const W7D_FIRST: &str = "W7d|first bash('echo hi') in a new docker sandbox";
const W7D_TEAR_DOWN: &str = "W7d|sample sandbox tear-down, docker";
const W7D_LIFE: &str = "W7d|sample sandbox set-up + tear-down, docker";

/// The checkpoint bench's keys: one save, one journal write and one resume at 100 messages,
/// into files and into memory, and W5's turn with a checkpoint every turn against none.
const CK_SAVE: &str = "checkpoint|save, 100 messages, file store";
const CK_SAVE_MEMORY: &str = "checkpoint|save, 100 messages, memory store";
const CK_SIZE: &str = "checkpoint|checkpoint size, 100 messages (the record)";
const CK_JOURNAL: &str = "checkpoint|journal write, 100 messages, file store";
const CK_JOURNAL_MEMORY: &str = "checkpoint|journal write, 100 messages, memory store";
const CK_RESUME: &str = "checkpoint|resume (load + rebuild), 100 messages, file store";
const CK_RESUME_MEMORY: &str = "checkpoint|resume (load + rebuild), 100 messages, memory store";
const CK_COPY: &str = "checkpoint|part: the 100 messages copied (to_vec)";
const CK_WRITE: &str = "checkpoint|part: the 100 messages written as JSON";
const CK_READ: &str = "checkpoint|part: the 100 messages read from JSON";
const CK_TURN_NONE: &str = "checkpoint|react K=1 at 90-110 messages, interleaved, no checkpoints: time per turn (gap between tool calls)";
const CK_TURN_FILE: &str = "checkpoint|react K=1 at 90-110 messages, interleaved, checkpoint every turn, file store: time per turn (gap between tool calls)";
const CK_TURN_UNSYNCED: &str = "checkpoint|react K=1 at 90-110 messages, interleaved, checkpoint every turn, file store unsynced: time per turn (gap between tool calls)";
const CK_RATIO_UNSYNCED: &str = "checkpoint|react K=1 at 90-110 messages, interleaved: checkpoint every turn, file store unsynced / no checkpoints, time per turn (median of per-run ratios)";
const CK_SAVE_UNSYNCED: &str = "checkpoint|save, 100 messages, file store unsynced";
const CK_JOURNAL_UNSYNCED: &str = "checkpoint|journal write, 100 messages, file store unsynced";
const CK_TURN_MEMORY: &str = "checkpoint|react K=1 at 90-110 messages, interleaved, checkpoint every turn, memory store: time per turn (gap between tool calls)";
/// The target: a checkpoint every turn at most doubles W5's time per turn.
const CK_RATIO: &str = "checkpoint|react K=1 at 90-110 messages, interleaved: checkpoint every turn, file store / no checkpoints, time per turn (median of per-run ratios)";
const CK_RATIO_MEMORY: &str = "checkpoint|react K=1 at 90-110 messages, interleaved: checkpoint every turn, memory store / no checkpoints, time per turn (median of per-run ratios)";

fn w5(k: usize, yielding: bool, events: bool, what: &str) -> String {
    format!("W5|{}: {what}", w5_label(k, yielding, events))
}

#[rustfmt::skip]
fn rows() -> Vec<Row> {
    vec![
        row("W0 process start → first tool call (Python: `import inspect_ai.agent`)", "W0|first tool call", Some("W0|python -c 'import inspect_ai.agent'")),
        row("W0 floor: same binary, exits at once (Python: `python -c pass`)", "W0|floor", Some("W0|python -c 'pass' (interpreter floor)")),
        row("W0 floor: `true`", "W0|true", None),
        row("W1 `search_tool()` after first use (Inspect: `ToolDef(@tool)`, cached)", "divan|schema/search_tool_constructor", Some("W1|ToolDef(@tool), 5 params, cached (per execute_tools)")),
        row("W1 `add_tool()` after first use", "divan|schema/add_tool_constructor", None),
        row("W1 `info_arc()` (Inspect: `parse_tool_info`, cached)", "divan|schema/search_info_arc", Some("W1|parse_tool_info, 5 params, cached (same fn)")),
        row("W1 `ToolInfo` deep clone", "divan|schema/search_info_deep_clone", None),
        row("W1 schema build, 5 params (Inspect: `parse_tool_info`, cold)", "divan|schema/search_schema_build", Some("W1|parse_tool_info, 5 params (literal), cold (new fn)")),
        row("W1 first `search_tool()` in a fresh process", "W1|first search_tool() in a fresh process", Some("W1|parse_tool_info, first call in fresh process")),
        row("W1 first `validate` in a fresh process (validator compiled)", "W1|first validate in a fresh process", None),
        row("W1 validator compile, 5 params", "divan|schema/search_validator_compile", None),
        row("W1 params → JSON value (Inspect: `model_dump`)", "divan|schema/search_params_to_value", Some("W1|ToolParams.model_dump(exclude_none) (5 params)")),
        row("W1 dialect: MCP", "divan|dialect/mcp", None),
        row("W1 dialect: OpenAI strict", "divan|dialect/openai_strict", None),
        row("W1 dialect: Anthropic", "divan|dialect/anthropic", None),
        row("W1 dialect: Gemini", "divan|dialect/gemini", None),
        row("W2 `execute_tools`, 1 call `add`, events on", "divan|execute/w2_execute_tools/add_1_call", Some("W2|execute_tools, 1 call add(x,y), transcript installed")),
        row("W2 `execute_tools`, 1 call `add`, events on, awaited inside the runtime (as the Python script awaits inside its loop; no `block_on` per call)", "divan|execute/w2_execute_tools/add_1_call_awaited", None),
        row("W2 `execute_tools`, 1 call `search` (5 params), events on", "divan|execute/w2_execute_tools/search_1_call", Some("W2|execute_tools, 1 call search(5 mixed params), transcript")),
        row("W2 `execute_tools`, invalid args → parsing error", "divan|execute/w2_execute_tools/add_invalid_args", Some("W2|execute_tools, 1 call add, invalid args -> parsing error")),
        row("W2 part: validate `add`", "divan|execute/w2_parts/validate_add", Some("W2|part: validate_tool_input (jsonschema Draft7)")),
        row("W2 part: validate `search`", "divan|execute/w2_parts/validate_search", Some("W2|part: validate_tool_input, search 5 params")),
        row("W2 part: deserialize `add` (`ToolArgs`)", "divan|execute/w2_parts/deserialize_add", Some("W2|part: tool_params (arg deserialization), add")),
        row("W2 part: deserialize `search` (`ToolArgs`)", "divan|execute/w2_parts/deserialize_search", Some("W2|part: tool_params, search 5 params")),
        row("W2 part: `ToolDef::call` `add` (deserialize + call + output)", "divan|execute/w2_parts/call_add", None),
        row("W2 part: tool message", "divan|execute/w2_parts/tool_message", Some("W2|part: ChatMessageTool(...) creation")),
        row("W2 part: tool event", "divan|execute/w2_parts/tool_event", Some("W2|part: ToolEvent(...) creation")),
        row("W2 part: hand-written floor (`from_str` + direct call)", "divan|execute/w2_parts/handwritten_floor", None),
        row("W2 part: raw `add(1, 2).await`", "divan|execute/w2_parts/raw_add", Some("W2|part: raw `await add(x=1, y=2)` (Python floor)")),
        row("W3 noop ×10, wall", "W3|noop x10: wall per execute_tools", Some("W3|noop x10: wall per execute_tools")),
        row("W3 noop ×100, wall", "W3|noop x100: wall per execute_tools", Some("W3|noop x100: wall per execute_tools")),
        row("W3 noop ×1000, wall", "W3|noop x1000: wall per execute_tools", Some("W3|noop x1000: wall per execute_tools")),
        row("W3 noop ×1000, per call", "W3|noop x1000: overhead per call (wall-ideal)/N", Some("W3|noop x1000: overhead per call (wall-ideal)/N")),
        row("W3 sleep 10 ms ×10 parallel, wall", "W3|sleep10 x10: wall per execute_tools", Some("W3|sleep10 x10: wall per execute_tools")),
        row("W3 sleep 10 ms ×100 parallel, wall", "W3|sleep10 x100: wall per execute_tools", Some("W3|sleep10 x100: wall per execute_tools")),
        row("W3 sleep 10 ms ×1000 parallel, wall", "W3|sleep10 x1000: wall per execute_tools", Some("W3|sleep10 x1000: wall per execute_tools")),
        row("W3 sleep 10 ms ×10 serial, overhead per call", "W3|sleep10_serial x10: overhead per call (wall-ideal)/N", Some("W3|sleep10_serial x10: overhead per call (wall-ideal)/N")),
        row("W3 sleep 10 ms ×100 serial, overhead per call", "W3|sleep10_serial x100: overhead per call (wall-ideal)/N", Some("W3|sleep10_serial x100: overhead per call (wall-ideal)/N")),
        row("W3 sleep 10 ms ×10 serial, overhead per call beyond a bare sleep", "W3|sleep10_serial x10: overhead per call beyond a bare sleep", None),
        row("W3 sleep 10 ms ×100 serial, overhead per call beyond a bare sleep", "W3|sleep10_serial x100: overhead per call beyond a bare sleep", None),
        row("W3 reference: 10 sleeps one after another, no framework", "W3|reference: 10 x sleep(10ms) one after another, no Actuator", None),
        row("W3 reference: 1000 sleeps joined, no framework", "W3|reference: join_all 1000 x sleep(10ms), no Actuator", Some("W3|reference: asyncio.gather 1000 x sleep(10ms), no Inspect")),
        row("W3 reference: the same, in a spawned task (as `execute_tools` runs)", "W3|reference: join_all 1000 x sleep(10ms) in a spawned task, no Actuator", None),
        row("W3 1000 × 10 ms − `join_all` in a spawned task, interleaved (issue 16: ≤ 0.5 ms)", W3_OVER_SPAWNED, None),
        row("W3 1000 × 10 ms − `join_all` on the `block_on` thread, interleaved", "W3|sleep10 x1000, interleaved: execute_tools - join_all on the block_on thread", None),
        row("W3 floor: the 1000 handlers called directly in 8 spawned chunks − `join_all` in a spawned task, interleaved", "W3|sleep10 x1000, interleaved: handlers in 8 spawned chunks, no executor - join_all in a spawned task", None),
        row("W3 1000 × 10 ms, the calls' work before their tools (first poll, current thread), per call: one thread", "W3|sleep10 x1000, before the tools: first poll per call, one thread", None),
        row("W3 the same, per call, on each of two threads at once (own runtimes, same tool)", "W3|sleep10 x1000, before the tools: first poll per call, each of 2 threads at once", None),
        row("W3 reference: first poll of the bare `join_all`, per sleep, one thread", "W3|reference: join_all 1000 x sleep(10ms), first poll per sleep, one thread", None),
        row("W4 `execute_tools`, 1 MiB ASCII → 16 KiB", "divan|execute/w4_truncation/big_ascii_1mib", Some("W4|execute_tools, tool returns 1 MiB (big_ascii) -> 16 KiB")),
        row("W4 `execute_tools`, 1 MiB non-ASCII → 16 KiB", "divan|execute/w4_truncation/big_utf8_1mib", Some("W4|execute_tools, tool returns 1 MiB (big_utf8) -> 16 KiB")),
        row("W4 `execute_tools`, 1 KiB (no truncation)", "divan|execute/w4_truncation/small_1kib", Some("W4|execute_tools, tool returns 1 KiB (no truncation, reference)")),
        row("W4 part: `truncate_tool_output`, 1 MiB ASCII", "divan|execute/w4_parts/truncate_ascii", Some("W4|part: truncate_tool_output(1 MiB ASCII)")),
        row("W4 part: `truncate_tool_output`, 1 MiB non-ASCII", "divan|execute/w4_parts/truncate_utf8", Some("W4|part: truncate_tool_output(1 MiB UTF-8)")),
        row("W4 part: tool body copies the 1 MiB `String`", "divan|execute/w4_parts/clone_1mib_string", None),
        row("W5 K=1: time per turn", w5(1, false, false, "time per turn (gap between tool calls)"), Some("W5|eval K=1: time per turn (gap between tool calls)")),
        row("W5 K=1: time per turn, turns 2–11", w5(1, false, false, "time per turn, turns 2-11"), Some("W5|eval K=1: time per turn, turns 2-11")),
        row("W5 K=1: time per turn, turns 41–50", w5(1, false, false, "time per turn, turns 41-50"), Some("W5|eval K=1: time per turn, turns 41-50")),
        row("W5 K=1: agent run (51 turns)", w5(1, false, false, "agent run (51 model turns)"), Some("W5|eval K=1: agent run (51 model turns)")),
        row("W5 K=1: throughput", w5(1, false, false, "throughput (turns/s, agent phase)"), Some("W5|eval K=1: throughput (turns/s, agent phase)")),
        row("W5 K=1, events to a counting sink: time per turn", w5(1, false, true, "time per turn (gap between tool calls)"), None),
        row("W5 K=1, events on ÷ off per turn (interleaved in one process)", W5_EVENTS_RATIO.to_owned(), None),
        row("W5 K=1, streaming subscriber: time per turn (interleaved)", "W5|react K=1, interleaved, streaming subscriber: time per turn (gap between tool calls)".to_owned(), None),
        row("W5 K=1, streaming subscriber ÷ events off per turn (interleaved in one process)", W5_SUBSCRIBER_RATIO.to_owned(), None),
        row("W5 K=1, yielding model: time per turn", w5(1, true, false, "time per turn (gap between tool calls)"), None),
        row("W5 K=100: throughput", w5(100, false, false, "throughput (turns/s, agent phase)"), Some("W5|eval K=100: throughput (turns/s, agent phase)")),
        row("W5 K=100, yielding model: throughput", w5(100, true, false, "throughput (turns/s, agent phase)"), Some("W5|eval K=100: throughput (turns/s, agent phase)")),
        row("W5 K=100, yielding model: time per turn (interleaved)", w5(100, true, false, "time per turn (gap between tool calls)"), Some("W5|eval K=100: time per turn (gap between tool calls)")),
        row("W5 K=10 000: throughput", w5(10_000, false, false, "throughput (turns/s, agent phase)"), None),
        row("W5 K=10 000, yielding model: throughput", w5(10_000, true, false, "throughput (turns/s, agent phase)"), None),
        row("W5 K=10 000, yielding model: wall of agent phase", w5(10_000, true, false, "wall of agent phase (all K)"), None),
        row("W5 peak RSS, K=1", w5(1, false, false, "peak RSS (VmHWM)"), Some("W5|eval K=1: peak RSS (ru_maxrss)")),
        row("W5 peak RSS, K=100, yielding model", w5(100, true, false, "peak RSS (VmHWM)"), Some("W5|eval K=100: peak RSS (ru_maxrss)")),
        row("W5 peak RSS, K=10 000, yielding model", w5(10_000, true, false, "peak RSS (VmHWM)"), None),
        row("W7 one `bash(\"echo hi\")` call end to end, LocalSandbox (bubblewrap) vs Inspect `local` (unconfined)", "W7|bash('echo hi') end to end, LocalSandbox (bubblewrap)", Some("W7|bash('echo hi') end to end, local sandbox")),
        row("W7 100 parallel `bash` calls in one turn, wall", "W7|100 parallel bash calls: wall, LocalSandbox (bubblewrap)", Some("W7|100 parallel bash calls: wall, local sandbox")),
        row("W7d one `bash(\"echo hi\")` call end to end, DockerSandbox vs Inspect `docker`, the reference's default compose file", W7D_CALL, Some(W7D_CALL)),
        row("W7d 100 parallel `bash` calls in one turn, wall", W7D_HUNDRED, Some(W7D_HUNDRED)),
        row("W7d a sample's sandbox: set-up (`compose up --wait`, containers found)", W7D_SET_UP, Some(W7D_SET_UP)),
        row("W7d the new sandbox's first `bash` call (ours starts the container's command supervisor)", W7D_FIRST, Some(W7D_FIRST)),
        row("W7d a sample's sandbox: tear-down (`compose down`)", W7D_TEAR_DOWN, Some(W7D_TEAR_DOWN)),
        row("W7d a sample's sandbox: set-up + tear-down", W7D_LIFE, Some(W7D_LIFE)),
        row("W5 RSS per extra agent, K=100 vs 1, yielding model", w5(100, true, false, "peak-RSS growth per extra agent (K=100 vs K=1)"), Some("W5|derived: peak-RSS growth per extra agent (K=100 vs K=1)")),
        row("W5 RSS per extra agent, K=10 000 vs 1, yielding model", w5(10_000, true, false, "peak-RSS growth per extra agent (K=10000 vs K=1)"), None),
        row("W5 RSS per extra agent, K=10 000 vs 1, ready model", w5(10_000, false, false, "peak-RSS growth per extra agent (K=10000 vs K=1)"), None),
        row("W6 one react turn (generate + execute_tools), 100 messages, canned local server: total", "W6|turn (generate + execute_tools), 100 messages: total", Some("W6|turn (generate + execute_tools), 100 messages: total")),
        row("W6 the same: client overhead (total − server handler time), target ≥ 20× less than Inspect", "W6|turn, 100 messages: client overhead (total - server handler time)", Some("W6|turn, 100 messages: client overhead (total - server handler time)")),
        row("W6 the same: generate (request build, HTTP, parse, event)", "W6|turn, 100 messages: generate (request build, HTTP, parse, event)", Some("W6|turn, 100 messages: generate (request build, HTTP, parse, event)")),
        row("W6 the same: execute_tools (1 call `add`)", "W6|turn, 100 messages: execute_tools (1 call add)", Some("W6|turn, 100 messages: execute_tools (1 call add)")),
        row("W6 server handler time per request (Inspect's side in docs/benchmarks.md: it includes waiting for the client's body)", "W6|server handler time per request", None),
        row("W6 request body", "W6|request body size", Some("W6|request body size")),
        row("W6 raw POST of the same body: client overhead (reqwest vs httpx)", "W6|raw POST of the same body: client overhead (HTTP client floor)", Some("W6|raw POST of the same body: client overhead (HTTP client floor)")),
        row("W6 turn on a current-thread runtime: client overhead", "W6|turn, current-thread runtime: client overhead (total - server handler time)", None),
        row("W6 `react` agent, one turn (`on_continue` stops): total", "W6|react agent, one turn (on_continue stops): total", None),
        row("W6 part: the request as a `Value` tree, cloned (stand-in for building it)", "W6|part: the request as a Value tree, cloned (stand-in for building it)", None),
        row("W6 part: the request `Value` written to bytes", "W6|part: the request Value written to bytes", None),
        row("W6 part: the request `Value` dropped", "W6|part: the request Value dropped", None),
        row("W6 part: the same request written from borrowed structs, no `Value`", "W6|part: the same request written from borrowed structs, no Value", None),
        same_run("W8 MCP `tools/call` over stdio, Python SDK client → Actuator server (Python: → the SDK's MCPServer)", crate::w8::OUR_SERVER, crate::w8::PY_SERVER),
        same_run("W8 MCP `resources/read` over stdio, Python SDK client → Actuator server (Python: → the SDK's MCPServer)", crate::w8::OUR_READ, crate::w8::PY_READ),
        same_run("W8 MCP sampling round trip (tool → client's scripted model → tool) over stdio, Python SDK client ↔ Actuator server (Python: ↔ the SDK's MCPServer)", crate::w8::OUR_SAMPLING, crate::w8::PY_SAMPLING),
        same_run("W8 MCP `tools/call` over stdio, Actuator client → server-everything `echo` (Python: the SDK's client)", crate::w8::OUR_CLIENT, crate::w8::PY_CLIENT),
        row("W9 eval of 10 000 samples (react, 2 turns each, 100 in flight, `.eval` log): wall", "W9|eval 10 000 samples, yielding model: wall", Some("W9|eval 10 000 samples: wall")),
        row("W9 the same: samples per second", "W9|eval 10 000 samples, yielding model: samples per second", Some("W9|eval 10 000 samples: samples per second")),
        row("W9 the same: peak RSS", "W9|eval 10 000 samples, yielding model: peak RSS (VmHWM)", Some("W9|eval 10 000 samples: peak RSS (ru_maxrss)")),
        row("W9 the same: log size", "W9|eval 10 000 samples, yielding model: log size", Some("W9|eval 10 000 samples: log size")),
        row("W9 the same, 1 000 in flight: peak RSS", "W9|eval 10 000 samples, 1000 at once, yielding model: peak RSS (VmHWM)", None),
        row("W9 peak RSS per extra sample in flight, 1 000 vs 100 (its conversation included)", crate::measure::W9_PER_SAMPLE, None),
        row("Merge of 64 shard logs × 1 000 samples (W9's samples) into one `.eval` log: wall", "merge|merge 64 shards x 1000 samples: wall", None),
        row("Merge the same: peak RSS of the merging process", "merge|merge 64 shards x 1000 samples: peak RSS (VmHWM)", None),
        row("Merge: peak RSS of a process reading one shard whole (`read_eval_log`)", "merge|read one shard of 1000 samples (read_eval_log): peak RSS (VmHWM)", None),
        row("Merge: peak RSS of a process reading all 64 shards whole", "merge|read all 64 shards into memory (read_eval_log): peak RSS (VmHWM)", None),
        row("Merge: its peak RSS ÷ one shard's read", "merge|merge 64 shards x 1000 samples: peak RSS / one shard's read", None),
        row("SSE one 1 MiB server-sent-event line through the OpenAI provider, whole `generate`", "sse|one 1 MiB SSE line", None),
        row("SSE the same, 4 MiB (linear: about 4× the 1 MiB figure)", "sse|one 4 MiB SSE line", None),
        row("SSE the same, 16 MiB", "sse|one 16 MiB SSE line", None),
        row("Rate limit: throughput through adaptive concurrency / the server's limit (16 at once, 100 ms each; whole run, back-off included)", "rate limit|throughput / the server's limit", None),
        row("Checkpoint: one save of a 100-message conversation, `FileCheckpoints` (temporary file, fsync, rename, directory fsync)", CK_SAVE, None),
        row("Checkpoint: the same save, `FileCheckpoints::sync(false)` (survives the process, not the machine)", CK_SAVE_UNSYNCED, None),
        row("Checkpoint: the same save into a store in memory (serialisation and copies, no I/O)", CK_SAVE_MEMORY, None),
        row("Checkpoint: its size (the record's JSON)", CK_SIZE, None),
        row("Checkpoint: one journal write at 100 messages (1–2 messages since the checkpoint), `FileCheckpoints`", CK_JOURNAL, None),
        row("Checkpoint: the same journal write, unsynced", CK_JOURNAL_UNSYNCED, None),
        row("Checkpoint: the same journal write into memory", CK_JOURNAL_MEMORY, None),
        row("Checkpoint: resume at 100 messages (checkpoint and journal loaded, conversation rebuilt), `FileCheckpoints`", CK_RESUME, None),
        row("Checkpoint: the same resume from memory", CK_RESUME_MEMORY, None),
        row("Checkpoint part: the 100 messages copied", CK_COPY, None),
        row("Checkpoint part: the 100 messages written as JSON", CK_WRITE, None),
        row("Checkpoint part: the 100 messages read from JSON", CK_READ, None),
        row("Checkpoint: W5 time per turn at 90–110 messages, no checkpoints (interleaved)", CK_TURN_NONE, None),
        row("Checkpoint: the same, a checkpoint every turn, `FileCheckpoints` (interleaved)", CK_TURN_FILE, None),
        row("Checkpoint: the same, a checkpoint every turn, `FileCheckpoints::sync(false)` (interleaved)", CK_TURN_UNSYNCED, None),
        row("Checkpoint: the same, a checkpoint every turn into memory (interleaved)", CK_TURN_MEMORY, None),
        row("Checkpoint: a checkpoint every turn ÷ none, time per turn, `FileCheckpoints` (interleaved; issue: ≤ 2×)", CK_RATIO, None),
        row("Checkpoint: a checkpoint every turn ÷ none, time per turn, unsynced files (interleaved)", CK_RATIO_UNSYNCED, None),
        row("Checkpoint: a checkpoint every turn ÷ none, time per turn, into memory (interleaved)", CK_RATIO_MEMORY, None),
        row("Build: clean `cargo build -p actuator`", "build|clean cargo build -p actuator", None),
        row("Build: incremental, after editing a `#[tool]` body", "build|incremental rebuild after editing a #[tool] body", None),
        same_run("Build: a first app (`#[tool]`, react, `get_model`), clean, facade default + `providers` (second column: the same app on rig 0.44, rig-core + `reqwest` + rig-agent)", crate::build_cost::FIRST_APP, crate::build_cost::RIG_APP),
        same_run("Build: the same, CPU time (user + system)", crate::build_cost::FIRST_APP_CPU, crate::build_cost::RIG_APP_CPU),
        same_run("Build: our first app against rig-core 0.44's default features alone (no HTTP transport: it cannot call a model)", crate::build_cost::FIRST_APP, crate::build_cost::RIG_CORE),
        same_run("Build: the same, CPU time (user + system)", crate::build_cost::FIRST_APP_CPU, crate::build_cost::RIG_CORE_CPU),
    ]
}

/// The Markdown table: workload, Actuator median, Inspect median, ratio.
pub fn table(
    rust: &BTreeMap<String, Measure>,
    inspect: Option<&BTreeMap<String, Measure>>,
) -> String {
    let mut out = String::from(
        "| workload | Actuator (median) | Inspect AI 0.3.285 (median) | ratio (× Actuator better) |\n\
         |---|---:|---:|---:|\n",
    );
    let mut peers = crate::peers::table_rows(rust);
    for r in rows() {
        let Some(&ours) = rust.get(&r.rust) else {
            continue;
        };
        let theirs = match r.same_run {
            Some(k) => rust.get(k).copied(),
            None => r
                .inspect
                .and_then(|k| inspect.and_then(|i| i.get(k)).copied()),
        };
        let (theirs_text, ratio_text) = match theirs {
            Some(t) => (
                show(t),
                ratio(ours, t).map_or_else(|| "–".to_owned(), show_ratio),
            ),
            None if r.inspect.is_some() && inspect.is_none() => {
                ("(run --with-python)".to_owned(), "–".to_owned())
            }
            None => ("–".to_owned(), "–".to_owned()),
        };
        out.push_str(&format!(
            "| {} | {} | {theirs_text} | {ratio_text} |\n",
            r.label,
            show(ours)
        ));
        if r.rust == crate::peers::ANCHOR {
            out.push_str(&std::mem::take(&mut peers));
        }
    }
    out + &peers
}

/// A target a figure is held against (reported, never asserted).
struct Target {
    what: &'static str,
    rust: String,
    /// `true`: the figure must be at most `bound`; `false`: at least.
    at_most: bool,
    bound: Measure,
    source: &'static str,
}

#[rustfmt::skip]
fn target_list() -> Vec<Target> {
    let s = |v: f64| Measure { value: v, unit: Unit::Seconds };
    let b = |v: f64| Measure { value: v, unit: Unit::Bytes };
    let r = |v: f64| Measure { value: v, unit: Unit::PerSecond };
    let t = |what, rust: String, at_most, bound, source| Target { what, rust, at_most, bound, source };
    vec![
        t("W2 one call end to end, events on", "divan|execute/w2_execute_tools/add_1_call".into(), true, s(5e-6), "BASELINE.md"),
        t("W3 1000 parallel noop calls, wall", "W3|noop x1000: wall per execute_tools".into(), true, s(3e-3), "BASELINE.md"),
        t("W3 1000 parallel 10 ms sleeps, wall", "W3|sleep10 x1000: wall per execute_tools".into(), true, s(13e-3), "issue"),
        t("W3 1000 × 10 ms less the same sleeps joined, same harness (issue 16)", W3_OVER_SPAWNED.into(), true, s(0.5e-3), "issue"),
        t("W4 truncation alone, non-ASCII", "divan|execute/w4_parts/truncate_utf8".into(), true, s(3e-6), "BASELINE.md"),
        t("W5 time per turn, K=1", w5(1, false, false, "time per turn (gap between tool calls)"), true, s(50e-6), "issue"),
        t("W5 throughput, K=100", w5(100, false, false, "throughput (turns/s, agent phase)"), false, r(20_000.0), "issue"),
        t("W5 throughput, K=100, yielding model", w5(100, true, false, "throughput (turns/s, agent phase)"), false, r(20_000.0), "issue"),
        t("W5 events on ÷ off, time per turn (issue 16)", W5_EVENTS_RATIO.into(), true, Measure { value: 1.5, unit: Unit::Ratio }, "issue"),
        t("Rate limit: throughput within 20 % of the server's limit (issue 38)", "rate limit|throughput / the server's limit".into(), false, Measure { value: 0.8, unit: Unit::Ratio }, "issue"),
        t("W5 streaming subscriber ÷ events off, time per turn (issue 37)", W5_SUBSCRIBER_RATIO.into(), true, Measure { value: 1.5, unit: Unit::Ratio }, "issue"),
        t("W5 memory per agent, K=10 000, yielding model", w5(10_000, true, false, "peak-RSS growth per extra agent (K=10000 vs K=1)"), true, b(64.0 * 1024.0), "issue"),
        t("W5 memory per agent, K=100, yielding model", w5(100, true, false, "peak-RSS growth per extra agent (K=100 vs K=1)"), true, b(64.0 * 1024.0), "issue"),
        t("A checkpoint every turn ÷ none, W5 time per turn at 100 messages, file store", CK_RATIO.into(), true, Measure { value: 2.0, unit: Unit::Ratio }, "issue"),
        t("W9 memory per sample in flight (issue 39)", crate::measure::W9_PER_SAMPLE.into(), true, b(64.0 * 1024.0), "issue"),
    ]
}

/// A target on the ratio to Inspect's figure (× Actuator better), held when both sides ran.
struct VsInspect {
    what: &'static str,
    /// The key of both figures (the Rust and the Python bench name the case alike).
    key: &'static str,
    /// The ratio must be at least this.
    at_least: f64,
    source: &'static str,
}

fn vs_inspect_list() -> Vec<VsInspect> {
    vec![
        VsInspect {
            what: "W7d one `bash` call in a Docker sandbox, against Inspect's (issue 34 §3)",
            key: W7D_CALL,
            at_least: 10.0,
            source: "issue",
        },
        VsInspect {
            what: "W7d a sample's sandbox set-up + tear-down, against Inspect's: no slower (issue 34 §3)",
            key: W7D_LIFE,
            at_least: 1.0,
            source: "issue",
        },
    ]
}

/// The targets, met or missed: those on a figure alone, and those on the ratio to Inspect's
/// figure when `inspect` has it.
pub fn targets(
    rust: &BTreeMap<String, Measure>,
    inspect: Option<&BTreeMap<String, Measure>>,
) -> String {
    let mut out = String::from("targets (reported, not asserted):\n");
    for t in target_list() {
        let Some(&m) = rust.get(&t.rust) else {
            continue;
        };
        let met = if t.at_most {
            m.value <= t.bound.value
        } else {
            m.value >= t.bound.value
        };
        out.push_str(&format!(
            "- {}: {} (target {} {}, from {}): {}\n",
            t.what,
            show(m),
            if t.at_most { "≤" } else { "≥" },
            show(t.bound),
            t.source,
            if met { "met" } else { "MISSED" }
        ));
    }
    for t in vs_inspect_list() {
        let (Some(&ours), Some(&theirs)) = (rust.get(t.key), inspect.and_then(|i| i.get(t.key)))
        else {
            continue;
        };
        let Some(r) = ratio(ours, theirs) else {
            continue;
        };
        out.push_str(&format!(
            "- {}: {} against {}, {} (target ≥ {}, from {}): {}\n",
            t.what,
            show(ours),
            show(theirs),
            show_ratio(r),
            show_ratio(t.at_least),
            t.source,
            if r >= t.at_least { "met" } else { "MISSED" }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: f64) -> Measure {
        Measure::seconds(v * 1e-3)
    }

    #[test]
    fn w7d_rows_pair_the_same_case_on_both_sides() {
        let rust = BTreeMap::from([(W7D_CALL.to_owned(), ms(2.0))]);
        let inspect = BTreeMap::from([(W7D_CALL.to_owned(), ms(200.0))]);
        let table = table(&rust, Some(&inspect));
        let line = table.lines().find(|l| l.starts_with("| W7d one")).unwrap();
        assert!(line.ends_with("| 2.00 ms | 200 ms | 100× |"), "{line}");
    }

    #[test]
    fn checkpoint_rows_and_their_target_come_from_the_bench_keys() {
        let rust = BTreeMap::from([
            (CK_SAVE.to_owned(), Measure::seconds(460e-6)),
            (
                CK_RATIO.to_owned(),
                Measure {
                    value: 3.0,
                    unit: Unit::Ratio,
                },
            ),
        ]);
        let table = table(&rust, None);
        assert!(table.contains("| 460 µs | – | – |"), "{table}");
        assert!(
            table.contains("(interleaved; issue: ≤ 2×) | 3.00× |"),
            "{table}"
        );
        let targets = targets(&rust, None);
        assert!(
            targets.contains("file store: 3.00× (target ≤ 2.00×, from issue): MISSED"),
            "{targets}"
        );
    }

    #[test]
    fn ratio_targets_need_both_figures_and_say_met_or_missed() {
        let rust = BTreeMap::from([
            (W7D_CALL.to_owned(), ms(30.0)),
            (W7D_LIFE.to_owned(), ms(900.0)),
        ]);
        assert!(
            !targets(&rust, None).contains("W7d"),
            "no Inspect figures, no ratio target"
        );
        let inspect = BTreeMap::from([
            (W7D_CALL.to_owned(), ms(200.0)),
            (W7D_LIFE.to_owned(), ms(1000.0)),
        ]);
        let text = targets(&rust, Some(&inspect));
        let call = text
            .lines()
            .find(|l| l.contains("one `bash` call"))
            .unwrap();
        assert!(
            call.ends_with("6.7× (target ≥ 10×, from issue): MISSED"),
            "{call}"
        );
        let life = text
            .lines()
            .find(|l| l.contains("set-up + tear-down"))
            .unwrap();
        assert!(
            life.ends_with("1.1× (target ≥ 1.0×, from issue): met"),
            "{life}"
        );
    }
}
