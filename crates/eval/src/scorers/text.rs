//! The text comparisons of the reference's scorers: `match`'s location and numeric rules, and
//! the SQuAD-style normalisation of `exact` and `f1`.

/// Python's `string.punctuation`.
const PUNCTUATION: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

/// Sentence and enclosing punctuation trimmed around a number (not operators such as `<`).
const NUMERIC_TRIM: &str = "!?:;()[]{}'\"`";

/// Where `match` looks for the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Location {
    /// The answer starts with the target.
    Begin,
    /// The answer ends with the target (the default).
    #[default]
    End,
    /// The target appears anywhere.
    Any,
    /// The answer is the target.
    Exact,
}

impl Location {
    /// The reference's name.
    pub fn name(self) -> &'static str {
        match self {
            Location::Begin => "begin",
            Location::End => "end",
            Location::Any => "any",
            Location::Exact => "exact",
        }
    }
}

/// Case folding (the reference's `str.casefold`; Unicode lower-casing here).
pub(crate) fn fold(s: &str) -> String {
    s.to_lowercase()
}

/// Strips whitespace and ASCII punctuation from both ends.
pub(crate) fn strip_punctuation(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || PUNCTUATION.contains(c))
}

/// Removes currency and formatting marks (`$ £ € , * _`, unescaping `\$` first) and periods
/// not followed by a digit, as the reference does before comparing numbers.
pub(crate) fn strip_numeric_punctuation(s: &str) -> String {
    let mut unescaped = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(|n| "$,£€*_".contains(*n)) {
            continue;
        }
        unescaped.push(c);
    }
    let kept: Vec<char> = unescaped
        .chars()
        .filter(|c| !"$,£€*_".contains(*c))
        .collect();
    let mut out = String::with_capacity(kept.len());
    for (i, c) in kept.iter().enumerate() {
        if *c == '.' && !kept.get(i + 1).is_some_and(char::is_ascii_digit) {
            continue;
        }
        out.push(*c);
    }
    out
}

/// A finite number, as Python's `float()` reads one (surrounding whitespace allowed).
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() || t.contains(|c: char| c.is_alphabetic() && !"eE".contains(c)) {
        return None;
    }
    t.replace('_', "")
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

fn parse_number(s: &str, trim: bool) -> Option<f64> {
    let s = if trim {
        s.trim_matches(|c| NUMERIC_TRIM.contains(c))
    } else {
        s
    };
    parse_float(s)
}

