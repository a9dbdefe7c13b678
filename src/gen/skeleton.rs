//! What a cycle fixes about its test: which thread each event runs in, which location it
//! accesses, the value each write stores and each read must see for the cycle to happen, and
//! which final values close it (diy's conventions: a new thread after each external edge, a
//! new location after each edge between different locations, writes to one location numbered
//! 1, 2, ... in coherence order along the cycle).

use super::annot::Dir;
use super::cycle::{Com, Cycle, Edge, EdgeKind};
use super::GenError;

/// One event with its place in the test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Read or write.
    pub dir: Dir,
    /// Thread index.
    pub thread: usize,
    /// Location index (0 is `x`, then `y`, `z`, ...).
    pub loc: usize,
    /// For a write the value stored; for a read the value it must return.
    pub value: i64,
}

/// The events of a cycle and the final values its condition checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skeleton {
    /// Events in cycle order (thread 0's first event first).
    pub events: Vec<Event>,
    /// Number of threads.
    pub threads: usize,
    /// Number of locations.
    pub locations: usize,
    /// `(location, value)`: locations written more than once end with their coherence-last
    /// write.
    pub finals: Vec<(usize, i64)>,
}

/// The name of location `i`: `x`, `y`, `z`, `a`, `b`, ... then `l8`, `l9`, ...
pub fn loc_name(i: usize) -> String {
    const NAMES: [&str; 8] = ["x", "y", "z", "a", "b", "c", "d", "e"];
    NAMES
        .get(i)
        .map_or_else(|| format!("l{i}"), |s| s.to_string())
}

impl Skeleton {
    /// Places the events of `cycle`; an event whose value the cycle does not fix is an error.
    pub fn of(cycle: &Cycle) -> Result<Skeleton, GenError> {
        check_shape(cycle)?;
        let n = cycle.edges.len();
        let mut thread = vec![0usize; n];
        for i in 1..n {
            thread[i] = thread[i - 1] + usize::from(cycle.edges[i - 1].external());
        }
        let (loc, locations) = locations(cycle);
        let mut events: Vec<Event> = (0..n)
            .map(|i| Event {
                dir: cycle.edges[i].src,
                thread: thread[i],
                loc: loc[i],
                value: 0,
            })
            .collect();
        let finals = number_writes(cycle, &mut events);
        read_values(cycle, &mut events)?;
        Ok(Skeleton {
            events,
            threads: thread[n - 1] + 1,
            locations,
            finals,
        })
    }
}

/// The order in which to walk the cycle so that every location's events come together, and
/// each location's writes in the coherence order its communication edges give: from the event
/// after the first edge that changes location, or, in a cycle of one location, after its
/// first program-order edge (the coherence order along the cycle is cut where program order,
/// not coherence, closes it: `PosWR Fre Coe` has the read's write last, not first).
fn walk_order(cycle: &Cycle) -> Vec<usize> {
    let n = cycle.edges.len();
    let start = cycle
        .edges
        .iter()
        .position(|e| e.changes_location())
        .or_else(|| cycle.edges.iter().position(|e| !e.is_com()))
        .map_or(0, |i| (i + 1) % n);
    (0..n).map(|k| (start + k) % n).collect()
}

/// Refuses cycles that no test can make happen as written: one made of communication edges
/// alone (coherence contradicts itself, with no program order to test), and one that changes
/// location exactly once (it could not come back to the location it started from).
fn check_shape(cycle: &Cycle) -> Result<(), GenError> {
    if cycle.edges.iter().all(Edge::is_com) {
        return Err(GenError::msg(
            "the cycle has no program-order edge: communication alone cannot form a cycle",
        ));
    }
    let changes: Vec<&Edge> = cycle
        .edges
        .iter()
        .filter(|e| e.changes_location())
        .collect();
    if let [only] = changes[..] {
        return Err(GenError::msg(format!(
            "`{}` is the only edge between different locations, so the cycle cannot come back to its first location: use `Pos` instead or change location again",
            only.text()
        )));
    }
    Ok(())
}

/// Each event's location index, named in order of first appearance from event 0.
fn locations(cycle: &Cycle) -> (Vec<usize>, usize) {
    let n = cycle.edges.len();
    let mut segment = vec![0usize; n];
    let mut seg = 0;
    for (k, &i) in walk_order(cycle).iter().enumerate() {
        if k > 0 && cycle.edges[(i + n - 1) % n].changes_location() {
            seg += 1;
        }
        segment[i] = seg;
    }
    let mut names: Vec<Option<usize>> = vec![None; seg + 1];
    let mut next = 0;
    let loc = segment
        .iter()
        .map(|&s| {
            *names[s].get_or_insert_with(|| {
                next += 1;
                next - 1
            })
        })
        .collect();
    (loc, next)
}

/// Numbers the writes of each location 1, 2, ... along the walk; returns the final value of
/// every location written more than once.
fn number_writes(cycle: &Cycle, events: &mut [Event]) -> Vec<(usize, i64)> {
    let mut count = vec![0i64; events.iter().map(|e| e.loc + 1).max().unwrap_or(0)];
    for i in walk_order(cycle) {
        if events[i].dir == Dir::W {
            count[events[i].loc] += 1;
            events[i].value = count[events[i].loc];
        }
    }
    count
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 1)
        .map(|(l, c)| (l, *c))
        .collect()
}

