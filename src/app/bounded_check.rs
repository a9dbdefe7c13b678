//! The model check of one test under a time bound, by the built-in checker or a cat model:
//! `check` and `run` give every test at most `--timeout` seconds, and `run` also stops it within
//! a fraction of a second of Ctrl-C. The checkers read only a [`Watch`] (they stay free of clocks
//! and signals); one watcher thread here stops each check at its deadline, or all on a stop
//! signal, and [`examined`] tells a progress bar how far the check at work has got.

use super::interrupt;
use crate::cat::{
    self,
    builtin::Chosen,
    check::{CatVerdict, CheckError},
};
use crate::litmus::ast::Test;
use crate::model::{self, Decision, ModelError, ModelVerdict, Watch};
use indicatif::HumanCount;
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// How often the watcher looks at the clock and the stop signals.
const WATCH_EVERY: Duration = Duration::from_millis(50);

/// The time bound given on the command line, checked.
pub fn timeout(seconds: f64) -> Result<Duration, String> {
    match Duration::try_from_secs_f64(seconds) {
        Ok(d) if seconds > 0.0 => Ok(d),
        _ => Err(format!(
            "--timeout {seconds}: expected a positive number of seconds"
        )),
    }
}

/// A check being watched: its deadline and what it shares.
struct Watched {
    /// `None`: beyond what the clock can count.
    deadline: Option<Instant>,
    watch: Arc<Watch>,
}

/// The checks in progress. One watcher thread serves them all, started with the first, so a
/// check costs a lock and a push, not a thread (which would cost more than checking most tests).
static WATCHED: Mutex<Vec<Watched>> = Mutex::new(Vec::new());

/// Starts the watcher thread once: every [`WATCH_EVERY`] it stops the checks past their
/// deadline, and all of them on a stop signal.
fn start_watcher() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        std::thread::spawn(|| loop {
            std::thread::sleep(WATCH_EVERY);
            let now = Instant::now();
            let stop_all = interrupt::requested();
            for w in watched().iter() {
                if stop_all || w.deadline.is_some_and(|d| now >= d) {
                    w.watch.stop();
                }
            }
        });
    });
}

/// The list of checks in progress (a panic elsewhere leaves it usable).
fn watched() -> std::sync::MutexGuard<'static, Vec<Watched>> {
    WATCHED.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`model::check`] of `test`, given up after `limit` or on a stop signal, with the reason.
pub fn check(test: &Test, limit: Duration) -> Result<ModelVerdict, String> {
    bounded(limit, |watch| model::check_until(test, Some(watch))).map_err(|e| match e {
        ModelError::Stopped => stopped_reason(limit),
        other => format!("model: {other}"),
    })
}

/// [`model::decide_until`] of `test` (the condition alone), bounded like [`check`].
pub fn decide(test: &Test, limit: Duration) -> Result<Decision, String> {
    bounded(limit, |watch| model::decide_until(test, Some(watch))).map_err(|e| match e {
        ModelError::Stopped => stopped_reason(limit),
        other => format!("model: {other}"),
    })
}

/// The cat model `m` run on `test` by the interpreter, bounded like [`check`].
pub fn check_cat(m: &Chosen, test: &Test, limit: Duration) -> Result<CatVerdict, String> {
    bounded(limit, |watch| {
        cat::check::check_until(&m.model, test, Some(&watch))
    })
    .map_err(|e| match e {
        CheckError::Model(ModelError::Stopped) => stopped_reason(limit),
        CheckError::Model(other) => format!("model {}: {other}", m.name),
        CheckError::Cat(e) => format!("model {}:{}: {}", m.name, e.line, e.message),
    })
}

/// Why a check was stopped: Ctrl-C (or another stop signal), else the time bound.
fn stopped_reason(limit: Duration) -> String {
    if interrupt::requested() {
        "model: interrupted".to_string()
    } else {
        format!(
            "model: timed out after {:.1} s (raise --timeout to wait longer)",
            limit.as_secs_f64()
        )
    }
}

/// Runs `work` with a watch the watcher stops at the deadline or on a stop signal.
fn bounded<T>(limit: Duration, work: impl FnOnce(Arc<Watch>) -> T) -> T {
    start_watcher();
    let watch = Arc::new(Watch::default());
    watched().push(Watched {
        deadline: Instant::now().checked_add(limit),
        watch: Arc::clone(&watch),
    });
    let result = work(Arc::clone(&watch));
    watched().retain(|w| !Arc::ptr_eq(&w.watch, &watch));
    result
}

/// Candidate executions examined by the checks in progress, `None` when none is.
pub fn examined() -> Option<u64> {
    let watched = watched();
    (!watched.is_empty()).then(|| watched.iter().map(|w| w.watch.examined()).sum())
}

/// How far the check at work has got, for a progress bar: the candidates it has examined, once
/// it has examined some.
pub fn progress() -> Option<String> {
    examined()
        .filter(|&n| n > 0)
        .map(|n| format!("{} candidates", HumanCount(n)))
}
