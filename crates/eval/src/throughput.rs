//! Each model endpoint's throughput during an evaluation, from its concurrency controller
//! (`actuator_model::concurrency`): the progress display's throughput lines and the log's
//! `connection_limit_history` and `model_throughput`.
//!
//! The controllers belong to the process, not to a run: a run takes their counts when it
//! starts and reports what changed since. Endpoints shared with another evaluation running at
//! the same time count that one's requests too (the reference logs every controller of the
//! process the same way).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::{Instant, SystemTime};

use actuator_model::concurrency::{ConnectionLimitChange, ConnectionStats, connection_controllers};
use serde::{Deserialize, Serialize};

/// One model's throughput during a run, as the log records it in `stats.model_throughput`
/// (not a field of the reference's `EvalStats`, whose reader ignores it).
///
/// ```
/// use actuator_eval::log::schema::ModelThroughput;
/// let t: ModelThroughput = serde_json::from_str(
///     r#"{"requests": 300, "requests_per_second": 14.5, "concurrency": 15, "in_use": 3,
///         "back_offs": 4, "retries": 0, "adaptive": true}"#,
/// ).unwrap();
/// assert_eq!(t.to_string(), "14.5 requests/s, concurrency 15 (adaptive), 4 back-offs");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelThroughput {
    /// Requests that succeeded during the run.
    pub requests: u64,
    /// `requests` over the run's time so far.
    pub requests_per_second: f64,
    /// The limit on concurrent requests at the end (or now).
    pub concurrency: u32,
    /// Requests in flight at the end (or now).
    pub in_use: u32,
    /// Rate limits (429, 529) received during the run: each one a back-off.
    pub back_offs: u64,
    /// Other failed attempts of a kind that is retried (5xx, timeouts, broken connections)
    /// during the run.
    pub retries: u64,
    /// Whether the limit tuned itself.
    pub adaptive: bool,
}

impl fmt::Display for ModelThroughput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:.1} requests/s, concurrency {}{}, {} back-off{}",
            self.requests_per_second,
            self.concurrency,
            if self.adaptive { " (adaptive)" } else { "" },
            self.back_offs,
            if self.back_offs == 1 { "" } else { "s" }
        )?;
        if self.retries > 0 {
            write!(f, ", {} retries", self.retries)?;
        }
        Ok(())
    }
}

/// The controllers' counts when a run started.
pub(crate) struct Throughput {
    started: Instant,
    started_unix: f64,
    /// Controller key → its counts at the start (a controller made later started at zero).
    baseline: HashMap<String, ConnectionStats>,
}

impl Throughput {
    pub(crate) fn start() -> Self {
        Throughput {
            started: Instant::now(),
            started_unix: unix_now(),
            baseline: connection_controllers()
                .iter()
                .map(|c| (c.key().to_owned(), c.stats()))
                .collect(),
        }
    }

    /// Model name → throughput, for the models that sent requests during the run.
    pub(crate) fn models(&self) -> BTreeMap<String, ModelThroughput> {
        let seconds = self.started.elapsed().as_secs_f64().max(1e-3);
        let mut models = BTreeMap::new();
        for controller in connection_controllers() {
            let now = controller.stats();
            let (requests, back_offs, retries) = match self.baseline.get(controller.key()) {
                Some(then) => (
                    now.requests.saturating_sub(then.requests),
                    now.rate_limits.saturating_sub(then.rate_limits),
                    now.retries.saturating_sub(then.retries),
                ),
                None => (now.requests, now.rate_limits, now.retries),
            };
            if requests == 0 && back_offs == 0 && retries == 0 {
                continue;
            }
            // Two endpoints of one model name (two base URLs or accounts): one line, summed.
            let entry = models
                .entry(now.model.clone())
                .or_insert_with(|| ModelThroughput {
                    requests: 0,
                    requests_per_second: 0.0,
                    concurrency: 0,
                    in_use: 0,
                    back_offs: 0,
                    retries: 0,
                    adaptive: false,
                });
            entry.requests += requests;
            entry.requests_per_second = entry.requests as f64 / seconds;
            entry.concurrency = entry.concurrency.saturating_add(now.concurrency);
            entry.in_use = entry.in_use.saturating_add(now.in_use);
            entry.back_offs += back_offs;
            entry.retries += retries;
            entry.adaptive |= now.adaptive;
        }
        models
    }

