//! The console transcript of a scripted run, as text: what a person watching a run reads.

use std::io::Write;
use std::sync::{Arc, Mutex};

use actuator_events::{
    ConsoleTranscript, Event, EventSink, InfoEvent, LimitEvent, ModelEvent, ModelRetryEvent,
    SharedMessages, SpanBeginEvent, SpanEndEvent, ToolEvent,
};
use actuator_model::{
    ChatMessage, ChatMessageAssistant, GenerateConfig, ModelOutput, StopReason, ToolCall,
    ToolCallError,
};
use actuator_tool_core::{Content, ToolChoice, ToolErrorKind};
use serde_json::json;

/// A writer a test reads back.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().map(|v| v.clone()).unwrap_or_default()).unwrap_or_default()
    }
}

fn generation(input: &[ChatMessage], output: ModelOutput) -> Event {
    Event::Model(Box::new(ModelEvent {
        model: "openai/gpt-4.1-mini".into(),
        input: SharedMessages::from(input),
        tools: Arc::from(Vec::new()),
        tool_choice: ToolChoice::Auto,
        config: GenerateConfig::default(),
        output: Some(Arc::new(output)),
        error: None,
        started_at: 0.0,
        completed_at: 1.0,
        working_time: 1.0,
        retries: 0,
        generation: None,
    }))
}

fn result(function: &str, text: &str) -> Event {
    let mut event = ToolEvent::pending("call_1", function, json!({}), 0.0);
    event.pending = None;
    event.completed_at = Some(1.0);
    event.result = text.into();
    Event::Tool(Box::new(event))
}

fn failure(function: &str, kind: ToolErrorKind, message: &str) -> Event {
    let mut event = ToolEvent::pending("call_2", function, json!({}), 0.0);
    event.pending = None;
    event.error = Some(ToolCallError {
        kind,
        message: message.into(),
    });
    Event::Tool(Box::new(event))
}

fn span(id: &str, name: &str) -> Event {
    Event::SpanBegin(Box::new(SpanBeginEvent {
        id: id.into(),
        parent_id: None,
        kind: "agent".into(),
        name: name.into(),
        tool_call_id: None,
    }))
}

fn end(id: &str) -> Event {
    Event::SpanEnd(SpanEndEvent { id: id.into() })
}

/// A run: a user's question, a call and its result, a failed call, a retry, a sub-agent, a
/// note, and the turn limit.
fn scripted_run() -> Vec<Event> {
    let input = [
        ChatMessage::system("You are a careful calculator."),
        ChatMessage::user("What is (3 + 4) / 0?"),
    ];
    let add = ToolCall::new("call_1", "add", json!({"x": 3, "y": 4}));
    let divide = ToolCall::new("call_2", "divide", json!({"x": 7, "y": 0}));
    vec![
        span("s1", "calculator"),
        generation(
            &input,
            ModelOutput::for_tool_calls("m", "I'll add first.", vec![add]),
        ),
        Event::ToolPending(actuator_events::PendingToolEvent::new(
            "call_1",
            "add",
            json!({}),
            0.0,
        )),
        result("add", "7"),
        Event::ModelRetry(ModelRetryEvent::new(
            "openai/gpt-4.1-mini",
            1,
            2.08,
            "connection refused",
        )),
        generation(&input, ModelOutput::for_tool_calls("m", "", vec![divide])),
        failure(
            "divide",
            ToolErrorKind::Unknown,
            "division by zero\nthe divisor was 0",
        ),
        span("s2", "checker"),
        generation(
            &[ChatMessage::user("Is 7 / 0 defined?")],
            ModelOutput::from_content("m", "No."),
        ),
        end("s2"),
        Event::Info(InfoEvent {
            source: Some("react".into()),
            message: "the model did not call a tool; asked it to continue".into(),
        }),
        Event::Limit(LimitEvent {
            kind: "turn".into(),
            message: "Turn limit exceeded. count: 4; limit: 3".into(),
            limit: 3.0,
        }),
        end("s1"),
    ]
}

const GOLDEN: &str = " user What is (3 + 4) / 0?
calculator I'll add first.
 call add(x=3, y=4)
 tool add → 7
retry openai/gpt-4.1-mini: connection refused; retrying in 2.1 s (attempt 2)
calculator
 call divide(x=7, y=0)
 tool divide failed (unknown): division by zero
      the divisor was 0
     user Is 7 / 0 defined?
    checker No.
 info react: the model did not call a tool; asked it to continue
limit Turn limit exceeded. count: 4; limit: 3
";

#[test]
fn a_scripted_run_reads_as_a_transcript() {
    let out = Captured::default();
    let transcript = ConsoleTranscript::to_writer(out.clone());
    for event in scripted_run() {
        transcript.emit(event);
    }
    assert_eq!(out.text(), GOLDEN, "\n{}", out.text());
}

