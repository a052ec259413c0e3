//! `completion/complete`: suggestions for a prompt's argument or a resource template's
//! variable, from the completer its author gave it.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde_json::{Value, json};

/// The most values one completion result carries (the specification's limit); the rest are
/// counted in `total` with `hasMore`.
pub const MAX_COMPLETION_VALUES: usize = 100;

type CompleteFn = dyn Fn(&str, &BTreeMap<String, String>) -> Vec<String> + Send + Sync;

/// A completer: what the user typed so far and the other arguments already given → the
/// suggestions, best first.
#[derive(Clone)]
pub(crate) struct Completer(Arc<CompleteFn>);

impl fmt::Debug for Completer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Completer")
    }
}

impl Completer {
    pub(crate) fn new<F>(complete: F) -> Self
    where
        F: Fn(&str, &BTreeMap<String, String>) -> Vec<String> + Send + Sync + 'static,
    {
        Completer(Arc::new(complete))
    }

    /// The `completion` object of a result: at most [`MAX_COMPLETION_VALUES`] values, with
    /// the total and whether more exist.
    pub(crate) fn complete(&self, value: &str, context: &BTreeMap<String, String>) -> Value {
        let mut values = (self.0)(value, context);
        let total = values.len();
        values.truncate(MAX_COMPLETION_VALUES);
        json!({"values": values, "total": total, "hasMore": total > MAX_COMPLETION_VALUES})
    }
}

/// The empty completion (an argument nobody completes).
pub(crate) fn no_completion() -> Value {
    json!({"values": [], "total": 0, "hasMore": false})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_is_cut_at_the_limit_and_says_so() {
        let many = Completer::new(|prefix, _| (0..250).map(|i| format!("{prefix}{i}")).collect());
        let out = many.complete("v", &BTreeMap::new());
        assert_eq!(
            out["values"].as_array().unwrap().len(),
            MAX_COMPLETION_VALUES
        );
        assert_eq!(out["total"], 250);
        assert_eq!(out["hasMore"], true);
        let few = Completer::new(|_, context| vec![context["a"].clone()]);
        let context = BTreeMap::from([("a".to_owned(), "x".to_owned())]);
        assert_eq!(few.complete("", &context)["values"], json!(["x"]));
    }
}
