//! Incantations: the knobs that make weak behaviours more likely (names as in the GPU litmus
//! literature), the named presets, and seeded random configurations.
//!
//! A `Stress` is fixed when a kernel is emitted: the grid shape and the amount of stress are
//! compile-time constants of the kernel. What is randomised per launch (placement, whether to
//! shuffle, whether to stress this launch) is drawn on the device from the launch's seed, with
//! the percentages below as probabilities.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The memory-access pattern of a stress loop: two accesses per iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StressPattern {
    /// store; store.
    StSt,
    /// store; load.
    StLd,
    /// load; store.
    LdSt,
    /// load; load.
    LdLd,
}

impl StressPattern {
    /// Every pattern, in the order of their device codes (0..4).
    pub const ALL: [StressPattern; 4] = [
        StressPattern::StSt,
        StressPattern::StLd,
        StressPattern::LdSt,
        StressPattern::LdLd,
    ];

    /// The code the `ptx/stress.ptx` fragment reads: bit 1 = first access is a load, bit 0 =
    /// second access is a load.
    pub fn code(self) -> u32 {
        match self {
            StressPattern::StSt => 0,
            StressPattern::StLd => 1,
            StressPattern::LdSt => 2,
            StressPattern::LdLd => 3,
        }
    }

    /// The literature's spelling: `st;st`, `st;ld`, `ld;st`, `ld;ld`.
    pub fn as_str(self) -> &'static str {
        match self {
            StressPattern::StSt => "st;st",
            StressPattern::StLd => "st;ld",
            StressPattern::LdSt => "ld;st",
            StressPattern::LdLd => "ld;ld",
        }
    }
}

impl fmt::Display for StressPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The incantations of one kernel. Parsed from a preset name (`"stress".parse()`) once, where
/// the name is read (a flag, a recorded run), and carried typed from there.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Stress {
    /// The preset this configuration came from (`basic`, `interleave`, `stress`, `random-<seed>`).
    pub name: String,
    /// CTAs that run test instances (rounded down to whole clusters of test CTAs).
    pub testing_ctas: u32,
    /// CTAs in the grid; those beyond the testing ones only run memory stress.
    pub max_ctas: u32,
    /// Threads per CTA (a multiple of 32).
    pub cta_size: u32,
    /// Percentage of launches whose thread-to-role assignment is shuffled (otherwise roles keep
    /// a fixed, unshuffled placement inside the constraints of the test).
    pub shuffle_pct: u32,
    /// Percentage of launches whose test threads meet at a bounded spin barrier before the test.
    pub barrier_pct: u32,
    /// Distance in 32-bit words between the same location of neighbouring instances.
    pub mem_stride: u32,
    /// Percentage of launches in which stress CTAs hammer the stress buffer during the test.
    pub mem_stress_pct: u32,
    /// Iterations of the stress loop of a stress thread.
    pub mem_stress_iterations: u32,
    /// Access pattern of the stress loop of stress threads.
    pub mem_stress_pattern: StressPattern,
    /// Percentage of launches in which test threads stress memory before running the test.
    pub pre_stress_pct: u32,
    /// Iterations of the pre-test stress loop of test threads.
    pub pre_stress_iterations: u32,
    /// Access pattern of the pre-test stress loop.
    pub pre_stress_pattern: StressPattern,
    /// Size of one stress line in 32-bit words.
    pub stress_line_size: u32,
    /// Number of distinct lines the stress threads target.
    pub stress_target_lines: u32,
    /// Percentage of stress threads that all hit one line per launch (the rest spread over the
    /// target lines by their id).
    pub stress_strategy_balance_pct: u32,
    /// Multiplier (made co-prime with the instance count) that permutes the first location's
    /// instance slots.
    pub permute_first: u32,
    /// Multiplier (made co-prime with the instance count) that permutes the other locations'
    /// instance slots.
    pub permute_second: u32,
    /// Whether every instance uses the same memory for each location (instances then interfere,
    /// and outcomes outside the test's outcome space become possible).
    pub aliased_memory: bool,
    /// How many distinct partner-CTA distances a shuffled launch may draw: the multipliers of
    /// the cluster permutation it picks from (a test CTA's partner lies the inverse of the
    /// multiplier away, mod the testing clusters), 1 to [`MAX_PARTNER_DISTANCES`].
    #[serde(default = "default_partner_distances")]
    pub partner_distances: u32,
    /// Testing CTAs per spin-barrier counter: consecutive CTAs in groups of this many meet at
    /// counters of their own, so a group starts together without waiting for the whole grid;
    /// 0 (every preset) or at least `testing_ctas`: one counter for all.
    #[serde(default)]
    pub spin_group: u32,
}

/// Most partner-CTA distances a launch may draw from (`partner_distances`).
pub const MAX_PARTNER_DISTANCES: u32 = 64;

/// The partner-CTA distances of the presets (8, the table size kernels had before the key).
pub const DEFAULT_PARTNER_DISTANCES: u32 = 8;

fn default_partner_distances() -> u32 {
    DEFAULT_PARTNER_DISTANCES
}

