//! The named options of the text scorers, with the reference's defaults (its keyword
//! arguments `location`, `ignore_case`, `numeric`, `match_all`).

use super::text::Location;

/// How [`match_`](super::match_) compares: where the target must be (default
/// [`Location::End`]), whether case is ignored (default yes), and whether numbers compare as
/// numbers (default no).
///
/// ```
/// use actuator_eval::scorers::{Location, MatchOptions};
/// let options = MatchOptions::default().location(Location::Any).numeric(true);
/// assert_eq!(options.location, Location::Any);
/// assert!(options.ignore_case);
/// assert!(options.numeric);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MatchOptions {
    /// Where the target must appear in the answer.
    pub location: Location,
    /// Compare case-insensitively.
    pub ignore_case: bool,
    /// Compare numbers as numbers (currency signs and thousands separators dropped).
    pub numeric: bool,
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions {
            location: Location::End,
            ignore_case: true,
            numeric: false,
        }
    }
}

impl MatchOptions {
    /// Where the target must appear.
    #[must_use]
    pub fn location(mut self, location: Location) -> Self {
        self.location = location;
        self
    }

    /// Whether case is ignored.
    #[must_use]
    pub fn ignore_case(mut self, ignore_case: bool) -> Self {
        self.ignore_case = ignore_case;
        self
    }

    /// Whether numbers compare as numbers.
    #[must_use]
    pub fn numeric(mut self, numeric: bool) -> Self {
        self.numeric = numeric;
        self
    }
}

/// How [`includes`](super::includes) compares: whether case is ignored (default yes).
///
/// ```
/// use actuator_eval::scorers::IncludesOptions;
/// assert!(IncludesOptions::default().ignore_case);
/// assert!(!IncludesOptions::default().ignore_case(false).ignore_case);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct IncludesOptions {
    /// Compare case-insensitively.
    pub ignore_case: bool,
}

impl Default for IncludesOptions {
    fn default() -> Self {
        IncludesOptions { ignore_case: true }
    }
}

impl IncludesOptions {
    /// Whether case is ignored.
    #[must_use]
    pub fn ignore_case(mut self, ignore_case: bool) -> Self {
        self.ignore_case = ignore_case;
        self
    }
}

/// How [`pattern`](super::pattern) compares: whether case is ignored (default yes), and
/// whether every capture group must equal a target (default no: any one).
///
/// ```
/// use actuator_eval::scorers::PatternOptions;
/// let options = PatternOptions::default().match_all(true);
/// assert!(options.ignore_case && options.match_all);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PatternOptions {
    /// Match the expression and compare case-insensitively.
    pub ignore_case: bool,
    /// Every capture group must equal a target.
    pub match_all: bool,
}

impl Default for PatternOptions {
    fn default() -> Self {
        PatternOptions {
            ignore_case: true,
            match_all: false,
        }
    }
}

impl PatternOptions {
    /// Whether case is ignored.
    #[must_use]
    pub fn ignore_case(mut self, ignore_case: bool) -> Self {
        self.ignore_case = ignore_case;
        self
    }

    /// Whether every capture group must equal a target.
    #[must_use]
    pub fn match_all(mut self, match_all: bool) -> Self {
        self.match_all = match_all;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_references() {
        let m = MatchOptions::default();
        assert_eq!(
            (m.location, m.ignore_case, m.numeric),
            (Location::End, true, false)
        );
        assert!(IncludesOptions::default().ignore_case);
        let p = PatternOptions::default();
        assert_eq!((p.ignore_case, p.match_all), (true, false));
    }
}
