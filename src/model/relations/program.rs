//! The events of one combination of traces and the relations program order gives them:
//! `po`, its immediate steps, dependencies and the halves of each read-modify-write.

use super::super::event::{Event, Kind};
use super::super::lower::{Program, Trace};
use super::super::relation::{members, Rel};
use crate::litmus::ast::{Proxy, Scope};

/// The events: the initial write of memory `i` is event `i`, then each thread's events in
/// program order. Also returns where each thread's events start.
pub(super) fn events(prog: &Program, traces: &[&Trace]) -> (Vec<Event>, Vec<usize>) {
    let mut events: Vec<Event> = prog
        .memories
        .iter()
        .enumerate()
        .map(|(i, m)| Event {
            thread: None,
            instr: 0,
            kind: Kind::Write,
            loc: i,
            vaddr: usize::MAX,
            loc_name: m.name.clone(),
            value: m.init,
            strong: false,
            acquire: false,
            release: false,
            scope: Scope::Sys,
            proxy: Proxy::Generic,
            from_red: false,
            atomic: false,
        })
        .collect();
    let mut offsets = Vec::new();
    for t in traces {
        offsets.push(events.len());
        events.extend(t.events.iter().cloned());
    }
    (events, offsets)
}

/// What program order relates.
pub(super) struct ProgramOrder {
    /// `po`, transitive.
    pub po: Rel,
    /// Immediate program order (for drawing).
    pub po_imm: Rel,
    /// Address, data and control dependencies.
    pub dep: Rel,
    /// Read half to write half of each atomic read-modify-write.
    pub rmw: Rel,
}

/// Program order, dependencies and `rmw` over `n` events, thread `i`'s starting at
/// `offsets[i]`.
pub(super) fn program_order(traces: &[&Trace], offsets: &[usize], n: usize) -> ProgramOrder {
    let mut po = Rel::new(n);
    let mut po_imm = Rel::new(n);
    let mut dep = Rel::new(n);
    let mut rmw = Rel::new(n);
    for (t, &off) in traces.iter().zip(offsets) {
        let len = t.events.len();
        for i in 0..len {
            for j in i + 1..len {
                po.add(off + i, off + j);
            }
            if i + 1 < len {
                po_imm.add(off + i, off + i + 1);
            }
            for r in members(t.deps[i] as u128) {
                dep.add(off + r, off + i);
            }
        }
        for &(r, w) in &t.rmw {
            rmw.add(off + r, off + w);
        }
    }
    ProgramOrder {
        po,
        po_imm,
        dep,
        rmw,
    }
}
