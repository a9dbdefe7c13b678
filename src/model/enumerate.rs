//! Puts thread traces together, one per thread, pruned when a read's value can come from no
//! write, and hands each combination that can run to a search (the PTX one, or the axiomatic
//! SC one) with the collector as its sink.

use super::collect::Collector;
use super::lower::{Program, Trace};
use super::relations::Combo;
use super::search::Choices;
use super::ModelError;
use crate::litmus::ast::Value;
use std::collections::BTreeSet;

/// What searches one combination.
pub type Search = fn(&Combo, &Choices, &mut Collector) -> Result<(), ModelError>;

/// Enumerates every combination of one trace per thread and hands it to `search`.
pub fn combine(
    prog: &Program,
    traces: &[Vec<Trace>],
    out: &mut Collector,
    search: Search,
) -> Result<(), ModelError> {
    let nthreads = traces.len();
    let nmem = prog.memories.len();
    // may_write[t][l]: values some trace of thread t writes to memory l.
    let may_write = traces
        .iter()
        .map(|ts| {
            let mut m = vec![BTreeSet::new(); nmem];
            for t in ts {
                for e in &t.events {
                    if e.is_write() {
                        m[e.loc].insert(e.value);
                    }
                }
            }
            m
        })
        .collect();
    let walk = Walk {
        prog,
        traces,
        may_write,
        search,
    };
    walk.walk(&mut Vec::with_capacity(nthreads), out)
}

/// The walk over combinations: the traces, what later threads may write, the search.
struct Walk<'a> {
    prog: &'a Program,
    traces: &'a [Vec<Trace>],
    may_write: Vec<Vec<BTreeSet<Value>>>,
    search: Search,
}

impl<'a> Walk<'a> {
    /// Chooses a trace for each thread from `chosen.len()` on.
    fn walk(&self, chosen: &mut Vec<&'a Trace>, out: &mut Collector) -> Result<(), ModelError> {
        out.step()?;
        if out.finished() {
            return Ok(());
        }
        let k = chosen.len();
        if k == self.traces.len() {
            return self.visit(chosen, out);
        }
        for t in &self.traces[k] {
            if self.may_run(k, t, chosen) {
                chosen.push(t);
                if out.may_reach(chosen) {
                    self.walk(chosen, out)?;
                }
                chosen.pop();
            }
        }
        Ok(())
    }

    /// Whether every read of `t` (thread `k`) may find a write of its value: the initial one,
    /// one of the traces chosen so far or `t`, or one a later thread may make.
    fn may_run(&self, k: usize, t: &Trace, chosen: &[&Trace]) -> bool {
        t.events.iter().filter(|e| e.is_read()).all(|e| {
            let (l, v) = (e.loc, e.value);
            self.prog.memories[l].init == v
                || chosen.iter().chain(std::iter::once(&t)).any(|c| {
                    c.events
                        .iter()
                        .any(|w| w.is_write() && w.loc == l && w.value == v)
                })
                || self.may_write[k + 1..].iter().any(|m| m[l].contains(&v))
        })
    }

    /// A complete combination: searched unless a read has no write of its value among the
    /// traces chosen, or its outcome is already settled.
    fn visit(&self, chosen: &[&Trace], out: &mut Collector) -> Result<(), ModelError> {
        let prog = self.prog;
        let feasible = chosen.iter().all(|t| {
            t.events.iter().filter(|e| e.is_read()).all(|r| {
                prog.memories[r.loc].init == r.value
                    || chosen.iter().any(|c| {
                        c.events
                            .iter()
                            .any(|w| w.is_write() && w.loc == r.loc && w.value == r.value)
                    })
            })
        });
        if !feasible {
            return Ok(());
        }
        if let Some(h) = super::relations::hang(prog, chosen) {
            out.hang(h);
            return Ok(());
        }
        let Some(combo) = Combo::new(prog, chosen)? else {
            return Ok(());
        };
        let Some(choices) = Choices::new(&combo)? else {
            return Ok(());
        };
        out.start_combo(&combo, chosen);
        if !out.settled() {
            (self.search)(&combo, &choices, out)?;
        }
        Ok(())
    }
}
