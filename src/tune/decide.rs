//! The search's final decision, made noise-stable. The search's own measurements were taken
//! minutes apart under whatever load the machine had then, and on a shared CPU a chunk's weak
//! count is bimodal (the roles either overlap on two cores or one waits descheduled and
//! nothing weak happens), so the best of many configurations is partly the luckiest. Here the
//! baseline and the search's best few are measured again, afresh, in rounds (each round one
//! chunk of each, in rotated order, so load changes hit all alike), and compared by the
//! median of their chunks' rates ([`median_estimate`]: a few chunks the machine spoilt move
//! only its interval's outer order statistics); a finalist leaves once its 99 % interval has
//! lain wholly below the best lower bound for [`HOLD`] consecutive rounds.
//! Whatever remains is a tie, settled by a rule that does not look at the measurements: the
//! finalist nearest the baseline ([`canonical`]). So a rerun changes its answer only if a
//! difference is clear in one run and not even arguable in the other.

use super::rng::derive;
use super::space::{Point, Space};
use super::stats::{estimate, median_estimate, Estimate, Sample};
use super::trial::{Evaluator, Trial};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// Consecutive rounds a finalist's interval must lie below the best before it leaves: one
/// round below is what 99 % intervals show by chance once in a while over many looks.
pub const HOLD: usize = 2;

/// Tag mixed into the final race's chunk seeds, apart from the search's.
const FINAL_TAG: u64 = 0xf1a1;

/// The final race and its verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The trials re-raced, the baseline first.
    pub finalists: Vec<usize>,
    /// Each finalist's fresh chunks, in the order of `finalists`.
    pub samples: Vec<Vec<Sample>>,
    /// Their estimates: the median chunk rate with its order-statistic interval.
    pub estimates: Vec<Estimate>,
    /// The finalists still in at the end (none was significantly better), nearest the
    /// baseline first; the first is the winner.
    pub tied: Vec<usize>,
    /// Rounds run.
    pub rounds: usize,
    /// The time budget ended the race before its rounds.
    pub cut_short: bool,
}

/// How the final race is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FinalPlan {
    /// The search seed (the race's chunk seeds derive from it).
    pub seed: u64,
    /// Finalists, the baseline included (fewer than 2: no race).
    pub finalists: usize,
    /// Rounds at most.
    pub rounds: usize,
    /// Rounds before a finalist may leave.
    pub min_rounds: usize,
}

/// The tie-breaking order: fewer knobs away from the baseline, then fewer steps along them,
/// then the lower value indices; it depends on the configurations only.
pub fn canonical(space: &Space, a: &Point, b: &Point) -> Ordering {
    let key = |p: &Point| {
        let moved = p.0.iter().zip(&space.baseline.0).filter(|(x, y)| x != y);
        let steps: usize =
            p.0.iter()
                .zip(&space.baseline.0)
                .map(|(x, y)| x.abs_diff(*y))
                .sum();
        (moved.count(), steps)
    };
    key(a).cmp(&key(b)).then_with(|| a.0.cmp(&b.0))
}

/// The baseline (trial 0) and the `n - 1` best-ranked other trials among `ranked`.
pub fn finalists(ranked: &[usize], n: usize) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(
        ranked
            .iter()
            .copied()
            .filter(|&i| i != 0)
            .take(n.saturating_sub(1)),
    );
    v
}

/// Races `finalists` (trial indices of `trials`) and returns the decision.
pub fn race(
    space: &Space,
    trials: &[Trial],
    finalists: Vec<usize>,
    plan: &FinalPlan,
    eval: &mut dyn Evaluator,
) -> Result<Decision, String> {
    let n = finalists.len();
    let mut d = Decision {
        samples: vec![Vec::new(); n],
        estimates: vec![estimate(&[]); n],
        tied: Vec::new(),
        rounds: 0,
        cut_short: false,
        finalists,
    };
    let mut alive: Vec<usize> = (0..n).collect();
    let mut below = vec![0usize; n];
    'rounds: for round in 0..plan.rounds {
        let mut order = alive.clone();
        let turn = round % order.len().max(1);
        order.rotate_left(turn);
        for k in order {
            if !eval.time_left() {
                d.cut_short = true;
                break 'rounds;
            }
            let seed = derive(plan.seed, &[FINAL_TAG, d.finalists[k] as u64, round as u64]);
            let point = &trials[d.finalists[k]].point;
            d.samples[k].push(eval.sample(point, seed)?);
            d.estimates[k] = median_estimate(&d.samples[k]);
        }
        d.rounds = round + 1;
        if d.rounds >= plan.min_rounds.max(2) {
            drop_worse(&d.estimates, &mut alive, &mut below);
        }
        if alive.len() < 2 {
            break;
        }
    }
    let mut tied: Vec<usize> = alive.iter().map(|&k| d.finalists[k]).collect();
    tied.sort_by(|&a, &b| canonical(space, &trials[a].point, &trials[b].point));
    d.tied = tied;
    Ok(d)
}

