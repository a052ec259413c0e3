//! The compaction strategies: `CompactionEdit`, `CompactionTrim` and `CompactionSummary`, on
//! their own, through the `Compactor`, and end to end through `react()`.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use actuator_agent::compaction::{
    Compacted, CompactionEdit, CompactionStrategy, CompactionSummary, CompactionThreshold,
    CompactionTrim, Compactor, DEFAULT_SUMMARY_PROMPT, MEMORY_SUMMARY_ADDENDUM,
    TOOL_RESULT_REMOVED,
};
use actuator_agent::{AgentErrorKind, RunContext, filter::is_summary_message, react, run};
use actuator_events::{Event, EventLog};
use actuator_model::{
    BoxFuture, ChatMessage, ChatMessageAssistant, FunctionModel, GenerateRequest, MessageContent,
    MessageSource, Model, ModelError, ModelOutput, ScriptedModel, StopReason, ToolCall,
};
use actuator_tool_core::{
    Content, ToolArgs, ToolContext, ToolDef, ToolFailure, ToolInfo, ToolParams,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Helpers

/// An input message (`source = input`).
fn input(text: &str) -> ChatMessage {
    let mut m = ChatMessage::user(text);
    m.set_source(Some(MessageSource::Input));
    m
}

/// An assistant message with text and calls `(id, function)`.
fn calls(content: impl Into<MessageContent>, calls: &[(&str, &str)]) -> ChatMessage {
    let mut a = ChatMessageAssistant::new(content);
    a.tool_calls = Some(
        calls
            .iter()
            .map(|(id, f)| ToolCall::new(*id, *f, json!({"path": format!("/{id}")})))
            .collect(),
    );
    ChatMessage::Assistant(Box::new(a))
}

/// A tool result.
fn result(id: &str, function: &str, text: &str) -> ChatMessage {
    ChatMessage::tool(text, id, function, None)
}

/// System, input, then `n` tool uses of `ls` (`c0`…), each answered `listing i`.
fn tool_conversation(n: usize) -> Vec<ChatMessage> {
    let mut m = vec![
        ChatMessage::system("You are careful."),
        input("List things."),
    ];
    for i in 0..n {
        let id = format!("c{i}");
        m.push(calls(format!("step {i}"), &[(&id, "ls")]));
        m.push(result(&id, "ls", &format!("listing {i}")));
    }
    m
}

/// Every tool message answers a call of the assistant message before it (tool messages in
/// between aside), and every call is answered by one of the tool messages right after it.
fn assert_paired(messages: &[ChatMessage]) {
    for (i, m) in messages.iter().enumerate() {
        match m {
            ChatMessage::Tool(t) => {
                let id = t
                    .tool_call_id
                    .as_deref()
                    .expect("a tool message without call id");
                let parent = messages[..i]
                    .iter()
                    .rev()
                    .find(|m| !matches!(m, ChatMessage::Tool(_)))
                    .and_then(ChatMessage::as_assistant);
                assert!(
                    parent.is_some_and(|a| a.calls().iter().any(|c| c.id == id)),
                    "tool result {id} has no call in the preceding assistant message: {:#?}",
                    roles(messages)
                );
            }
            ChatMessage::Assistant(a) => {
                for c in a.calls() {
                    let answered = messages[i + 1..]
                        .iter()
                        .take_while(|m| matches!(m, ChatMessage::Tool(_)))
                        .any(|m| m.as_tool().unwrap().tool_call_id.as_deref() == Some(&c.id));
                    assert!(
                        answered,
                        "call {} has no result after it: {:#?}",
                        c.id,
                        roles(messages)
                    );
                }
            }
            _ => {}
        }
    }
}

/// `role: text` per message, for failure output.
fn roles(messages: &[ChatMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| format!("{}: {}", m.role(), m.text()))
        .collect()
}

/// The tool message answering `id`.
fn tool_text(messages: &[ChatMessage], id: &str) -> Option<String> {
    messages.iter().find_map(|m| {
        let t = m.as_tool()?;
        (t.tool_call_id.as_deref() == Some(id)).then(|| t.content.text())
    })
}

/// The default prompt with no addendums.
fn default_prompt() -> String {
    DEFAULT_SUMMARY_PROMPT.replace("{addendums}", "")
}

type Reply = dyn Fn(usize, &[ChatMessage]) -> Result<ModelOutput, ModelError> + Send + Sync;

/// A model recording every input it is shown, with an optional context window, answering with
/// `reply(call_index, input)`.
struct TestModel {
    window: Option<u64>,
    inputs: Mutex<Vec<Vec<ChatMessage>>>,
    tools: Mutex<Vec<Vec<Arc<ToolInfo>>>>,
    reply: Box<Reply>,
}

impl TestModel {
    fn new(
        reply: impl Fn(usize, &[ChatMessage]) -> Result<ModelOutput, ModelError> + Send + Sync + 'static,
    ) -> Self {
        TestModel {
            window: None,
            inputs: Mutex::new(Vec::new()),
            tools: Mutex::new(Vec::new()),
            reply: Box::new(reply),
        }
    }

    fn answering(text: &'static str) -> Self {
        Self::new(move |_, _| Ok(ModelOutput::from_content("test", text)))
    }

    fn window(mut self, tokens: u64) -> Self {
        self.window = Some(tokens);
        self
    }

    fn inputs(&self) -> Vec<Vec<ChatMessage>> {
        self.inputs.lock().unwrap().clone()
    }
}

impl Model for TestModel {
    fn name(&self) -> &str {
        "test"
    }

    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        let (input, tools) = (request.input, request.tools);
        let n = {
            let mut inputs = self.inputs.lock().unwrap();
            inputs.push(input.to_vec());
            inputs.len() - 1
        };
        self.tools.lock().unwrap().push(tools.to_vec());
        Box::pin(std::future::ready((self.reply)(n, input)))
    }

    fn context_window(&self) -> Option<u64> {
        self.window
    }
}

