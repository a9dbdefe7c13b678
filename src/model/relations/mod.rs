//! The relations of the PTX memory model (PTX ISA §8.7–§8.9) over one combination of thread
//! traces: those fixed by the traces (program order, dependencies, moral strength, release and
//! acquire patterns, barrier synchronisation, proxy sets) built once in [`Combo::new`], and
//! those that follow from a reads-from choice (observation, synchronisation, causality order,
//! from-reads) in `causality.rs`.

mod barrier;
mod barrier_groups;
mod causality;
mod patterns;
mod program;
mod proxy;
mod strong;

use super::event::{BarrierKind, Event, Kind};
use super::lower::{Program, Trace};
use super::relation::{bit, Rel, Set, MAX_EVENTS};
use super::ModelError;
use crate::litmus::ast::Placement;
use proxy::ProxySets;

pub use barrier_groups::Hang;

/// One combination of traces (one per thread) as an event graph, with the relations that do
/// not depend on reads-from.
pub struct Combo {
    /// Events: the initial write of memory `i` is event `i`, then each thread's events.
    pub events: Vec<Event>,
    /// Number of memories (initial writes).
    pub nlocs: usize,
    /// Program order (transitive).
    pub po: Rel,
    /// Immediate program order (for drawing).
    pub po_imm: Rel,
    /// Address, data and control dependencies.
    pub dep: Rel,
    /// Read half to write half of each atomic read-modify-write.
    pub rmw: Rel,
    /// Morally strong.
    pub ms: Rel,
    /// First operation of a release pattern -> a strong write of it.
    rp: Rel,
    /// A strong read of an acquire pattern -> its last operation.
    ap: Rel,
    /// Barrier synchronisation, one relation per choice of the barriers a quorum
    /// synchronises (one when no barrier has a quorum).
    pub bar_syncs: Vec<Rel>,
    /// Program order between morally strong accesses to the same address.
    pub po_loc_ms: Rel,
    /// Per memory, its writes (the initial one included).
    writes_of: Vec<Set>,
    /// What proxy-preserved base causality reads.
    proxies: ProxySets,
}

/// The first barrier of one trace per thread that can never complete (the combination gives
/// no final state); `None` when every barrier can, or when a trace stops undecided.
pub fn hang(prog: &Program, traces: &[&Trace]) -> Option<Hang> {
    if traces.iter().any(|t| t.fault.is_some()) {
        return None;
    }
    // Only CTA barriers form groups: without one, spare building the events.
    let cta_barrier = |e: &Event| matches!(e.kind, Kind::Barrier(BarrierKind::Cta { .. }));
    if !traces.iter().any(|t| t.events.iter().any(cta_barrier)) {
        return None;
    }
    let (events, _) = program::events(prog, traces);
    let places: Vec<Placement> = prog.threads.iter().map(|t| t.place).collect();
    let groups = barrier_groups::groups(&events, &places);
    barrier_groups::hang(prog, &events, &groups)
}

/// A thread that waits at a CTA barrier of one trace per thread that can never complete, and
/// the local index of that barrier in its trace; `None` when every barrier can complete.
pub fn waiting(prog: &Program, traces: &[&Trace]) -> Option<(usize, usize)> {
    hang(prog, traces)?;
    let (events, offsets) = program::events(prog, traces);
    let places: Vec<Placement> = prog.threads.iter().map(|t| t.place).collect();
    let groups = barrier_groups::groups(&events, &places);
    let i = barrier_groups::waiting(prog, &events, &groups)?;
    let t = events[i].thread.expect("a barrier of a thread");
    Some((t, i - offsets[t]))
}

/// The placement of a thread's event.
fn place(places: &[Placement], e: &Event) -> Placement {
    places[e.thread.expect("an event of a thread")]
}

impl Combo {
    /// Builds the event graph of one trace per thread; `None` when the traces cannot run
    /// together (a `bar.red` result that the participants' predicates do not give).
    pub fn new(prog: &Program, traces: &[&Trace]) -> Result<Option<Combo>, ModelError> {
        let (events, offsets) = program::events(prog, traces);
        let n = events.len();
        if n > MAX_EVENTS {
            return Err(ModelError::TooLarge {
                what: format!("{n} events (at most {MAX_EVENTS})"),
            });
        }
        let places: Vec<Placement> = prog.threads.iter().map(|t| t.place).collect();
        let order = program::program_order(traces, &offsets, n);
        if !barrier::bar_red_consistent(&events, &places, traces, &offsets) {
            return Ok(None);
        }
        let groups = barrier_groups::groups(&events, &places);
        let bar_syncs = barrier_groups::sync_sets(&events, &groups)?
            .iter()
            .map(|s| barrier::barrier_sync(&events, &places, &groups, s))
            .collect();
        let ms = strong::morally_strong(&events, &places);
        let mut writes_of = vec![0u128; prog.memories.len()];
        for (i, e) in events.iter().enumerate().filter(|(_, e)| e.is_write()) {
            writes_of[e.loc] |= bit(i);
        }
        Ok(Some(Combo {
            nlocs: prog.memories.len(),
            rp: patterns::release_patterns(&events, &order.po),
            ap: patterns::acquire_patterns(&events, &order.po),
            po_loc_ms: strong::po_loc_ms(&events, &order.po, &ms),
            bar_syncs,
            proxies: ProxySets::new(&events, &places),
            writes_of,
            ms,
            po: order.po,
            po_imm: order.po_imm,
            dep: order.dep,
            rmw: order.rmw,
            events,
        }))
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// The writes to memory `loc`.
    pub fn writes_of(&self, loc: usize) -> Set {
        self.writes_of[loc]
    }
}