/// Counts, for each finalist in `alive`, the consecutive rounds its interval lay wholly below
/// the best lower bound, and drops those at [`HOLD`].
fn drop_worse(estimates: &[Estimate], alive: &mut Vec<usize>, below: &mut [usize]) {
    let floor = alive.iter().map(|&k| estimates[k].low).fold(0.0, f64::max);
    for &k in alive.iter() {
        below[k] = if estimates[k].high < floor {
            below[k] + 1
        } else {
            0
        };
    }
    alive.retain(|&k| below[k] < HOLD);
}

#[cfg(test)]
mod tests {
    use super::super::rng::Rng;
    use super::super::trial::Phase;
    use super::*;

    /// Weak counts around `rates[point.0[0]]` per chunk, with seeded noise of `spread` (a
    /// fraction), and sometimes (one chunk in `dead`) nothing weak at all: a loaded machine.
    struct Noisy {
        rates: Vec<f64>,
        spread: f64,
        dead: u64,
        chunks: usize,
        limit: usize,
    }

    impl Evaluator for Noisy {
        fn sample(&mut self, p: &Point, seed: u64) -> Result<Sample, String> {
            self.chunks += 1;
            let mut r = Rng::new(seed);
            let noise = 1.0 - self.spread + 2.0 * self.spread * (r.next_u64() % 1000) as f64 / 1e3;
            let dead = self.dead > 0 && r.next_u64() % self.dead == 0;
            let weak = if dead {
                0
            } else {
                (self.rates[p.0[0]] * noise) as u64
            };
            Ok(Sample {
                instances: 10_000,
                weak,
                seconds: 0.1,
            })
        }
        fn time_left(&self) -> bool {
            self.chunks < self.limit
        }
    }

    fn space() -> Space {
        Space::cpu()
    }

    fn trial(sync: usize) -> Trial {
        Trial {
            point: Point(vec![sync, 2, 0]),
            phase: Phase::Random,
            parent: None,
            samples: Vec::new(),
            estimate: estimate(&[]),
            stopped_early: false,
        }
    }

    fn decide(rates: &[f64], spread: f64, dead: u64, seed: u64) -> Decision {
        let trials: Vec<Trial> = (0..rates.len()).map(trial).collect();
        let mut e = Noisy {
            rates: rates.to_vec(),
            spread,
            dead,
            chunks: 0,
            limit: usize::MAX,
        };
        let plan = FinalPlan {
            seed,
            finalists: rates.len(),
            rounds: 16,
            min_rounds: 3,
        };
        race(&space(), &trials, (0..rates.len()).collect(), &plan, &mut e).unwrap()
    }

    #[test]
    fn a_clearly_better_configuration_wins_under_any_seed() {
        for seed in 0..20 {
            let d = decide(&[1000.0, 3000.0, 900.0], 0.3, 0, seed);
            assert_eq!(d.tied, vec![1], "seed {seed}: {d:?}");
        }
    }

    #[test]
    fn indistinguishable_finalists_tie_and_the_baseline_nearest_wins_whatever_the_noise() {
        // A loaded machine: chunks scatter by half and one in eight sees nothing.
        for seed in 0..20 {
            let d = decide(&[1000.0, 1050.0, 1000.0, 100.0], 0.5, 8, seed);
            assert_eq!(d.tied.first(), Some(&0), "seed {seed}: {d:?}");
            assert!(
                !d.tied.contains(&3),
                "seed {seed}: a poor one leaves: {d:?}"
            );
        }
        // Without the baseline among the best, the nearest of the best wins: sync=instance
        // (one step) before sync=4 (three steps), whichever measured higher.
        for seed in 0..20 {
            let d = decide(&[100.0, 1000.0, 100.0, 1100.0], 0.3, 0, seed);
            assert_eq!(d.tied, vec![1, 3], "seed {seed}: {d:?}");
        }
    }

    #[test]
    fn the_order_is_the_distance_from_the_baseline_then_the_values() {
        let s = space();
        let p = |v: &[usize]| Point(v.to_vec());
        assert_eq!(canonical(&s, &s.baseline, &p(&[1, 2, 0])), Ordering::Less);
        assert_eq!(
            canonical(&s, &p(&[2, 2, 0]), &p(&[1, 3, 0])),
            Ordering::Less
        );
        assert_eq!(
            canonical(&s, &p(&[1, 2, 1]), &p(&[1, 3, 0])),
            Ordering::Less
        );
        assert_eq!(finalists(&[3, 0, 5, 1], 3), vec![0, 3, 5]);
        assert_eq!(finalists(&[0], 4), vec![0]);
    }

    #[test]
    fn a_race_the_budget_cuts_keeps_every_finalist_left_and_says_so() {
        let trials: Vec<Trial> = (0..3).map(trial).collect();
        let mut e = Noisy {
            rates: vec![100.0, 1000.0, 100.0],
            spread: 0.1,
            dead: 0,
            chunks: 0,
            limit: 4,
        };
        let plan = FinalPlan {
            seed: 1,
            finalists: 3,
            rounds: 8,
            min_rounds: 3,
        };
        let d = race(&space(), &trials, vec![0, 1, 2], &plan, &mut e).unwrap();
        assert!(d.cut_short);
        assert_eq!(d.tied, vec![0, 1, 2], "no one left before min_rounds");
        assert_eq!(d.samples.iter().map(Vec::len).sum::<usize>(), 4);
    }
}