async fn compact(strategy: &dyn CompactionStrategy, messages: &[ChatMessage]) -> Compacted {
    let model = ScriptedModel::new([]);
    strategy
        .compact(&model, messages, &[], &RunContext::new())
        .await
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// CompactionEdit

#[tokio::test]
async fn edit_keeps_the_last_tool_uses_and_clears_older_results() {
    let messages = tool_conversation(5);
    let strategy = CompactionEdit::new().keep_tool_uses(2);
    assert_eq!(strategy.name(), "edit");
    let out = compact(&strategy, &messages).await;
    assert!(out.message.is_none());
    let input = out.input;

    // Nothing removed, system and input first and untouched.
    assert_eq!(input.len(), messages.len());
    assert_eq!(input[0], messages[0]);
    assert_eq!(input[1], messages[1]);
    assert_paired(&input);

    for i in 0..3 {
        assert_eq!(
            tool_text(&input, &format!("c{i}")).unwrap(),
            "(Tool result removed)"
        );
    }
    assert_eq!(tool_text(&input, "c3").unwrap(), "listing 3");
    assert_eq!(tool_text(&input, "c4").unwrap(), "listing 4");
    // Calls are kept; cleared results get a new id, kept ones keep theirs.
    for (before, after) in messages.iter().zip(&input) {
        if let (Some(a), Some(b)) = (before.as_assistant(), after.as_assistant()) {
            assert_eq!(a.tool_calls, b.tool_calls);
        }
    }
    assert_ne!(input[3].id(), messages[3].id());
    assert_eq!(input[11].id(), messages[11].id());
    assert_eq!(TOOL_RESULT_REMOVED, "(Tool result removed)");
}

#[tokio::test]
async fn edit_keeps_three_tool_uses_by_default() {
    let messages = tool_conversation(5);
    let input = compact(&CompactionEdit::new(), &messages).await.input;
    let kept: Vec<_> = (0..5)
        .map(|i| tool_text(&input, &format!("c{i}")).unwrap() != TOOL_RESULT_REMOVED)
        .collect();
    assert_eq!(kept, [false, false, true, true, true]);
    assert_eq!(
        CompactionStrategy::threshold(&CompactionEdit::new()),
        CompactionThreshold::Ratio(0.9)
    );
}

#[tokio::test]
async fn edit_with_zero_kept_clears_every_result_and_recompaction_is_stable() {
    let messages = tool_conversation(3);
    let strategy = CompactionEdit::new().keep_tool_uses(0);
    let once = compact(&strategy, &messages).await.input;
    assert!((0..3).all(|i| tool_text(&once, &format!("c{i}")).unwrap() == TOOL_RESULT_REMOVED));
    // Clearing again changes nothing, ids included.
    let twice = compact(&strategy, &once).await.input;
    assert_eq!(once, twice);
}

#[tokio::test]
async fn edit_honours_exclusions() {
    let mut messages = vec![ChatMessage::system("sys"), input("Read and list.")];
    for i in 0..4 {
        let (r, l) = (format!("r{i}"), format!("l{i}"));
        messages.push(calls("", &[(&r, "read")]));
        messages.push(result(&r, "read", &format!("file {i}")));
        messages.push(calls("", &[(&l, "ls")]));
        messages.push(result(&l, "ls", &format!("listing {i}")));
    }
    let strategy = CompactionEdit::new()
        .keep_tool_uses(1)
        .exclude_tools(["read"]);
    let input = compact(&strategy, &messages).await.input;
    assert_paired(&input);
    for i in 0..4 {
        // Excluded results are never cleared, nor counted against the budget.
        assert_eq!(
            tool_text(&input, &format!("r{i}")).unwrap(),
            format!("file {i}")
        );
    }
    for i in 0..3 {
        assert_eq!(
            tool_text(&input, &format!("l{i}")).unwrap(),
            TOOL_RESULT_REMOVED
        );
    }
    assert_eq!(tool_text(&input, "l3").unwrap(), "listing 3");
}

#[tokio::test]
async fn edit_drops_reasoning_from_older_assistant_messages() {
    let mut messages = vec![input("Think.")];
    for i in 0..3 {
        let id = format!("c{i}");
        messages.push(calls(
            vec![
                Content::reasoning(format!("thought {i}")),
                Content::text(format!("step {i}")),
            ],
            &[(&id, "ls")],
        ));
        messages.push(result(&id, "ls", "ok"));
    }
    let input = compact(&CompactionEdit::new().keep_tool_uses(10), &messages)
        .await
        .input;
    assert_paired(&input);
    let assistants: Vec<_> = input.iter().filter_map(|m| m.as_assistant()).collect();
    assert_eq!(assistants.len(), 3);
    for (i, a) in assistants.iter().enumerate() {
        let MessageContent::Parts(parts) = &a.content else {
            panic!("parts expected")
        };
        let reasoning = parts.iter().any(Content::is_reasoning);
        assert_eq!(reasoning, i == 2, "turn {i}: {parts:?}");
        assert_eq!(a.content.text(), format!("step {i}"));
        assert_eq!(a.calls().len(), 1);
    }
    // More turns kept, or all.
    let input = compact(&CompactionEdit::new().keep_thinking_turns(2), &messages)
        .await
        .input;
    let with_reasoning = input
        .iter()
        .filter_map(|m| m.as_assistant())
        .filter(|a| matches!(&a.content, MessageContent::Parts(p) if p.iter().any(Content::is_reasoning)))
        .count();
    assert_eq!(with_reasoning, 2);
    let input = compact(&CompactionEdit::new().keep_all_thinking(), &messages)
        .await
        .input;
    assert_eq!(
        input
            .iter()
            .filter_map(|m| m.as_assistant())
            .filter(|a| matches!(&a.content, MessageContent::Parts(p) if p.iter().any(Content::is_reasoning)))
            .count(),
        3
    );
}

#[tokio::test]
async fn edit_keeps_parallel_calls_paired() {
    let messages = vec![
        input("Go."),
        calls("", &[("a", "ls"), ("b", "ls")]),
        result("a", "ls", "A"),
        result("b", "ls", "B"),
        calls("", &[("c", "ls"), ("d", "ls")]),
        result("c", "ls", "C"),
        result("d", "ls", "D"),
    ];
    let input = compact(&CompactionEdit::new().keep_tool_uses(3), &messages)
        .await
        .input;
    assert_paired(&input);
    assert_eq!(tool_text(&input, "a").unwrap(), TOOL_RESULT_REMOVED);
    assert_eq!(tool_text(&input, "b").unwrap(), "B");

    let input = compact(
        &CompactionEdit::new()
            .keep_tool_uses(1)
            .keep_tool_inputs(false),
        &messages,
    )
    .await
    .input;
    assert_paired(&input);
    assert_eq!(roles(&input).len(), 4, "{:#?}", roles(&input));
    // The first assistant lost both calls, the second one of them.
    let first = input[1].as_assistant().unwrap();
    assert!(first.tool_calls.is_none());
    assert_eq!(
        first.content.text(),
        "[Tool call: ls (parameters and results removed from history)]\
         [Tool call: ls (parameters and results removed from history)]"
    );
    let second = input[2].as_assistant().unwrap();
    assert_eq!(second.calls().len(), 1);
    assert_eq!(second.calls()[0].id, "d");
    assert_eq!(tool_text(&input, "d").unwrap(), "D");
}

#[tokio::test]
async fn edit_clears_memory_content_and_drops_a_trailing_assistant() {
    let mut memory_call = ChatMessageAssistant::new("saving");
    memory_call.tool_calls = Some(vec![ToolCall::new(
        "m1",
        "memory",
        json!({"command": "create", "path": "/memories/notes.md", "file_text": "long notes"}),
    )]);
    let messages = vec![
        input("Work."),
        ChatMessage::Assistant(Box::new(memory_call)),
        result("m1", "memory", "saved"),
        ChatMessage::assistant("thinking aloud"),
    ];
    let input = compact(&CompactionEdit::new(), &messages).await.input;
    assert_eq!(input.len(), 3);
    let args = input[1].as_assistant().unwrap().calls()[0]
        .arguments
        .to_map()
        .unwrap();
    assert_eq!(args["file_text"], "(content saved to memory)");
    assert_eq!(args["path"], "/memories/notes.md");
    // Without memory integration the arguments stay.
    let input = compact(&CompactionEdit::new().memory(false), &messages)
        .await
        .input;
    assert_eq!(
        input[1].as_assistant().unwrap().calls()[0]
            .arguments
            .to_map()
            .unwrap()["file_text"],
        "long notes"
    );
}

// ---------------------------------------------------------------------------------------------
// CompactionTrim

#[tokio::test]
async fn trim_keeps_the_newest_share_and_the_prefix() {
    let messages = tool_conversation(5); // 2 prefix + 10 conversation messages
    let strategy = CompactionTrim::new().preserve(0.5);
    assert_eq!(strategy.name(), "trim");
    let out = compact(&strategy, &messages).await;
    assert!(out.message.is_none());
    let input = out.input;
    assert_eq!(input[0], messages[0]);
    assert_eq!(input[1], messages[1]);
    assert_paired(&input);
    // The newest 5 of 10 start at a tool result whose call is gone: it goes too.
    assert_eq!(&input[2..], &messages[8..]);
    assert_eq!(
        roles(&input[2..]),
        [
            "assistant: step 3",
            "tool: listing 3",
            "assistant: step 4",
            "tool: listing 4"
        ]
    );
}

#[tokio::test]
async fn trim_keeps_eighty_percent_by_default_and_never_orphans_calls() {
    let mut messages = vec![input("Go.")];
    for i in 0..5 {
        let (a, b) = (format!("a{i}"), format!("b{i}"));
        messages.push(calls("", &[(&a, "ls"), (&b, "ls")]));
        messages.push(result(&a, "ls", "A"));
        messages.push(result(&b, "ls", "B"));
    }
    // 15 conversation messages: the newest 80% (12) start at result b0.
    let input = compact(&CompactionTrim::new(), &messages).await.input;
    assert_paired(&input);
    assert_eq!(input[0], messages[0]);
    assert_eq!(&input[1..], &messages[4..]);
    // At a cut between two results of one call list, the orphan call is dropped too.
    let input = compact(&CompactionTrim::new().preserve(13.0 / 15.0), &messages)
        .await
        .input;
    assert_paired(&input);
    assert!(tool_text(&input, "b0").is_none());
    assert!(tool_text(&input, "a1").is_some());
}

// ---------------------------------------------------------------------------------------------
// CompactionSummary

#[tokio::test]
async fn summary_asks_the_model_with_the_summary_prompt() {
    let model =
        TestModel::answering("<analysis>scratch</analysis>\n\n<summary>Did 3 steps.</summary>");
    let messages = tool_conversation(3);
    let strategy = CompactionSummary::new();
    assert_eq!(strategy.name(), "summary");
    let out = strategy
        .compact(&model, &messages, &[], &RunContext::new())
        .await
        .unwrap();

    // The model saw everything, then the prompt, and no tools.
    let seen = model.inputs();
    assert_eq!(seen.len(), 1);
    assert_eq!(&seen[0][..messages.len()], &messages[..]);
    let prompt = seen[0].last().unwrap();
    assert_eq!(prompt.role(), "user");
    assert_eq!(prompt.text(), default_prompt());
    assert!(prompt.text().starts_with(
        "\nYou are a helpful AI assistant tasked with summarizing conversations.\n\nYour task is to create a detailed summary"
    ));
    assert!(DEFAULT_SUMMARY_PROMPT.ends_with(
        "Any additional summarization instructions for you follow below.\n\n{addendums}\n"
    ));
    assert_eq!(DEFAULT_SUMMARY_PROMPT.chars().count(), 6093);
    assert!(model.tools.lock().unwrap()[0].is_empty());

    // The input is the prefix and the summary; the summary is also the message to keep.
    let summary = out.message.unwrap();
    assert_eq!(out.input.len(), 3);
    assert_eq!(out.input[0], messages[0]);
    assert_eq!(out.input[1], messages[1]);
    assert_eq!(out.input[2], summary);
    assert!(is_summary_message(&summary));
    assert_eq!(summary.metadata().unwrap()["summary"], Value::Bool(true));
    assert_eq!(summary.role(), "user");
    assert_eq!(
        summary.text(),
        "[CONTEXT COMPACTION SUMMARY]\n\nThe following is a summary of work completed on this \
         task so far. It was generated by the compaction process to replace the earlier \
         conversation; it is not a message from the user:\n\n<summary>Did 3 steps.</summary>\n\n\
         Please continue working on this task from where you left off."
    );
}

#[tokio::test]
async fn summary_builds_on_the_previous_summary() {
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    let model = TestModel::new(move |_, _| {
        let n = c.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(ModelOutput::from_content("test", format!("summary #{n}")))
    });
    let strategy = CompactionSummary::new();
    let mut history = tool_conversation(2);
    let first = strategy
        .compact(&model, &history, &[], &RunContext::new())
        .await
        .unwrap();
    let first_summary = first.message.unwrap();

    // The conversation goes on from the compacted input.
    let mut next = first.input.clone();
    next.push(calls("step 9", &[("c9", "ls")]));
    next.push(result("c9", "ls", "listing 9"));
    history.push(first_summary.clone());
    let second = strategy
        .compact(&model, &next, &[], &RunContext::new())
        .await
        .unwrap();

    let seen = model.inputs();
    assert_eq!(seen.len(), 2);
    // The second summarization covers the first summary plus what came after it.
    assert_eq!(
        roles(&seen[1][..seen[1].len() - 1]),
        roles(&[
            history[0].clone(),
            history[1].clone(),
            first_summary.clone(),
            next[3].clone(),
            next[4].clone(),
        ])
    );
    assert!(seen[1][2].text().contains("summary #1"));
    assert_eq!(seen[1].last().unwrap().text(), default_prompt());
    let second_summary = second.message.unwrap();
    assert!(second_summary.text().contains("summary #2"));
    assert_eq!(second.input.len(), 3);
    assert_eq!(second.input[2], second_summary);

    // Given the whole history, only the latest summary and what follows are summarized.
    let mut full = history.clone();
    full.push(next[3].clone());
    full.push(next[4].clone());
    strategy
        .compact(&model, &full, &[], &RunContext::new())
        .await
        .unwrap();
    let third = &model.inputs()[2];
    assert_eq!(third.len(), 6);
    assert!(!third.iter().any(|m| m.text() == "listing 0"));
    assert_eq!(third[2], first_summary);
}

#[tokio::test]
async fn summary_model_errors_are_agent_errors() {
    let failing = TestModel::new(|_, _| {
        Err(ModelError::Provider {
            message: "overloaded".into(),
            retryable: true,
        })
    });
    let err = CompactionSummary::new()
        .compact(&failing, &tool_conversation(2), &[], &RunContext::new())
        .await
        .unwrap_err();
    assert!(matches!(err.kind, AgentErrorKind::Model(_)), "{err:?}");

    let overflowing = TestModel::new(|_, _| {
        Ok(ModelOutput::from_content("test", "partial").with_stop_reason(StopReason::ModelLength))
    });
    let err = CompactionSummary::new()
        .compact(&overflowing, &tool_conversation(2), &[], &RunContext::new())
        .await
        .unwrap_err();
    assert!(matches!(err.kind, AgentErrorKind::Failed(_)), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("Compaction summary generation exceeded the model's context window"),
        "{err}"
    );

    // A scripted model that ran out is an error too, never a panic.
    let err = CompactionSummary::new()
        .compact(
            &ScriptedModel::new([]),
            &tool_conversation(1),
            &[],
            &RunContext::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err.kind, AgentErrorKind::Model(_)));
}

