//! The search's final decision, made noise-stable. The search's own measurements were taken
//! minutes apart under whatever load the machine had then, and on a shared CPU a chunk's weak
//! count is bimodal (the roles either overlap on two cores or one waits descheduled and
//! nothing weak happens), so the best of many configurations is partly the luckiest. Here the
//! baseline and the search's best few are measured again, afresh, in rounds (each round one
//! chunk of each, in rotated order, so load changes hit all alike). Two finalists are compared
//! round by round: the ratio of their chunks' rates in each round, whose median has a
//! distribution-free interval ([`median_estimate`]'s order statistics). A drift of the machine
//! that scales every configuration alike (a virtual machine's cores moved within one state,
//! other load) cancels in the ratio, where it would widen each finalist's own interval; and a
//! few chunks the machine spoilt move only the interval's outer order statistics. A finalist
//! leaves once another has beaten it, by [`MARGIN`](super::field::MARGIN) at the interval's lower end, for [`HOLD`](super::field::HOLD)
//! consecutive rounds. Whatever remains is a tie, settled by a rule that does not look at the
//! measurements: the finalist nearest the baseline ([`canonical`]). So a rerun changes its
//! answer only if a difference is clear in one run and not even arguable in the other.

use super::field::{paired, Field, Ratio, MARGIN};
use super::rng::derive;
use super::space::{Point, Space};
use super::state::{rounds_to_use, LinkState};
use super::stats::{estimate, median_estimate, Estimate, Sample};
use super::trial::{Evaluator, Trial};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// Tag mixed into the final race's chunk seeds, apart from the search's.
const FINAL_TAG: u64 = 0xf1a1;

/// Rounds a race may run, as a multiple of its planned rounds, while it waits for enough
/// rounds in one state of the machine.
const STATE_PATIENCE: usize = 3;

/// Complete rounds a race may run, as a multiple of its planned rounds, while it is
/// unsettled ([`Field::unsettled`]).
const OVERTIME: usize = 2;

/// The final race and its verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The trials re-raced, the baseline first.
    pub finalists: Vec<usize>,
    /// Each finalist's fresh chunks, in the order of `finalists`.
    pub samples: Vec<Vec<Sample>>,
    /// Their estimates over the rounds of [`Decision::state`]: the median chunk rate with its
    /// order-statistic interval (shown; the race compares finalists round by round).
    pub estimates: Vec<Estimate>,
    /// Each finalist's weak/s over the baseline's, round by round over the rounds of
    /// [`Decision::state`] (`None` with too few rounds in common): what decided.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vs_baseline: Vec<Option<Ratio>>,
    /// The machine's state the decision was made in, where the chunks measured it (the CPU):
    /// the rounds whose chunks all saw it; the others are recorded and left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<LinkState>,
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

/// The baseline (trial 0), its tried neighbours where the space has few
/// ([`Space::first_neighbours`]: the search tried them all), the best-ranked other trial, and others
/// nearest the baseline ([`canonical`]) among the search's contenders (those whose upper
/// bound, raised by [`MARGIN`], reaches the best's lower bound; then the next best-ranked, if
/// too few), `n` in all besides the neighbours. `ranked` is best first. The race's tie goes
/// to the finalist nearest the baseline, so sending the nearest candidates, rather than
/// whichever the search's few chunks ranked highest among many near-equal ones (or measured
/// in another state of the machine), makes reruns meet the same candidates.
pub fn finalists(space: &Space, trials: &[Trial], ranked: &[usize], n: usize) -> Vec<usize> {
    let others: Vec<usize> = ranked.iter().copied().filter(|&i| i != 0).collect();
    let mut v = vec![0];
    if n >= 2 {
        v.extend(space.first_neighbours().iter().filter_map(|q| {
            let i = trials.iter().position(|t| t.point == *q)?;
            others.contains(&i).then_some(i)
        }));
    }
    let n = n + v.len() - 1;
    if let Some(&best) = others.first().filter(|_| n >= 2) {
        if !v.contains(&best) {
            v.push(best);
        }
    }
    let floor = ranked.first().map_or(0.0, |&b| trials[b].estimate.low);
    let mut near: Vec<usize> = others
        .iter()
        .copied()
        .filter(|&i| trials[i].estimate.high * MARGIN >= floor)
        .collect();
    near.sort_by(|&a, &b| canonical(space, &trials[a].point, &trials[b].point));
    for i in near.into_iter().chain(others) {
        if v.len() >= n {
            break;
        }
        if !v.contains(&i) {
            v.push(i);
        }
    }
    v
}