/// Python's `format(x, ".{p}g")`.
pub(crate) fn format_g(x: f64, precision: usize) -> String {
    let p = precision.max(1);
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sci = format!("{:.*e}", p - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let p_i = i32::try_from(p).unwrap_or(i32::MAX);
    if exp < -4 || exp >= p_i {
        let m = trim_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    } else {
        let decimals = usize::try_from(p_i - 1 - exp).unwrap_or(0);
        trim_zeros(&format!("{x:.decimals$}")).to_owned()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Python's `str(float(x))`: the shortest round-trip digits, `.0` on integers, exponent form
/// below 1e-4 and from 1e16.
pub(crate) fn py_float_repr(x: f64) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        let plain = format!("{x}");
        if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        }
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

fn normalize_number(s: &str, trim: bool) -> String {
    match parse_number(s, trim) {
        Some(n) => format_g(n, 5),
        None => s.to_owned(),
    }
}

/// The reference's `match_str`: the answer it extracted, and whether it matched.
pub(crate) fn match_str(
    value: &str,
    target: &str,
    location: Location,
    ignore_case: bool,
    numeric: bool,
) -> (String, bool) {
    let mut v = value.trim().to_owned();
    let mut t = target.trim().to_owned();
    let answer = v.clone();
    if ignore_case {
        v = fold(&v);
        t = fold(&t);
    }
    if numeric {
        t = strip_numeric_punctuation(&t);
    }
    if numeric && parse_number(&t, true).is_some() {
        let v = strip_numeric_punctuation(&v);
        let t = normalize_number(&t, true);
        let words: Vec<&str> = v.split_whitespace().collect();
        let first =
            |found: Option<&&str>| found.map(|w| normalize_number(w, true)).unwrap_or_default();
        let is_number = |w: &&&str| parse_number(w, true).is_some();
        let v = match location {
            Location::Begin => first(words.iter().find(is_number)),
            Location::End => first(words.iter().rev().find(is_number)),
            Location::Exact => normalize_number(&v, false),
            Location::Any => {
                for w in words.iter().filter(|w| parse_number(w, true).is_some()) {
                    let n = normalize_number(w, true);
                    if n == t {
                        return (n, true);
                    }
                }
                return (answer, false);
            }
        };
        let matched = v == t;
        return (v, matched);
    }
    let v = strip_punctuation(&v);
    let t = strip_punctuation(&t);
    let matched = match location {
        Location::Begin => v.starts_with(t),
        Location::End => v.ends_with(t),
        Location::Exact => v == t,
        Location::Any => v.contains(t),
    };
    (answer, matched)
}

fn remove_punc(text: &str) -> String {
    if parse_float(text).is_some() {
        return text.to_owned();
    }
    let stripped = strip_punctuation(text);
    if parse_float(stripped).is_some() {
        return stripped.to_owned();
    }
    text.chars().filter(|c| !PUNCTUATION.contains(*c)).collect()
}

fn remove_articles(text: &str) -> String {
    // `\b(a|an|the)\b` → " ", over Unicode words.
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if matches!(word.as_str(), "a" | "an" | "the") {
            out.push(' ');
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

fn normalize_token(token: &str) -> String {
    let token = remove_punc(&fold(token));
    let token = match parse_float(&token) {
        Some(n) => py_float_repr(n),
        None => token,
    };
    let token = remove_articles(&token);
    token.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The reference's `_normalize` for `exact` and `f1`.
pub(crate) fn normalize(text: &str, stop_words: &[String]) -> String {
    let stop: Vec<String> = stop_words.iter().map(|w| normalize_token(w)).collect();
    text.split([' ', '-'])
        .map(normalize_token)
        .filter(|t| !stop.contains(t) && !t.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .trim()
        .to_owned()
}

fn word_counts(text: &str, stop_words: &[String]) -> std::collections::HashMap<String, usize> {
    let mut counts = std::collections::HashMap::new();
    for w in normalize(text, stop_words).split_whitespace() {
        *counts.entry(w.to_owned()).or_insert(0) += 1;
    }
    counts
}

/// Token F1 between an answer and a target (bag of words).
pub(crate) fn f1_score(answer: &str, target: &str, stop_words: &[String]) -> f64 {
    let a = word_counts(answer, stop_words);
    let t = word_counts(target, stop_words);
    let common: usize = a
        .iter()
        .map(|(w, n)| (*n).min(t.get(w).copied().unwrap_or(0)))
        .sum();
    let total = |m: &std::collections::HashMap<String, usize>| m.values().sum::<usize>() as f64;
    let precision = if a.is_empty() {
        1.0
    } else {
        common as f64 / total(&a)
    };
    let recall = if t.is_empty() {
        1.0
    } else {
        common as f64 / total(&t)
    };
    if precision == 0.0 && recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    }
}

/// The best F1 over targets with content, rounded to two places.
pub(crate) fn max_f1(answer: &str, targets: &[&str], stop_words: &[String]) -> f64 {
    let best = targets
        .iter()
        .filter(|t| !word_counts(t, stop_words).is_empty())
        .map(|t| f1_score(answer, t, stop_words))
        .fold(0.0, f64::max);
    (best * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats_follow_python() {
        assert_eq!(format_g(7.0, 5), "7");
        assert_eq!(format_g(1234567.0, 5), "1.2346e+06");
        assert_eq!(format_g(0.00001234, 5), "1.234e-05");
        assert_eq!(format_g(1.234_567_8, 5), "1.2346");
        assert_eq!(py_float_repr(3.0), "3.0");
        assert_eq!(py_float_repr(1e16), "1e+16");
        assert_eq!(py_float_repr(0.0001), "0.0001");
        assert_eq!(py_float_repr(0.00001), "1e-05");
    }

    #[test]
    fn match_follows_the_reference() {
        let m = |v, t, l, n| match_str(v, t, l, true, n);
        assert!(m("The answer is 7.", "7", Location::End, false).1);
        assert!(m("7 is it", "7", Location::Begin, false).1);
        assert!(!m("It is 25", "5", Location::End, true).1);
        assert_eq!(
            m("It costs $1,000.", "1000", Location::End, true),
            ("1000".into(), true)
        );
        assert!(m("ANSWER: Paris", "paris", Location::End, false).1);
        assert!(!m("(42)", "42", Location::Exact, true).1);
        assert_eq!(m("x 3 y 4", "4", Location::Any, true), ("4".into(), true));
    }

    #[test]
    fn squad_normalisation() {
        assert_eq!(normalize("The Cat-sat, on  a mat!", &[]), "cat sat on mat");
        assert_eq!(normalize("3.14.", &[]), "3.14");
        assert_eq!(max_f1("the cat sat", &["a cat sat down"], &[]), 0.8);
        assert_eq!(max_f1("anything", &["the"], &[]), 0.0);
    }
}
