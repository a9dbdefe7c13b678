//! What a caller shares with a check in progress: a flag that stops it and a count of the
//! candidate executions it has examined, so that a progress bar can show how far one long check
//! has got. The checkers add to the count and read the flag now and then; the model stays free
//! of clocks and signals.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A check's stop flag and its count of candidates examined, shared with the caller.
#[derive(Debug, Default)]
pub struct Watch {
    stop: AtomicBool,
    examined: AtomicU64,
}

impl Watch {
    /// Asks the check to stop (it ends with [`super::ModelError::Stopped`] soon after).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether the check was asked to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Candidate executions examined so far, over every stage of the check.
    pub fn examined(&self) -> u64 {
        self.examined.load(Ordering::Relaxed)
    }

    /// Counts `k` more candidates examined.
    pub fn add(&self, k: u64) {
        self.examined.fetch_add(k, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::Watch;

    #[test]
    fn a_watch_counts_what_is_added_and_stops_once_asked() {
        let w = Watch::default();
        assert!(!w.stopped());
        w.add(1024);
        w.add(3);
        assert_eq!(w.examined(), 1027);
        w.stop();
        assert!(w.stopped());
    }
}