/// A read before an `Fr` edge sees the write coherence-before that edge's target; otherwise it
/// sees the write of an `Rf` or `Pos` edge reaching it, or, as the read of an RMW, the write
/// coherence-before the RMW's own.
fn read_values(cycle: &Cycle, events: &mut [Event]) -> Result<(), GenError> {
    let n = events.len();
    for i in 0..n {
        if events[i].dir != Dir::R {
            continue;
        }
        let out = cycle.edges[i];
        let prev = (i + n - 1) % n;
        let inc = cycle.edges[prev];
        // With the walk cut at program order, the write after an `Fr` is the one after any
        // write an `Rf` brings, so both agree on the value.
        events[i].value = match (out.kind, inc.kind) {
            (EdgeKind::Com { com: Com::Fr, .. }, _) => events[(i + 1) % n].value - 1,
            (_, EdgeKind::Com { com: Com::Rf, .. }) => events[prev].value,
            (_, EdgeKind::Po { same_loc: true }) if inc.src == Dir::W => events[prev].value,
            // An RMW reads the write coherence-just-before its own.
            (EdgeKind::Rmw(_), _) => events[(i + 1) % n].value - 1,
            _ => {
                return Err(GenError::msg(format!(
                    "the read after `{}` has no value fixed by the cycle: give it an incoming Rf or an outgoing Fr",
                    inc.text()
                )))
            }
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skel(text: &str) -> Skeleton {
        Skeleton::of(&Cycle::parse(text).unwrap()).unwrap()
    }

    fn summary(s: &Skeleton) -> Vec<(usize, String, i64)> {
        s.events
            .iter()
            .map(|e| (e.thread, loc_name(e.loc), e.value))
            .collect()
    }

    #[test]
    fn message_passing() {
        let s = skel("PodWW Rfe PodRR Fre");
        let want = [(0, "x", 1), (0, "y", 1), (1, "y", 1), (1, "x", 0)];
        let want: Vec<_> = want
            .iter()
            .map(|(t, l, v)| (*t, l.to_string(), *v))
            .collect();
        assert_eq!(summary(&s), want);
        assert_eq!((s.threads, s.locations), (2, 2));
        assert!(s.finals.is_empty());
    }

    #[test]
    fn coherence_cycles_check_final_values() {
        let s = skel("PodWW Coe PodWW Coe");
        let values: Vec<i64> = s.events.iter().map(|e| e.value).collect();
        assert_eq!(values, [2, 1, 2, 1]);
        assert_eq!(s.finals, [(0, 2), (1, 2)]);
        let corr = skel("Rfe PosRR Fre");
        assert_eq!(
            summary(&corr)[1..],
            [(1, "x".to_string(), 1), (1, "x".to_string(), 0)]
        );
    }

    #[test]
    fn one_location_cycles_cut_coherence_at_program_order() {
        // CoWR: the read's own write is coherence-last, and the read sees what precedes the
        // other thread's write.
        let s = skel("PosWR Fre Coe");
        assert_eq!(
            summary(&s),
            [(0, "x".into(), 2), (0, "x".into(), 0), (1, "x".into(), 1)]
        );
        assert_eq!(s.finals, [(0, 2)]);
        // CoRW2: the read sees the other thread's write, which then ends coherence.
        let s = skel("Rfe PosRW Coe");
        let values: Vec<i64> = s.events.iter().map(|e| e.value).collect();
        assert_eq!((values, s.finals), (vec![2, 2, 1], vec![(0, 2)]));
    }

    #[test]
    fn an_rmw_reads_the_write_coherence_before_its_own() {
        // M4: each RMW reads the other's write; the second write ends coherence.
        let s = skel("Rmw Rfe Rmw Rfe");
        let values: Vec<i64> = s.events.iter().map(|e| e.value).collect();
        assert_eq!((values, s.finals), (vec![2, 1, 1, 2], vec![(0, 2)]));
        // SB with RMWs for reads: each reads the initial value before its own write.
        let s = skel("PodWR Rmw Coe PodWR Rmw Coe");
        assert_eq!(
            summary(&s),
            [
                (0, "x".into(), 2),
                (0, "y".into(), 0),
                (0, "y".into(), 1),
                (1, "y".into(), 2),
                (1, "x".into(), 0),
                (1, "x".into(), 1)
            ]
        );
    }

    #[test]
    fn cycles_no_test_can_make_happen_are_refused() {
        let e = |t: &str| {
            Skeleton::of(&Cycle::parse(t).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert!(
            e("Rfe Fre").contains("no program-order edge"),
            "{}",
            e("Rfe Fre")
        );
        let once = e("PodWW Rfe PosRR Fre");
        assert!(
            once.contains("`PodWW` is the only edge between different"),
            "{once}"
        );
    }

    #[test]
    fn a_read_the_cycle_does_not_fix_is_refused() {
        let c = Cycle::parse("Rfe PodRR PodRW Coe").unwrap();
        assert!(Skeleton::of(&c)
            .unwrap_err()
            .to_string()
            .contains("no value"));
    }
}
