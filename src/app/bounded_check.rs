//! The model check of one test under a time bound: `check` and `run` give every test at most
//! `--timeout` seconds, and `run` also stops it within a fraction of a second of Ctrl-C. The
//! model itself reads only a flag (it stays free of clocks and signals); a watcher thread here
//! sets the flag at the deadline or on a stop signal.

use super::interrupt;
use crate::litmus::ast::Test;
use crate::model::{self, ModelError, ModelVerdict};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How often the watcher looks at the clock and the stop signals.
const WATCH_EVERY: Duration = Duration::from_millis(50);

/// The time bound given on the command line, checked.
pub fn timeout(seconds: f64) -> Result<Duration, String> {
    if seconds.is_finite() && seconds > 0.0 {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(format!(
            "--timeout {seconds}: expected a positive number of seconds"
        ))
    }
}

/// [`model::check`] of `test`, given up after `limit` or on a stop signal, with the reason.
pub fn check(test: &Test, limit: Duration) -> Result<ModelVerdict, String> {
    let stop = Arc::new(AtomicBool::new(false));
    let (done, finished) = mpsc::channel::<()>();
    let flag = Arc::clone(&stop);
    let started = Instant::now();
    let watcher = std::thread::spawn(move || loop {
        match finished.recv_timeout(WATCH_EVERY) {
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if interrupt::requested() || started.elapsed() >= limit {
                    flag.store(true, Ordering::Relaxed);
                    return;
                }
            }
            _ => return,
        }
    });
    let result = model::check_until(test, Some(stop));
    drop(done);
    let _ = watcher.join();
    result.map_err(|e| match e {
        ModelError::Stopped if interrupt::requested() => "model: interrupted".to_string(),
        ModelError::Stopped => format!(
            "model: timed out after {:.1} s (raise --timeout to wait longer)",
            limit.as_secs_f64()
        ),
        other => format!("model: {other}"),
    })
}