#[tokio::test]
async fn summary_uses_its_own_model_instructions_and_memory_addendum() {
    let run_model = TestModel::answering("from the run's model");
    let summarizer = Arc::new(TestModel::answering("from the summarizer"));
    let strategy = CompactionSummary::new()
        .model(summarizer.clone())
        .instructions("Keep file names.");
    let mut messages = tool_conversation(1);
    messages.push(calls("", &[("m", "memory")]));
    messages.push(result("m", "memory", "saved"));
    let out = strategy
        .compact(&run_model, &messages, &[], &RunContext::new())
        .await
        .unwrap();
    assert!(run_model.inputs().is_empty());
    assert!(out.message.unwrap().text().contains("from the summarizer"));
    let prompt = summarizer.inputs()[0].last().unwrap().text();
    assert_eq!(
        prompt,
        DEFAULT_SUMMARY_PROMPT.replace(
            "{addendums}",
            &format!("Keep file names.\n\n{MEMORY_SUMMARY_ADDENDUM}")
        )
    );

    // A custom prompt without the analysis block keeps the answer verbatim.
    let verbatim = "<analysis>a</analysis><summary>s</summary>";
    let model = TestModel::answering(verbatim);
    let out = CompactionSummary::new()
        .prompt("Summarize. {addendums}")
        .memory(false)
        .compact(&model, &messages, &[], &RunContext::new())
        .await
        .unwrap();
    assert_eq!(model.inputs()[0].last().unwrap().text(), "Summarize. ");
    assert!(out.message.unwrap().text().contains(verbatim));
}

