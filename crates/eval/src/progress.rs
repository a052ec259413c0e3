//! The progress display: a bar on a terminal (indicatif), plain lines otherwise.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Samples done of the total, running, errors, tokens and elapsed time.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    lines: bool,
    task: String,
    total: usize,
    running: AtomicUsize,
    done: AtomicUsize,
    errors: AtomicUsize,
    tokens: AtomicU64,
    started: Instant,
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
        Progress {
            bar,
            lines: enabled && !terminal,
            task: task.to_owned(),
            total,
            running: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
            tokens: AtomicU64::new(0),
            started: Instant::now(),
        }
    }

    fn message(&self) -> String {
        format!(
            "running {} · errors {} · tokens {}",
            self.running.load(Ordering::Relaxed),
            self.errors.load(Ordering::Relaxed),
            self.tokens.load(Ordering::Relaxed)
        )
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
        } else if self.lines {
            // About twenty lines per run, and the last sample always.
            let every = (self.total / 20).max(1);
            if done.is_multiple_of(every) || done == self.total {
                self.line(done);
            }
        }
    }

    fn line(&self, done: usize) {
        let mut out = std::io::stderr().lock();
        let _ = std::io::Write::write_fmt(
            &mut out,
            format_args!(
                "{}: {done}/{} samples · {} · {:.1}s\n",
                self.task,
                self.total,
                self.message(),
                self.started.elapsed().as_secs_f64()
            ),
        );
    }

    pub(crate) fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_with_message(self.message());
        }
    }
}
