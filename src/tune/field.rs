//! Who is still in the final race ([`super::decide::race`]), and on what evidence. Two
//! finalists are compared round by round: the ratio of their chunks' weak outcomes per second
//! within each round, whose median has a distribution-free 99 % interval
//! ([`median_interval`]). A drift of the machine that moves every configuration alike (other
//! load, a virtual machine's cores moved within one state) cancels in the ratio, where it would
//! widen each finalist's own interval.

use super::stats::{median_interval, Sample};
use serde::{Deserialize, Serialize};

/// Consecutive rounds a finalist's interval must lie below the best before it leaves: one
/// round below is what 99 % intervals show by chance once in a while over many looks.
pub const HOLD: usize = 2;

/// How much better than another a finalist must be, at least, for the other to leave: a
/// difference of a few percent is real on a quiet machine (the chunks of one state agree
/// closely) but not worth a change from the baseline, and which side of it a run lands on is
/// chance.
pub const MARGIN: f64 = 1.1;

/// The finalists still in (indices into the race's finalists), and how they got there.
pub struct Field {
    /// The finalists still in.
    pub alive: Vec<usize>,
    /// Per finalist, the consecutive judgements it has been beaten in.
    below: Vec<usize>,
    /// The rounds of the last judgement: those of the state the race is decided in.
    used: Vec<usize>,
    /// Of them, the rounds in which every finalist still in ran a chunk.
    pub complete: usize,
    /// The rounds run when the race last started again in a new state (0: never).
    pub since: usize,
}

impl Field {
    /// All `n` finalists in, nothing judged.
    pub fn new(n: usize) -> Field {
        Field {
            alive: (0..n).collect(),
            below: vec![0; n],
            used: Vec::new(),
            complete: 0,
            since: 0,
        }
    }

    /// Judges the race again on the rounds `used` of `table` (per round, each finalist's
    /// chunk), once it has `min_rounds` complete ones: a finalist that another has beaten by
    /// [`MARGIN`] ([`ratio_low`]) in [`HOLD`] consecutive judgements leaves.
    pub fn update(&mut self, table: &[Vec<Option<Sample>>], used: Vec<usize>, min_rounds: usize) {
        // The state the race is decided in changed (the machine moved, and stayed): what
        // the other state's rounds decided no longer stands, and everyone runs again.
        if !self.used.iter().all(|r| used.contains(r)) {
            *self = Field::new(self.below.len());
            self.since = table.len();
        }
        let complete = self.complete_in(table, &used);
        // Only a complete round in the state is new evidence: another leaves the comparisons
        // as they were, and must not count towards [`HOLD`] again.
        if complete > self.complete && complete >= min_rounds.max(2) {
            self.drop_worse(table, &used);
        }
        self.complete = self.complete_in(table, &used);
        self.used = used;
    }

    /// The rounds the last judgement used.
    pub fn used(&self) -> &[usize] {
        &self.used
    }

    /// Whether a finalist still in has been beaten in the last judgement, but not yet in
    /// [`HOLD`] running: the next judgement settles it.
    pub fn pending(&self) -> bool {
        self.alive.iter().any(|&k| self.below[k] > 0)
    }

    /// Whether a finalist still in is a median [`MARGIN`] times another's, round by round,
    /// with an interval that does not show it yet.
    pub fn unsettled(&self, table: &[Vec<Option<Sample>>]) -> bool {
        let pairs = self
            .alive
            .iter()
            .flat_map(|&a| self.alive.iter().map(move |&b| (a, b)));
        pairs
            .filter(|(a, b)| a != b)
            .filter_map(|(a, b)| paired(table, &self.used, a, b))
            .any(|r| r.median > MARGIN && r.low <= MARGIN)
    }

    /// The complete rounds after which the race may end, for a race of `rounds`: a finalist
    /// whose median ratio over another's is past the margin, but not yet its interval, is
    /// likely a difference that more rounds will show, so the race runs `overtime` times as
    /// long; and one beaten once waits for the judgement that confirms it or not.
    pub fn enough(&self, table: &[Vec<Option<Sample>>], rounds: usize, overtime: usize) -> usize {
        if self.pending() {
            usize::MAX
        } else if self.unsettled(table) {
            rounds * overtime
        } else {
            rounds
        }
    }

    /// The rounds among `used` in which every finalist still in ran a chunk.
    fn complete_in(&self, table: &[Vec<Option<Sample>>], used: &[usize]) -> usize {
        let full = |r: &&usize| self.alive.iter().all(|&k| table[**r][k].is_some());
        used.iter().filter(full).count()
    }

