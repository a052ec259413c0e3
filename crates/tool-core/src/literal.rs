//! JSON values written as Python literals (`{'a': [1, 2]}`, `True`, `None`), the form the
//! reference uses wherever it shows a call's arguments as text: rendered calls, handoff
//! transcripts, approval patterns and viewer templates.

use serde_json::Value;

/// `value` as Python's `repr` writes the equal Python value: strings quoted as Python quotes
/// them (single quotes unless the text holds a single quote and no double quote, escapes for
/// backslashes, the quote and control characters), `True`/`False`/`None`, dicts as
/// `{'k': v}`, lists as `[a, b]`, floats with a `.0` or an `e+` exponent.
///
/// Long containers stay on one line (the reference's `pprint` would wrap them past 80
/// columns).
///
/// ```
/// use actuator_tool_core::python_literal;
/// use serde_json::json;
/// assert_eq!(python_literal(&json!({"a": [1, 2], "b": null, "c": true})), "{'a': [1, 2], 'b': None, 'c': True}");
/// assert_eq!(python_literal(&json!(["it's", "a\nb"])), r#"["it's", 'a\nb']"#);
/// assert_eq!(python_literal(&json!(1.0)), "1.0");
/// assert_eq!(python_literal(&json!(1e300)), "1e+300");
/// ```
pub fn python_literal(value: &Value) -> String {
    let mut out = String::new();
    write_literal(&mut out, value, None);
    out
}

/// [`python_literal`] capped for messages a model reads: strings keep at most `cap` characters,
/// containers stop growing past about `4 × cap` bytes, and the whole keeps `cap` characters
/// followed by `...` when longer.
pub(crate) fn python_literal_capped(value: &Value, cap: usize) -> String {
    let mut out = String::new();
    write_literal(&mut out, value, Some(cap));
    if out.chars().count() > cap {
        let cut: String = out.chars().take(cap).collect();
        return format!("{cut}...");
    }
    out
}

/// A string as Python's `repr` quotes it, keeping at most `cap` characters.
pub(crate) fn python_quoted_capped(s: &str, cap: usize) -> String {
    let mut out = String::new();
    write_string(&mut out, s, Some(cap));
    out
}

/// `value` as Python's `str` writes it: a string as its text, anything else as
/// [`python_literal`] (what `{{param}}` in a viewer's template becomes).
///
/// ```
/// use actuator_tool_core::python_str;
/// assert_eq!(python_str(&serde_json::json!("ls -la")), "ls -la");
/// assert_eq!(python_str(&serde_json::json!(false)), "False");
/// ```
pub fn python_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => python_literal(other),
    }
}

fn write_literal(out: &mut String, value: &Value, cap: Option<usize>) {
    let full = |out: &String| cap.is_some_and(|c| out.len() > c * 4);
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => {
            if n.is_f64() {
                out.push_str(&python_float(n.as_f64().unwrap_or_default()));
            } else {
                out.push_str(&n.to_string());
            }
        }
        Value::String(s) => write_string(out, s, cap),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_literal(out, item, cap);
                if full(out) {
                    break;
                }
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(out, k, cap);
                out.push_str(": ");
                write_literal(out, v, cap);
                if full(out) {
                    break;
                }
            }
            out.push('}');
        }
    }
}

/// A float as Python's `repr` writes it: shortest round-trip digits, `.0` on whole numbers,
/// exponents from 1e16 up and below 1e-4 as `1e+16` / `1e-05`.
pub(crate) fn python_float(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "nan"
        } else if v > 0.0 {
            "inf"
        } else {
            "-inf"
        }
        .to_owned();
    }
    let abs = v.abs();
    if abs != 0.0 && !(1e-4..1e16).contains(&abs) {
        // Rust writes `1e300` / `1.5e-7`; Python writes `1e+300` / `1.5e-07`.
        let text = format!("{v:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let (sign, digits) = match exponent.strip_prefix('-') {
            Some(d) => ("-", d),
            None => ("+", exponent),
        };
        return format!("{mantissa}e{sign}{digits:0>2}");
    }
    let text = format!("{v}");
    if text.contains('.') {
        text
    } else {
        format!("{text}.0")
    }
}

fn write_string(out: &mut String, s: &str, cap: Option<usize>) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for (count, ch) in s.chars().enumerate() {
        if cap.is_some_and(|c| count >= c) {
            break;
        }
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}
