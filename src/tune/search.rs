//! The search: the baseline, then seeded random configurations, then a local search around the
//! best few, each configuration measured chunk by chunk until its interval says it cannot beat
//! the best so far (or it has had its chunks). The seed fixes every configuration drawn and
//! every chunk's seed; the measured counts decide the rest, and only through the intervals, so
//! a rerun picks the same configurations and the same winner unless a difference that was
//! significant in one run is not in the other.

use super::decide::{self, Decision, FinalPlan};
use super::rng::derive;
use super::space::{Point, Space};
use super::stats::estimate;
pub use super::trial::{Evaluator, Phase, Refusal, Trial};
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// How much searching to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The seed of every draw.
    pub seed: u64,
    /// Random configurations after the baseline.
    pub random: usize,
    /// Local-search configurations after the random ones.
    pub local: usize,
    /// How many of the best configurations the local search perturbs, in turn.
    pub parents: usize,
    /// Chunks before a configuration may be stopped early.
    pub min_chunks: usize,
    /// Chunks a configuration gets at most.
    pub max_chunks: usize,
    /// Configurations of the final race, the baseline included (below 2: none, the search's
    /// own winner stands).
    pub finalists: usize,
    /// Rounds of the final race at most.
    pub final_rounds: usize,
}

/// The search's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Every configuration tried, in order.
    pub trials: Vec<Trial>,
    /// The winner: the final race's (the finalist nearest the baseline among those none was
    /// significantly better than), or without one the first trial the search's measurements
    /// cannot tell from the best.
    pub best: usize,
    /// The time budget ended the search before its plan.
    pub cut_short: bool,
    /// The final race (absent in records of searches without one).
    #[serde(default)]
    pub decision: Option<Decision>,
}

impl Outcome {
    /// Trial `trial`'s weak/s over the baseline's, round by round in the final race; `None`
    /// when it was no finalist or the race gave no interval.
    pub fn vs_baseline(&self, trial: usize) -> Option<crate::tune::field::Ratio> {
        let d = self.decision.as_ref()?;
        let k = d.finalists.iter().position(|&i| i == trial)?;
        d.vs_baseline.get(k).copied().flatten()
    }
}

/// Runs the search over `space` under `plan`.
pub fn search(space: &Space, plan: &Plan, eval: &mut dyn Evaluator) -> Result<Outcome, String> {
    let mut rng = Rng::new(plan.seed);
    let mut s = State {
        trials: Vec::new(),
        cut_short: false,
    };
    let mut first = vec![(space.baseline.clone(), Phase::Baseline, None)];
    // A small space's neighbours of the baseline are tried first, whatever the seed: among
    // near-equal configurations the final race prefers the one nearest the baseline, and it
    // can only choose among those measured.
    let neighbours = space.first_neighbours();
    first.extend(neighbours.into_iter().map(|q| (q, Phase::Local, Some(0))));
    for _ in 0..plan.random {
        first.push((space.draw(&mut rng), Phase::Random, None));
    }
    let ids = s.add(first);
    s.race(&ids, plan, eval)?;
    let mut left = plan.local;
    while left > 0 && !s.cut_short {
        let ranked = s.ranking();
        let n = plan.parents.clamp(1, ranked.len()).min(left);
        left -= n;
        let mut children = Vec::new();
        for &parent in &ranked[..n] {
            // A few tries at an untried neighbour; a parent whose neighbours are all tried is
            // left out of this generation.
            let child = (0..16)
                .map(|_| space.perturb(&s.trials[parent].point, &mut rng))
                .find(|q| !s.tried(q) && children.iter().all(|(c, _, _)| c != q));
            if let Some(q) = child {
                children.push((q, Phase::Local, Some(parent)));
            }
        }
        let mut ids = s.add(children);
        if ids.is_empty() {
            continue;
        }
        // The incumbent races with its challengers, so that both are measured under the same
        // conditions (a machine's load changes over minutes).
        ids.insert(0, s.winner(plan.min_chunks).unwrap_or(0));
        s.race(&ids, plan, eval)?;
    }
    let mut best = s
        .winner(plan.min_chunks)
        .ok_or("no configuration was measured")?;
    let decision = s.final_race(space, plan, eval)?;
    if let Some(&w) = decision.as_ref().and_then(|d| d.tied.first()) {
        best = w;
    }
    Ok(Outcome {
        best,
        trials: s.trials,
        cut_short: s.cut_short,
        decision,
    })
}

struct State {
    trials: Vec<Trial>,
    cut_short: bool,
}

impl State {
    fn tried(&self, p: &Point) -> bool {
        self.trials.iter().any(|t| t.point == *p)
    }

