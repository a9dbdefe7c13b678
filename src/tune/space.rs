//! The space a search explores: knobs, each with the values tried in order (neighbours in the
//! list are what the local search steps between), and the baseline every search starts from.
//! The GPU's knobs are the stress keys of `--stress-set` (docs/stress.md), over the ranges the
//! literature's tuning runs explore (`random-<seed>`'s); the CPU's are its backend options
//! (`-o sync=…`, `-o batch=…`, `-o pack=…`, src/harness/cpu/options.rs).

use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// The most neighbours of the baseline tried before the random configurations (the CPU's
/// space has 4; the GPU's, dozens, is left to the random and local phases).
pub const NEIGHBOURS_FIRST: usize = 8;

/// One knob and the values the search tries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its key (`mem_stress_pct`, or `sync` for a CPU option).
    pub name: &'static str,
    /// The values, as the key's setter reads them, in an order where neighbours are close.
    pub values: Vec<String>,
}

/// The knobs searched, and the baseline (one value index per knob).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Space {
    /// The knobs.
    pub params: Vec<Param>,
    /// The configuration the search starts from and must beat (the default one).
    pub baseline: Point,
}

/// One configuration: for each knob of its space, the index of its value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Point(pub Vec<usize>);

fn param(name: &'static str, values: &[&str]) -> Param {
    Param {
        name,
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}

impl Space {
    /// A space from its knobs and the baseline's values (each must be among its knob's).
    pub fn new(params: Vec<Param>, baseline: &[&str]) -> Space {
        let point = params
            .iter()
            .zip(baseline)
            .map(|(p, v)| {
                p.values
                    .iter()
                    .position(|x| x == v)
                    .unwrap_or_else(|| panic!("baseline {}={v} is not a value", p.name))
            })
            .collect();
        Space {
            params,
            baseline: Point(point),
        }
    }

    /// The stress space of the GPU backend, with the `stress` preset as baseline. Testing
    /// CTAs above `max_ctas` are clamped to it when applied.
    pub fn gpu() -> Space {
        let params = vec![
            param("testing_ctas", &["66", "132", "198", "264", "528", "1056"]),
            param("max_ctas", &["132", "264", "528", "1056"]),
            param("cta_size", &["64", "128", "256", "512", "1024"]),
            param("shuffle_pct", &["0", "50", "100"]),
            param("barrier_pct", &["0", "50", "100"]),
            param("mem_stride", &["1", "2", "4", "8", "16"]),
            param("mem_stress_pct", &["0", "25", "50", "100"]),
            param("mem_stress_iterations", &["0", "64", "256", "1024"]),
            param("mem_stress_pattern", &["st;st", "st;ld", "ld;st", "ld;ld"]),
            param("pre_stress_pct", &["0", "25", "50", "100"]),
            param("pre_stress_iterations", &["0", "32", "128"]),
            param("pre_stress_pattern", &["st;st", "st;ld", "ld;st", "ld;ld"]),
            param("stress_line_size", &["16", "64", "256"]),
            param("stress_target_lines", &["1", "2", "4", "8", "16"]),
            param("stress_strategy_balance_pct", &["0", "50", "100"]),
            param("permute_first", &["1", "419"]),
            param("permute_second", &["1", "1031"]),
            param("partner_distances", &["1", "2", "8", "32", "64"]),
            param("spin_group", &["0", "66", "32", "8"]),
        ];
        let baseline = [
            "198", "264", "256", "100", "100", "4", "100", "1024", "st;ld", "50", "128", "ld;st",
            "64", "4", "50", "419", "1031", "8", "0",
        ];
        Space::new(params, &baseline)
    }

    /// The CPU backend's options, with its defaults (`sync=auto`, `batch=2048`, `pack=false`)
    /// as baseline.
    pub fn cpu() -> Space {
        let params = vec![
            param(
                "sync",
                &["auto", "instance", "2", "4", "16", "64", "256", "round"],
            ),
            param("batch", &["256", "1024", "2048", "8192"]),
            param("pack", &["false", "true"]),
        ];
        Space::new(params, &["auto", "2048", "false"])
    }

    /// A configuration drawn uniformly.
    pub fn draw(&self, rng: &mut Rng) -> Point {
        Point(
            self.params
                .iter()
                .map(|p| rng.below(p.values.len()))
                .collect(),
        )
    }

    /// The baseline's neighbours where they are few ([`NEIGHBOURS_FIRST`] at most), else none:
    /// the search tries these first, whatever the seed, and the final race always races them.
    pub fn first_neighbours(&self) -> Vec<Point> {
        let n = self.neighbours(&self.baseline);
        if n.len() <= NEIGHBOURS_FIRST {
            n
        } else {
            Vec::new()
        }
    }

    /// The configurations one step from `p` along one knob, knob by knob, lower step first.
    pub fn neighbours(&self, p: &Point) -> Vec<Point> {
        let mut v = Vec::new();
        for (k, param) in self.params.iter().enumerate() {
            let steps = [p.0[k].checked_sub(1), Some(p.0[k] + 1)];
            for value in steps.into_iter().flatten() {
                if value < param.values.len() {
                    let mut q = p.clone();
                    q.0[k] = value;
                    v.push(q);
                }
            }
        }
        v
    }

    /// A neighbour of `p`: one or two knobs moved, each to an adjacent value or (one time in
    /// four) to any other value; never `p` itself.
    pub fn perturb(&self, p: &Point, rng: &mut Rng) -> Point {
        let mut q = p.clone();
        let moves = 1 + rng.below(2);
        for _ in 0..moves {
            let k = rng.below(self.params.len());
            let n = self.params[k].values.len();
            if n < 2 {
                continue;
            }
            let v = q.0[k];
            q.0[k] = if rng.below(4) == 0 {
                (v + 1 + rng.below(n - 1)) % n
            } else if v == 0 || (v + 1 < n && rng.below(2) == 0) {
                v + 1
            } else {
                v - 1
            };
        }
        if q == *p {
            // Both moves undid each other: step the first movable knob.
            if let Some(k) = self.params.iter().position(|x| x.values.len() > 1) {
                q.0[k] = (q.0[k] + 1) % self.params[k].values.len();
            }
        }
        q
    }

    /// The configuration as `(key, value)` pairs in knob order.
    pub fn settings(&self, p: &Point) -> Vec<(&'static str, &str)> {
        self.params
            .iter()
            .zip(&p.0)
            .map(|(k, &i)| (k.name, k.values[i].as_str()))
            .collect()
    }

    /// The knobs whose value differs from the baseline's, as `key=value`.
    pub fn describe(&self, p: &Point) -> String {
        let base = self.settings(&self.baseline);
        let diff: Vec<String> = self
            .settings(p)
            .into_iter()
            .zip(base)
            .filter(|(a, b)| a != b)
            .map(|((k, v), _)| format!("{k}={v}"))
            .collect();
        if diff.is_empty() {
            "baseline".into()
        } else {
            diff.join(" ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::Stress;

    #[test]
    fn the_cpu_baseline_has_four_neighbours_and_the_gpu_baseline_dozens() {
        let cpu = Space::cpu();
        let n: Vec<String> = cpu
            .neighbours(&cpu.baseline)
            .iter()
            .map(|p| cpu.describe(p))
            .collect();
        assert_eq!(
            n,
            ["sync=instance", "batch=1024", "batch=8192", "pack=true"]
        );
        let gpu = Space::gpu();
        assert!(gpu.neighbours(&gpu.baseline).len() > 8);
    }

    #[test]
    fn the_gpu_baseline_is_the_stress_preset_and_every_value_sets_its_key() {
        let space = Space::gpu();
        let mut s = Stress::full_stress();
        for (k, v) in space.settings(&space.baseline) {
            assert_eq!(s.get(k).as_deref(), Some(v), "{k}");
        }
        for p in &space.params {
            for v in &p.values {
                s.set(p.name, v).unwrap();
            }
        }
    }

    #[test]
    fn the_cpu_baseline_is_the_default_options_and_every_value_parses() {
        use crate::harness::cpu::CpuOptions;
        let space = Space::cpu();
        let map = |pt: &Point| {
            space
                .settings(pt)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            CpuOptions::parse(&map(&space.baseline)).unwrap(),
            CpuOptions::default()
        );
        let mut rng = Rng::new(3);
        for _ in 0..50 {
            CpuOptions::parse(&map(&space.draw(&mut rng))).unwrap();
        }
    }

    #[test]
    fn a_perturbation_is_a_near_neighbour() {
        let space = Space::gpu();
        let mut rng = Rng::new(5);
        for _ in 0..500 {
            let p = space.draw(&mut rng);
            let q = space.perturb(&p, &mut rng);
            let moved = p.0.iter().zip(&q.0).filter(|(a, b)| a != b).count();
            assert!((1..=2).contains(&moved), "{p:?} -> {q:?}");
        }
        assert_eq!(space.describe(&space.baseline), "baseline");
        let mut p = space.baseline.clone();
        p.0[3] = 0;
        assert_eq!(space.describe(&p), "shuffle_pct=0");
    }
}
