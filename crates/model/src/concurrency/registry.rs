//! The process-wide registry of controllers, one per endpoint and kind of limit (the
//! reference's `_AnyIOSemaphoreRegistry`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::{ConcurrencyController, ConnectionLimit};

/// Key → controller. It holds one entry per endpoint and kind of limit a process has used:
/// it grows with the models a program makes, not with its requests.
static CONTROLLERS: Mutex<BTreeMap<String, Arc<ConcurrencyController>>> =
    Mutex::new(BTreeMap::new());

/// The controller of the endpoint `key` (provider, base URL, model and whatever else tells
/// accounts apart; never shown), made with `limit` the first time it is asked for, shown as
/// `name`. As in the reference, adaptive and fixed limits of one key are separate entries (a
/// fixed `max_connections` is never handed an adaptive controller or the reverse), and the
/// first caller's bounds win for the life of the process.
///
/// ```
/// use std::sync::Arc;
/// use actuator_model::concurrency::{ConnectionLimit, connection_controller};
/// let a = connection_controller("doc|registry", "openai/gpt-4o", &ConnectionLimit::default());
/// let b = connection_controller("doc|registry", "openai/gpt-4o", &ConnectionLimit::default());
/// assert!(Arc::ptr_eq(&a, &b));
/// let fixed = connection_controller("doc|registry", "openai/gpt-4o", &ConnectionLimit::Fixed(4));
/// assert!(!Arc::ptr_eq(&a, &fixed));
/// assert_eq!(fixed.concurrency(), 4);
/// ```
pub fn connection_controller(
    key: &str,
    name: &str,
    limit: &ConnectionLimit,
) -> Arc<ConcurrencyController> {
    let kind = if limit.is_adaptive() {
        "adaptive"
    } else {
        "static"
    };
    let entry = format!("{key}#{kind}");
    let mut controllers = CONTROLLERS.lock().unwrap_or_else(PoisonError::into_inner);
    controllers
        .entry(entry)
        .or_insert_with(|| Arc::new(ConcurrencyController::new(key, name, limit)))
        .clone()
}

/// Every controller made in this process (for the progress display and the log).
///
/// ```
/// use actuator_model::concurrency::{ConnectionLimit, connection_controller, connection_controllers};
/// connection_controller("doc|all", "demo/m", &ConnectionLimit::Fixed(2));
/// assert!(connection_controllers().iter().any(|c| c.name() == "demo/m"));
/// ```
pub fn connection_controllers() -> Vec<Arc<ConcurrencyController>> {
    CONTROLLERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .values()
        .cloned()
        .collect()
}