    /// Adds the configurations not tried yet; their indices.
    fn add(&mut self, proposals: Vec<(Point, Phase, Option<usize>)>) -> Vec<usize> {
        let mut ids = Vec::new();
        for (point, phase, parent) in proposals {
            if self.tried(&point) {
                continue;
            }
            ids.push(self.trials.len());
            self.trials.push(Trial {
                point,
                phase,
                parent,
                samples: Vec::new(),
                estimate: estimate(&[]),
                stopped_early: false,
                failed: None,
            });
        }
        ids
    }

    /// The highest lower bound among `ids` (of those measured without failing).
    fn best_low(&self, ids: &[usize]) -> f64 {
        ids.iter()
            .filter(|&&i| self.trials[i].failed.is_none())
            .map(|&i| self.trials[i].estimate.low)
            .fold(0.0, f64::max)
    }

    /// Trial indices, best first: by lower bound, then by rate, then earliest.
    fn ranking(&self) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..self.trials.len())
            .filter(|&i| !self.trials[i].samples.is_empty() && self.trials[i].failed.is_none())
            .collect();
        idx.sort_by(|&a, &b| {
            let (ea, eb) = (&self.trials[a].estimate, &self.trials[b].estimate);
            eb.low
                .total_cmp(&ea.low)
                .then(eb.rate.total_cmp(&ea.rate))
                .then(a.cmp(&b))
        });
        idx
    }

    /// The first trial whose upper bound reaches the best lower bound: among configurations
    /// the measurements cannot tell apart, the earliest (the baseline first), so a change is
    /// made only on evidence and a rerun lands on the same one. A trial the budget cut before
    /// `min_chunks` wins only when no other can.
    fn winner(&self, min_chunks: usize) -> Option<usize> {
        let all: Vec<usize> = (0..self.trials.len()).collect();
        let floor = self.best_low(&all);
        let contender = |t: &Trial, min: usize| {
            t.failed.is_none() && t.samples.len() >= min && t.estimate.high >= floor
        };
        let pick = |min| self.trials.iter().position(|t| contender(t, min));
        pick(min_chunks.max(1)).or_else(|| pick(1))
    }

    /// The final race of the baseline and the best-ranked others (none with fewer than two).
    fn final_race(
        &mut self,
        space: &Space,
        plan: &Plan,
        eval: &mut dyn Evaluator,
    ) -> Result<Option<Decision>, String> {
        let finalists = decide::finalists(space, &self.trials, &self.ranking(), plan.finalists);
        if plan.finalists < 2 || plan.final_rounds == 0 || finalists.len() < 2 {
            return Ok(None);
        }
        eval.final_phase();
        let fp = FinalPlan {
            seed: plan.seed,
            finalists: plan.finalists,
            rounds: plan.final_rounds,
            min_rounds: plan.min_chunks,
        };
        let d = decide::race(space, &self.trials, finalists, &fp, eval)?;
        self.cut_short |= d.cut_short;
        Ok(Some(d))
    }

    /// Measures one more chunk of trial `i`. A configuration the backend refuses or fails is
    /// marked failed and left out from then on; the baseline's failure, or a lost device, ends
    /// the search.
    fn measure(&mut self, i: usize, plan: &Plan, eval: &mut dyn Evaluator) -> Result<(), String> {
        let t = &mut self.trials[i];
        let seed = derive(plan.seed, &[i as u64, t.samples.len() as u64]);
        match eval.sample(&t.point, seed) {
            Ok(s) => {
                t.samples.push(s);
                t.estimate = estimate(&t.samples);
            }
            Err(Refusal::Infeasible(why)) if t.phase != Phase::Baseline => t.failed = Some(why),
            Err(Refusal::Infeasible(why)) => return Err(format!("the baseline: {why}")),
            Err(Refusal::Fatal(why)) => return Err(why),
        }
        Ok(())
    }

    /// Measures `ids` in rounds, one chunk each per round, dropping after each round from
    /// `min_chunks` on those whose upper bound is below the best lower bound among them.
    fn race(&mut self, ids: &[usize], plan: &Plan, eval: &mut dyn Evaluator) -> Result<(), String> {
        let mut alive = ids.to_vec();
        for round in 0..plan.max_chunks.max(1) {
            for &i in &alive {
                // The baseline's first chunk is always measured, so every search has a winner.
                let measured = self.trials.iter().any(|t| !t.samples.is_empty());
                if measured && !eval.time_left() {
                    self.cut_short = true;
                    return Ok(());
                }
                self.measure(i, plan, eval)?;
            }
            alive.retain(|&i| self.trials[i].failed.is_none());
            if round + 1 >= plan.min_chunks {
                let floor = self.best_low(&alive);
                let last = round + 1 == plan.max_chunks;
                alive.retain(|&i| {
                    let t = &mut self.trials[i];
                    let keep = t.estimate.high >= floor;
                    t.stopped_early |= !keep && !last;
                    keep
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::stats::Sample;

    /// A made-up landscape: the weak rate grows as each knob nears its first value (far from
    /// the `stress` baseline), with seeded multiplicative noise, so the best configuration is
    /// known.
    struct Synthetic {
        space: Space,
        chunks: usize,
        limit: usize,
    }

    impl Evaluator for Synthetic {
        fn sample(&mut self, p: &Point, seed: u64) -> Result<Sample, Refusal> {
            self.chunks += 1;
            let params = &self.space.params;
            let score: usize =
                p.0.iter()
                    .zip(params)
                    .map(|(&i, k)| k.values.len() - 1 - i)
                    .sum();
            let noise = 0.9 + (Rng::new(seed).next_u64() % 200) as f64 / 1000.0;
            let weak = (1000.0 * (1 + score * score) as f64 * noise) as u64;
            Ok(Sample {
                instances: 1_000_000,
                weak,
                seconds: 1.0,
                link_ns: None,
            })
        }
        fn time_left(&self) -> bool {
            self.chunks < self.limit
        }
    }

    fn plan(seed: u64) -> Plan {
        Plan {
            seed,
            random: 12,
            local: 24,
            parents: 3,
            min_chunks: 2,
            max_chunks: 4,
            finalists: 0,
            final_rounds: 0,
        }
    }

    fn run(seed: u64, limit: usize) -> (Outcome, usize) {
        let mut e = Synthetic {
            space: Space::gpu(),
            chunks: 0,
            limit,
        };
        let space = e.space.clone();
        let out = search(&space, &plan(seed), &mut e).unwrap();
        (out, e.chunks)
    }

    #[test]
    fn a_seed_reproduces_the_search_and_another_seed_explores_elsewhere() {
        let (a, _) = run(1, usize::MAX);
        let (b, _) = run(1, usize::MAX);
        assert_eq!(a, b);
        let (c, _) = run(2, usize::MAX);
        let points = |o: &Outcome| o.trials.iter().map(|t| t.point.clone()).collect::<Vec<_>>();
        assert_ne!(points(&a), points(&c));
        assert_eq!(a.trials[0].phase, Phase::Baseline);
        assert!(!a.cut_short);
    }

    #[test]
    fn the_local_search_climbs_and_the_winner_is_significantly_better_than_the_baseline() {
        let (out, _) = run(1, usize::MAX);
        let best = &out.trials[out.best];
        assert_ne!(out.best, 0, "the baseline is far from the best corner");
        assert!(best.estimate.low > out.trials[0].estimate.high);
        let top = |local: bool| {
            out.trials
                .iter()
                .filter(|t| (t.phase == Phase::Local) == local)
                .map(|t| t.estimate.low)
                .fold(0.0, f64::max)
        };
        assert!(top(true) > top(false), "the local search beat every draw");
        // The winner is the first that nothing measured is significantly better than.
        assert!(out
            .trials
            .iter()
            .all(|t| t.estimate.low <= best.estimate.high));
    }

    #[test]
    fn early_stopping_spends_fewer_chunks_on_poor_configurations() {
        let (out, chunks) = run(1, usize::MAX);
        let max = plan(1).max_chunks;
        let stopped: Vec<&Trial> = out.trials.iter().filter(|t| t.stopped_early).collect();
        assert!(
            stopped.len() >= 3,
            "poor draws are dropped: {}",
            stopped.len()
        );
        let cheap = stopped.iter().filter(|t| t.samples.len() < max).count();
        assert!(cheap >= 3, "{cheap} dropped before their last chunk");
        // Each race gives its incumbent at most `max` chunks more than a challenger.
        let races = 1 + plan(1).local.div_ceil(plan(1).parents);
        assert!(chunks < out.trials.len() * max + races * max);
    }

    #[test]
    fn the_budget_cuts_the_search_short_and_says_so() {
        let (out, chunks) = run(1, 10);
        assert!(out.cut_short);
        assert_eq!(chunks, 10);
        let (out, chunks) = run(1, 0);
        assert_eq!(chunks, 1, "the baseline's first chunk is always measured");
        assert!(out.cut_short);
        assert_eq!(out.best, 0);
    }

    /// [`Synthetic`], refusing what `refuse` says from its `after`th chunk on.
    struct Refusing {
        inner: Synthetic,
        after: usize,
        refuse: fn(&Point) -> Option<Refusal>,
    }

    impl Evaluator for Refusing {
        fn sample(&mut self, p: &Point, seed: u64) -> Result<Sample, Refusal> {
            match (self.refuse)(p) {
                Some(r) if self.inner.chunks >= self.after => Err(r),
                _ => self.inner.sample(p, seed),
            }
        }
        fn time_left(&self) -> bool {
            self.inner.time_left()
        }
    }

    fn refusing(after: usize, refuse: fn(&Point) -> Option<Refusal>) -> Result<Outcome, String> {
        let space = Space::gpu();
        let inner = Synthetic {
            space: space.clone(),
            chunks: 0,
            limit: usize::MAX,
        };
        let mut e = Refusing {
            inner,
            after,
            refuse,
        };
        search(&space, &plan(1), &mut e)
    }

    #[test]
    fn configurations_the_backend_refuses_are_left_out_and_the_search_goes_on() {
        // The best corner's first knob value cannot run.
        let out = refusing(0, |p| {
            (p.0[0] == 0).then(|| Refusal::Infeasible("too many CTAs".into()))
        })
        .unwrap();
        let failed: Vec<&Trial> = out.trials.iter().filter(|t| t.failed.is_some()).collect();
        assert!(!failed.is_empty());
        for t in &failed {
            assert_eq!(t.point.0[0], 0);
            assert_eq!(t.failed.as_deref(), Some("too many CTAs"));
            assert!(t.samples.is_empty());
        }
        assert!(out
            .trials
            .iter()
            .all(|t| t.failed.is_some() == (t.point.0[0] == 0)));
        // No configuration is tried twice, and the winner is one that ran and beat the
        // baseline.
        let mut points: Vec<&Point> = out.trials.iter().map(|t| &t.point).collect();
        points.sort_by_key(|p| p.0.clone());
        points.dedup();
        assert_eq!(points.len(), out.trials.len());
        let best = &out.trials[out.best];
        assert!(best.failed.is_none() && best.point.0[0] != 0);
        assert!(best.estimate.low > out.trials[0].estimate.high);
    }

    #[test]
    fn a_refused_baseline_or_a_lost_device_ends_the_search_with_the_reason() {
        let all = refusing(0, |_| Some(Refusal::Infeasible("no such preset".into())));
        assert_eq!(all.unwrap_err(), "the baseline: no such preset");
        let lost = refusing(5, |_| Some(Refusal::Fatal("MP: timed out".into())));
        assert_eq!(lost.unwrap_err(), "MP: timed out");
    }

    #[test]
    fn indistinguishable_configurations_leave_the_baseline_in_place() {
        struct Flat(usize);
        impl Evaluator for Flat {
            fn sample(&mut self, _: &Point, seed: u64) -> Result<Sample, Refusal> {
                self.0 += 1;
                let weak = 1000 + Rng::new(seed).next_u64() % 20;
                Ok(Sample {
                    instances: 1000,
                    weak,
                    seconds: 1.0,
                    link_ns: None,
                })
            }
            fn time_left(&self) -> bool {
                true
            }
        }
        let out = search(&Space::cpu(), &plan(7), &mut Flat(0)).unwrap();
        assert_eq!(out.best, 0);
        let with_race = Plan {
            finalists: 4,
            final_rounds: 6,
            ..plan(7)
        };
        let out = search(&Space::cpu(), &with_race, &mut Flat(0)).unwrap();
        let d = out.decision.expect("a final race");
        // The baseline, its 4 neighbours (the CPU's space is small), and 3 more.
        assert_eq!((d.finalists.len(), d.finalists[0]), (8, 0));
        assert_eq!(
            &d.finalists[1..5],
            &[1, 2, 3, 4],
            "tried right after the baseline"
        );
        assert_eq!((out.best, d.tied.len(), d.rounds), (0, 8, 6), "{d:?}");
    }

    #[test]
    fn the_final_race_keeps_a_winner_that_is_clearly_better() {
        let mut e = Synthetic {
            space: Space::gpu(),
            chunks: 0,
            limit: usize::MAX,
        };
        let with_race = Plan {
            finalists: 3,
            final_rounds: 10,
            ..plan(1)
        };
        let space = e.space.clone();
        let out = search(&space, &with_race, &mut e).unwrap();
        let d = out.decision.as_ref().expect("a final race");
        assert_ne!(out.best, 0, "{d:?}");
        assert_eq!(d.tied[0], out.best, "{d:?}");
        assert!(!d.tied.contains(&0), "the baseline left: {d:?}");
        let k = d.finalists.iter().position(|&i| i == out.best).unwrap();
        assert!(d.estimates[k].low > d.estimates[0].high);
    }
}
