//! Per-launch seeds: one 32-bit seed per launch, drawn from the run's seed and the test's name,
//! so that `--seed` (or `--replay run.json`) gives every launch of every test the same placement
//! again, while two tests of one run do not share a placement sequence.
//!
//! The device turns each launch seed into its placement and stress draws
//! ([`crate::codegen::layout::Perms::from_seed`], [`crate::codegen::layout::chance`]).

use crate::litmus::fnv1a64;

/// The seed of the initial collect launch, which counts nothing (every status word is 0) and
/// only writes the locations' initial values.
pub const SETUP_SEED: u32 = 0;

/// A deterministic stream of launch seeds (SplitMix64, upper halves).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSeeds {
    state: u64,
}

impl LaunchSeeds {
    /// The seeds of `test`'s launches in a run with `run_seed`.
    pub fn new(run_seed: u64, test: &str) -> LaunchSeeds {
        LaunchSeeds {
            state: run_seed ^ fnv1a64(test.as_bytes()),
        }
    }
}

impl Iterator for LaunchSeeds {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Some(((z ^ (z >> 31)) >> 32) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_and_test_give_the_same_launch_seeds() {
        let a: Vec<u32> = LaunchSeeds::new(42, "MP").take(100).collect();
        let b: Vec<u32> = LaunchSeeds::new(42, "MP").take(100).collect();
        assert_eq!(a, b);
        let other_seed: Vec<u32> = LaunchSeeds::new(43, "MP").take(100).collect();
        let other_test: Vec<u32> = LaunchSeeds::new(42, "SB").take(100).collect();
        assert_ne!(a, other_seed);
        assert_ne!(a, other_test);
    }

    #[test]
    fn launch_seeds_vary_from_launch_to_launch() {
        let seeds: Vec<u32> = LaunchSeeds::new(7, "IRIW").take(1000).collect();
        let mut distinct = seeds.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(
            distinct.len() > 990,
            "only {} distinct seeds",
            distinct.len()
        );
        // Both halves of the 32-bit range occur, so `chance(seed, _, 50)` draws both ways.
        assert!(seeds.iter().any(|s| *s < 1 << 31) && seeds.iter().any(|s| *s >= 1 << 31));
    }

    /// A 2-role test across a cluster of two CTAs, on a small grid so every thread is checked.
    fn cluster_layout(shuffle_pct: u32) -> (crate::codegen::Layout, crate::codegen::Stress) {
        let src = "PTX MP-cl { x=0; y=0; }
             P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;
             st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, y ;
             st.relaxed.gpu y, 1 | ld.relaxed.gpu r1, x ;
             exists (P1:r0 == 1 /\\ P1:r1 == 0)";
        let test = crate::litmus::parse(src, std::path::Path::new("t.litmus")).unwrap();
        let stress = crate::codegen::Stress {
            testing_ctas: 8,
            max_ctas: 8,
            cta_size: 64,
            shuffle_pct,
            ..crate::codegen::Stress::interleave()
        };
        let l = crate::codegen::Layout::new(&test, &stress, &[vec![0, 1], vec![0, 1]]).unwrap();
        (l, stress)
    }

    /// Every (role, instance) pair played by exactly one thread; returns the map.
    fn placement(
        l: &crate::codegen::Layout,
        perms: &crate::codegen::Perms,
    ) -> std::collections::BTreeMap<(usize, u64), (u32, u32)> {
        let mut seen = std::collections::BTreeMap::new();
        for cta in 0..l.test_launch.grid[0] {
            for tid in 0..l.test_launch.block[0] {
                if let Some(a) = l.thread_role(perms, cta, tid) {
                    let prev = seen.insert((a.role, a.instance), (cta, tid));
                    assert!(prev.is_none(), "{a:?} played twice");
                }
            }
        }
        assert_eq!(seen.len() as u64, 2 * l.instances);
        seen
    }

    #[test]
    fn each_launch_seed_gives_a_complete_placement_and_they_differ() {
        use crate::codegen::Perms;
        let (l, stress) = cluster_layout(100);
        let k = l.shape.cluster_dim;
        assert_eq!(k, 2);
        let mut distinct = std::collections::BTreeSet::new();
        for seed in LaunchSeeds::new(3, &l.test).take(16) {
            let perms = Perms::from_seed(&l, stress.shuffle_pct, seed);
            let map = placement(&l, &perms);
            for i in 0..l.instances {
                let (c0, _) = map[&(0, i)];
                let (c1, _) = map[&(1, i)];
                // Same cluster, different CTAs: what `cluster 0` with `cta 0` / `cta 1` asks.
                assert_eq!(c0 / k, c1 / k, "instance {i} split across clusters");
                assert_ne!(c0, c1, "instance {i} in one CTA");
            }
            distinct.insert(map);
        }
        assert!(
            distinct.len() > 8,
            "only {} distinct placements",
            distinct.len()
        );
    }

    #[test]
    fn without_shuffling_every_launch_has_the_same_placement() {
        use crate::codegen::Perms;
        let (l, stress) = cluster_layout(0);
        let first = placement(&l, &Perms::IDENTITY);
        for seed in LaunchSeeds::new(3, &l.test).take(8) {
            assert_eq!(
                Perms::from_seed(&l, stress.shuffle_pct, seed),
                Perms::IDENTITY
            );
        }
        assert_eq!(first.len() as u64, 2 * l.instances);
    }
}
