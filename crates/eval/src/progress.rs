//! The progress display: a bar on a terminal (indicatif), plain lines otherwise.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actuator_events::ModelRetryEvent;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::throughput::Throughput;

/// Without a terminal, the longest a run that finishes samples goes without a line: a batch
/// job's output file (a large shard, where 5 % is thousands of samples) shows it is alive.
const LINE_AT_LEAST_EVERY: Duration = Duration::from_secs(30);

/// Samples done of the total, running, errors, tokens and elapsed time.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    /// Where plain lines go (standard error), when they are shown.
    lines: Option<Mutex<Box<dyn Write + Send>>>,
    task: String,
    total: usize,
    running: AtomicUsize,
    done: AtomicUsize,
    errors: AtomicUsize,
    tokens: AtomicU64,
    started: Instant,
    /// When the last plain line was written, in milliseconds after `started`.
    last_line_ms: AtomicU64,
    /// [`LINE_AT_LEAST_EVERY`], shorter in tests.
    line_every: Duration,
    /// The model endpoints' counts at the start, for the throughput lines.
    throughput: Throughput,
}

impl Progress {
    pub(crate) fn new(enabled: bool, task: &str, total: usize) -> Self {
        let terminal = enabled && std::io::stderr().is_terminal();
        let bar = terminal.then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            let style =
                ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(task.to_owned());
            bar
        });
        let lines = (enabled && !terminal)
            .then(|| Mutex::new(Box::new(std::io::stderr()) as Box<dyn Write + Send>));
        Self::with(bar, lines, task, total)
    }

    fn with(
        bar: Option<ProgressBar>,
        lines: Option<Mutex<Box<dyn Write + Send>>>,
        task: &str,
        total: usize,
    ) -> Self {
        Progress {
            bar,
            lines,
            task: task.to_owned(),
            total,
            running: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
            tokens: AtomicU64::new(0),
            started: Instant::now(),
            last_line_ms: AtomicU64::new(0),
            line_every: LINE_AT_LEAST_EVERY,
            throughput: Throughput::start(),
        }
    }

    /// The model endpoints' throughput since the run started.
    pub(crate) fn throughput(&self) -> &Throughput {
        &self.throughput
    }

    fn message(&self) -> String {
        let mut message = format!(
            "running {} · errors {} · tokens {}",
            self.running.load(Ordering::Relaxed),
            self.errors.load(Ordering::Relaxed),
            self.tokens.load(Ordering::Relaxed)
        );
        if let Some(throughput) = self.throughput.line() {
            message.push_str(" · ");
            message.push_str(&throughput);
        }
        message
    }

    pub(crate) fn started(&self) {
        self.running.fetch_add(1, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.set_message(self.message());
        }
    }

    pub(crate) fn finished(&self, failed: bool, tokens: u64) {
        self.running.fetch_sub(1, Ordering::Relaxed);
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if failed {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        self.tokens.store(tokens, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.set_message(self.message());
            bar.inc(1);
        } else if let Some(lines) = &self.lines {
            // About twenty lines per run, the last sample always, and a line at least every
            // half minute while samples finish.
            let every = (self.total / 20).max(1);
            let now_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let last_ms = self.last_line_ms.load(Ordering::Relaxed);
            let due = u128::from(now_ms.saturating_sub(last_ms)) >= self.line_every.as_millis();
            if done.is_multiple_of(every) || done == self.total || due {
                self.last_line_ms.store(now_ms, Ordering::Relaxed);
                let line = format!(
                    "{}: {done}/{} samples · {} · {:.1}s\n",
                    self.task,
                    self.total,
                    self.message(),
                    self.started.elapsed().as_secs_f64()
                );
                if let Ok(mut out) = lines.lock() {
                    // A closed standard error is no reason to stop an evaluation.
                    let _ = out.write_all(line.as_bytes());
                }
            }
        }
    }

    /// A provider is about to retry a sample's request: one line, above the bar on a
    /// terminal, with the error and the wait.
    pub(crate) fn retry(&self, sample: &str, retry: &ModelRetryEvent) {
        let line = format!(
            "{}: {sample}: retry {}: {}; retrying in {:.1} s (attempt {})",
            self.task,
            retry.model,
            retry.error,
            retry.wait,
            retry.retry.saturating_add(1)
        );
        if let Some(bar) = &self.bar {
            bar.println(line);
        } else if let Some(lines) = &self.lines
            && let Ok(mut out) = lines.lock()
        {
            // A closed standard error is no reason to stop an evaluation.
            let _ = writeln!(out, "{line}");
        }
    }

    pub(crate) fn done(&self) {
        // Each model's throughput over the whole run, on a line of its own (before the bar
        // finishes, so that the lines are above it).
        for (model, throughput) in self.throughput.models() {
            let line = format!("{}: {model}: {throughput}", self.task);
            if let Some(bar) = &self.bar {
                bar.println(line);
            } else if let Some(lines) = &self.lines
                && let Ok(mut out) = lines.lock()
            {
                // A closed standard error is no reason to stop an evaluation.
                let _ = writeln!(out, "{line}");
            }
        }
        if let Some(bar) = &self.bar {
            bar.finish_with_message(self.message());
        }
    }
}

