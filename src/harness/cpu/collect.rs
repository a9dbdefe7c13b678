//! Turns finished instances into outcome counts, per worker, without a lock or an allocation
//! per instance (consecutive instances mostly end in the same state, so the last key is
//! compared first).

use crate::outcome::{Histogram, Outcome};
use std::collections::HashMap;

/// One worker's counts since it last flushed.
#[derive(Default)]
pub struct LocalCounts {
    counts: HashMap<Vec<i64>, u64>,
    last: Vec<i64>,
    last_count: u64,
    /// Instances in the `unexpected` bucket.
    pub unexpected: u64,
    /// Instances given up.
    pub skipped: u64,
}

impl LocalCounts {
    /// Counts one outcome.
    #[inline]
    pub fn add(&mut self, values: &[i64]) {
        if self.last_count > 0 && self.last == values {
            self.last_count += 1;
            return;
        }
        self.spill();
        self.last.clear();
        self.last.extend_from_slice(values);
        self.last_count = 1;
    }

    fn spill(&mut self) {
        if self.last_count > 0 {
            match self.counts.get_mut(&self.last[..]) {
                Some(n) => *n += self.last_count,
                None => {
                    self.counts.insert(self.last.clone(), self.last_count);
                }
            }
            self.last_count = 0;
        }
    }

    /// Moves everything counted into `hist` (and skipped instances into `skipped`).
    pub fn flush(&mut self, hist: &mut Histogram, skipped: &mut u64) {
        self.spill();
        for (k, n) in self.counts.drain() {
            *hist.counts.entry(Outcome(k)).or_insert(0) += n;
        }
        hist.unexpected += std::mem::take(&mut self.unexpected);
        *skipped += std::mem::take(&mut self.skipped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flush_moves_every_count_once() {
        let mut c = LocalCounts::default();
        for v in [[0, 1], [0, 1], [1, 1], [0, 1], [1, 0]] {
            c.add(&v);
        }
        c.unexpected = 2;
        c.skipped = 3;
        let mut h = Histogram::default();
        let mut skipped = 0;
        c.flush(&mut h, &mut skipped);
        assert_eq!(h.counts[&Outcome(vec![0, 1])], 3);
        assert_eq!(h.counts[&Outcome(vec![1, 1])], 1);
        assert_eq!(h.counts[&Outcome(vec![1, 0])], 1);
        assert_eq!((h.unexpected, skipped), (2, 3));
        c.flush(&mut h, &mut skipped);
        assert_eq!((h.total(), skipped), (7, 3));
    }
}