    /// The limits' changes since the run started, oldest first (the reference's
    /// `connection_limit_history`).
    pub(crate) fn history(&self) -> Vec<ConnectionLimitChange> {
        let mut history: Vec<ConnectionLimitChange> = connection_controllers()
            .iter()
            .flat_map(|c| c.history())
            .filter(|change| change.timestamp >= self.started_unix)
            .collect();
        history.sort_by(|a, b| a.timestamp.total_cmp(&b.timestamp));
        history
    }

    /// The progress display's throughput text: one `model: …` part per model, `; ` between.
    pub(crate) fn line(&self) -> Option<String> {
        let models = self.models();
        (!models.is_empty()).then(|| {
            models
                .iter()
                .map(|(model, t)| format!("{model}: {t}"))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }
}

/// The throughput of logs merged into one (shards of one evaluation): each model's counts
/// added up, its rate their sum over `seconds` (the merged run's span, start of the first to end
/// of the last), its limit and requests in flight the highest of the logs'.
pub(crate) fn merge_throughput<'a>(
    logs: impl IntoIterator<Item = &'a BTreeMap<String, ModelThroughput>>,
    seconds: f64,
) -> BTreeMap<String, ModelThroughput> {
    let mut merged: BTreeMap<String, ModelThroughput> = BTreeMap::new();
    for log in logs {
        for (model, t) in log {
            match merged.get_mut(model) {
                Some(m) => {
                    m.requests += t.requests;
                    m.back_offs += t.back_offs;
                    m.retries += t.retries;
                    m.concurrency = m.concurrency.max(t.concurrency);
                    m.in_use = m.in_use.max(t.in_use);
                    m.adaptive |= t.adaptive;
                }
                None => {
                    merged.insert(model.clone(), t.clone());
                }
            }
        }
    }
    for t in merged.values_mut() {
        t.requests_per_second = t.requests as f64 / seconds.max(1e-3);
    }
    merged
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use actuator_model::concurrency::{ConnectionLimit, connection_controller};

    fn busy(key: &str, model: &str, requests: usize) {
        let c = connection_controller(
            key,
            model,
            &ConnectionLimit::Adaptive(
                actuator_model::concurrency::AdaptiveConcurrency::new(1, 4, 8).unwrap(),
            ),
        );
        for _ in 0..requests {
            drop(c.try_acquire());
            c.success(false);
        }
    }

    #[test]
    fn a_run_reports_what_its_endpoints_did_since_it_started() {
        // Before the run: not counted.
        busy("throughput|before", "t/before", 5);
        let throughput = Throughput::start();
        busy("throughput|before", "t/before", 3);
        busy("throughput|new", "t/new", 2);
        connection_controller("throughput|new", "t/new", &ConnectionLimit::default())
            .rate_limited(None);
        let models = throughput.models();
        assert_eq!(models["t/before"].requests, 3);
        assert_eq!(models["t/before"].back_offs, 0);
        // The same controller: the first bounds (1, 4, 8) won.
        assert_eq!(models["t/new"].requests, 2);
        assert_eq!(models["t/new"].back_offs, 1);
        assert_eq!(models["t/new"].concurrency, 3);
        let history = throughput.history();
        let cut = history.iter().find(|h| h.model == "t/new").unwrap();
        assert_eq!((cut.old_limit, cut.new_limit), (4, 3));
        assert!(history.iter().all(|h| h.model != "t/before"));
        let line = throughput.line().unwrap();
        assert!(
            line.contains("t/before: ") && line.contains("t/new: "),
            "{line}"
        );
    }

    #[test]
    fn a_throughput_reads_as_a_short_line() {
        let t = ModelThroughput {
            requests: 10,
            requests_per_second: 2.25,
            concurrency: 3,
            in_use: 1,
            back_offs: 1,
            retries: 2,
            adaptive: false,
        };
        assert_eq!(
            t.to_string(),
            "2.2 requests/s, concurrency 3, 1 back-off, 2 retries"
        );
    }
}
