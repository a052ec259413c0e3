//! How the text editor prints: Python's `expandtabs`, `cat -n`-style numbering, the
//! response clip, Python's list and path spellings.

/// The clip notice the reference appends to content longer than [`MAX_RESPONSE_LEN`].
pub(crate) const TRUNCATED_MESSAGE: &str = "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>";
/// The most characters of content shown.
pub(crate) const MAX_RESPONSE_LEN: usize = 16000;

/// Python's `str.expandtabs(8)`: tabs to the next multiple of 8 columns, columns reset at
/// `\n` and `\r`.
pub(crate) fn expandtabs(text: &str) -> String {
    if !text.contains('\t') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut column = 0usize;
    for ch in text.chars() {
        match ch {
            '\t' => {
                let spaces = 8 - column % 8;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            }
            '\n' | '\r' => {
                out.push(ch);
                column = 0;
            }
            _ => {
                out.push(ch);
                column += 1;
            }
        }
    }
    out
}

/// The reference's `maybe_truncate`: the first [`MAX_RESPONSE_LEN`] characters plus the clip
/// notice.
pub(crate) fn maybe_truncate(content: &str) -> String {
    match content.char_indices().nth(MAX_RESPONSE_LEN) {
        None => content.to_owned(),
        Some((cut, _)) => format!("{}{TRUNCATED_MESSAGE}", &content[..cut]),
    }
}

/// The reference's `_make_output`: `Here's the result of running \`cat -n\` on {what}:` and
/// each line numbered in six columns and a tab, from `init_line`.
pub(crate) fn make_output(content: &str, descriptor: &str, init_line: i64) -> String {
    let content = expandtabs(&maybe_truncate(content));
    let mut out = format!("Here's the result of running `cat -n` on {descriptor}:\n");
    for (i, line) in content.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("{:6}\t{line}", i as i64 + init_line));
    }
    out.push('\n');
    out
}

/// A Python list of integers as `str()` prints it: `[1, 12]`.
pub(crate) fn py_list(values: &[i64]) -> String {
    let inner: Vec<String> = values.iter().map(i64::to_string).collect();
    format!("[{}]", inner.join(", "))
}

/// Python's `os.path.normpath` for the absolute paths `find` prints: repeated and trailing
/// slashes and `.` components removed.
pub(crate) fn normpath(path: &str) -> String {
    let absolute = path.starts_with('/');
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

/// Non-overlapping occurrences, like Python's `str.count` for a non-empty needle.
pub(crate) fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expandtabs_matches_python() {
        assert_eq!(expandtabs("a\tb"), "a       b");
        assert_eq!(expandtabs("abcdefgh\tb"), "abcdefgh        b");
        assert_eq!(expandtabs("x\n\ty"), "x\n        y");
    }

    #[test]
    fn numbering_is_six_columns_and_a_tab() {
        assert_eq!(
            make_output("a\nb", "/w/f", 9),
            "Here's the result of running `cat -n` on /w/f:\n     9\ta\n    10\tb\n"
        );
    }

    #[test]
    fn long_content_is_clipped_with_the_notice() {
        let long = "x".repeat(MAX_RESPONSE_LEN + 5);
        let clipped = maybe_truncate(&long);
        assert!(clipped.ends_with(TRUNCATED_MESSAGE));
        assert_eq!(clipped.len(), MAX_RESPONSE_LEN + TRUNCATED_MESSAGE.len());
    }

    #[test]
    fn normpath_and_lists_match_python() {
        assert_eq!(normpath("/w/dir/"), "/w/dir");
        assert_eq!(normpath("/w//dir/./a"), "/w/dir/a");
        assert_eq!(py_list(&[1, 12]), "[1, 12]");
        assert_eq!(count("aaaa", "aa"), 2);
    }
}