/// Races `finalists` (trial indices of `trials`) and returns the decision. The race runs
/// `plan.rounds` complete rounds in one state of the machine ([`OVERTIME`] times as many while
/// it is unsettled; at most [`STATE_PATIENCE`] times as many rounds since it last started
/// again in a new state, and twice that in all), and is decided on
/// those.
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
        vs_baseline: Vec::new(),
        state: None,
        tied: Vec::new(),
        rounds: 0,
        cut_short: false,
        finalists,
    };
    // Per round, each finalist's chunk (`None` once it is out).
    let mut table: Vec<Vec<Option<Sample>>> = Vec::new();
    let mut field = Field::new(n);
    let patience = plan.rounds * STATE_PATIENCE;
    for round in 0..patience * 2 {
        // A race that started again in a new state has its patience anew (the state changes
        // only once the new one has twice the other's rounds, so seldom more than once).
        if round >= field.since + patience {
            break;
        }
        let Some(row) = run_round(&mut d, &field, round, (trials, plan), eval)? else {
            d.cut_short = true;
            break;
        };
        table.push(row);
        d.rounds = round + 1;
        let used = judge(&mut d, &table, field.used());
        field.update(&table, used, plan.min_rounds);
        if field.alive.len() < 2 || field.complete >= field.enough(&table, plan.rounds, OVERTIME) {
            break;
        }
    }
    let mut tied: Vec<usize> = field.alive.iter().map(|&k| d.finalists[k]).collect();
    tied.sort_by(|&a, &b| canonical(space, &trials[a].point, &trials[b].point));
    d.tied = tied;
    Ok(d)
}

/// One round of the race: a sample of each finalist still in it, in an order that turns with
/// `round` (so that a change of load hits all alike); `None` once the time is up, the
/// round's samples so far kept in `d`.
fn run_round(
    d: &mut Decision,
    field: &Field,
    round: usize,
    (trials, plan): (&[Trial], &FinalPlan),
    eval: &mut dyn Evaluator,
) -> Result<Option<Vec<Option<Sample>>>, String> {
    let mut row = vec![None; d.finalists.len()];
    let mut order = field.alive.clone();
    let turn = round % order.len().max(1);
    order.rotate_left(turn);
    for k in order {
        if !eval.time_left() {
            return Ok(None);
        }
        let seed = derive(plan.seed, &[FINAL_TAG, d.finalists[k] as u64, round as u64]);
        let sample = eval.sample(&trials[d.finalists[k]].point, seed)?;
        d.samples[k].push(sample);
        row[k] = Some(sample);
    }
    Ok(Some(row))
}

/// Estimates every finalist over the rounds of the state the race is decided in (where the
/// last judgement, on the rounds `before`, left it); returns those rounds.
fn judge(d: &mut Decision, table: &[Vec<Option<Sample>>], before: &[usize]) -> Vec<usize> {
    let (used, state) = rounds_to_use(table, before);
    for (k, e) in d.estimates.iter_mut().enumerate() {
        let chunks: Vec<Sample> = used.iter().filter_map(|&r| table[r][k]).collect();
        *e = median_estimate(&chunks);
    }
    d.vs_baseline = (0..d.finalists.len())
        .map(|k| paired(table, &used, k, 0))
        .collect();
    d.state = state;
    used
}

