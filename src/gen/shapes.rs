//! The names of cycle shapes: the classic names of the literature (MP, SB, IRIW, ...) for the
//! cycles they name, whatever fences or dependencies stand in for program order, and for any
//! other cycle a name spelled from its edges.

use super::cycle::{Cycle, Edge, EdgeKind};

/// Classic shapes, each as the cycle of program order and communication that names it (the
/// names the families and cuda-litmus's kernels use for the same cycles).
const CLASSIC: [(&str, &str); 18] = [
    ("MP", "PodWW Rfe PodRR Fre"),
    ("SB", "PodWR Fre PodWR Fre"),
    ("LB", "PodRW Rfe PodRW Rfe"),
    ("S", "PodWW Rfe PodRW Coe"),
    ("R", "PodWW Coe PodWR Fre"),
    ("2+2W", "PodWW Coe PodWW Coe"),
    ("CoRR", "Rfe PosRR Fre"),
    ("CoWR", "PosWR Fre Coe"),
    ("WRC", "Rfe PodRW Rfe PodRR Fre"),
    ("RWC", "Rfe PodRR Fre PodWR Fre"),
    ("WRW+2W", "Rfe PodRW Coe PodWW Coe"),
    ("WWC", "Rfe PodRW Rfe PodRW Coe"),
    ("ISA2", "PodWW Rfe PodRW Rfe PodRR Fre"),
    ("Z6.3", "PodWW Coe PodWW Rfe PodRR Fre"),
    ("3.SB", "PodWR Fre PodWR Fre PodWR Fre"),
    ("3.LB", "PodRW Rfe PodRW Rfe PodRW Rfe"),
    ("3.2W", "PodWW Coe PodWW Coe PodWW Coe"),
    ("IRIW", "Rfe PodRR Fre Rfe PodRR Fre"),
];

/// The edge with a fence or a dependency read as the program order it orders, and an RMW of
/// any operation as `Rmw` (the test name tells the operation).
fn plain(e: &Edge) -> Edge {
    match e.kind {
        EdgeKind::Fenced(_) | EdgeKind::Dp(_) => Edge {
            kind: EdgeKind::Po { same_loc: false },
            ..*e
        },
        EdgeKind::Rmw(_) => Edge::RMW,
        _ => *e,
    }
}

/// The cycle's program order and communication, one token per edge, in its own order.
fn skeleton(edges: &[Edge]) -> Vec<String> {
    edges.iter().map(|e| plain(e).text()).collect()
}

/// The least of the rotations of `tokens`, so that rotations of one cycle compare equal.
fn least_rotation(tokens: &[String]) -> Vec<String> {
    (0..tokens.len())
        .map(|k| {
            let mut r = tokens.to_vec();
            r.rotate_left(k);
            r
        })
        .min()
        .unwrap_or_default()
}

/// The classic shape of the cycle, if it has one: its name and its program order and
/// communication as the table writes them.
fn classic_entry(cycle: &Cycle) -> Option<(&'static str, Vec<String>)> {
    let key = least_rotation(&skeleton(&cycle.edges));
    CLASSIC.iter().find_map(|(name, text)| {
        let edges: Vec<Edge> = text
            .split_whitespace()
            .map(|t| Edge::parse(t).and_then(Result::ok).expect("a table edge"))
            .collect();
        let tokens = skeleton(&edges);
        (least_rotation(&tokens) == key).then_some((*name, tokens))
    })
}

/// The classic name of the cycle's shape, if it has one.
pub fn classic(cycle: &Cycle) -> Option<&'static str> {
    classic_entry(cycle).map(|(name, _)| name)
}

/// The cycle turned to start where its classic shape does (MP with its writer, IRIW with a
/// lone writer), the least such turn by text where the shape repeats (SB, IRIW): then a
/// classic name and the threads' annotations in order tell the cycle apart from every
/// other. A cycle without a classic name is returned as it is, since its name spells its own
/// turn.
pub fn aligned(cycle: &Cycle) -> Cycle {
    let Some((_, want)) = classic_entry(cycle) else {
        return cycle.clone();
    };
    let tokens = skeleton(&cycle.edges);
    let texts: Vec<String> = (cycle.events.iter().zip(&cycle.edges))
        .map(|(a, e)| format!("{} {}", a.text(), e.text()))
        .collect();
    let turn = |k: usize, v: &[String]| {
        let mut r = v.to_vec();
        r.rotate_left(k);
        r
    };
    let k = (0..tokens.len())
        .filter(|&k| turn(k, &tokens) == want)
        .min_by_key(|&k| turn(k, &texts))
        .expect("a classic shape is a turn of its table entry");
    let mut c = cycle.clone();
    c.edges.rotate_left(k);
    c.events.rotate_left(k);
    c
}

/// The shape's name: its classic name, else its program order and communication spelled out
/// from the cycle's first event (`RfePodRWCoePodWRFre`), which with the annotations and fences of
/// a systematic name tells the cycle apart from every other.
pub fn name(cycle: &Cycle) -> String {
    classic(cycle).map_or_else(|| skeleton(&cycle.edges).concat(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle(t: &str) -> Cycle {
        Cycle::parse(t).unwrap()
    }

    #[test]
    fn classic_shapes_are_named_whatever_orders_them() {
        assert_eq!(name(&cycle("PodWW Rfe PodRR Fre")), "MP");
        assert_eq!(name(&cycle("Fence(sc)dWW Rfe DpAddrdR Fre")), "MP");
        assert_eq!(name(&cycle("Fre Fence(sc.gpu)dWR Fre PodWR")), "SB");
        assert_eq!(name(&cycle("PosWR Fre Coe")), "CoWR");
    }

    #[test]
    fn other_shapes_are_spelled_from_their_edges() {
        let spelled = "RfePodRWCoePodWRFre";
        assert_eq!(name(&cycle("Rfe PodRW Coe PodWR Fre")), spelled);
        assert_eq!(name(&cycle("Rfe DpDatadW Coe Fence(sc)dWR Fre")), spelled);
    }

    #[test]
    fn classic_cycles_turn_to_start_as_their_shape_does() {
        let mp = aligned(&cycle("Fence(sc)dRR Fre Fence(acq_rel)dWW Rfe"));
        assert_eq!(
            mp.text(),
            "rlx Fence(acq_rel)dWW rlx Rfe rlx Fence(sc)dRR rlx Fre"
        );
        // SB starts with either thread: the least by edge text.
        let sb = aligned(&cycle("PodWR Fre Fence(sc)dWR Fre"));
        assert_eq!(sb.text(), "rlx Fence(sc)dWR rlx Fre rlx PodWR rlx Fre");
        let other = cycle("Rfe PodRW Coe PodWR Fre");
        assert_eq!(aligned(&other), other);
    }

    #[test]
    fn the_table_names_distinct_well_formed_cycles() {
        for (i, (n, t)) in CLASSIC.iter().enumerate() {
            let c = cycle(t);
            assert_eq!(classic(&c), Some(*n), "{t}");
            for (m, u) in &CLASSIC[i + 1..] {
                assert_ne!(
                    least_rotation(&skeleton(&c.edges)),
                    least_rotation(&skeleton(&cycle(u).edges)),
                    "{n} and {m}"
                );
            }
        }
    }
}
