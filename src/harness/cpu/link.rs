//! How far apart the cores that run a test's roles are: the round trip of one cache line
//! between two threads, bounced back and forth.
//!
//! On a virtual machine the host decides where the guest's cores sit, and may move them while
//! a run goes on: two of them sharing a cache (a round trip of tens of nanoseconds) or on
//! different chiplets (hundreds). Both the rate of a 2-role test and which configuration
//! shows the most weak outcomes depend on it (`docs/tune.md`), so a CPU run records it and
//! `tune` decides within one such state.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Round trips one probe makes at most, in batches timed apart.
const ROUND_TRIPS: u64 = 2_000;
/// Round trips per timed batch.
const BATCH: u64 = 100;
/// A probe's time bound: where the two threads share one core (or the machine is loaded),
/// each hand-over waits for the scheduler, and the probe reports what it measured by then.
const BOUND: Duration = Duration::from_millis(20);
/// Fewer batches than this in the bound say nothing about the cores, only the scheduler.
const FEWEST: usize = 3;
/// Spins before a waiting side sleeps.
const SPINS: u32 = 1 << 12;
/// How long a waiting side sleeps between looks once spinning failed: sleeping rather than
/// yielding gives a core the two threads share to the other one at once (a yield may not).
const NAP: Duration = Duration::from_micros(20);

/// The round trip, in nanoseconds, of a cache line between this thread and a new one (a store
/// seen by the other side, answered by its store): the median over batches of [`BATCH`] round
/// trips, because a new thread may start on its parent's core and share it for a few
/// milliseconds until the scheduler moves it. `None` when fewer than [`FEWEST`] batches
/// finished within the probe's bound.
pub fn round_trip_ns() -> Option<f64> {
    let line = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let mut batches = std::thread::scope(|s| {
        s.spawn(|| answer(&line, &stop));
        let batches = ask(&line, &stop);
        stop.store(true, Ordering::Release);
        batches
    });
    median(&mut batches)
}

/// The median of the batches' means (the upper one of an even count), or `None` below
/// [`FEWEST`] batches.
fn median(batches: &mut [f64]) -> Option<f64> {
    if batches.len() < FEWEST {
        return None;
    }
    batches.sort_by(f64::total_cmp);
    Some(batches[batches.len() / 2])
}

/// The asking side: odd values are questions, even ones answers. Returns each finished
/// batch's mean round trip in nanoseconds.
fn ask(line: &AtomicU64, stop: &AtomicBool) -> Vec<f64> {
    let started = Instant::now();
    let mut batches = Vec::new();
    let mut batch_start = Instant::now();
    for k in 0..ROUND_TRIPS {
        line.store(2 * k + 1, Ordering::Release);
        if !wait_for(line, 2 * k + 2, stop, || started.elapsed() > BOUND) {
            break;
        }
        if (k + 1) % BATCH == 0 {
            batches.push(batch_start.elapsed().as_nanos() as f64 / BATCH as f64);
            batch_start = Instant::now();
        }
    }
    batches
}

/// The answering side: answers each question until told to stop.
fn answer(line: &AtomicU64, stop: &AtomicBool) {
    for k in 0..ROUND_TRIPS {
        if !wait_for(line, 2 * k + 1, stop, || false) {
            return;
        }
        line.store(2 * k + 2, Ordering::Release);
    }
}

/// Spins (then sleeps) until `line` holds `value`; false once `stop` is set or `late()`.
fn wait_for(line: &AtomicU64, value: u64, stop: &AtomicBool, late: impl Fn() -> bool) -> bool {
    let mut spins = 0u32;
    while line.load(Ordering::Acquire) != value {
        if stop.load(Ordering::Relaxed) || late() {
            return false;
        }
        spins += 1;
        if spins < SPINS {
            std::hint::spin_loop();
        } else {
            std::thread::sleep(NAP);
        }
    }
    true
}

/// The round trip as a provenance value (`-` when it could not be measured).
pub fn describe(ns: Option<f64>) -> String {
    ns.map_or_else(|| "-".into(), |ns| format!("{ns:.0}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_ends_within_its_bound_and_measures_a_time_per_round_trip() {
        // Other tests share the cores, so a probe may find too few batches (`None`); what it
        // does report is a time per round trip, and no probe outlasts its bound by much.
        for _ in 0..4 {
            let started = Instant::now();
            if let Some(ns) = round_trip_ns() {
                let most = BOUND.as_nanos() as f64 / (FEWEST as u64 * BATCH) as f64;
                assert!(ns > 0.0 && ns < most, "{ns}");
            }
            assert!(started.elapsed() < BOUND * 5, "{:?}", started.elapsed());
        }
    }

    #[test]
    fn the_median_ignores_a_minority_of_batches_that_shared_a_core() {
        let mut shared_first = [250.0, 90.0, 91.0, 52_000.0, 90.5];
        assert_eq!(median(&mut shared_first), Some(91.0));
        assert_eq!(
            median(&mut [90.0, 91.0]),
            None,
            "two batches say too little"
        );
    }

    #[test]
    fn the_provenance_value_is_whole_nanoseconds_or_a_dash() {
        assert_eq!(describe(Some(83.4)), "83");
        assert_eq!(describe(None), "-");
    }
}
