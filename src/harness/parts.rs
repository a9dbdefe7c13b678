//! A test's histogram kept in consecutive parts, one or more whole rounds (CPU) or launch
//! batches (GPU) each, so that `diff` can see how much the weak rate varies between rounds.
//! Instances of one round share its timing, placement and machine load: they are not
//! independent trials, the rounds are closer to it.
//!
//! At most [`MAX_PARTS`] parts are kept whatever the run's length: when one more would be
//! needed, neighbours are merged pairwise and each later part takes twice as many rounds.

use crate::outcome::Histogram;

/// The most parts one test's run keeps.
pub const MAX_PARTS: usize = 64;

/// Consecutive rounds' histograms, merged into at most [`MAX_PARTS`] parts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parts {
    parts: Vec<Histogram>,
    /// Rounds in each full part.
    per_part: u64,
    /// Rounds in the last part.
    in_last: u64,
}

impl Parts {
    /// Adds the histogram of the next round (or launch batch).
    pub fn push(&mut self, round: &Histogram) {
        self.per_part = self.per_part.max(1);
        match self.parts.last_mut() {
            Some(last) if self.in_last < self.per_part => last.merge(round),
            _ => {
                if self.parts.len() == MAX_PARTS {
                    self.halve();
                    return self.push(round);
                }
                self.parts.push(round.clone());
                self.in_last = 0;
            }
        }
        self.in_last += 1;
    }

    /// Merges neighbours pairwise (every part was full, so the pairs are equal).
    fn halve(&mut self) {
        let old = std::mem::take(&mut self.parts);
        for pair in old.chunks(2) {
            let mut h = pair[0].clone();
            if let Some(second) = pair.get(1) {
                h.merge(second);
            }
            self.parts.push(h);
        }
        self.per_part *= 2;
        self.in_last = self.per_part;
    }

    /// The parts, in order.
    pub fn into_histograms(self) -> Vec<Histogram> {
        self.parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Outcome;

    fn round(i: u64) -> Histogram {
        let mut h = Histogram::default();
        h.counts.insert(Outcome(vec![0]), 10);
        h.counts.insert(Outcome(vec![1]), i % 3);
        h.unexpected = i % 2;
        h
    }

    #[test]
    fn parts_stay_bounded_equal_and_sum_to_the_whole() {
        for rounds in [1u64, 2, 63, 64, 65, 200, 1000] {
            let mut p = Parts::default();
            let mut whole = Histogram::default();
            for i in 0..rounds {
                p.push(&round(i));
                whole.merge(&round(i));
            }
            let parts = p.into_histograms();
            assert!(parts.len() <= MAX_PARTS, "{rounds}: {}", parts.len());
            assert!(
                parts.len() as u64 >= rounds.min(MAX_PARTS as u64 / 2),
                "{rounds}"
            );
            let mut sum = Histogram::default();
            parts.iter().for_each(|h| sum.merge(h));
            assert_eq!(sum, whole, "{rounds} rounds");
            // Every part but the last holds the same number of rounds (10 instances + 0/1
            // unexpected in each round's outcome 0 ... counted by its outcome-0 count).
            let sizes: Vec<u64> = parts.iter().map(|h| h.counts[&Outcome(vec![0])]).collect();
            assert!(
                sizes[..sizes.len() - 1].iter().all(|&s| s == sizes[0]),
                "{rounds}: {sizes:?}"
            );
        }
    }
}