#[cfg(test)]
mod tests {
    use super::super::trial::{Phase, Refusal};
    use super::*;
    use crate::rng::Rng;

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
        fn sample(&mut self, p: &Point, seed: u64) -> Result<Sample, Refusal> {
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
                link_ns: None,
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
            failed: None,
        }
    }

    fn decide(rates: &[f64], spread: f64, dead: u64, seed: u64) -> Decision {
        let mut e = Noisy {
            rates: rates.to_vec(),
            spread,
            dead,
            chunks: 0,
            limit: usize::MAX,
        };
        race_all(rates.len(), seed, 16, &mut e)
    }

    /// Races configurations `0..n` (trial `i` at sync value `i`) for at most `rounds` rounds.
    fn race_all(n: usize, seed: u64, rounds: usize, e: &mut dyn Evaluator) -> Decision {
        let trials: Vec<Trial> = (0..n).map(trial).collect();
        let plan = FinalPlan {
            seed,
            finalists: n,
            rounds,
            min_rounds: 3,
        };
        race(&space(), &trials, (0..n).collect(), &plan, e).unwrap()
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
    fn a_gain_below_the_margin_leaves_the_baseline_even_when_it_is_certain() {
        // Chunks agreeing to a tenth of a percent: 5 % is certain, and still not enough.
        for seed in 0..10 {
            assert_eq!(decide(&[1000.0, 1050.0], 0.001, 0, seed).tied, vec![0, 1]);
            assert_eq!(decide(&[1000.0, 1150.0], 0.001, 0, seed).tied, vec![1]);
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
    }

    #[test]
    fn the_finalists_are_the_baseline_the_best_and_the_contenders_nearest_the_baseline() {
        let s = space();
        // Trials 1..=5 at sync values 1..=5 (steps from the baseline's 0); trial 3 ranks
        // best, trial 5 next, then 4, 1 (poor), 2 (poor).
        let rated = |sync: usize, low: f64, high: f64| {
            let mut t = trial(sync);
            t.estimate.low = low;
            t.estimate.high = high;
            t
        };
        let trials = vec![
            rated(0, 10.0, 20.0),
            rated(1, 10.0, 30.0),
            rated(2, 10.0, 40.0),
            rated(3, 100.0, 140.0),
            rated(4, 80.0, 95.0),
            rated(5, 90.0, 130.0),
        ];
        let ranked = [3, 5, 4, 0, 1, 2];
        // Trial 1 (sync=instance) is the baseline's one tried neighbour: always in. The
        // contenders reach 100 with 10 % to spare: 5 (130) and 4 (95 * 1.1); 4 is nearer.
        assert_eq!(finalists(&s, &trials, &ranked, 3), vec![0, 1, 3, 4]);
        assert_eq!(finalists(&s, &trials, &ranked, 4), vec![0, 1, 3, 4, 5]);
        // Too few contenders: the next best-ranked fill in.
        assert_eq!(finalists(&s, &trials, &ranked, 5), vec![0, 1, 3, 4, 5, 2]);
        assert_eq!(finalists(&s, &trials, &ranked, 1), vec![0], "no race");
        assert_eq!(finalists(&s, &trials, &[0], 4), vec![0]);
        // In the GPU's space the neighbours are too many to race them all.
        let g = Space::gpu();
        let mut near = trials[0].clone();
        near.point = g.neighbours(&g.baseline)[0].clone();
        let gpu_trials = vec![trials[3].clone(), near, trials[3].clone()];
        assert_eq!(finalists(&g, &gpu_trials, &[2, 1, 0], 2), vec![0, 2]);
    }

    /// A virtual machine whose host moves its cores every `period` chunks (and for good after
    /// `settles` chunks): near (a 90 ns round trip), where `near[i]` is configuration `i`'s
    /// rate, and far (400 ns), where `far[i]` is; the ranking reverses between them, as SB's
    /// does on the CPU.
    struct Moving {
        near: Vec<f64>,
        far: Vec<f64>,
        period: usize,
        settles: usize,
        chunks: usize,
    }

    impl Evaluator for Moving {
        fn sample(&mut self, p: &Point, seed: u64) -> Result<Sample, Refusal> {
            let moves = self.chunks.min(self.settles) / self.period;
            let far = moves % 2 == 0;
            self.chunks += 1;
            let noise = 0.9 + 0.2 * (Rng::new(seed).next_u64() % 1000) as f64 / 1e3;
            let rate = if far { &self.far } else { &self.near }[p.0[0]];
            Ok(Sample {
                instances: 10_000,
                weak: (rate * noise) as u64,
                seconds: 0.1,
                link_ns: Some(if far { 400.0 } else { 90.0 }),
            })
        }
        fn time_left(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_race_whose_machine_changes_state_is_decided_within_one_state() {
        for (period, seed) in [(3, 1), (8, 2), (13, 3), (40, 4), (7, 5), (100, 6)] {
            let mut e = Moving {
                near: vec![1750.0, 950.0],
                far: vec![350.0, 550.0],
                period,
                settles: usize::MAX,
                chunks: 0,
            };
            let d = race_all(2, seed, 16, &mut e);
            let state = d.state.expect("the chunks measured the state");
            assert_eq!(
                state.low_ns, state.high_ns,
                "period {period}: one state: {d:?}"
            );
            let best = if state.low_ns < 200.0 { 0 } else { 1 };
            assert_eq!(d.tied, vec![best], "period {period}: {d:?}");
            // It ends at sixteen rounds in the state, once one finalist is left (which takes 8
            // rounds in the state and two below), or when its patience runs out (a machine that
            // changes state every round and a half leaves a third of the rounds clean).
            let ended = state.rounds == 16 || d.rounds == 16 * STATE_PATIENCE;
            assert!(
                ended || (d.tied.len() == 1 && state.rounds >= 9),
                "{period}: {d:?}"
            );
            assert_eq!(state.rounds + state.ignored, d.rounds);
        }
    }

    #[test]
    fn a_race_whose_machine_moves_for_good_starts_again_in_the_new_state() {
        // Far for 11 to 14 rounds (of three, then two), where the baseline is clearly worst and leaves;
        // then near for good, where it is clearly best: once the near rounds outnumber the far
        // ones twice, the race starts again there, with everyone, and its patience anew.
        let mut longest = 0;
        for (seed, settles) in [(0, 33), (1, 33), (2, 36), (3, 36), (4, 38), (5, 38)] {
            let mut e = Moving {
                near: vec![1750.0, 950.0, 1000.0],
                far: vec![350.0, 560.0, 540.0],
                period: settles,
                settles,
                chunks: 0,
            };
            let d = race_all(3, seed, 16, &mut e);
            let state = d.state.expect("the chunks measured the state");
            assert_eq!(state.high_ns, 90.0, "seed {seed}: {d:?}");
            assert_eq!(d.tied, vec![0], "seed {seed}: {d:?}");
            let far_chunks = d.samples[0].iter().filter(|s| s.link_ns == Some(400.0));
            assert!(far_chunks.count() < 11, "it had left in the far state");
            longest = longest.max(d.rounds);
        }
        assert!(
            longest > 16 * STATE_PATIENCE,
            "a late move gets patience anew"
        );
    }

    /// A machine whose speed for every configuration alike jumps 2.5-fold every `period`
    /// chunks, unseen by the round trip (as SB's does on the CPU within its far state).
    struct Drifting {
        rates: Vec<f64>,
        period: usize,
        chunks: usize,
    }

    impl Evaluator for Drifting {
        fn sample(&mut self, p: &Point, seed: u64) -> Result<Sample, Refusal> {
            let fast = (self.chunks / self.period) % 2 == 0;
            self.chunks += 1;
            let noise = 0.95 + 0.1 * (Rng::new(seed).next_u64() % 1000) as f64 / 1e3;
            let speed = if fast { 2.5 } else { 1.0 };
            Ok(Sample {
                instances: 10_000,
                weak: (self.rates[p.0[0]] * speed * noise) as u64,
                seconds: 0.1,
                link_ns: None,
            })
        }
        fn time_left(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_drift_that_moves_every_finalist_alike_cancels_in_the_round_by_round_ratio() {
        // 30 % better throughout; each finalist's own chunks scatter 2.5-fold, so their
        // intervals overlap, and only the comparison within rounds sees the difference.
        for (period, seed) in [(6, 1), (8, 2), (12, 3), (9, 4), (15, 5)] {
            let mut e = Drifting {
                rates: vec![1000.0, 1300.0],
                period,
                chunks: 0,
            };
            let d = race_all(2, seed, 16, &mut e);
            assert!(
                d.estimates[1].low < d.estimates[0].high,
                "period {period}: the intervals overlap: {d:?}"
            );
            assert_eq!(d.tied, vec![1], "period {period}: {d:?}");
        }
    }

    #[test]
    fn a_race_whose_difference_shows_in_its_medians_but_not_yet_its_interval_runs_on() {
        // 40 % better, with chunks scattering by 30 % either way: sixteen rounds' ratios often
        // do not prove it, and a few more do.
        let mut overtime = 0;
        for seed in 0..10 {
            let d = decide(&[1000.0, 1400.0], 0.3, 0, seed);
            assert_eq!(d.tied, vec![1], "seed {seed}: {d:?}");
            overtime += usize::from(d.rounds > 16);
        }
        assert!(overtime > 0, "some races needed more than 16 rounds");
        // Where the medians agree within the margin, it ends on time.
        assert_eq!(decide(&[1000.0, 1020.0], 0.3, 0, 1).rounds, 16);
    }

    #[test]
    fn a_race_the_budget_cuts_keeps_every_finalist_left_and_says_so() {
        let mut e = Noisy {
            rates: vec![100.0, 1000.0, 100.0],
            spread: 0.1,
            dead: 0,
            chunks: 0,
            limit: 4,
        };
        let d = race_all(3, 1, 8, &mut e);
        assert!(d.cut_short);
        assert_eq!(d.tied, vec![0, 1, 2], "no one left before min_rounds");
        assert_eq!(d.samples.iter().map(Vec::len).sum::<usize>(), 4);
    }
}
