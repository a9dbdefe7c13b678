//! A fast hasher for the small keys the checkers look up millions of times (states, outcomes,
//! names): FxHash-style rotate, xor and multiply, far cheaper than the standard SipHash, which
//! guards against chosen keys that no litmus test is.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Builds [`Fx`] hashers.
pub type FxBuild = BuildHasherDefault<Fx>;

/// A hash map with [`Fx`] hashing.
pub type FxHashMap<K, V> = HashMap<K, V, FxBuild>;

/// A hash set with [`Fx`] hashing.
pub type FxHashSet<T> = HashSet<T, FxBuild>;

/// The hasher. Each word is mixed into the high bits by a multiply; [`Hasher::finish`] folds
/// them into the low bits too, so a table may index with either end.
#[derive(Default)]
pub struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for b in chunks.remainder() {
            self.write_u64(*b as u64);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::FxBuild;
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    #[test]
    fn outcomes_that_differ_in_one_value_differ_in_the_low_and_high_bits() {
        // Outcomes of one test differ in a few small values; a table indexed by either end of
        // the hash must still spread them.
        let h = |o: &Vec<i64>| FxBuild::default().hash_one(o);
        let outcomes: Vec<Vec<i64>> = (0..4096)
            .map(|k| {
                (0..10)
                    .map(|i| (k >> i) & 1)
                    .chain([(k >> 10) & 3])
                    .collect()
            })
            .collect();
        let low: HashSet<u64> = outcomes.iter().map(|o| h(o) & 0xfff).collect();
        let high: HashSet<u64> = outcomes.iter().map(|o| h(o) >> 52).collect();
        // 4,096 keys into 4,096 buckets: a uniform hash fills about 2,589 of them (63 %); without
        // the fold in `finish`, the low bits fill 2,400.
        assert!(
            low.len() > 2500,
            "low 12 bits: {} buckets of 4096",
            low.len()
        );
        assert!(
            high.len() > 2500,
            "high 12 bits: {} buckets of 4096",
            high.len()
        );
    }
}