/// The named presets.
pub const PRESETS: [&str; 3] = ["basic", "interleave", "stress"];

/// The preset `run` uses unless told otherwise, and so the one `emit`, `sass` and
/// `toolchains prebuild` generate by default: the kernel checked is the kernel launched.
pub const DEFAULT_PRESET: &str = "stress";

impl Stress {
    /// No stress and no shuffling: instances in a fixed placement, one launch after another.
    pub fn basic() -> Stress {
        Stress {
            name: "basic".into(),
            testing_ctas: 264,
            max_ctas: 264,
            cta_size: 256,
            shuffle_pct: 0,
            barrier_pct: 0,
            mem_stride: 1,
            mem_stress_pct: 0,
            mem_stress_iterations: 0,
            mem_stress_pattern: StressPattern::StSt,
            pre_stress_pct: 0,
            pre_stress_iterations: 0,
            pre_stress_pattern: StressPattern::StSt,
            stress_line_size: 64,
            stress_target_lines: 2,
            stress_strategy_balance_pct: 100,
            permute_first: 1,
            permute_second: 1,
            aliased_memory: false,
            partner_distances: DEFAULT_PARTNER_DISTANCES,
            spin_group: 0,
        }
    }

    /// Shuffled placement, spin barrier and permuted locations, but no memory stress.
    pub fn interleave() -> Stress {
        Stress {
            name: "interleave".into(),
            shuffle_pct: 100,
            barrier_pct: 100,
            mem_stride: 4,
            permute_first: 419,
            permute_second: 1031,
            ..Stress::basic()
        }
    }

    /// Everything on: stress CTAs beside the test CTAs, pre-test stress, shuffling, spin barrier.
    pub fn full_stress() -> Stress {
        Stress {
            name: "stress".into(),
            testing_ctas: 198,
            max_ctas: 264,
            shuffle_pct: 100,
            barrier_pct: 100,
            mem_stride: 4,
            mem_stress_pct: 100,
            mem_stress_iterations: 1024,
            mem_stress_pattern: StressPattern::StLd,
            pre_stress_pct: 50,
            pre_stress_iterations: 128,
            pre_stress_pattern: StressPattern::LdSt,
            stress_line_size: 64,
            stress_target_lines: 4,
            stress_strategy_balance_pct: 50,
            permute_first: 419,
            permute_second: 1031,
            ..Stress::basic()
        }
    }

    /// A preset by name: `basic`, `interleave`, `stress`, or `random-<seed>`.
    pub fn preset(name: &str) -> Option<Stress> {
        match name {
            "basic" => Some(Stress::basic()),
            "interleave" => Some(Stress::interleave()),
            "stress" => Some(Stress::full_stress()),
            _ => name
                .strip_prefix("random-")
                .and_then(|s| s.parse::<u64>().ok())
                .map(Stress::random),
        }
    }

    /// The error text of a preset name that is none of [`Stress::preset`]'s.
    fn unknown(name: &str) -> String {
        format!(
            "unknown stress preset `{name}` (expected {} or random-<seed>)",
            PRESETS.join(", ")
        )
    }

    /// A random configuration drawn from `seed` (the same seed gives the same configuration), in
    /// the ranges the literature's tuning runs explore.
    pub fn random(seed: u64) -> Stress {
        let mut rng = SplitMix64(seed);
        let mut pick = |lo: u32, hi: u32| lo + (rng.next() % u64::from(hi - lo + 1)) as u32;
        let max_ctas = 66 * pick(1, 4);
        let testing_ctas = pick(max_ctas / 4, max_ctas);
        let cta_size = 32 * pick(1, 16);
        let pattern = |x: u32| StressPattern::ALL[(x % 4) as usize];
        let (p1, p2) = (pick(0, 3), pick(0, 3));
        Stress {
            name: format!("random-{seed}"),
            testing_ctas,
            max_ctas,
            cta_size,
            shuffle_pct: pick(0, 100),
            barrier_pct: pick(0, 100),
            mem_stride: pick(1, 16),
            mem_stress_pct: pick(0, 100),
            mem_stress_iterations: pick(0, 1024),
            mem_stress_pattern: pattern(p1),
            pre_stress_pct: pick(0, 100),
            pre_stress_iterations: pick(0, 128),
            pre_stress_pattern: pattern(p2),
            stress_line_size: 1 << pick(2, 10),
            stress_target_lines: pick(1, 16),
            stress_strategy_balance_pct: pick(0, 100),
            permute_first: 2 * pick(0, 512) + 1,
            permute_second: 2 * pick(0, 512) + 1,
            aliased_memory: false,
            partner_distances: DEFAULT_PARTNER_DISTANCES,
            spin_group: 0,
        }
    }

    /// This configuration for a test whose CTA needs `warps` warps: a drawn CTA size (a
    /// `random-<seed>` preset's own) that is smaller rises to them, since a draw samples the
    /// space rather than asks for a size; a size set by hand is kept, and refused later.
    pub fn for_warps(&self, warps: u32) -> Stress {
        let drawn = self.name.starts_with("random-")
            && Stress::preset(&self.name).is_some_and(|p| p.cta_size == self.cta_size);
        let needed = warps.saturating_mul(32).min(1024);
        match drawn && self.cta_size < needed {
            true => Stress {
                cta_size: needed,
                ..self.clone()
            },
            false => self.clone(),
        }
    }