#[tokio::test]
async fn summary_strips_only_a_real_analysis_block() {
    let cases = [
        // The analysis before the summary goes.
        (
            "<analysis>x</analysis>\n<summary>S</summary>",
            "<summary>S</summary>",
        ),
        // No summary after it: kept.
        ("<analysis>x</analysis> done", "<analysis>x</analysis> done"),
        // An analysis quoted inside the summary: kept.
        (
            "<summary>the file has <analysis>x</analysis><summary>y</summary></summary>",
            "<summary>the file has <analysis>x</analysis><summary>y</summary></summary>",
        ),
        // Nothing but analysis: kept.
        ("<analysis>x</analysis>", "<analysis>x</analysis>"),
    ];
    for (answer, expected) in cases {
        let model = TestModel::answering(answer);
        let out = CompactionSummary::new()
            .compact(&model, &tool_conversation(1), &[], &RunContext::new())
            .await
            .unwrap();
        let text = out.message.unwrap().text();
        assert!(
            text.contains(&format!("user:\n\n{expected}\n\nPlease continue")),
            "{answer:?} gave {text:?}"
        );
    }
}

#[tokio::test]
async fn summary_truncates_long_tool_output_to_fit_the_window() {
    let model = TestModel::answering("short").window(2_000);
    let mut messages = tool_conversation(1);
    let long = format!("HEAD{}TAIL", "x".repeat(40_000));
    messages.push(calls("", &[("big", "cat")]));
    messages.push(result("big", "cat", &long));
    CompactionSummary::new()
        .compact(&model, &messages, &[], &RunContext::new())
        .await
        .unwrap();
    let seen = &model.inputs()[0];
    let shown = tool_text(seen, "big").unwrap();
    assert!(shown.len() < long.len() / 4, "{}", shown.len());
    assert!(shown.starts_with("HEAD"));
    assert!(shown.ends_with("TAIL"));
    assert!(shown.contains("\n\n...[tool output truncated for summarization]...\n\n"));
    // Only what the summarizer sees changes.
    assert_eq!(tool_text(&messages, "big").unwrap(), long);
    assert_eq!(tool_text(seen, "c0").unwrap(), "listing 0");
}