    /// Counts, for each finalist still in, the consecutive judgements another has beaten it
    /// in, and drops those at [`HOLD`].
    fn drop_worse(&mut self, table: &[Vec<Option<Sample>>], used: &[usize]) {
        let alive = &self.alive;
        let beaten: Vec<bool> = alive
            .iter()
            .map(|&k| {
                let beats = |&j: &usize| j != k && ratio_low(table, used, j, k) > MARGIN;
                alive.iter().any(beats)
            })
            .collect();
        for (&k, beaten) in alive.iter().zip(beaten) {
            self.below[k] = if beaten { self.below[k] + 1 } else { 0 };
        }
        let below = &self.below;
        self.alive.retain(|&k| below[k] < HOLD);
    }
}

/// One finalist's weak outcomes per second over another's, round by round: the median of
/// the rounds' ratios with its 99 % interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// The median ratio.
    pub median: f64,
    /// The interval's lower end.
    pub low: f64,
    /// Its upper end (`f64::MAX` for unbounded, so that the record stays JSON).
    pub high: f64,
    /// Rounds in which both ran a chunk.
    pub rounds: usize,
}

/// Finalist `a`'s chunk rate over `b`'s in each of the rounds `used` where both ran one;
/// `None` while too few rounds give an interval.
pub fn paired(table: &[Vec<Option<Sample>>], used: &[usize], a: usize, b: usize) -> Option<Ratio> {
    let mut ratios: Vec<f64> = used
        .iter()
        .filter_map(|&r| Some(ratio(table[r][a]?, table[r][b]?)))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let (low, high) = median_interval(&ratios)?;
    let k = ratios.len();
    let finite = |x: f64| if x.is_finite() { x } else { f64::MAX };
    Some(Ratio {
        median: finite((ratios[(k - 1) / 2] + ratios[k / 2]) / 2.0),
        low: finite(low),
        high: finite(high),
        rounds: k,
    })
}

/// The lower end of [`paired`]'s interval; 0 while there is none.
fn ratio_low(table: &[Vec<Option<Sample>>], used: &[usize], a: usize, b: usize) -> f64 {
    paired(table, used, a, b).map_or(0.0, |r| r.low)
}

/// `a`'s weak outcomes per second over `b`'s: unbounded where only `b` saw none, 1 where
/// neither did.
fn ratio(a: Sample, b: Sample) -> f64 {
    let rate = |s: Sample| {
        if s.seconds > 0.0 {
            s.weak as f64 / s.seconds
        } else {
            0.0
        }
    };
    match (rate(a), rate(b)) {
        (x, y) if y > 0.0 => x / y,
        (x, _) if x > 0.0 => f64::INFINITY,
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(weak: u64) -> Option<Sample> {
        Some(Sample {
            instances: 1000,
            weak,
            seconds: 0.5,
            link_ns: None,
        })
    }

    #[test]
    fn the_ratio_is_taken_within_rounds_and_needs_eight_of_them() {
        // The machine doubles and halves the rates; the second finalist is 1.5 times the
        // first in every round all the same.
        let table: Vec<Vec<Option<Sample>>> = (0..12u64)
            .map(|r| {
                let speed = if r % 3 == 0 { 4 } else { 1 };
                vec![chunk(100 * speed), chunk(150 * speed), None]
            })
            .collect();
        let all: Vec<usize> = (0..12).collect();
        let r = paired(&table, &all, 1, 0).unwrap();
        assert_eq!((r.median, r.low, r.high, r.rounds), (1.5, 1.5, 1.5, 12));
        assert_eq!(
            paired(&table, &all[..7], 1, 0),
            None,
            "7 rounds give no interval"
        );
        assert_eq!(paired(&table, &all, 2, 0), None, "no rounds in common");
    }

    #[test]
    fn nothing_seen_by_one_side_is_unbounded_and_by_both_is_even() {
        assert_eq!(ratio(chunk(5).unwrap(), chunk(0).unwrap()), f64::INFINITY);
        assert_eq!(ratio(chunk(0).unwrap(), chunk(0).unwrap()), 1.0);
        let table = vec![vec![chunk(5), chunk(0)]; 8];
        let r = paired(&table, &(0..8).collect::<Vec<_>>(), 0, 1).unwrap();
        assert_eq!((r.median, r.high), (f64::MAX, f64::MAX), "kept JSON");
    }

    #[test]
    fn a_finalist_beaten_in_two_judgements_running_leaves() {
        let table: Vec<Vec<Option<Sample>>> = (0..10)
            .map(|r| vec![chunk(100 + r), chunk(105), chunk(200)])
            .collect();
        let mut field = Field::new(3);
        for r in 1..=8 {
            field.update(&table[..r], (0..r).collect(), 3);
        }
        assert_eq!(field.alive, vec![0, 1, 2], "beaten once, at 8 rounds");
        field.update(&table[..9], (0..9).collect(), 3);
        assert_eq!(field.alive, vec![2], "beaten twice running");
    }
}
