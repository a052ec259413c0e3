//! The reference's built-in scorers: `match`, `includes`, `pattern`, `exact`, `f1`, and the
//! model-graded `model_graded_qa`.

mod model_graded;
mod options;
mod text;

pub use model_graded::{
    DEFAULT_GRADE_PATTERN, DEFAULT_INSTRUCTIONS, DEFAULT_TEMPLATE, ModelGraded, model_graded_qa,
};
pub use options::{IncludesOptions, MatchOptions, PatternOptions};
pub use text::Location;

use actuator_events::{CORRECT, INCORRECT, Score};
use actuator_model::BoxFuture;
use actuator_multi::TaskState;

use crate::error::ScoreError;
use crate::sample::Target;
use crate::scorer::{Metric, Scorer};

/// `no_response` when the completion is empty or blank.
fn empty_reason(completion: &str) -> Option<&'static str> {
    completion.trim().is_empty().then_some("no_response")
}

fn with_reason(score: Score, reason: Option<&str>) -> Score {
    match reason {
        Some(r) => score.with_reason(r),
        None => score,
    }
}

/// A scorer built from a comparison of the completion with each target (the reference's
/// `str_match_scorer`): correct on the first target that matches.
struct StrMatch<F> {
    name: &'static str,
    check: F,
}

impl<F> Scorer for StrMatch<F>
where
    F: Fn(&str, &str) -> (String, bool) + Send + Sync,
{
    fn name(&self) -> &str {
        self.name
    }

    fn score<'a>(
        &'a self,
        state: &'a TaskState,
        target: &'a Target,
    ) -> BoxFuture<'a, Result<Score, ScoreError>> {
        let completion = state.output.completion();
        let reason = empty_reason(&completion);
        let mut answer = None;
        for t in target.texts() {
            let (a, matched) = (self.check)(&completion, t);
            if matched {
                let score = Score::new(CORRECT)
                    .with_answer(a)
                    .with_explanation(completion.clone());
                return Box::pin(std::future::ready(Ok(with_reason(score, reason))));
            }
            answer = Some(a);
        }
        let mut score = Score::new(INCORRECT).with_explanation(completion.clone());
        if let Some(a) = answer {
            score = score.with_answer(a);
        }
        Box::pin(std::future::ready(Ok(with_reason(score, reason))))
    }
}

/// The reference's `match`: the completion begins with, ends with (default), contains or is a
/// target, ignoring case (default) and surrounding punctuation; with `numeric`, numbers are
/// compared as numbers (currency signs and thousands separators dropped, 5 significant
/// digits). See [`MatchOptions`].
///
/// ```
/// use actuator_eval::scorers::{Location, MatchOptions, match_};
/// let scorer = match_(MatchOptions::default().location(Location::End).numeric(true));
/// # let _ = scorer;
/// ```
pub fn match_(options: MatchOptions) -> impl Scorer {
    let MatchOptions {
        location,
        ignore_case,
        numeric,
    } = options;
    StrMatch {
        name: "match",
        check: move |v: &str, t: &str| text::match_str(v, t, location, ignore_case, numeric),
    }
}

/// The reference's `includes`: a target appears in the completion (case-insensitive by
/// default; see [`IncludesOptions`]).
///
/// ```
/// use actuator_eval::scorers::{IncludesOptions, includes};
/// let scorer = includes(IncludesOptions::default());
/// # let _ = scorer;
/// ```
pub fn includes(options: IncludesOptions) -> impl Scorer {
    let IncludesOptions { ignore_case } = options;
    StrMatch {
        name: "includes",
        check: move |v: &str, t: &str| {
            if ignore_case {
                let v = text::fold(v);
                let matched = v.contains(&text::fold(t));
                (v, matched)
            } else {
                (v.to_owned(), v.contains(t))
            }
        },
    }
}

/// The reference's `pattern`: a regular expression extracts the answer (its capture groups,
/// else the whole match), which must equal a target; with `match_all`, every group must.
#[derive(Debug, Clone)]
pub struct Pattern {
    regex: regex::Regex,
    ignore_case: bool,
    match_all: bool,
}

