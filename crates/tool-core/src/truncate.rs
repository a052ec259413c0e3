//! Output truncation: what a model sees when a tool returns more text than it may read.
//!
//! A tool's output is cut to a byte limit by keeping its beginning and its end and
//! replacing the middle with a marker line that says how many bytes were left out. The
//! result is wrapped in an envelope telling the model that the output was truncated.
//!
//! The work done is proportional to the limit, never to the size of the output: the cut
//! points are computed from byte offsets (adjusted by at most three bytes each to land on
//! a UTF-8 character boundary), the two kept slices are copied once into a single
//! allocation, and nothing else of the output is read.

use std::fmt::Write as _;

/// The default limit of a tool's output as the model reads it: 16 KiB (the reference's
/// `max_tool_output` default). Not to be confused with the sandbox's limit on what one
/// command may return (`actuator_sandbox::DEFAULT_MAX_EXEC_OUTPUT`, 10 MiB).
///
/// Outputs longer than this many bytes are truncated by [`truncate_tool_output`] unless a
/// tool sets its own limit.
///
/// ```
/// assert_eq!(actuator_tool_core::DEFAULT_MAX_TOOL_OUTPUT, 16 * 1024);
/// ```
pub const DEFAULT_MAX_TOOL_OUTPUT: usize = 16 * 1024;

/// The envelope text before the tool name.
const ENVELOPE_START: &str = "\nThe output of your call to ";
/// The envelope text between the tool name and the truncated output.
const ENVELOPE_MIDDLE: &str =
    " was too long to be displayed.\nHere is a truncated version:\n<START_TOOL_OUTPUT>\n";
/// The envelope text after the truncated output.
const ENVELOPE_END: &str = "\n<END_TOOL_OUTPUT>\n";
/// The marker line text before the number of omitted bytes.
const MARKER_START: &str = "\n[... ";
/// The marker line text after the number of omitted bytes.
const MARKER_END: &str = " bytes omitted ...]\n";

/// A tool output that was too long and has been truncated, as returned by
/// [`truncate_tool_output`].
///
/// `(original_bytes, limit)` is what tool events report about the truncation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated {
    /// The text the model sees: the envelope around the kept head, the marker line stating
    /// how many bytes were omitted, and the kept tail.
    pub output: String,
    /// The size of the original output in bytes.
    pub original_bytes: usize,
    /// The limit that was applied, in bytes.
    pub limit: usize,
}

/// Truncates a tool's `output` to about `limit` bytes, or returns `None` if it fits.
///
/// Returns `None` when `limit` is `0` (which means "never truncate") or when
/// `output.len() <= limit`. Otherwise the result's [`output`](Truncated::output) is,
/// byte for byte:
///
/// ```text
/// \nThe output of your call to {tool_name} was too long to be displayed.
/// Here is a truncated version:
/// <START_TOOL_OUTPUT>
/// {head}
/// [... {omitted} bytes omitted ...]
/// {tail}
/// <END_TOOL_OUTPUT>\n
/// ```
///
/// where `head` is the first `limit / 2` bytes of `output` and `tail` its last
/// `limit - limit / 2` bytes. A cut that would split a multi-byte UTF-8 character is moved
/// to the nearest character boundary inside the kept part (the head's end backwards, the
/// tail's start forwards), so partial characters are dropped and `head.len() + tail.len()`
/// never exceeds `limit`. `omitted` is `output.len() - head.len() - tail.len()`. The
/// envelope and the marker line are not counted against the limit.
///
/// This never panics, and its cost depends on `limit` and `tool_name`, not on the size
/// of `output`.
///
/// # Example
///
/// ```
/// use actuator_tool_core::truncate_tool_output;
///
/// assert!(truncate_tool_output("ls", "short", 16).is_none());
/// assert!(truncate_tool_output("ls", "never truncated", 0).is_none());
///
/// let t = truncate_tool_output("ls", "abcdefghij", 4).unwrap();
/// assert_eq!(t.original_bytes, 10);
/// assert_eq!(t.limit, 4);
/// assert_eq!(
///     t.output,
///     "\nThe output of your call to ls was too long to be displayed.\n\
///      Here is a truncated version:\n\
///      <START_TOOL_OUTPUT>\n\
///      ab\n[... 6 bytes omitted ...]\nij\n\
///      <END_TOOL_OUTPUT>\n"
/// );
/// ```
#[must_use]
pub fn truncate_tool_output(tool_name: &str, output: &str, limit: usize) -> Option<Truncated> {
    let len = output.len();
    if limit == 0 || len <= limit {
        return None;
    }

    let head_end = floor_char_boundary(output, limit / 2);
    // `len > limit`, so this cannot underflow, and `tail_start > limit / 2 >= head_end`:
    // head and tail never overlap.
    let tail_start = ceil_char_boundary(output, len - (limit - limit / 2));
    let head = &output[..head_end];
    let tail = &output[tail_start..];
    let omitted = tail_start - head_end;

    let capacity = ENVELOPE_START.len()
        + tool_name.len()
        + ENVELOPE_MIDDLE.len()
        + head.len()
        + MARKER_START.len()
        + decimal_digits(omitted)
        + MARKER_END.len()
        + tail.len()
        + ENVELOPE_END.len();
    let mut text = String::with_capacity(capacity);
    text.push_str(ENVELOPE_START);
    text.push_str(tool_name);
    text.push_str(ENVELOPE_MIDDLE);
    text.push_str(head);
    text.push_str(MARKER_START);
    // Writing to a `String` cannot fail.
    let _ = write!(text, "{omitted}");
    text.push_str(MARKER_END);
    text.push_str(tail);
    text.push_str(ENVELOPE_END);
    debug_assert_eq!(text.len(), capacity);

    Some(Truncated {
        output: text,
        original_bytes: len,
        limit,
    })
}

