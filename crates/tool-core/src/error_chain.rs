//! An error with its causes, for wherever an error is shown to someone who cannot call
//! `source()`: a model reading a tool's result, a log, a terminal.
//!
//! The errors of this workspace follow one rule: an error's message says what went wrong at its
//! own level, and the error that caused it is its `source()`, never repeated in the message. A
//! reader that wants the whole story displays the error through [`ErrorChain`].

use std::error::Error;
use std::fmt;

/// Displays an error followed by each of its sources: `message: cause: cause of the cause`.
///
/// A cause whose text the line already holds is left out, so an error from a library that
/// still repeats its source in its message reads once.
///
/// ```
/// use actuator_tool_core::ErrorChain;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("Cannot read the dataset qa.jsonl")]
/// struct DatasetError(#[source] std::io::Error);
///
/// let err = DatasetError(std::io::Error::other("permission denied"));
/// assert_eq!(err.to_string(), "Cannot read the dataset qa.jsonl");
/// assert_eq!(
///     ErrorChain(&err).to_string(),
///     "Cannot read the dataset qa.jsonl: permission denied"
/// );
/// ```
#[derive(Clone, Copy)]
pub struct ErrorChain<'a>(pub &'a (dyn Error + 'a));

impl fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = self.0.to_string();
        let mut source = self.0.source();
        // Bounded by the chain a library builds; a cycle would need `source()` to return an
        // error that leads back to itself, which `&self` lifetimes make impractical.
        while let Some(cause) = source {
            let line = cause.to_string();
            if !line.is_empty() && !text.contains(&line) {
                text.push_str(": ");
                text.push_str(&line);
            }
            source = cause.source();
        }
        f.write_str(&text)
    }
}

impl fmt::Debug for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Middle);

    #[derive(Debug, thiserror::Error)]
    #[error("middle: inner")]
    struct Middle(#[source] std::io::Error);

    #[test]
    fn every_cause_once() {
        let err = Outer(Middle(std::io::Error::other("inner")));
        // `middle` already says `inner`: it is not said twice.
        assert_eq!(ErrorChain(&err).to_string(), "outer: middle: inner");
    }

    #[test]
    fn an_error_without_source_is_its_message() {
        let err = std::io::Error::other("alone");
        assert_eq!(ErrorChain(&err).to_string(), "alone");
    }
}
