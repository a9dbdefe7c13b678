//! Puts thread traces together, one per thread, pruned when a read's value can come from no
//! write, and hands each combination that can run to a [`Visitor`]: the checker's, which
//! searches it (the PTX search, or the axiomatic SC one) with the collector as its sink, or
//! the cat interpreter's (`candidates.rs`).

use super::collect::Collector;
use super::lower::{Program, Trace};
use super::relations::Combo;
use super::search::Choices;
use super::ModelError;
use crate::litmus::ast::Value;
use std::collections::BTreeSet;

/// What searches one combination.
pub type Search = fn(&Combo, &Choices, &mut Collector) -> Result<(), ModelError>;

/// What the walk hands the combinations it builds to.
pub trait Visitor {
    /// Counts one step of the walk; an error (a budget, a stop request) ends it.
    fn step(&mut self) -> Result<(), ModelError>;
    /// Whether nothing more is wanted from the walk.
    fn finished(&self) -> bool;
    /// Whether the traces chosen for the first threads may still give something wanted.
    fn may_reach(&self, chosen: &[&Trace]) -> bool;
    /// A complete combination in which every read has a write of its value.
    fn visit(&mut self, prog: &Program, chosen: &[&Trace]) -> Result<(), ModelError>;
}

/// Enumerates every combination of one trace per thread and hands it to `search`.
pub fn combine(
    prog: &Program,
    traces: &[Vec<Trace>],
    out: &mut Collector,
    search: Search,
) -> Result<(), ModelError> {
    walk(prog, traces, &mut Checker { out, search })
}

/// Hands every combination of one trace per thread that can run to `v`.
pub fn walk<V: Visitor>(
    prog: &Program,
    traces: &[Vec<Trace>],
    v: &mut V,
) -> Result<(), ModelError> {
    let nmem = prog.memories.len();
    // may_write[t][l]: values some trace of thread t writes to memory l.
    let may_write = traces
        .iter()
        .map(|ts| {
            let mut m = vec![BTreeSet::new(); nmem];
            for e in ts.iter().flat_map(|t| &t.events).filter(|e| e.is_write()) {
                m[e.loc].insert(e.value);
            }
            m
        })
        .collect();
    let walk = Walk {
        prog,
        traces,
        may_write,
    };
    walk.walk(&mut Vec::with_capacity(traces.len()), v)
}

/// The checker's visitor: each combination searched, reported to the collector.
struct Checker<'c> {
    out: &'c mut Collector,
    search: Search,
}

impl Visitor for Checker<'_> {
    fn step(&mut self) -> Result<(), ModelError> {
        self.out.step()
    }

    fn finished(&self) -> bool {
        self.out.finished()
    }

    fn may_reach(&self, chosen: &[&Trace]) -> bool {
        self.out.may_reach(chosen)
    }

    /// Searched unless it hangs at a barrier or its outcome is already settled.
    fn visit(&mut self, prog: &Program, chosen: &[&Trace]) -> Result<(), ModelError> {
        if let Some(h) = super::relations::hang(prog, chosen) {
            self.out.hang(h);
            return Ok(());
        }
        let Some(combo) = Combo::new(prog, chosen)? else {
            return Ok(());
        };
        let Some(choices) = Choices::new(&combo)? else {
            return Ok(());
        };
        self.out.start_combo(&combo, chosen);
        if !self.out.settled() {
            (self.search)(&combo, &choices, self.out)?;
        }
        Ok(())
    }
}

/// The walk over combinations: the traces and what later threads may write.
struct Walk<'a> {
    prog: &'a Program,
    traces: &'a [Vec<Trace>],
    may_write: Vec<Vec<BTreeSet<Value>>>,
}

impl<'a> Walk<'a> {
    /// Chooses a trace for each thread from `chosen.len()` on.
    fn walk<V: Visitor>(&self, chosen: &mut Vec<&'a Trace>, v: &mut V) -> Result<(), ModelError> {
        v.step()?;
        if v.finished() {
            return Ok(());
        }
        let k = chosen.len();
        if k == self.traces.len() {
            if self.feasible(chosen) {
                v.visit(self.prog, chosen)?;
            }
            return Ok(());
        }
        for t in &self.traces[k] {
            if self.may_run(k, t, chosen) {
                chosen.push(t);
                if v.may_reach(chosen) {
                    self.walk(chosen, v)?;
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

    /// Whether every read of a complete combination has a write of its value among its
    /// traces (or the initial one).
    fn feasible(&self, chosen: &[&Trace]) -> bool {
        chosen.iter().all(|t| {
            t.events.iter().filter(|e| e.is_read()).all(|r| {
                self.prog.memories[r.loc].init == r.value
                    || chosen.iter().any(|c| {
                        c.events
                            .iter()
                            .any(|w| w.is_write() && w.loc == r.loc && w.value == r.value)
                    })
            })
        })
    }
}