    /// Checks the ranges the emitter relies on; the message names the offending incantation.
    pub fn validate(&self) -> Result<(), String> {
        let pct = [
            ("shuffle_pct", self.shuffle_pct),
            ("barrier_pct", self.barrier_pct),
            ("mem_stress_pct", self.mem_stress_pct),
            ("pre_stress_pct", self.pre_stress_pct),
            (
                "stress_strategy_balance_pct",
                self.stress_strategy_balance_pct,
            ),
        ];
        for (name, v) in pct {
            if v > 100 {
                return Err(format!("{name} = {v} is not a percentage"));
            }
        }
        if self.cta_size == 0 || self.cta_size % 32 != 0 || self.cta_size > 1024 {
            return Err(format!(
                "cta_size = {} must be a multiple of 32 in 32..=1024",
                self.cta_size
            ));
        }
        if self.max_ctas == 0 || self.testing_ctas == 0 || self.testing_ctas > self.max_ctas {
            return Err(format!(
                "need 0 < testing_ctas ({}) <= max_ctas ({})",
                self.testing_ctas, self.max_ctas
            ));
        }
        if self.mem_stride == 0 {
            return Err("mem_stride must be at least 1".into());
        }
        if self.stress_line_size == 0 || self.stress_target_lines == 0 {
            return Err("stress_line_size and stress_target_lines must be at least 1".into());
        }
        if !(1..=MAX_PARTNER_DISTANCES).contains(&self.partner_distances) {
            return Err(format!(
                "partner_distances = {} must be in 1..={MAX_PARTNER_DISTANCES}",
                self.partner_distances
            ));
        }
        if self.permute_first == 0 || self.permute_second == 0 {
            return Err("permute_first and permute_second must be non-zero".into());
        }
        Ok(())
    }

    /// Whether any stress memory traffic can run (so a run can demand a non-zero stress counter).
    pub fn has_memory_stress(&self) -> bool {
        (self.mem_stress_pct > 0
            && self.mem_stress_iterations > 0
            && self.max_ctas > self.testing_ctas)
            || (self.pre_stress_pct > 0 && self.pre_stress_iterations > 0)
    }
}

/// A small deterministic generator for configurations (the device uses its own hash of the
/// launch seed; this one only draws `Stress` values on the host).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl std::str::FromStr for Stress {
    type Err = String;

    /// A preset by name, with the one error text for a name that is none.
    fn from_str(name: &str) -> Result<Stress, String> {
        Stress::preset(name).ok_or_else(|| Stress::unknown(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_random_configurations_are_valid() {
        for name in PRESETS {
            let s = Stress::preset(name).unwrap();
            assert_eq!(s.name, name);
            s.validate().unwrap();
        }
        for seed in 0..200 {
            Stress::random(seed).validate().unwrap();
        }
        assert_eq!(Stress::random(7), Stress::random(7));
        assert_ne!(Stress::random(7), Stress::random(8));
        assert_eq!(Stress::preset("random-7"), Some(Stress::random(7)));
        assert_eq!(Stress::preset("nope"), None);
        assert_eq!("random-7".parse::<Stress>(), Ok(Stress::random(7)));
        let e = "nope".parse::<Stress>().unwrap_err();
        assert!(e.contains("`nope`") && e.contains("interleave"), "{e}");
    }

    #[test]
    fn only_a_drawn_cta_size_rises_to_the_warps_a_test_needs() {
        let drawn = Stress::random(3);
        assert_eq!(drawn.cta_size, 64, "the draw this test is about");
        assert_eq!(drawn.for_warps(3).cta_size, 96);
        assert_eq!(
            drawn.for_warps(3).settings(),
            [("cta_size".into(), "96".into())]
        );
        assert_eq!(drawn.for_warps(2), drawn);
        assert_ne!(Stress::random(4).cta_size, 32);
        let mut by_hand = Stress::random(4);
        by_hand.set("cta_size", "32").unwrap();
        assert_eq!(by_hand.for_warps(4), by_hand);
        let mut preset = Stress::basic();
        preset.set("cta_size", "64").unwrap();
        assert_eq!(preset.for_warps(4), preset);
        assert_eq!(drawn.for_warps(64).cta_size, 1024);
    }

    #[test]
    fn only_the_stress_preset_stresses_memory() {
        assert!(!Stress::basic().has_memory_stress());
        assert!(!Stress::interleave().has_memory_stress());
        assert!(Stress::full_stress().has_memory_stress());
    }

    #[test]
    fn validation_names_the_bad_incantation() {
        let mut s = Stress::basic();
        s.cta_size = 48;
        assert!(s.validate().unwrap_err().contains("cta_size"));
        let mut s = Stress::basic();
        s.barrier_pct = 101;
        assert!(s.validate().unwrap_err().contains("barrier_pct"));
    }
}
