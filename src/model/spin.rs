//! Spin loops that may run for ever: Dat3M's termination property, after Lahav, Namakonov,
//! Oberhauser, Podkopaev and Vafeiadis's fairness for weak memory (OOPSLA 2021). A thread spins
//! for ever when some consistent execution takes it into an idle iteration of a loop (one that
//! [`super::lower`] cuts) each of whose reads reads a `co`-maximal write: no later write is
//! left for it to see, so a fair scheduler repeats the iteration for ever. The other threads
//! finish, spin as well, or wait at a CTA barrier that can then never complete.
//!
//! `co` is PTX's: a partial order, total only on morally strong writes (the search orients
//! those pairs and no others), so a read of a weak write that no other write is ordered after
//! may be stuck where a model with a total coherence order would see the other write later.

use super::collect::{MAX_CANDIDATES, MAX_COMBINATIONS};
use super::enumerate::{walk, Visitor};
use super::lower::{Program, Trace};
use super::relation::{bit, members, Rel, Set};
use super::relations::{self, Combo};
use super::search::{self, Choices, Parts, Sink};
use super::verdict::{Execution, Stuck as Found};
use super::watch::Watch;
use super::{Axiom, ModelError};
use crate::outcome::Outcome;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// How often the watch is asked whether to stop.
const POLL_EVERY: u64 = 1024;

/// Each loop some consistent execution spins in for ever, in thread order, with its line (the
/// thread, the label its loop branches back to and the values its stuck reads see) and that
/// execution.
pub fn spinning(
    prog: &Program,
    finish: &[Vec<Trace>],
    spin: &[Vec<Trace>],
    watch: Option<Arc<Watch>>,
) -> Result<Vec<Found>, ModelError> {
    let loops: BTreeSet<(usize, String)> = spin
        .iter()
        .enumerate()
        .flat_map(|(t, ts)| {
            ts.iter()
                .filter_map(move |tr| Some((t, tr.spin.as_ref()?.label.clone())))
        })
        .collect();
    if loops.is_empty() {
        return Ok(Vec::new());
    }
    let traces: Vec<Vec<Trace>> = finish
        .iter()
        .zip(spin)
        .map(|(f, s)| f.iter().chain(s).cloned().collect())
        .collect();
    let mut v = Stuck {
        loops,
        found: BTreeMap::new(),
        steps: 0,
        candidates: 0,
        watch,
    };
    walk(prog, &traces, &mut v)?;
    Ok(v.found.into_values().collect())
}

/// The walk's visitor: searches each combination with a spinning trace for an execution
/// that keeps it spinning.
struct Stuck {
    /// Every loop a trace spins in: `(thread, label)`.
    loops: BTreeSet<(usize, String)>,
    /// The loops found stuck, each with its line and execution.
    found: BTreeMap<(usize, String), Found>,
    steps: u64,
    candidates: u64,
    watch: Option<Arc<Watch>>,
}

impl Stuck {
    fn poll(&self, count: u64) -> Result<(), ModelError> {
        match &self.watch {
            Some(w) if count % POLL_EVERY == 0 && w.stopped() => Err(ModelError::Stopped),
            _ => Ok(()),
        }
    }

    /// The loops of `traces` not found stuck yet: `(thread, label, first event)`.
    fn open(&self, traces: &[Cow<Trace>]) -> Vec<(usize, String, usize)> {
        traces
            .iter()
            .enumerate()
            .filter_map(|(t, tr)| {
                let s = tr.spin.as_ref()?;
                let key = (t, s.label.clone());
                (!self.found.contains_key(&key)).then(|| (t, s.label.clone(), s.from))
            })
            .collect()
    }
}

impl Visitor for Stuck {
    fn step(&mut self) -> Result<(), ModelError> {
        self.steps += 1;
        if self.steps > MAX_COMBINATIONS {
            return Err(ModelError::TooLarge {
                what: format!("more than {MAX_COMBINATIONS} combinations of thread traces"),
            });
        }
        self.poll(self.steps)
    }

    fn finished(&self) -> bool {
        self.found.len() == self.loops.len()
    }

    fn may_reach(&self, _: &[&Trace]) -> bool {
        true
    }

