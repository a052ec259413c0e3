//! How limits read in the texts a model sees: a limit's value and the exceeded-limit sentence.

/// A limit's value as a model reads it: a count prints as an integer with thousands separators
/// (`1,000`), an amount (time in seconds, cost in dollars) with two decimals (`60.00`), as the
/// reference prints them.
///
/// ```
/// use actuator_tool_core::LimitValue;
/// assert_eq!(LimitValue::from(1_000_u64).to_string(), "1,000");
/// assert_eq!(LimitValue::from(60.0).to_string(), "60.00");
/// assert_eq!(LimitValue::from(std::time::Duration::from_secs(90)).to_string(), "90.00");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LimitValue {
    /// A number of things (messages, tokens, turns, bytes).
    Count(u64),
    /// A quantity (seconds, dollars).
    Amount(f64),
}

impl std::fmt::Display for LimitValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LimitValue::Count(n) => f.write_str(&format_limit(*n as f64)),
            LimitValue::Amount(v) => f.write_str(&format_amount(*v, 2)),
        }
    }
}

impl From<u64> for LimitValue {
    fn from(n: u64) -> Self {
        LimitValue::Count(n)
    }
}
impl From<u32> for LimitValue {
    fn from(n: u32) -> Self {
        LimitValue::Count(n.into())
    }
}
impl From<usize> for LimitValue {
    fn from(n: usize) -> Self {
        LimitValue::Count(n as u64)
    }
}
impl From<i32> for LimitValue {
    /// A count; a negative one is 0.
    fn from(n: i32) -> Self {
        LimitValue::Count(u64::try_from(n).unwrap_or(0))
    }
}
impl From<f64> for LimitValue {
    fn from(v: f64) -> Self {
        LimitValue::Amount(v)
    }
}
impl From<std::time::Duration> for LimitValue {
    /// Seconds.
    fn from(d: std::time::Duration) -> Self {
        LimitValue::Amount(d.as_secs_f64())
    }
}

/// `v` with `places` decimals and thousands separators (`1,234.50`), as limit texts print
/// times and costs.
///
/// ```
/// assert_eq!(actuator_tool_core::format_amount(1234.5, 2), "1,234.50");
/// assert_eq!(actuator_tool_core::format_amount(-0.25, 4), "-0.2500");
/// ```
pub fn format_amount(v: f64, places: usize) -> String {
    let text = format!("{:.*}", places, v.abs());
    let (int_part, frac) = text.split_once('.').unwrap_or((&text, ""));
    let int_value: f64 = int_part.parse().unwrap_or(0.0);
    let sign = if v < 0.0 { "-" } else { "" };
    if frac.is_empty() {
        format!("{sign}{}", format_limit(int_value))
    } else {
        format!("{sign}{}.{frac}", format_limit(int_value))
    }
}

/// Formats a limit the way Inspect does: integers with thousands separators, floats with two
/// decimals (`1,000`, `60.00`).
pub fn format_limit(value: f64) -> String {
    let is_int = value.fract() == 0.0 && value.abs() < 1e15;
    let text = if is_int {
        format!("{}", value as i64)
    } else {
        format!("{value:.2}")
    };
    let (sign, rest) = match text.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", text.as_str()),
    };
    let (int_part, frac_part) = match rest.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (rest, None),
    };
    let mut grouped = String::with_capacity(int_part.len() + int_part.len() / 3);
    for (i, ch) in int_part.chars().enumerate() {
        if i > 0 && (int_part.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    match frac_part {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// `The {subject} exceeded its {kind} limit of {limit}.`: the one place this text is built, for
/// tools (`subject` = `tool`) and for agents handed a conversation (`subject` = the agent's
/// name).
///
/// ```
/// use actuator_tool_core::limit_exceeded_text;
/// assert_eq!(limit_exceeded_text("Researcher", "turn", "3"), "The Researcher exceeded its turn limit of 3.");
/// ```
pub fn limit_exceeded_text(subject: &str, kind: &str, limit: &str) -> String {
    format!("The {subject} exceeded its {kind} limit of {limit}.")
}