/// A progress display whose plain lines go to a buffer the test reads.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use std::sync::Arc;

    /// The lines written so far.
    #[derive(Clone, Default)]
    pub(crate) struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Shared {
        pub(crate) fn text(&self) -> String {
            String::from_utf8(self.0.lock().map(|v| v.clone()).unwrap_or_default())
                .unwrap_or_default()
        }
    }

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Progress of `total` samples of task `task`, its lines in the returned buffer.
    pub(crate) fn lines(task: &str, total: usize) -> (Progress, Shared) {
        let out = Shared::default();
        let progress = Progress::with(None, Some(Mutex::new(Box::new(out.clone()))), task, total);
        (progress, out)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::lines;
    use super::*;

    #[test]
    fn a_retry_is_a_line_with_the_sample_the_error_and_the_wait() {
        let (progress, out) = lines("demo", 4);
        let retry = ModelRetryEvent::new(
            "openai-api/local",
            1,
            2.5,
            "error sending request: connection refused",
        );
        progress.retry("sample 2 (epoch 1)", &retry);
        let text = out.text();
        assert_eq!(
            text,
            "demo: sample 2 (epoch 1): retry openai-api/local: error sending request: connection refused; retrying in 2.5 s (attempt 2)\n"
        );
    }

    #[test]
    fn without_a_terminal_progress_is_about_twenty_plain_lines() {
        let (progress, out) = lines("demo", 40);
        for i in 0..40 {
            progress.started();
            progress.finished(i == 3, 15 * (i as u64 + 1));
        }
        let text = out.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 20, "{text}");
        assert!(
            lines[0].starts_with("demo: 2/40 samples · running 0 · errors 0 · tokens 30 · "),
            "{}",
            lines[0]
        );
        assert!(
            lines[19].starts_with("demo: 40/40 samples · running 0 · errors 1 · tokens 600 · "),
            "{}",
            lines[19]
        );
    }
}

#[cfg(test)]
mod throughput_lines {
    use super::testing::lines;
    use actuator_model::concurrency::{ConnectionLimit, connection_controller};

    #[test]
    fn each_models_throughput_is_on_the_lines_and_on_one_of_its_own_at_the_end() {
        let (progress, out) = lines("demo", 1);
        let c = connection_controller("progress|lines", "t/progress", &ConnectionLimit::Fixed(2));
        drop(c.try_acquire());
        c.success(false);
        c.rate_limited(None);
        progress.started();
        progress.finished(false, 0);
        progress.done();
        let text = out.text();
        let first = text.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("demo: 1/1 samples · running 0 · errors 0 · tokens 0 · ")
                && first.contains("t/progress: "),
            "{text}"
        );
        assert!(
            text.lines().any(|l| l.starts_with("demo: t/progress: ")
                && l.contains("requests/s, concurrency 2, 1 back-off")),
            "{text}"
        );
    }
}

#[cfg(test)]
mod heartbeat {
    use super::testing::lines;
    use super::*;

    #[test]
    fn without_a_terminal_a_slow_large_run_still_writes_a_line_every_interval() {
        // 10,000 samples: a line every 500 by count; three finish 60 ms apart, with an
        // interval of 50 ms standing in for the half minute.
        let (mut progress, out) = lines("shard", 10_000);
        progress.line_every = Duration::from_millis(50);
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(60));
            progress.started();
            progress.finished(false, 0);
        }
        let text = out.text();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.starts_with("shard: 1/10000 samples"), "{text}");

        // The default interval writes none of them (the count's step is 500).
        let (progress, out) = lines("shard", 10_000);
        for _ in 0..3 {
            progress.started();
            progress.finished(false, 0);
        }
        assert_eq!(out.text(), "");
    }
}