// ---------------------------------------------------------------------------------------------
// Through the Compactor

#[tokio::test]
async fn compactor_changes_only_the_input() {
    let model = TestModel::answering("the story so far");
    let strategy =
        Arc::new(CompactionSummary::new().with_threshold(CompactionThreshold::Tokens(120)));
    let log = EventLog::new();
    let cx = RunContext::with_events(log.clone());
    let mut history = vec![ChatMessage::system("sys"), input("Task.")];
    let mut compactor = Compactor::new(strategy, &history);

    // Under the threshold: the input is the history.
    history.push(calls("", &[("c0", "ls")]));
    history.push(result("c0", "ls", "short"));
    let (seen, message) = compactor
        .compact_input(&model, &history, &[], false, &cx)
        .await
        .unwrap();
    assert_eq!(seen, history);
    assert!(message.is_none());
    assert!(model.inputs().is_empty());

    // Over it: the input is compacted, the summary appended to the history.
    for i in 1..6 {
        let id = format!("c{i}");
        history.push(calls("", &[(&id, "ls")]));
        history.push(result(&id, "ls", &"y".repeat(100)));
    }
    let before = history.clone();
    let (seen, message) = compactor
        .compact_input(&model, &history, &[], false, &cx)
        .await
        .unwrap();
    assert_eq!(history, before);
    let summary = message.unwrap();
    history.push(summary.clone());
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[..2], history[..2]);
    assert_eq!(seen[2], summary);
    assert_eq!(model.inputs().len(), 1);
    let events: Vec<_> = log
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Compaction(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].strategy, "summary");
    assert_eq!(events[0].trigger, "threshold");
    assert_eq!(events[0].messages_before, 14);
    assert_eq!(events[0].messages_after, 3);
    assert!(events[0].tokens_after < events[0].tokens_before);

    // Later turns build on the compacted view; the history keeps everything.
    history.push(calls("", &[("c9", "ls")]));
    history.push(result("c9", "ls", "short"));
    let (seen, _) = compactor
        .compact_input(&model, &history, &[], false, &cx)
        .await
        .unwrap();
    assert_eq!(seen.len(), 5);
    assert_eq!(seen[2], summary);
    assert_eq!(seen[3..], history[history.len() - 2..]);
    assert_eq!(history.len(), 17);
    assert!((0..6).all(|i| tool_text(&history, &format!("c{i}")).is_some()));
}

