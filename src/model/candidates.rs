//! The event graphs the checker builds, offered to another model (the cat interpreter): every
//! combination of one trace per thread, with its events, program order, dependencies, `rmw`,
//! barrier synchronisation and the writes each read may read from. What makes an execution of such a graph consistent
//! (reads-from, coherence and Fence-SC choices, axioms) is left to the caller.

use super::enumerate::{walk, Visitor};
use super::event::Event;
use super::lower::{Program, Trace};
use super::relation::{bit, members, Set, MAX_EVENTS};
use super::relations::Combo;
use super::{ModelError, MAX_COMBINATIONS};
use crate::litmus::ast::{Placement, Test, Value};
use crate::outcome::{observables, Observable, Outcome};

/// One combination of thread traces: events and the relations fixed by the program text.
pub struct Skeleton {
    /// Events: the initial write of memory `i` is event `i`, then each thread's events.
    pub events: Vec<Event>,
    /// Per event: where its thread runs (`None` for initial writes).
    pub places: Vec<Option<Placement>>,
    /// Number of memories (initial writes).
    pub nlocs: usize,
    /// Program order (transitive), one row per event.
    pub po: Vec<Set>,
    /// Address dependencies: read -> access whose address it computes.
    pub addr: Vec<Set>,
    /// Data dependencies: read -> write whose value it computes (through registers).
    pub data: Vec<Set>,
    /// Control dependencies: read -> event after a branch that compared it.
    pub ctrl: Vec<Set>,
    /// Read half -> write half of each atomic read-modify-write.
    pub rmw: Vec<Set>,
    /// Barrier synchronisation (a barrier to the waiting barriers it releases), one per
    /// choice of the barriers a quorum synchronises; one when no barrier has a quorum.
    pub syncbars: Vec<Vec<Set>>,
    /// Per read event (in order): the writes of its memory with the value it read.
    pub rf_choices: Vec<(usize, Vec<usize>)>,
    /// Why a trace of this combination cannot be decided, if one cannot.
    pub fault: Option<ModelError>,
    slots: Vec<Slot>,
}

/// Where an observable's final value comes from.
#[derive(Clone)]
enum Slot {
    /// A register: its value in its thread's trace.
    Value(Value),
    /// A location: the value of a `co`-maximal write among these (its initial write and every
    /// write to it).
    Writes(Set),
}

impl Skeleton {
    /// The outcomes of an execution with coherence `co` (rows over events): registers from the
    /// traces, each observed location the value of any `co`-maximal write to it.
    pub fn outcomes(&self, co: &[Set]) -> Vec<Outcome> {
        // Most observables have one final value: the first outcome takes each one's first
        // value, and only those with more are enumerated (this runs once per candidate).
        let mut first = Vec::with_capacity(self.slots.len());
        let mut more: Vec<(usize, Vec<Value>)> = Vec::new();
        for (i, slot) in self.slots.iter().enumerate() {
            let ws = match *slot {
                Slot::Value(v) => {
                    first.push(v);
                    continue;
                }
                Slot::Writes(ws) => ws,
            };
            let last = members(ws).filter(|&w| co[w] & ws == 0);
            let mut vals: Vec<Value> = last.map(|w| self.events[w].value).collect();
            vals.sort_unstable();
            vals.dedup();
            match vals.first() {
                Some(&v) => first.push(v),
                None => return Vec::new(),
            }
            if vals.len() > 1 {
                more.push((i, vals));
            }
        }
        let mut outs = vec![Outcome(first)];
        for (i, vals) in more {
            outs = outs
                .iter()
                .flat_map(|o| {
                    vals.iter().map(move |&v| {
                        let mut o = o.clone();
                        o.0[i] = v;
                        o
                    })
                })
                .collect();
        }
        outs
    }
}

/// Calls `f` on every combination of one trace per thread that can run together (every read
/// has a write of its value); returns the test's observables, in outcome order.
pub fn for_each_skeleton(
    test: &Test,
    f: &mut dyn FnMut(&Skeleton) -> Result<(), ModelError>,
) -> Result<Vec<Observable>, ModelError> {
    let prog = Program::new(test)?;
    let obs = observables(test);
    for o in &obs {
        let known = match o {
            Observable::Reg { thread, .. } => *thread < prog.threads.len(),
            Observable::Loc(name) => prog.phys_of(name).is_some(),
        };
        if !known {
            return Err(ModelError::Unsupported {
                construct: format!("{o}"),
                reason: "the condition names a thread or location the test does not have".into(),
            });
        }
    }
    let (_, traces) = prog.domains()?;
    let mut v = Skeletons {
        obs: &obs,
        f,
        count: 0,
    };
    walk(&prog, &traces, &mut v)?;
    Ok(obs)
}

/// The cat interpreter's visitor of the checker's walk: each combination that completes as a
/// skeleton, within the checker's budget of steps.
struct Skeletons<'o, 'f> {
    obs: &'o [Observable],
    f: &'f mut dyn FnMut(&Skeleton) -> Result<(), ModelError>,
    count: u64,
}