    fn visit(&mut self, prog: &Program, chosen: &[&Trace]) -> Result<(), ModelError> {
        if self
            .open(&chosen.iter().map(|t| Cow::Borrowed(*t)).collect::<Vec<_>>())
            .is_empty()
        {
            return Ok(());
        }
        let traces = blocked(prog, chosen);
        let open = self.open(&traces);
        if open.is_empty() {
            return Ok(());
        }
        let refs: Vec<&Trace> = traces.iter().map(AsRef::as_ref).collect();
        let Some(combo) = Combo::new(prog, &refs)? else {
            return Ok(());
        };
        let Some(choices) = Choices::new(&combo)? else {
            return Ok(());
        };
        let starts = starts(&combo, &refs);
        let reads = open.iter().fold(0, |acc, &(t, _, from)| {
            let upto = starts[t] + refs[t].events.len();
            (starts[t] + from..upto)
                .filter(|&i| combo.events[i].is_read())
                .fold(acc, |a, i| a | bit(i))
        });
        let mut sink = StuckSink {
            reads,
            found: None,
            candidates: self.candidates,
            watch: self.watch.clone(),
        };
        search::run(&combo, &choices, &mut sink)?;
        self.candidates = sink.candidates;
        if let Some(execution) = sink.found {
            for (t, label, from) in open {
                let seen = read_values(&combo, starts[t] + from..starts[t] + refs[t].events.len());
                let line = format!(
                    "P{t} may spin for ever in the loop back to {label}: some execution \
                     reads {seen}, each the coherence-last write, in an iteration that changes \
                     nothing"
                );
                let found = Found {
                    line,
                    execution: execution.clone(),
                    reads: members(reads).collect(),
                };
                self.found.insert((t, label), found);
            }
        }
        Ok(())
    }
}

/// The traces with each thread that waits at a CTA barrier that can never complete cut
/// before it: such a thread waits there for ever.
fn blocked<'a>(prog: &Program, chosen: &[&'a Trace]) -> Vec<Cow<'a, Trace>> {
    let mut traces: Vec<Cow<Trace>> = chosen.iter().map(|t| Cow::Borrowed(*t)).collect();
    loop {
        let refs: Vec<&Trace> = traces.iter().map(AsRef::as_ref).collect();
        let Some((t, k)) = relations::waiting(prog, &refs) else {
            return traces;
        };
        traces[t] = Cow::Owned(traces[t].prefix(k));
    }
}

/// Where each thread's events start in `combo`.
fn starts(combo: &Combo, traces: &[&Trace]) -> Vec<usize> {
    traces
        .iter()
        .scan(combo.nlocs, |at, t| {
            let s = *at;
            *at += t.events.len();
            Some(s)
        })
        .collect()
}

/// The reads of `range`, as `f == 1 and g == 0`.
fn read_values(combo: &Combo, range: std::ops::Range<usize>) -> String {
    let seen: Vec<String> = range
        .filter(|&i| combo.events[i].is_read())
        .map(|i| {
            let e = &combo.events[i];
            format!("{} == {}", e.loc_name, e.value)
        })
        .collect();
    if seen.is_empty() {
        "nothing".into()
    } else {
        seen.join(" and ")
    }
}

/// The search's sink: finds a consistent execution in which every read of `reads` reads a
/// `co`-maximal write.
struct StuckSink {
    reads: Set,
    /// The first such execution.
    found: Option<Execution>,
    candidates: u64,
    watch: Option<Arc<Watch>>,
}

impl StuckSink {
    /// Whether each of the reads reads a write that no write follows in `co`.
    fn stuck(&self, combo: &Combo, rf: &Rel, co: &Rel) -> bool {
        members(self.reads).all(|r| {
            let ws = combo.writes_of(combo.events[r].loc);
            members(ws).any(|w| rf.has(w, r) && co.row(w) & ws == 0)
        })
    }
}

impl Sink for StuckSink {
    fn settled(&self) -> bool {
        self.found.is_some()
    }

    fn candidate(&mut self) -> Result<(), ModelError> {
        self.candidates += 1;
        if self.candidates > MAX_CANDIDATES {
            return Err(ModelError::TooLarge {
                what: format!("more than {MAX_CANDIDATES} candidate executions"),
            });
        }
        match &self.watch {
            Some(w) if self.candidates % POLL_EVERY == 0 && w.stopped() => Err(ModelError::Stopped),
            _ => Ok(()),
        }
    }

    /// Inconsistent candidates are of no interest here: nothing is to be shown of them.
    fn explained(&self, _: &Combo, _: Option<&Rel>) -> bool {
        true
    }

