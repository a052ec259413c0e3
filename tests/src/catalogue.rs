//! The catalogue: one `#[tool]` per shape.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actuator_tool_core::{Content, ToolDef, ToolError, ToolFailure};
use actuator_tool_macros::tool;
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::Value;

use crate::types::{Event, Expr, Key, Mode, NewUser, RenameOptions, SearchArgs, Shape, Stats};

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `y` - Second addend.
#[tool]
pub async fn add(x: i64, y: i64) -> i64 {
    x + y
}

/// Shift a byte, saturating at its bounds.
///
/// # Arguments
/// * `value` - The byte to shift.
/// * `shift` - How far to shift it; negative shifts go down.
#[tool]
pub async fn shift_byte(value: u8, shift: i8) -> u8 {
    if shift >= 0 {
        value.saturating_add(shift.unsigned_abs())
    } else {
        value.saturating_sub(shift.unsigned_abs())
    }
}

/// Describe a range of integers of different widths.
///
/// # Arguments
/// - times: How many times to repeat.
/// - total: The total budget.
/// - offset: Where to start, may be negative.
/// - index: An index into a list.
#[tool]
pub async fn integer_widths(times: u16, total: u64, offset: i32, index: usize) -> String {
    format!("{times}:{total}:{offset}:{index}")
}

/// Scale a value by a factor.
///
/// # Arguments
/// * `value` - The value to scale.
/// * `factor` - The factor (single precision).
#[tool]
pub async fn scale(value: f64, factor: f32) -> f64 {
    value * f64::from(factor)
}

/// Flip a boolean.
///
/// # Arguments
/// * `flag` - The value to flip.
#[tool]
pub async fn toggle(flag: bool) -> bool {
    !flag
}

/// Echo a text back.
///
/// # Arguments
/// * `text` - The text to echo.
#[tool]
pub async fn echo(text: String) -> String {
    text
}

/// Greet someone, optionally by name.
///
/// # Arguments
/// * `name` - Who to greet; greets the world when absent.
/// * `times` - How many greetings, one when absent.
#[tool]
pub async fn greet(name: Option<String>, times: Option<u8>) -> String {
    let name = name.unwrap_or_else(|| "world".to_owned());
    vec![format!("Hello, {name}!"); usize::from(times.unwrap_or(1))].join(" ")
}

/// Sum a list of numbers.
///
/// # Arguments
/// * `values` - The numbers to add up.
#[tool]
pub async fn sum(values: Vec<f64>) -> f64 {
    values.iter().sum()
}

/// Total the counts of a word histogram.
///
/// # Arguments
/// * `counts` - Word → number of occurrences.
#[tool]
pub async fn total_counts(counts: HashMap<String, u32>) -> u64 {
    counts.values().map(|&c| u64::from(c)).sum()
}