impl Visitor for Skeletons<'_, '_> {
    fn step(&mut self) -> Result<(), ModelError> {
        self.count += 1;
        if self.count > MAX_COMBINATIONS {
            return Err(ModelError::TooLarge {
                what: format!("more than {MAX_COMBINATIONS} combinations of thread traces"),
            });
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        false
    }

    fn may_reach(&self, _: &[&Trace]) -> bool {
        true
    }

    /// Offered unless it hangs at a barrier (no final state), as the checker skips it.
    fn visit(&mut self, prog: &Program, chosen: &[&Trace]) -> Result<(), ModelError> {
        if super::relations::hang(prog, chosen).is_some() {
            return Ok(());
        }
        match skeleton(prog, self.obs, chosen)? {
            Some(s) => (self.f)(&s),
            None => Ok(()),
        }
    }
}

fn skeleton(
    prog: &Program,
    obs: &[Observable],
    chosen: &[&Trace],
) -> Result<Option<Skeleton>, ModelError> {
    let Some(combo) = Combo::new(prog, chosen)? else {
        return Ok(None);
    };
    let n = combo.len();
    if n > MAX_EVENTS {
        return Ok(None);
    }
    let Dependencies {
        addr,
        data,
        ctrl,
        places,
    } = dependencies(prog, chosen, combo.nlocs, n);
    let events = combo.events.clone();
    let Some(rf_choices) = rf_choices(&events) else {
        return Ok(None);
    };
    let slots = slots(prog, obs, chosen, &events);
    let rows = |i: usize| combo.po.row(i);
    Ok(Some(Skeleton {
        po: (0..n).map(rows).collect(),
        rmw: (0..n).map(|i| combo.rmw.row(i)).collect(),
        syncbars: combo
            .bar_syncs
            .iter()
            .map(|b| (0..n).map(|i| b.row(i)).collect())
            .collect(),
        places,
        nlocs: combo.nlocs,
        addr,
        data,
        ctrl,
        rf_choices,
        fault: chosen.iter().find_map(|t| t.fault.clone()),
        slots,
        events,
    }))
}

/// The dependency rows and thread placements of a combination of traces, over its `n`
/// events of which the first `nlocs` are initial writes.
struct Dependencies {
    addr: Vec<Set>,
    data: Vec<Set>,
    ctrl: Vec<Set>,
    places: Vec<Option<Placement>>,
}

/// Each trace's own dependencies, moved to the events' places in the combination.
fn dependencies(prog: &Program, chosen: &[&Trace], nlocs: usize, n: usize) -> Dependencies {
    let (mut addr, mut data, mut ctrl) = (vec![0; n], vec![0; n], vec![0; n]);
    let mut places = vec![None; nlocs];
    let mut off = nlocs;
    for (ti, t) in chosen.iter().enumerate() {
        for i in 0..t.events.len() {
            places.push(Some(prog.threads[ti].place));
            for (rows, local) in [
                (&mut addr, &t.addr),
                (&mut data, &t.data),
                (&mut ctrl, &t.ctrl),
            ] {
                for r in members(local[i] as u128) {
                    rows[off + r] |= bit(off + i);
                }
            }
        }
        off += t.events.len();
    }
    Dependencies {
        addr,
        data,
        ctrl,
        places,
    }
}

/// Per read, the writes of its memory with the value it read; `None` when a read has none
/// (the combination has no execution).
fn rf_choices(events: &[Event]) -> Option<Vec<(usize, Vec<usize>)>> {
    let mut choices = Vec::new();
    for (r, e) in events.iter().enumerate().filter(|(_, e)| e.is_read()) {
        let ws: Vec<usize> = (0..events.len())
            .filter(|&w| events[w].is_write() && events[w].loc == e.loc)
            .filter(|&w| events[w].value == e.value && w != r)
            .collect();
        if ws.is_empty() {
            return None;
        }
        choices.push((r, ws));
    }
    Some(choices)
}

/// Where each observable's final value comes from: a register's value in its trace, or the
/// last of the writes to a location among `events`.
fn slots(prog: &Program, obs: &[Observable], chosen: &[&Trace], events: &[Event]) -> Vec<Slot> {
    obs.iter()
        .map(|o| match o {
            Observable::Reg { thread, reg } => {
                let t = &prog.threads[*thread];
                let v = match t.regs.iter().position(|x| x == reg) {
                    Some(i) => chosen[*thread].regs[i],
                    None => 0,
                };
                Slot::Value(v)
            }
            Observable::Loc(name) => {
                let l = prog.phys_of(name);
                let writes = events.iter().enumerate().filter(|(_, e)| e.is_write());
                let to_l = writes.filter(|(_, e)| Some(e.loc) == l);
                Slot::Writes(to_l.fold(0, |s, (i, _)| s | bit(i)))
            }
        })
        .collect()
}
