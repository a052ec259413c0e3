//! Containing a panic in user code (a solver, a scorer, a sandbox's setup or teardown): it
//! becomes the sample's error, with the panic's message and where it happened, and the
//! evaluation goes on (as `fail_on_error` says).
//!
//! Where a panic happened is only known to the panic hook, so the first containment installs
//! a hook that notes the location (and a backtrace, when `RUST_BACKTRACE` asks for one) of the
//! current thread's last panic, then hands over to the hook that was there before (which
//! prints as usual). The panicking future is polled, and the panic caught, on that same
//! thread, so the note read right after the catch is this panic's.

use std::any::Any;
use std::backtrace::{Backtrace, BacktraceStatus};
use std::cell::RefCell;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Once;

use futures_util::FutureExt;

use crate::log::schema::EvalErrorInfo;

/// The message, location and backtrace of the current thread's last panic.
struct Noted {
    message: String,
    location: Option<String>,
    backtrace: Option<String>,
}

thread_local! {
    static LAST_PANIC: RefCell<Option<Noted>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

fn install_hook() {
    // `set_hook` may not be called while the thread unwinds (a drop during a panic).
    if std::thread::panicking() {
        return;
    }
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let backtrace = Backtrace::capture();
            let noted = Noted {
                message: payload_message(info.payload()),
                location: info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column())),
                backtrace: (backtrace.status() == BacktraceStatus::Captured)
                    .then(|| backtrace.to_string()),
            };
            // `try_with`: a panic while the thread's locals are being torn down is not noted.
            let _ = LAST_PANIC.try_with(|last| {
                if let Ok(mut last) = last.try_borrow_mut() {
                    *last = Some(noted);
                }
            });
            previous(info);
        }));
    });
}

/// The text of a panic's payload (`panic!("...")` gives a `&str` or a `String`).
pub(crate) fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic whose payload is not text".to_owned()
    }
}

/// The sample error for a panic in `what` (`"the solver"`, `"the scorer 'match'"`, …): the
/// message names what panicked and says what it said; the traceback adds where, as Rust
/// prints a panic (and the backtrace, when one was captured).
pub(crate) fn panic_error(what: &str, payload: &(dyn Any + Send)) -> EvalErrorInfo {
    let said = payload_message(payload);
    let noted = LAST_PANIC
        .try_with(|last| last.try_borrow_mut().ok().and_then(|mut l| l.take()))
        .ok()
        .flatten()
        .filter(|n| n.message == said);
    let message = format!("{what} panicked: {said}");
    let mut traceback = match noted.as_ref().and_then(|n| n.location.as_deref()) {
        Some(at) => format!("{what} panicked at {at}:\n{said}"),
        None => message.clone(),
    };
    if let Some(backtrace) = noted.and_then(|n| n.backtrace) {
        traceback.push_str("\n\nstack backtrace:\n");
        traceback.push_str(&backtrace);
    }
    EvalErrorInfo::with_traceback(message, traceback)
}

/// Runs `work` (user code) to its end; a panic in it, or in dropping it, becomes an error
/// naming `what`.
pub(crate) async fn contain<F: Future>(what: &str, work: F) -> Result<F::Output, EvalErrorInfo> {
    install_hook();
    AssertUnwindSafe(work)
        .catch_unwind()
        .await
        .map_err(|payload| panic_error(what, payload.as_ref()))
}

/// Calls `work` (user code); a panic in it becomes an error naming `what`.
pub(crate) fn contain_sync<T>(what: &str, work: impl FnOnce() -> T) -> Result<T, EvalErrorInfo> {
    install_hook();
    std::panic::catch_unwind(AssertUnwindSafe(work))
        .map_err(|payload| panic_error(what, payload.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contained_panic_says_what_panicked_what_it_said_and_where() {
        let err = contain_sync("the solver", || panic!("out of {}", "cheese")).unwrap_err();
        assert_eq!(err.message, "the solver panicked: out of cheese");
        assert!(
            err.traceback.contains("contain.rs:") && err.traceback.contains("out of cheese"),
            "{}",
            err.traceback
        );
        assert_eq!(contain_sync("x", || 7).ok(), Some(7));
    }

    #[test]
    fn a_payload_that_is_not_text_is_named_as_such() {
        let err = contain_sync("the scorer 'x'", || std::panic::panic_any(42_u8)).unwrap_err();
        assert_eq!(
            err.message,
            "the scorer 'x' panicked: a panic whose payload is not text"
        );
    }
}
