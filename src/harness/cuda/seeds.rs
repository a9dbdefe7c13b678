//! Per-launch seeds: one 32-bit seed per launch, drawn from the run's seed and the test's name,
//! so that `--seed` (or `--replay run.json`) gives every launch of every test the same placement
//! again, while two tests of one run do not share a placement sequence.
//!
//! The kernels take the test's seed state and derive each launch's seed themselves, by the same
//! SplitMix64 step ([`crate::codegen::layout::launch_seed`]); the host draws the seeds here to
//! know what each launch drew (the stress self-test), so a disagreement fails the run's check.
//! The device turns each launch seed into its placement and stress draws
//! ([`crate::codegen::layout::Perms::from_seed`], [`crate::codegen::layout::chance`]).

use crate::litmus::fnv1a64;

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

    /// The state the next seed is drawn from: at the start, the test's seed state that the
    /// kernels take ([`crate::codegen::Param::Seed`]), from which the device derives launch
    /// `i`'s seed as [`crate::codegen::layout::launch_seed`]`(state, i + 1)`.
    pub fn state(&self) -> u64 {
        self.state
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

    #[test]
    fn the_device_formula_gives_the_host_seeds() {
        use crate::codegen::layout::launch_seed;
        for (run, name) in [(0, "MP"), (42, "SB"), (u64::MAX, "IRIW+fences")] {
            let seeds = LaunchSeeds::new(run, name);
            let state = seeds.state();
            for (i, s) in seeds.take(2000).enumerate() {
                // Launch i reads index i + 1 (the setup collect launch advanced it from 0).
                assert_eq!(launch_seed(state, i as u64 + 1), s, "launch {i} of {name}");
            }
        }
    }

    /// Evaluates the seed derivation of an emitted kernel, instruction by instruction, with
    /// `%sbase` = `state` and the launch-index word holding `index`.
    fn run_emitted_seed(ptx: &str, state: u64, index: u64) -> u32 {
        use crate::codegen::layout::SYNC_LAUNCH_INDEX;
        let start = ptx.find("ld.global.u64 %sz").expect("the index load");
        let len = ptx[start..]
            .find("cvt.u32.u64 %seed, %sz;")
            .expect("the seed");
        let mut regs = std::collections::HashMap::from([("%sbase".to_string(), state)]);
        for line in ptx[start..start + len].lines().map(str::trim) {
            let line = line.trim_end_matches(';');
            if line.is_empty() {
                continue;
            }
            let (op, rest) = line.split_once(' ').unwrap();
            let ops: Vec<&str> = rest.split(", ").collect();
            let val = |s: &str| match s.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h.trim_end_matches('U'), 16).unwrap(),
                None if s.starts_with('%') => regs[s],
                None => s.parse().unwrap(),
            };
            let v = match op {
                "ld.global.u64" => {
                    assert_eq!(ops[1], format!("[%sync+{SYNC_LAUNCH_INDEX}]"));
                    index
                }
                "mad.lo.u64" => val(ops[1])
                    .wrapping_mul(val(ops[2]))
                    .wrapping_add(val(ops[3])),
                "mul.lo.u64" => val(ops[1]).wrapping_mul(val(ops[2])),
                "shr.u64" => val(ops[1]) >> val(ops[2]),
                "xor.b64" => val(ops[1]) ^ val(ops[2]),
                other => panic!("unexpected instruction {other} in the seed derivation"),
            };
            regs.insert(ops[0].to_string(), v);
        }
        regs["%sz"] as u32
    }

    #[test]
    fn the_emitted_kernel_derives_the_host_seeds_and_the_collect_advances_the_index() {
        use crate::codegen::layout::SYNC_LAUNCH_INDEX;
        let (l, stress) = cluster_layout(100);
        let test = crate::litmus::parse(CLUSTER_MP, std::path::Path::new("t.litmus")).unwrap();
        let ptx = crate::codegen::emit(&test, &l, &stress).unwrap().ptx;
        // Derived once, in the test kernel; advanced once, by one collect thread.
        assert_eq!(ptx.matches("ld.global.u64 %sz").count(), 1);
        let bump = format!("@%p red.relaxed.gpu.global.add.u64 [%sync+{SYNC_LAUNCH_INDEX}], 1;");
        assert_eq!(ptx.matches(&bump).count(), 1);
        let collect = &ptx[ptx.find(".entry litmus_collect").unwrap()..];
        assert!(collect.contains(&bump));
        for run in [1u64, 0xFFFF_0000_1234_5678] {
            let seeds = LaunchSeeds::new(run, &l.test);
            let state = seeds.state();
            for (i, s) in seeds.take(300).enumerate() {
                assert_eq!(run_emitted_seed(&ptx, state, i as u64 + 1), s, "launch {i}");
            }
        }
    }

    const CLUSTER_MP: &str = "PTX MP-cl { x=0; y=0; }
             P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;
             st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, y ;
             st.relaxed.gpu y, 1 | ld.relaxed.gpu r1, x ;
             exists (P1:r0 == 1 /\\ P1:r1 == 0)";

    /// A 2-role test across a cluster of two CTAs, on a small grid so every thread is checked.
    fn cluster_layout(shuffle_pct: u32) -> (crate::codegen::Layout, crate::codegen::Stress) {
        let test = crate::litmus::parse(CLUSTER_MP, std::path::Path::new("t.litmus")).unwrap();
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