#[tokio::test]
async fn compactor_with_edit_and_trim_keeps_the_prefix_and_pairs() {
    let model = TestModel::answering("unused");
    let cx = RunContext::new();
    let mut history = tool_conversation(8);
    for m in &mut history {
        if let ChatMessage::Tool(t) = m {
            t.content = MessageContent::Text("z".repeat(200).into());
        }
    }
    for strategy in [
        Arc::new(CompactionEdit::new().with_threshold(CompactionThreshold::Tokens(50)))
            as Arc<dyn CompactionStrategy>,
        Arc::new(
            CompactionTrim::new()
                .preserve(0.3)
                .with_threshold(CompactionThreshold::Tokens(50)),
        ),
    ] {
        let mut compactor = Compactor::new(strategy.clone(), &history);
        let (seen, message) = compactor
            .compact_input(&model, &history, &[], false, &cx)
            .await
            .unwrap();
        assert!(message.is_none());
        assert_eq!(seen[..2], history[..2], "{}", strategy.name());
        assert_paired(&seen);
        assert!(model.count_tokens(&seen) < model.count_tokens(&history));
    }
    assert!(model.inputs().is_empty());
}

#[tokio::test]
async fn ratio_thresholds_use_the_context_window() {
    let cx = RunContext::new();
    let history = tool_conversation(8);
    let tokens = TestModel::answering("").count_tokens(&history);
    // Over 90% of a small window: compacted.
    let model = TestModel::answering("s").window(tokens);
    let mut compactor = Compactor::new(Arc::new(CompactionTrim::new()), &history);
    let (seen, _) = compactor
        .compact_input(&model, &history, &[], false, &cx)
        .await
        .unwrap();
    assert!(seen.len() < history.len());
    // Under it: untouched.
    let model = TestModel::answering("s").window(tokens * 2);
    let mut compactor = Compactor::new(Arc::new(CompactionTrim::new()), &history);
    let (seen, _) = compactor
        .compact_input(&model, &history, &[], false, &cx)
        .await
        .unwrap();
    assert_eq!(seen, history);
}

