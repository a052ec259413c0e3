//! What a plain YAML 1.1 scalar means, as PyYAML's `safe_load` resolves it (the reference reads
//! non-object argument text with it): booleans (`True`, `yes`, `off` …), null (`null`, `~`,
//! empty), integers (`42`, `0x1f`, `010`, `1_000`) and floats (`1.5`, `.5`, `1.5e+3`). Anything
//! else is not a scalar of those types; note that `None` and `1e3` are strings to PyYAML.

use serde_json::{Number, Value};

/// The boolean, null or number `text` denotes as a plain YAML 1.1 scalar, if any.
pub(crate) fn resolve(text: &str) -> Option<Value> {
    match text {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Some(Value::Bool(true));
        }
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Some(Value::Bool(false));
        }
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        _ => {}
    }
    int(text).or_else(|| float(text))
}

fn split_sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

fn int(text: &str) -> Option<Value> {
    let (negative, body) = split_sign(text);
    let digits_in =
        |s: &str, ok: fn(u8) -> bool| !s.is_empty() && s.bytes().all(|b| ok(b) || b == b'_');
    let (radix, digits) = if let Some(d) = body.strip_prefix("0b") {
        (2, d)
    } else if let Some(d) = body.strip_prefix("0x") {
        (16, d)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else if body == "0"
        || body
            .as_bytes()
            .first()
            .is_some_and(|b| (b'1'..=b'9').contains(b))
    {
        (10, body)
    } else {
        return None;
    };
    let ok = match radix {
        2 => digits_in(digits, |b| b == b'0' || b == b'1'),
        8 => digits_in(digits, |b| (b'0'..=b'7').contains(&b)),
        16 => digits_in(digits, |b| b.is_ascii_hexdigit()),
        _ => digits_in(digits, |b| b.is_ascii_digit()),
    };
    if !ok {
        return None;
    }
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    if clean.is_empty() {
        return None;
    }
    let magnitude = i128::from_str_radix(&clean, radix).ok()?;
    let value = if negative { -magnitude } else { magnitude };
    // Beyond 64 bits JSON has no integer: leave the text as it is.
    i64::try_from(value)
        .map(Value::from)
        .or_else(|_| u64::try_from(value).map(Value::from))
        .ok()
}

fn float(text: &str) -> Option<Value> {
    let (negative, body) = split_sign(text);
    // [0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?  or  \.[0-9][0-9_]*([eE][-+][0-9]+)?
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int_part, frac_part) = mantissa.split_once('.')?;
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    let int_ok = if int_part.is_empty() {
        // `.5`: a digit must follow the dot, and no sign is allowed before it.
        frac_part.as_bytes().first().is_some_and(u8::is_ascii_digit)
            && !text.starts_with(['-', '+'])
    } else {
        int_part.as_bytes()[0].is_ascii_digit() && digits(int_part)
    };
    if !int_ok || !digits(frac_part) {
        return None;
    }
    if let Some(e) = exponent {
        let rest = e.strip_prefix(['-', '+'])?;
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
    }
    let clean: String = mantissa.chars().filter(|c| *c != '_').collect();
    let mut literal = if clean.starts_with('.') {
        format!("0{clean}")
    } else {
        clean
    };
    if literal.ends_with('.') {
        literal.push('0');
    }
    if let Some(e) = exponent {
        literal = format!("{literal}e{e}");
    }
    let v: f64 = literal.parse().ok()?;
    Number::from_f64(if negative { -v } else { v }).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::resolve;
    use serde_json::{Value, json};

    #[test]
    fn resolves_as_pyyaml_does() {
        // Expected values printed by PyYAML 6 (yaml.safe_load) for the same texts.
        let cases: [(&str, Option<Value>); 20] = [
            ("True", Some(json!(true))),
            ("TRUE", Some(json!(true))),
            ("yes", Some(json!(true))),
            ("on", Some(json!(true))),
            ("False", Some(json!(false))),
            ("off", Some(json!(false))),
            ("null", Some(json!(null))),
            ("~", Some(json!(null))),
            ("Null", Some(json!(null))),
            ("None", None),
            ("42", Some(json!(42))),
            ("-7", Some(json!(-7))),
            ("010", Some(json!(8))),
            ("0x1f", Some(json!(31))),
            ("1_000", Some(json!(1000))),
            ("1.5", Some(json!(1.5))),
            (".5", Some(json!(0.5))),
            ("1.5e+3", Some(json!(1500.0))),
            ("1e3", None),
            ("hello", None),
        ];
        for (text, expected) in cases {
            assert_eq!(resolve(text), expected, "{text}");
        }
    }
}
