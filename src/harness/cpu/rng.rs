//! A small seeded PRNG (SplitMix64): role-to-thread assignments are reproducible from the seed.

/// SplitMix64 state.
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Shuffles `v` (Fisher-Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_permutations_and_all_permutations_reachable() {
        let perms = |seed| {
            let mut r = Rng::new(seed);
            (0..50)
                .map(|_| {
                    let mut v = [0, 1, 2];
                    r.shuffle(&mut v);
                    v
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(perms(7), perms(7));
        assert_ne!(perms(7), perms(8));
        let mut seen = perms(7);
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 6);
    }
}