// ---------------------------------------------------------------------------------------------
// End to end through react()

fn ls_tool() -> ToolDef {
    ToolDef::builder("ls")
        .description("List a directory.")
        .parameters(
            ToolParams::from_value(&json!({
                "properties": {"path": {"type": "string", "description": "The directory."}},
                "required": ["path"]
            }))
            .unwrap(),
        )
        .handler(|mut args: ToolArgs, _cx: ToolContext| async move {
            let path: String = args.required("path")?;
            Ok::<_, ToolFailure>(format!("{path}: {}", "entry ".repeat(40)))
        })
        .build()
        .unwrap()
}

/// A model calling `ls` for `turns` turns, then submitting; it records what it is shown (and
/// writes a summary when asked for one).
fn lister(turns: usize, seen: Arc<Mutex<Vec<Vec<ChatMessage>>>>) -> FunctionModel {
    let turn = AtomicUsize::new(0);
    FunctionModel::new("lister", move |input, _tools| {
        if input.last().is_some_and(|m| m.text() == default_prompt()) {
            return Ok(ModelOutput::from_content(
                "lister",
                "Listed some directories.",
            ));
        }
        seen.lock().unwrap().push(input.to_vec());
        let n = turn.fetch_add(1, Ordering::SeqCst);
        Ok(if n < turns {
            ModelOutput::for_tool_calls(
                "lister",
                format!("turn {n}"),
                vec![ToolCall::new(
                    format!("ls_{n}"),
                    "ls",
                    json!({"path": format!("/d{n}")}),
                )],
            )
        } else {
            ModelOutput::for_tool_calls(
                "lister",
                "",
                vec![ToolCall::new("done", "submit", json!({"answer": "listed"}))],
            )
        })
    })
}

