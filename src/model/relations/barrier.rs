//! Barriers (PTX ISA §8.9.4): which barrier events synchronise, and whether the `bar.red`
//! results a combination of traces guessed are the reductions its participants give.

use super::super::event::{BarrierKind, Event, Kind};
use super::super::lower::Trace;
use super::super::relation::Rel;
use super::barrier_groups::{same_group, Group};
use super::place;
use crate::litmus::ast::{BarRedOp, Placement, Value};

/// What makes two CTA barrier events the same barrier instance: id, count and occurrence.
fn cta_key(e: &Event) -> Option<(Value, Option<Value>, u32)> {
    match e.kind {
        Kind::Barrier(BarrierKind::Cta {
            id,
            count,
            instance,
            ..
        }) => Some((id, count, instance)),
        _ => None,
    }
}

/// Whether every guessed `bar.red` result is the reduction over the predicates of the
/// participants (same CTA, same barrier instance) of the traces combined.
pub(super) fn bar_red_consistent(
    events: &[Event],
    places: &[Placement],
    traces: &[&Trace],
    offsets: &[usize],
) -> bool {
    let mut guesses = Vec::new();
    for (ti, t) in traces.iter().enumerate() {
        for g in &t.bar_red {
            guesses.push((ti, offsets[ti] + g.event, *g));
        }
    }
    guesses.iter().all(|&(ti, ev, g)| {
        let group: Vec<bool> = guesses
            .iter()
            .filter(|(tj, ej, _)| {
                places[*tj].same_cta(&places[ti]) && cta_key(&events[*ej]) == cta_key(&events[ev])
            })
            .map(|(_, _, h)| h.pred)
            .collect();
        let expect: Value = match g.op {
            BarRedOp::Popc => group.iter().filter(|p| **p).count() as Value,
            BarRedOp::And => group.iter().all(|p| *p) as Value,
            BarRedOp::Or => group.iter().any(|p| *p) as Value,
        };
        expect == g.result
    })
}

/// Barrier synchronisation: a CTA barrier event of `syncing` (the synchronising choice of
/// [`sync_sets`](super::barrier_groups::sync_sets)) to every waiting event of another thread in
/// its group, and a non-relaxed cluster arrival to every cluster wait of the same occurrence
/// in another thread of its cluster.
pub(super) fn barrier_sync(
    events: &[Event],
    places: &[Placement],
    groups: &[Group],
    syncing: &[usize],
) -> Rel {
    let n = events.len();
    let mut bar_sync = Rel::new(n);
    for a in 0..n {
        for b in 0..n {
            let (ea, eb) = (&events[a], &events[b]);
            if a == b || ea.thread == eb.thread || ea.is_init() || eb.is_init() {
                continue;
            }
            let on = match (ea.kind, eb.kind) {
                (
                    Kind::Barrier(BarrierKind::Cta { .. }),
                    Kind::Barrier(BarrierKind::Cta { waits, .. }),
                ) => waits && syncing.contains(&a) && same_group(groups, a, b),
                _ => cluster_sync(ea.kind, eb.kind, &place(places, ea), &place(places, eb)),
            };
            if on {
                bar_sync.add(a, b);
            }
        }
    }
    bar_sync
}

/// Whether cluster barrier event `a` (at `pa`) synchronises with cluster barrier event `b`
/// (at `pb`): a non-relaxed arrival and a wait of the same occurrence in one cluster.
fn cluster_sync(a: Kind, b: Kind, pa: &Placement, pb: &Placement) -> bool {
    match (a, b) {
        (
            Kind::Barrier(BarrierKind::ClusterArrive {
                relaxed: false,
                instance: k1,
            }),
            Kind::Barrier(BarrierKind::ClusterWait { instance: k2 }),
        ) => pa.same_cluster(pb) && k1 == k2,
        _ => false,
    }
}