/// The largest character boundary of `s` that is `<= index` (`index <= s.len()`).
///
/// A UTF-8 character is at most 4 bytes long, so this takes at most 3 steps; offset `0`
/// is always a boundary.
fn floor_char_boundary(s: &str, mut index: usize) -> usize {
    while !s.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// The smallest character boundary of `s` that is `>= index` (`index <= s.len()`).
///
/// A UTF-8 character is at most 4 bytes long, so this takes at most 3 steps; `s.len()`
/// is always a boundary.
fn ceil_char_boundary(s: &str, mut index: usize) -> usize {
    while !s.is_char_boundary(index) {
        index += 1;
    }
    index
}

/// The number of decimal digits needed to print `n`.
fn decimal_digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |log| log as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn envelope(tool_name: &str, inner: &str) -> String {
        format!(
            "\nThe output of your call to {tool_name} was too long to be displayed.\n\
             Here is a truncated version:\n<START_TOOL_OUTPUT>\n{inner}\n<END_TOOL_OUTPUT>\n"
        )
    }

    fn truncated(tool_name: &str, output: &str, limit: usize) -> Truncated {
        truncate_tool_output(tool_name, output, limit).expect("output should be truncated")
    }

    #[test]
    fn default_limit_is_16_kib() {
        assert_eq!(DEFAULT_MAX_TOOL_OUTPUT, 16384);
    }

    #[test]
    fn zero_limit_never_truncates() {
        assert_eq!(truncate_tool_output("t", "", 0), None);
        assert_eq!(truncate_tool_output("t", &"x".repeat(100_000), 0), None);
    }

    #[test]
    fn output_within_limit_is_not_truncated() {
        assert_eq!(truncate_tool_output("t", "", 1), None);
        assert_eq!(truncate_tool_output("t", "abc", 3), None);
        assert_eq!(truncate_tool_output("t", "abc", 4), None);
        assert_eq!(truncate_tool_output("t", "abc", usize::MAX), None);
        // The limit counts bytes, not characters: 🌍 is 4 bytes.
        assert_eq!(truncate_tool_output("t", "🌍", 4), None);
        assert!(truncate_tool_output("t", "🌍", 3).is_some());
    }

    #[test]
    fn ascii_envelope_is_exact() {
        let t = truncated("read_file", "0123456789", 6);
        assert_eq!(
            t.output,
            "\nThe output of your call to read_file was too long to be displayed.\n\
             Here is a truncated version:\n<START_TOOL_OUTPUT>\n\
             012\n[... 4 bytes omitted ...]\n789\n<END_TOOL_OUTPUT>\n"
        );
        assert_eq!(t.original_bytes, 10);
        assert_eq!(t.limit, 6);
    }

    #[test]
    fn odd_limit_gives_the_extra_byte_to_the_tail() {
        let t = truncated("t", "0123456789", 5);
        assert_eq!(
            t.output,
            envelope("t", "01\n[... 5 bytes omitted ...]\n789")
        );
    }

    #[test]
    fn one_byte_over_the_limit() {
        let t = truncated("t", "abcd", 3);
        assert_eq!(t.output, envelope("t", "a\n[... 1 bytes omitted ...]\ncd"));
        assert_eq!((t.original_bytes, t.limit), (4, 3));
    }

    #[test]
    fn multi_byte_cuts_fall_on_char_boundaries() {
        let input = "a🌍b🌎c";
        assert_eq!(input.len(), 11);
        let t = truncated("t", input, 5);
        // limit / 2 = 2 would split 🌍: the head backs off to "a". The last 3 bytes would
        // split 🌎: the tail moves forward to "c".
        assert_eq!(t.output, envelope("t", "a\n[... 9 bytes omitted ...]\nc"));
        assert_eq!((t.original_bytes, t.limit), (11, 5));
    }

    #[test]
    fn limit_one() {
        // Head is empty (limit / 2 == 0), tail is the last byte.
        let t = truncated("t", "ab", 1);
        assert_eq!(t.output, envelope("t", "\n[... 1 bytes omitted ...]\nb"));

        // The last byte is inside a character: the tail is empty too.
        let t = truncated("t", "aé", 1);
        assert_eq!(t.output, envelope("t", "\n[... 3 bytes omitted ...]\n"));

        let t = truncated("t", "🌍", 1);
        assert_eq!(t.output, envelope("t", "\n[... 4 bytes omitted ...]\n"));
    }

    #[test]
    fn everything_omitted_when_only_partial_chars_fit() {
        // 3 bytes of budget cannot hold any part of two 4-byte characters.
        let t = truncated("t", "🌍🌎", 3);
        assert_eq!(t.output, envelope("t", "\n[... 8 bytes omitted ...]\n"));
    }

    #[test]
    fn large_input_keeps_limit_bytes() {
        let input = "x".repeat(1 << 20);
        let t = truncated("big", &input, DEFAULT_MAX_TOOL_OUTPUT);
        let omitted = (1 << 20) - DEFAULT_MAX_TOOL_OUTPUT;
        let inner = format!(
            "{}\n[... {omitted} bytes omitted ...]\n{}",
            "x".repeat(DEFAULT_MAX_TOOL_OUTPUT / 2),
            "x".repeat(DEFAULT_MAX_TOOL_OUTPUT / 2)
        );
        assert_eq!(t.output, envelope("big", &inner));
        assert_eq!(t.original_bytes, 1 << 20);
        assert_eq!(t.limit, DEFAULT_MAX_TOOL_OUTPUT);
    }

    #[test]
    fn decimal_digits_matches_formatting() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, usize::MAX / 10, usize::MAX] {
            assert_eq!(decimal_digits(n), n.to_string().len(), "{n}");
        }
    }

    /// Strings mixing 1-, 2-, 3- and 4-byte characters, plus any character at all.
    fn mixed_text() -> impl Strategy<Value = String> {
        let ch = prop_oneof![
            4 => proptest::char::range('a', 'z'),
            1 => Just('\n'),
            1 => Just('['),
            2 => proptest::char::range('а', 'я'),
            2 => proptest::char::range('一', '龥'),
            2 => proptest::char::range('😀', '🙏'),
            1 => any::<char>(),
        ];
        proptest::collection::vec(ch, 0..64).prop_map(|chars| chars.into_iter().collect())
    }

    fn text_and_limit() -> impl Strategy<Value = (String, usize)> {
        mixed_text().prop_flat_map(|s| {
            let max = 2 * s.len() + 1;
            (Just(s), 0..max)
        })
    }

    proptest! {
        #[test]
        fn truncation_properties(
            tool_name in "\\PC{0,12}",
            (input, limit) in text_and_limit(),
        ) {
            let result = truncate_tool_output(&tool_name, &input, limit);
            let should_truncate = limit != 0 && input.len() > limit;
            prop_assert_eq!(result.is_some(), should_truncate);
            let Some(t) = result else { return Ok(()) };

            prop_assert_eq!(t.original_bytes, input.len());
            prop_assert_eq!(t.limit, limit);

            // The envelope.
            let start = format!(
                "\nThe output of your call to {tool_name} was too long to be displayed.\n\
                 Here is a truncated version:\n<START_TOOL_OUTPUT>\n"
            );
            let end = "\n<END_TOOL_OUTPUT>\n";
            prop_assert!(t.output.starts_with(&start));
            prop_assert!(t.output.ends_with(end));
            prop_assert!(t.output.len() >= start.len() + end.len());
            let inner = &t.output[start.len()..t.output.len() - end.len()];

            // The head: the largest char boundary at or below limit / 2, at most 3 bytes
            // short of it.
            let half = limit / 2;
            let head_len = (0..=half).rev().find(|&i| input.is_char_boundary(i)).unwrap_or(0);
            prop_assert!(head_len + 3 >= half);
            prop_assert!(inner.is_char_boundary(head_len));
            let (head, rest) = inner.split_at(head_len);
            prop_assert!(input.starts_with(head));

            // The marker line.
            let rest = rest.strip_prefix("\n[... ");
            prop_assert!(rest.is_some(), "missing marker start in {:?}", inner);
            let rest = rest.unwrap_or_default();
            let digits_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            prop_assert!(digits_len > 0);
            let (digits, rest) = rest.split_at(digits_len);
            prop_assert!(digits == "0" || !digits.starts_with('0'));
            let omitted: usize = digits.parse().unwrap_or(usize::MAX);
            let tail = rest.strip_prefix(" bytes omitted ...]\n");
            prop_assert!(tail.is_some(), "missing marker end in {:?}", inner);
            let tail = tail.unwrap_or_default();

            // The tail: starts at the smallest char boundary at or above
            // len - (limit - limit / 2), at most 3 bytes after it.
            prop_assert!(input.ends_with(tail));
            let tail_budget = limit - half;
            let tail_start = input.len() - tail.len();
            prop_assert!(tail.len() <= tail_budget);
            prop_assert!(tail.len() + 3 >= tail_budget);
            prop_assert!(
                (input.len() - tail_budget..tail_start).all(|i| !input.is_char_boundary(i))
            );

            // Accounting.
            prop_assert!(head.len() + tail.len() <= limit);
            prop_assert_eq!(head.len() + omitted + tail.len(), input.len());
            prop_assert!(head.len() <= tail_start);
        }
    }
}