#[tokio::test]
async fn react_with_trim_shows_fewer_messages_and_keeps_the_history() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = react()
        .model(Arc::new(lister(8, seen.clone())))
        .compaction(Arc::new(
            CompactionTrim::new()
                .preserve(0.5)
                .with_threshold(CompactionThreshold::Tokens(400)),
        ))
        .tools([ls_tool()])
        .build()
        .unwrap();
    let out = run(&agent, "List the directories.", &[]).await.unwrap();
    assert_eq!(out.state.output().completion(), "listed");

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 9);
    let history = &out.state.messages;
    // The history keeps every turn: system, input, 8 × (call, result), the final turn.
    assert!((0..8).all(|n| tool_text(history, &format!("ls_{n}")).is_some()));
    assert_eq!(history.len(), 2 + 16 + 1);
    assert_paired(history);
    // What the model saw shrank once compaction started, yet always began with the system
    // message and the task, and kept calls and results paired.
    let last = seen.last().unwrap();
    assert!(last.len() < 2 + 16, "{}", last.len());
    assert!(seen.windows(2).any(|w| w[1].len() < w[0].len()));
    for input in &seen {
        assert_eq!(input[0].role(), "system");
        assert_eq!(input[1].text(), "List the directories.");
        assert_paired(input);
    }
    assert!(tool_text(last, "ls_0").is_none());
    assert!(tool_text(last, "ls_7").is_some());
}

#[tokio::test]
async fn react_with_summary_appends_summaries_to_the_history() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = react()
        .model(Arc::new(lister(8, seen.clone())))
        .compaction(Arc::new(
            CompactionSummary::new().with_threshold(CompactionThreshold::Tokens(400)),
        ))
        .tools([ls_tool()])
        .build()
        .unwrap();
    let out = run(&agent, "List the directories.", &[]).await.unwrap();
    assert_eq!(out.state.output().completion(), "listed");

    let history = &out.state.messages;
    let summaries = history.iter().filter(|m| is_summary_message(m)).count();
    assert!(summaries >= 1, "{:#?}", roles(history));
    assert!((0..8).all(|n| tool_text(history, &format!("ls_{n}")).is_some()));
    assert_eq!(history.len(), 2 + 16 + 1 + summaries);

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 9);
    let last = seen.last().unwrap();
    assert!(last.len() < history.len() - 1, "{}", last.len());
    for input in &seen {
        assert_eq!(input[0].role(), "system");
        assert_eq!(input[1].text(), "List the directories.");
        assert_paired(input);
    }
    // After a compaction the model sees the task, then the latest summary.
    let compacted = seen
        .iter()
        .filter(|i| i.get(2).is_some_and(is_summary_message))
        .count();
    assert!(compacted >= 1);
    assert!(last.iter().filter(|m| is_summary_message(m)).count() <= 1);
}
