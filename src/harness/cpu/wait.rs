//! Bounded spinning, and the spin barrier that starts and ends every round.
//!
//! Spins first (cheap when the other threads run on other cores), then yields (so that a test
//! with more roles than cores still progresses), and gives up after a bound so that a role
//! that never arrives cannot hang a run.

use std::sync::atomic::{AtomicUsize, Ordering};

const SPINS: u32 = 1 << 10;
const YIELDS: u32 = 1 << 16;

/// Waits until `done()` holds; false when the bound ran out first.
#[inline]
pub fn wait_until(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..SPINS {
        if done() {
            return true;
        }
        std::hint::spin_loop();
    }
    for _ in 0..YIELDS {
        if done() {
            return true;
        }
        std::thread::yield_now();
    }
    done()
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
