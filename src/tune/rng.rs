//! The search's seeds: one seed fixes every draw the search makes, and each measurement's own
//! seed is derived from it.

use crate::rng::Rng;

/// A seed for one measurement, mixed from the search seed and the measurement's coordinates,
/// so that every chunk of every candidate runs with its own reproducible seed.
pub fn derive(seed: u64, parts: &[u64]) -> u64 {
    parts.iter().fold(Rng::new(seed).next_u64(), |acc, &p| {
        Rng::new(acc ^ p.wrapping_mul(0x2545_f491_4f6c_dd1d)).next_u64()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_seed_and_derived_seeds_differ_by_coordinate() {
        let a: Vec<u64> = (0..4)
            .scan(Rng::new(1), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..4)
            .scan(Rng::new(1), |r, _| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..4)
            .scan(Rng::new(2), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(derive(1, &[3, 4]), derive(1, &[3, 4]));
        assert_ne!(derive(1, &[3, 4]), derive(1, &[4, 3]));
        assert_ne!(derive(1, &[3, 4]), derive(2, &[3, 4]));
        let mut r = Rng::new(9);
        assert!((0..100).all(|_| r.below(7) < 7));
    }
}