/// Render environment variables as `KEY=value` lines, sorted by key.
///
/// # Arguments
/// * `vars` - Variable name → value.
#[tool]
pub async fn render_env(vars: BTreeMap<String, String>) -> String {
    vars.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Euclidean distance between two points.
///
/// # Arguments
/// * `from` - The start point as `[x, y]`.
/// * `to` - The end point as `[x, y]`.
#[tool]
pub async fn distance(from: (f64, f64), to: (f64, f64)) -> f64 {
    ((to.0 - from.0).powi(2) + (to.1 - from.1).powi(2)).sqrt()
}

/// Set the matching mode.
///
/// # Arguments
/// * `mode` - The matching strategy.
#[tool]
pub async fn set_mode(mode: Mode) -> String {
    format!("mode set to {mode:?}")
}

/// Compute the area of a shape.
///
/// # Arguments
/// * `shape` - The shape to measure.
#[tool]
pub async fn area(shape: Shape) -> f64 {
    match shape {
        Shape::Circle { radius } => std::f64::consts::PI * radius * radius,
        Shape::Square { side } => side * side,
        Shape::Point => 0.0,
    }
}

/// Send a user-interface event.
///
/// # Arguments
/// * `event` - The event to send.
#[tool]
pub async fn send_event(event: Event) -> String {
    match event {
        Event::Click { x, y } => format!("click at {x},{y}"),
        Event::Key { key } => format!("key {key}"),
    }
}

/// Look up a record by id or by name.
///
/// # Arguments
/// * `key` - A numeric id or a name.
#[tool]
pub async fn lookup(key: Key) -> String {
    match key {
        Key::Id(id) => format!("record #{id}"),
        Key::Name(name) => format!("record {name}"),
    }
}

/// Create a user account.
///
/// # Arguments
/// * `user` - The user to create.
#[tool]
pub async fn create_user(user: NewUser) -> String {
    format!(
        "created {} ({}) in {} with {} other addresses",
        user.name,
        user.age,
        user.address.city,
        user.other_addresses.len()
    )
}

/// Evaluate an arithmetic expression.
///
/// # Arguments
/// * `expr` - The expression tree to evaluate.
#[tool]
pub async fn evaluate(expr: Expr) -> f64 {
    expr.eval()
}

/// List items with renamed options.
///
/// # Arguments
/// * `options` - Listing options.
#[tool]
pub async fn list_items(options: RenameOptions) -> String {
    format!(
        "{} per page, archived: {}, by {}",
        options.page_size, options.include_archived, options.sort_key
    )
}

/// Store any JSON value under a key.
///
/// # Arguments
/// * `key` - Where to store it.
/// * `value` - Any JSON value.
#[tool]
pub async fn store(key: String, value: Value) -> String {
    format!("{key} = {value}")
}

/// Read a text file.
///
/// # Arguments
/// * `path` - The file to read.
#[tool]
pub async fn read_file(path: PathBuf) -> Result<String, std::io::Error> {
    std::fs::read_to_string(path)
}

/// Schedule a meeting.
///
/// # Arguments
/// * `at` - When the meeting starts (RFC 3339).
/// * `until` - The last day of the series.
#[tool]
pub async fn schedule(at: DateTime<Utc>, until: NaiveDate) -> String {
    format!("{} until {until}", at.to_rfc3339())
}

/// Search the document index.
///
/// # Arguments
/// * `query` - Text to search for.
/// * `limit` - Maximum number of hits to return.
/// * `threshold` - Minimum relevance score (0-1) for a hit to be included.
/// * `tags` - Only return documents carrying all of these tags.
/// * `mode` - Matching strategy to use.
#[tool]
pub async fn search(
    query: String,
    limit: u32,
    threshold: Option<f64>,
    #[tool(default)] tags: Vec<String>,
    #[tool(default = Mode::Fast)] mode: Mode,
) -> String {
    format!("{query}:{limit}:{threshold:?}:{}:{mode:?}", tags.len())
}

/// Paginate results.
///
/// # Arguments
/// * `page` - Which page, counting from 1.
/// * `per_page` - Results per page.
#[tool]
pub async fn paginate(
    #[tool(default = 1)] page: u32,
    #[tool(default = 20)] per_page: u32,
) -> String {
    format!("page {page}, {per_page} per page")
}

/// A counter that carries configuration and state.
#[derive(Debug, Default)]
pub struct Counter {
    /// Printed before each count.
    pub prefix: String,
    /// The running total.
    pub total: AtomicU64,
}

impl Counter {
    /// Advance the counter and report its value.
    ///
    /// # Arguments
    /// * `step` - How much to add.
    #[tool]
    pub async fn advance(&self, step: u32) -> String {
        let now = self.total.fetch_add(u64::from(step), Ordering::SeqCst) + u64::from(step);
        format!("{}{now}", self.prefix)
    }
}

/// Search the document index (struct form).
#[tool]
pub async fn search_docs(#[tool(flatten)] args: SearchArgs) -> String {
    format!("{}:{}:{:?}", args.query, args.limit, args.mode)
}

/// Count the words in a text (runs on the blocking pool).
///
/// # Arguments
/// * `text` - The text to count.
#[tool]
pub fn word_count(text: String) -> usize {
    text.split_whitespace().count()
}

/// Write a message to the log.
///
/// # Arguments
/// * `message` - The message to write.
#[tool]
pub async fn log_message(message: String) {
    let _ = message;
}

/// Render a chart as an image.
///
/// # Arguments
/// * `title` - The chart's title.
#[tool]
pub async fn render_chart(title: String) -> Content {
    let _ = title;
    Content::image_base64("iVBORw0KGgo=", "image/png")
}

/// Describe an image in words and pixels.
///
/// # Arguments
/// * `caption` - A caption to include.
#[tool]
pub async fn describe_image(caption: String) -> Vec<Content> {
    vec![
        Content::text(caption),
        Content::image_url("https://example.com/cat.png", "image/png"),
    ]
}

/// Compute summary statistics.
///
/// # Arguments
/// * `values` - The values to summarise.
#[tool]
pub async fn stats(values: Vec<i64>) -> Stats {
    Stats {
        count: values.len(),
        sum: values.iter().sum(),
        min: values.iter().copied().min(),
        max: values.iter().copied().max(),
    }
}

/// Report the current time in UTC.
#[tool]
pub async fn now() -> String {
    Utc::now().to_rfc3339()
}

/// Count the distinct labels.
///
/// # Arguments
/// * `labels` - Labels, each given once.
#[tool]
pub async fn distinct(labels: HashSet<String>) -> usize {
    labels.len()
}

/// Average the readings, skipping missing ones.
///
/// # Arguments
/// * `readings` - Sensor readings; a null is a missing reading.
#[tool]
pub async fn average(readings: Option<Vec<Option<i32>>>) -> Result<f64, ToolError> {
    let present: Vec<i32> = readings.unwrap_or_default().into_iter().flatten().collect();
    if present.is_empty() {
        return Err(ToolError::new("No readings to average."));
    }
    Ok(present.iter().map(|&r| f64::from(r)).sum::<f64>() / present.len() as f64)
}

/// Divide two numbers.
///
/// Division by zero is reported back to the model.
///
/// # Examples
/// `divide(6, 3)` returns `2`.
///
/// # Errors
/// Fails when `divisor` is zero.
#[tool]
pub async fn divide(
    /// The number to divide.
    dividend: f64,
    /// The number to divide by; must not be zero.
    divisor: f64,
) -> Result<f64, ToolFailure> {
    if divisor == 0.0 {
        Err(ToolError::new("Cannot divide by zero."))?;
    }
    Ok(dividend / divisor)
}

/// Sleep briefly, then answer (a parallel tool with options).
///
/// # Arguments
/// * `millis` - How long to sleep.
#[tool(name = "nap", parallel, max_output = 1024, timeout = "2s")]
pub async fn sleep_for(millis: u64) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(millis)).await;
    format!("slept {millis} ms")
}