    fn allow(&mut self, combo: &Combo, parts: &Parts, fr: &Rel) {
        if parts.co.is_some_and(|co| self.stuck(combo, parts.rf, co)) && self.found.is_none() {
            // No outcome: the execution never ends.
            let ex = super::collect::execution(combo, parts, Some(fr), Outcome(vec![]), &[]);
            self.found = Some(ex);
        }
    }

    fn exclude(&mut self, _: &Combo, _: &Parts, _: Axiom, _: &[usize]) {}
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::super::{check, Relation};
    use crate::litmus::ast::{CmpOp, Scope, Sem, Test};

    const GPU: Option<Scope> = Some(Scope::Gpu);

    /// P0 waits for `f` to leave 0 and then resets it; P1 sets it and waits for the reset.
    fn reset(sem: Sem) -> Test {
        let scope = if sem == Sem::Weak { None } else { GPU };
        test(
            "reset",
            vec![loc("f")],
            vec![
                thread(
                    0,
                    0,
                    vec![
                        label("L0"),
                        ld(sem, scope, "r0", "f"),
                        br(CmpOp::Eq, r("r0"), imm(0), "L0"),
                        st(sem, scope, "f", imm(0)),
                    ],
                ),
                thread(
                    1,
                    1,
                    vec![
                        st(sem, scope, "f", imm(1)),
                        label("L1"),
                        ld(sem, scope, "r0", "f"),
                        br(CmpOp::Eq, r("r0"), imm(1), "L1"),
                    ],
                ),
            ],
            eq(1, "r0", 0),
        )
    }

    #[test]
    fn a_weak_write_no_other_is_ordered_after_may_be_read_for_ever() {
        let v = check(&reset(Sem::Weak)).unwrap();
        assert_eq!(
            v.hangs,
            vec![
                "P1 may spin for ever in the loop back to L1: some execution reads f == 1, each \
                 the coherence-last write, in an iteration that changes nothing"
                    .to_string()
            ]
        );
        assert!(!v.allowed.is_empty(), "some executions finish");
        // The execution shown: P1's repeating read reads P1's own write.
        let [stuck] = &v.stuck[..] else {
            panic!("one stuck loop: {:?}", v.stuck)
        };
        let ex = &stuck.execution;
        let [read] = stuck.reads[..] else {
            panic!("one read repeats: {:?}", stuck.reads)
        };
        let from: Vec<usize> = ex
            .edges
            .iter()
            .filter(|&&(rel, _, b)| rel == Relation::Rf && b == read)
            .map(|&(_, a, _)| a)
            .collect();
        assert_eq!(ex.events[read].thread, Some(1));
        assert_eq!(from.len(), 1);
        assert_eq!(ex.events[from[0]].thread, Some(1), "{ex:?}");
        assert!(ex.events[from[0]].label.contains("f=1"), "{ex:?}");
    }

    #[test]
    fn morally_strong_accesses_order_the_reset_last_so_no_loop_spins_for_ever() {
        // P1's write is read by P0 before its reset: causality puts the reset last in `co`.
        let v = check(&reset(Sem::Relaxed)).unwrap();
        assert!(v.hangs.is_empty(), "{:?}", v.hangs);
    }

    #[test]
    fn a_flag_set_only_on_one_path_may_leave_its_spinner_waiting() {
        let t = test(
            "maybe-set",
            vec![loc("f"), loc("y")],
            vec![
                thread(
                    0,
                    0,
                    vec![
                        ld(Sem::Relaxed, GPU, "r0", "y"),
                        br(CmpOp::Ne, r("r0"), imm(0), "E"),
                        st(Sem::Relaxed, GPU, "f", imm(1)),
                        label("E"),
                    ],
                ),
                thread(
                    1,
                    1,
                    vec![
                        label("L"),
                        ld(Sem::Relaxed, GPU, "r1", "f"),
                        br(CmpOp::Eq, r("r1"), imm(0), "L"),
                    ],
                ),
                thread(2, 2, vec![st(Sem::Relaxed, GPU, "y", imm(1))]),
            ],
            eq(0, "r0", 0),
        );
        let v = check(&t).unwrap();
        assert_eq!(v.hangs.len(), 1, "{:?}", v.hangs);
        assert!(v.hangs[0].starts_with(
            "P1 may spin for ever in the loop back to L: some execution reads f == 0"
        ));
        // With `y` never written, P0 always sets the flag.
        let mut always = t.clone();
        always.threads.pop();
        assert!(check(&always).unwrap().hangs.is_empty());
    }
}
