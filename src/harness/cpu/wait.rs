//! Bounded spinning, and the spin barrier that starts and ends every round.
//!
//! Spins first (cheap when the other threads run on other cores), then yields (so that a test
//! with more roles than cores still progresses), and gives up after a time bound so that a
//! role that never arrives cannot hang a run.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const SPINS: u32 = 1 << 10;
/// How long a wait inside a round may take before it gives up (and abandons the round's other
/// waits): long enough for a descheduled thread on a busy machine to come back.
const GIVE_UP: Duration = Duration::from_millis(250);

/// Waits until `done()` holds; false when `abandon` is set or the wait ran out first (which
/// sets `abandon`).
#[inline]
pub fn wait_until(abandon: &AtomicBool, mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..SPINS {
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
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}