/// Builds a [`Pattern`] scorer; an invalid expression is an error naming it.
///
/// ```
/// use actuator_eval::scorers::pattern;
/// use actuator_eval::scorers::PatternOptions;
/// assert!(pattern(r"ANSWER: (\w+)", PatternOptions::default()).is_ok());
/// let invalid = pattern(r"(", PatternOptions::default());
/// assert!(invalid.err().unwrap().to_string().contains("("));
/// ```
pub fn pattern(expression: &str, options: PatternOptions) -> Result<Pattern, ScoreError> {
    let PatternOptions {
        ignore_case,
        match_all,
    } = options;
    let regex = regex::RegexBuilder::new(expression)
        .case_insensitive(ignore_case)
        .build()
        .map_err(|e| ScoreError {
            scorer: "pattern".into(),
            message: format!("invalid pattern '{expression}': {e}"),
        })?;
    Ok(Pattern {
        regex,
        ignore_case,
        match_all,
    })
}

impl Scorer for Pattern {
    fn name(&self) -> &str {
        "pattern"
    }

    fn score<'a>(
        &'a self,
        state: &'a TaskState,
        target: &'a Target,
    ) -> BoxFuture<'a, Result<Score, ScoreError>> {
        let completion = state.output.completion();
        let reason = empty_reason(&completion);
        let targets: Vec<String> = target
            .texts()
            .iter()
            .map(|t| {
                if self.ignore_case {
                    t.to_lowercase()
                } else {
                    (*t).to_owned()
                }
            })
            .collect();
        let hits = |m: &str| {
            let m = if self.ignore_case {
                m.to_lowercase()
            } else {
                m.to_owned()
            };
            targets.contains(&m)
        };
        let score = match self.regex.captures(&completion) {
            None => Score::new(INCORRECT)
                .with_reason(reason.unwrap_or("invalid_response_format"))
                .with_explanation(format!(
                    "Scoring pattern not matched in output: {completion}"
                )),
            Some(caps) => {
                let groups: Vec<Option<&str>> = if caps.len() > 1 {
                    caps.iter().skip(1).map(|g| g.map(|m| m.as_str())).collect()
                } else {
                    vec![caps.get(0).map(|m| m.as_str())]
                };
                let found: Option<String> = if self.match_all {
                    let strings: Vec<&str> = groups.iter().flatten().copied().collect();
                    (!strings.is_empty() && strings.iter().all(|g| hits(g))).then(|| target.text())
                } else {
                    groups
                        .iter()
                        .flatten()
                        .find(|g| hits(g))
                        .map(|g| (*g).to_owned())
                };
                let answer = match (&found, self.match_all, groups.as_slice()) {
                    (None, false, [Some(only)]) => Some((*only).to_owned()),
                    _ => found.clone(),
                };
                let mut score = Score::new(if found.is_some() { CORRECT } else { INCORRECT })
                    .with_explanation(completion.clone());
                if let Some(a) = answer {
                    score = score.with_answer(a);
                }
                with_reason(score, reason)
            }
        };
        Box::pin(std::future::ready(Ok(score)))
    }
}

/// The reference's `exact`: the normalised completion (case, punctuation, articles, numbers,
/// whitespace) equals a normalised target. Metrics: mean and stderr.
pub fn exact() -> impl Scorer {
    Normalized {
        f1: false,
        stop_words: Vec::new(),
    }
}

/// The reference's `f1`: the best token F1 between the normalised completion and a target,
/// rounded to two places. Metrics: mean and stderr.
pub fn f1(stop_words: Vec<String>) -> impl Scorer {
    Normalized {
        f1: true,
        stop_words,
    }
}

struct Normalized {
    f1: bool,
    stop_words: Vec<String>,
}

impl Scorer for Normalized {
    fn name(&self) -> &str {
        if self.f1 { "f1" } else { "exact" }
    }

    fn metrics(&self) -> Vec<Metric> {
        vec![Metric::Mean, Metric::Stderr]
    }

    fn score<'a>(
        &'a self,
        state: &'a TaskState,
        target: &'a Target,
    ) -> BoxFuture<'a, Result<Score, ScoreError>> {
        let completion = state.output.completion();
        let reason = empty_reason(&completion);
        let targets = target.texts();
        let score = if self.f1 {
            Score::new(text::max_f1(&completion, &targets, &self.stop_words))
        } else {
            let answer = text::normalize(&completion, &[]);
            let hit = targets.iter().any(|t| {
                let t = text::normalize(t, &[]);
                !t.is_empty() && t == answer
            });
            Score::new(if hit { CORRECT } else { INCORRECT })
        };
        Box::pin(std::future::ready(Ok(with_reason(
            score.with_answer(completion.clone()),
            reason,
        ))))
    }
}
