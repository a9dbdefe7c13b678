//! Which rounds of the final race ran in the same state of the machine. On a virtual machine
//! the host may move the guest's cores while a race goes on, and the cache line's round trip
//! between them (a chunk's `link_ns`, measured by the CPU backend) jumps several-fold; the
//! weak rates jump with it, and so does the ranking of the configurations (`docs/tune.md`). A
//! comparison is only fair between chunks taken in one state, so the race is decided on the
//! rounds of one state alone: the one it saw most, and once chosen, kept until the other has
//! [`SWITCH`] times as many rounds (so that a machine moving back and forth does not make the
//! race start over at every move).

use super::stats::Sample;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// Round trips this many times apart (or more), with none in between, are different states.
pub const JUMP: f64 = 2.0;

/// How many times as many rounds the other state must have before a race leaves the state
/// it was being decided in.
pub const SWITCH: usize = 2;

/// The state a race was decided in, and what it left out.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkState {
    /// The lowest round trip of its chunks, in nanoseconds.
    pub low_ns: f64,
    /// The highest.
    pub high_ns: f64,
    /// Rounds whose chunks were all in this state: the rounds the decision uses.
    pub rounds: usize,
    /// Other rounds: in another state, or with chunks in two.
    pub ignored: usize,
}

/// The round trip separating the two states among `links`: the geometric middle of the widest
/// gap between neighbouring values, if that gap is a [`JUMP`] or more.
pub fn split(links: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = links.iter().copied().filter(|x| *x > 0.0).collect();
    v.sort_by(f64::total_cmp);
    v.windows(2)
        .map(|w| (w[1] / w[0], (w[0] * w[1]).sqrt()))
        .filter(|&(ratio, _)| ratio >= JUMP)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, middle)| middle)
}

/// The rounds to decide on, given each round's chunks (`None` for a finalist already out)
/// and the rounds the last judgement used (`before`): all of them when the chunks carry no
/// round trip or show one state only; else those whose chunks all lie on one side of the
/// split, with that state's description. The side is that of most of `before`, unless the
/// other has [`SWITCH`] times as many such rounds; with nothing before, the side with more
/// (the lower on a tie).
pub fn rounds_to_use(
    table: &[Vec<Option<Sample>>],
    before: &[usize],
) -> (Vec<usize>, Option<LinkState>) {
    let links_of = |row: &Vec<Option<Sample>>| -> Vec<f64> {
        row.iter().flatten().filter_map(|s| s.link_ns).collect()
    };
    let all: Vec<f64> = table.iter().flat_map(links_of).collect();
    let Some(cut) = split(&all) else {
        let state = range(&all).map(|(low_ns, high_ns)| LinkState {
            low_ns,
            high_ns,
            rounds: table.len(),
            ignored: 0,
        });
        return ((0..table.len()).collect(), state);
    };
    let side = |row: &Vec<Option<Sample>>| {
        let links = links_of(row);
        let below = links.iter().all(|&x| x < cut);
        let above = links.iter().all(|&x| x > cut);
        match (links.is_empty(), below, above) {
            (false, true, _) => Some(false),
            (false, _, true) => Some(true),
            _ => None,
        }
    };
    let sides: Vec<Option<bool>> = table.iter().map(side).collect();
    let count = |s: bool| sides.iter().filter(|&&x| x == Some(s)).count();
    let was = |s: bool| {
        before
            .iter()
            .filter(|&&r| sides.get(r) == Some(&Some(s)))
            .count()
    };
    let upper = match was(true).cmp(&was(false)) {
        Ordering::Equal => count(true) > count(false),
        kept => {
            let kept = kept == Ordering::Greater;
            kept != (count(!kept) >= SWITCH * count(kept).max(1))
        }
    };
    let used: Vec<usize> = (0..table.len())
        .filter(|&r| sides[r] == Some(upper))
        .collect();
    let links: Vec<f64> = used.iter().flat_map(|&r| links_of(&table[r])).collect();
    let state = range(&links).map(|(low_ns, high_ns)| LinkState {
        low_ns,
        high_ns,
        rounds: used.len(),
        ignored: table.len() - used.len(),
    });
    (used, state)
}

/// The lowest and highest of `links`, if any.
fn range(links: &[f64]) -> Option<(f64, f64)> {
    let low = links.iter().copied().reduce(f64::min)?;
    let high = links.iter().copied().reduce(f64::max)?;
    Some((low, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(link: Option<f64>) -> Option<Sample> {
        Some(Sample {
            instances: 100,
            weak: 10,
            seconds: 0.01,
            link_ns: link,
        })
    }

    fn row(links: &[f64]) -> Vec<Option<Sample>> {
        links.iter().map(|&l| chunk(Some(l))).collect()
    }

    #[test]
    fn two_states_split_at_the_widest_jump_and_one_state_does_not_split() {
        let cut = split(&[90.0, 100.0, 85.0, 400.0, 350.0]).unwrap();
        assert!((cut - (100.0f64 * 350.0).sqrt()).abs() < 1e-9, "{cut}");
        assert_eq!(split(&[90.0, 150.0, 170.0]), None, "1.67x is one state");
        assert_eq!(split(&[]), None);
    }

    #[test]
    fn the_race_is_decided_on_the_state_it_saw_most_and_mixed_rounds_are_left_out() {
        let table = vec![
            row(&[400.0, 420.0]),
            row(&[90.0, 95.0]),
            row(&[380.0, 100.0]), // the host moved the cores between its chunks
            row(&[410.0, 390.0]),
            vec![chunk(Some(88.0)), None],
            row(&[430.0, 400.0]),
        ];
        let (used, state) = rounds_to_use(&table, &[]);
        assert_eq!(used, vec![0, 3, 5]);
        let s = state.unwrap();
        assert_eq!(
            (s.low_ns, s.high_ns, s.rounds, s.ignored),
            (390.0, 430.0, 3, 3)
        );
    }

    #[test]
    fn the_state_a_race_is_decided_in_is_kept_until_the_other_has_twice_its_rounds() {
        let far = row(&[400.0, 410.0]);
        let near = row(&[90.0, 95.0]);
        let mut table = vec![far.clone(); 3];
        table.extend(vec![near.clone(); 5]);
        assert_eq!(rounds_to_use(&table, &[]).0, vec![3, 4, 5, 6, 7], "most");
        assert_eq!(rounds_to_use(&table, &[0, 1, 2]).0, vec![0, 1, 2], "kept");
        table.push(near);
        assert_eq!(
            rounds_to_use(&table, &[0, 1, 2]).0,
            (3..9).collect::<Vec<_>>()
        );
    }

    #[test]
    fn without_round_trips_every_round_counts() {
        let table = vec![vec![chunk(None), chunk(None)]; 4];
        assert_eq!(rounds_to_use(&table, &[]), ((0..4).collect(), None));
        let steady = vec![row(&[90.0, 120.0]); 3];
        let (used, state) = rounds_to_use(&steady, &[]);
        assert_eq!(used, vec![0, 1, 2]);
        assert_eq!(state.unwrap().ignored, 0);
    }
}
