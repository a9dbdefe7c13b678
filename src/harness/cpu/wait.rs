//! Bounded spinning, and the spin barrier that starts and ends every round.
//!
//! Spins first (cheap when the other threads run on other cores), then yields (so that a test
//! with more roles than cores still progresses), and gives up after a time bound so that a
//! role that never arrives cannot hang a run.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Spins before yielding while every role has a core of its own: the others arrive within
/// about a cache line's round trip, and yielding sooner leaves the roles less aligned (SB's
/// weak rate fell from about 0.21 to 0.15 on 2 cores with 16).
const SPINS: u32 = 1 << 10;
/// Spins before yielding when the roles outnumber the cores: a role being waited for is then
/// often descheduled, and only a yield lets it run (`MP+bar.q3of3`, three roles meeting at a
/// barrier on 2 cores, took 4.0 s with 1,024 and 0.3 s with 16).
const OVERSUBSCRIBED_SPINS: u32 = 1 << 4;

thread_local! {
    /// This thread's spins before it yields (see [`spin_for`]).
    static SPIN_LIMIT: Cell<u32> = const { Cell::new(SPINS) };
}

/// Sets how long this thread's waits spin before yielding: briefly when the run's roles
/// outnumber the cores it may use.
pub fn spin_for(oversubscribed: bool) {
    SPIN_LIMIT.set(if oversubscribed {
        OVERSUBSCRIBED_SPINS
    } else {
        SPINS
    });
}
/// How long a wait inside a round may take before it gives up (and abandons the round's other
/// waits): long enough for a descheduled thread on a busy machine to come back.
const GIVE_UP: Duration = Duration::from_millis(250);

/// Waits until `done()` holds; false when `abandon` is set or the wait ran out first (which
/// sets `abandon`).
#[inline]
pub fn wait_until(abandon: &AtomicBool, mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..SPIN_LIMIT.get() {
        if done() {
            return true;
        }
        std::hint::spin_loop();
    }
    let start = Instant::now();
    loop {
        if done() {
            return true;
        }
        if abandon.load(Ordering::Relaxed) {
            return false;
        }
        if start.elapsed() > GIVE_UP {
            abandon.store(true, Ordering::Relaxed);
            return false;
        }
        std::thread::yield_now();
    }
}

/// A reusable barrier for a fixed number of threads, by spinning (then yielding) on a
/// generation counter. Arrival is a release and leaving an acquire, so everything a thread did
/// before `wait` is visible to every thread after it.
pub struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    /// A barrier for `threads` threads.
    pub fn new(threads: usize) -> SpinBarrier {
        SpinBarrier {
            threads,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    /// Arrives and waits for the other threads (unbounded: round barriers must not give up).
    pub fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::AcqRel);
            return;
        }
        let (mut spins, limit) = (0u32, SPIN_LIMIT.get());
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < limit {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many times a wait polls before it first looks at `abandon` (which it does only
    /// once it stops spinning and starts yielding).
    fn polls_before_yielding() -> u32 {
        let abandon = AtomicBool::new(true);
        let mut polls = 0;
        assert!(!wait_until(&abandon, || {
            polls += 1;
            false
        }));
        polls
    }

    #[test]
    fn waits_spin_briefly_only_when_the_roles_outnumber_the_cores() {
        let (alone, shared) = std::thread::scope(|s| {
            let alone = s.spawn(|| {
                spin_for(false);
                polls_before_yielding()
            });
            let shared = s.spawn(|| {
                spin_for(true);
                polls_before_yielding()
            });
            (alone.join().unwrap(), shared.join().unwrap())
        });
        assert_eq!(alone, SPINS + 1);
        assert_eq!(shared, OVERSUBSCRIBED_SPINS + 1);
        // A thread that never said keeps the long spin.
        assert_eq!(polls_before_yielding(), SPINS + 1);
    }
}