#[test]
fn input_printed_before_the_run_is_not_repeated() {
    let out = Captured::default();
    let transcript = ConsoleTranscript::to_writer(out.clone());
    transcript.user("What is (3 + 4) / 0?");
    for event in scripted_run().into_iter().take(2) {
        transcript.emit(event);
    }
    assert_eq!(
        out.text(),
        " user What is (3 + 4) / 0?\ncalculator I'll add first.\n call add(x=3, y=4)\n"
    );
    // Off altogether: the model's turn alone.
    let out = Captured::default();
    let transcript = ConsoleTranscript::to_writer(out.clone()).show_input(false);
    for event in scripted_run().into_iter().take(2) {
        transcript.emit(event);
    }
    assert!(
        out.text().starts_with("calculator I'll add first."),
        "{}",
        out.text()
    );
}

#[test]
fn long_outputs_are_cut_with_a_count_of_what_is_left() {
    let out = Captured::default();
    let transcript = ConsoleTranscript::to_writer(out.clone())
        .max_lines(3)
        .max_chars(1_000);
    let listing: Vec<String> = (1..=10).map(|i| format!("line {i}")).collect();
    transcript.emit(result("bash", &listing.join("\n")));
    assert_eq!(
        out.text(),
        " tool bash → line 1\n      line 2\n      line 3\n      … (7 more lines)\n"
    );

    let out = Captured::default();
    let transcript = ConsoleTranscript::to_writer(out.clone()).max_chars(10);
    transcript.emit(result("cat", &"x".repeat(25)));
    assert_eq!(
        out.text(),
        " tool cat → xxxxxxxxxx…\n      … (15 more characters)\n"
    );
}

#[test]
fn no_colour_unless_asked_and_colour_when_asked() {
    let out = Captured::default();
    let transcript = ConsoleTranscript::to_writer(out.clone());
    assert!(!transcript.is_colored());
    for event in scripted_run() {
        transcript.emit(event);
    }
    assert!(!out.text().contains('\x1b'), "{}", out.text());
    assert_eq!(transcript.paint("1;32", "answer:"), "answer:");

    let out = Captured::default();
    let transcript = ConsoleTranscript::to_writer(out.clone()).color(true);
    transcript.emit(result("add", "7"));
    assert_eq!(out.text(), "\x1b[32m tool\x1b[0m add → 7\n");
}

#[test]
fn reasoning_and_model_errors_are_shown() {
    let out = Captured::default();
    let transcript = ConsoleTranscript::to_writer(out.clone())
        .reasoning(true)
        .show_input(false);
    let message =
        ChatMessageAssistant::new(vec![Content::reasoning("3 + 4 is 7."), Content::text("7")]);
    transcript.emit(generation(
        &[],
        ModelOutput::from_message("m", message, StopReason::Stop),
    ));
    let Event::Model(mut failed) = generation(&[], ModelOutput::from_content("m", "")) else {
        unreachable!()
    };
    failed.output = None;
    failed.error = Some("HTTP 503: the server is overloaded".into());
    transcript.emit(Event::Model(failed));
    assert_eq!(
        out.text(),
        "think 3 + 4 is 7.\nmodel 7\nerror openai/gpt-4.1-mini: HTTP 503: the server is overloaded\n"
    );
}

/// A reader that went away: writes fail with a broken pipe.
struct Closed;

impl Write for Closed {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_closed_output_is_no_error() {
    let transcript = ConsoleTranscript::to_writer(Closed);
    for event in scripted_run() {
        transcript.emit(event);
    }
    transcript.user("still fine");
}

#[test]
fn the_transcript_is_shared_across_threads() {
    fn shared<T: EventSink + Send + Sync + 'static>() {}
    shared::<ConsoleTranscript>();
    let sink: Arc<dyn EventSink> = Arc::new(ConsoleTranscript::to_writer(std::io::sink()));
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for event in scripted_run() {
                    sink.emit(event);
                }
            });
        }
    });
}

#[test]
fn a_review_decision_is_a_line_with_its_reviewer_and_reason() {
    use actuator_events::{ReviewDecision, ReviewEvent};
    let out = Captured::default();
    let transcript = ConsoleTranscript::to_writer(out.clone());
    let mut stop = ReviewEvent::new(
        "c1",
        "bash",
        json!({}),
        "monitor",
        ReviewDecision::Terminate,
    );
    stop.explanation = Some("a private key".into());
    transcript.emit(Event::Review(Box::new(ReviewEvent::new(
        "c0",
        "bash",
        json!({}),
        "monitor",
        ReviewDecision::Continue,
    ))));
    transcript.emit(Event::Review(Box::new(stop)));
    assert_eq!(
        out.text(),
        "review monitor on bash: continue\nreview monitor on bash: terminate (a private key)\n"
    );
}

#[test]
fn a_score_is_a_line_with_its_scorer_value_and_explanation() {
    use actuator_events::{Score, ScoreEvent};
    let out = Captured::default();
    let transcript = ConsoleTranscript::to_writer(out.clone());
    transcript.emit(Event::Score(Box::new(ScoreEvent::new(
        "match",
        Score::new("C").with_explanation("191.5 m"),
    ))));
    transcript.emit(Event::Score(Box::new(ScoreEvent::new(
        "accuracy",
        Score::new(0.5),
    ))));
    assert_eq!(
        out.text(),
        " score match: C (191.5 m)\n score accuracy: 0.5\n"
    );
}