/// Classify a character.
///
/// # Arguments
/// * `ch` - The character to classify.
#[tool]
pub async fn classify_char(ch: char) -> &'static str {
    if ch.is_alphabetic() {
        "letter"
    } else if ch.is_numeric() {
        "digit"
    } else {
        "other"
    }
}

/// Every catalogue tool, in a stable order.
pub fn all_tools() -> Vec<ToolDef> {
    let counter = Arc::new(Counter {
        prefix: "count=".to_owned(),
        total: AtomicU64::new(0),
    });
    vec![
        add_tool(),
        shift_byte_tool(),
        integer_widths_tool(),
        scale_tool(),
        toggle_tool(),
        echo_tool(),
        greet_tool(),
        sum_tool(),
        total_counts_tool(),
        render_env_tool(),
        distance_tool(),
        set_mode_tool(),
        area_tool(),
        send_event_tool(),
        lookup_tool(),
        create_user_tool(),
        evaluate_tool(),
        list_items_tool(),
        store_tool(),
        read_file_tool(),
        schedule_tool(),
        search_tool(),
        paginate_tool(),
        counter.advance_tool(),
        search_docs_tool(),
        word_count_tool(),
        log_message_tool(),
        render_chart_tool(),
        describe_image_tool(),
        stats_tool(),
        now_tool(),
        distinct_tool(),
        average_tool(),
        divide_tool(),
        sleep_for_tool(),
        classify_char_tool(),
    ]
}
