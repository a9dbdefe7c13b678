//! Puts thread traces together, one per thread, pruned when a read's value can come from no
//! write, and hands each combination that can run to a [`Visitor`]: the checker's, which
//! searches it (the PTX search, or the axiomatic SC one) with the collector as its sink, or
//! the cat interpreter's (`candidates.rs`).

use super::collect::Collector;
use super::lower::{Program, Trace};
use super::relations::Combo;
use super::search::Choices;
use super::ModelError;
use crate::fx::FxHashMap;
use crate::litmus::ast::Value;
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

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
    walk_with(prog, traces, PairSets::new(prog, traces), v)
}

/// [`walk`] with the given pair sets; `None` tests reads against writes by searching events.
fn walk_with<V: Visitor>(
    prog: &Program,
    traces: &[Vec<Trace>],
    pairs: Option<PairSets>,
    v: &mut V,
) -> Result<(), ModelError> {
    let nmem = prog.memories.len();
    // may_write[t][l]: values some trace of thread t writes to memory l (when the pairs do
    // not fit in a set).
    let may_write = match pairs {
        Some(_) => Vec::new(),
        None => traces
            .iter()
            .map(|ts| {
                let mut m = vec![BTreeSet::new(); nmem];
                for e in ts.iter().flat_map(|t| &t.events).filter(|e| e.is_write()) {
                    m[e.loc].insert(e.value);
                }
                m
            })
            .collect(),
    };
    let walk = Walk {
        prog,
        traces,
        may_write,
        pairs,
        runnable: RefCell::new(Runnable {
            by_state: vec![FxHashMap::default(); traces.len()],
            kept: 0,
        }),
    };
    walk.walk(&mut Vec::with_capacity(traces.len()), Pairs::default(), v)
}

/// What a trace, or the traces chosen so far, read and write, as sets of `(memory, value)`
/// pairs: one bit per pair some trace writes, and [`NEVER_WRITTEN`] for any other.
#[derive(Clone, Copy, Default)]
struct Pairs {
    /// The pairs reads need a write of (a read of the initial value needs none).
    needs: u128,
    /// The pairs written.
    gives: u128,
}

/// The bit of the pairs that no trace writes.
const NEVER_WRITTEN: u128 = 1 << 127;

/// Every trace's [`Pairs`], so that whether reads can find their writes is a few word
/// operations rather than a search through events.
struct PairSets {
    /// Per thread, per trace.
    of: Vec<Vec<Pairs>>,
    /// `later[k]`: the pairs some trace of a thread from `k` on writes.
    later: Vec<u128>,
}

impl PairSets {
    /// `None` when the traces write more distinct pairs than a set holds.
    fn new(prog: &Program, traces: &[Vec<Trace>]) -> Option<PairSets> {
        let mut index: HashMap<(usize, Value), u32> = HashMap::new();
        let writes = traces.iter().flatten().flat_map(|t| &t.events);
        for e in writes.filter(|e| e.is_write()) {
            let next = index.len() as u32;
            index.entry((e.loc, e.value)).or_insert(next);
        }
        if index.len() > 127 {
            return None;
        }
        let bit_of = |l: usize, v: Value| index.get(&(l, v)).map_or(NEVER_WRITTEN, |&i| 1 << i);
        let of: Vec<Vec<Pairs>> = traces
            .iter()
            .map(|ts| {
                ts.iter()
                    .map(|t| {
                        let mut p = Pairs::default();
                        for e in &t.events {
                            if e.is_write() {
                                p.gives |= bit_of(e.loc, e.value);
                            } else if e.is_read() && prog.memories[e.loc].init != e.value {
                                p.needs |= bit_of(e.loc, e.value);
                            }
                        }
                        p
                    })
                    .collect()
            })
            .collect();
        let mut later = vec![0u128; traces.len() + 1];
        for k in (0..traces.len()).rev() {
            later[k] = later[k + 1] | of[k].iter().fold(0, |a, p| a | p.gives);
        }
        Some(PairSets { of, later })
    }
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

/// The most [`Runnable`] keeps, in trace indices (4 bytes) with each state counted as
/// [`STATE_COST`] more: 64 MiB.
const MAX_RUNNABLE_KEPT: usize = 1 << 24;
/// What one state kept costs besides its indices (its key, pointer and table slot), in
/// indices.
const STATE_COST: usize = 16;

/// A state of the walk, as far as which traces may run next depends on it: the pairs the
/// traces chosen so far need and that neither they nor a later thread may give, and the
/// pairs they give.
type State = (u128, u128);

/// The traces of each thread that may run after a state of the walk, by that state: the walk
/// meets the same states (what the traces chosen so far still need, and what they give) again
/// and again, so a thread's traces are tested once per state, not once per prefix.
struct Runnable {
    /// Per thread: (unmet needs, gives) to the indices, in order, of the traces that may run.
    by_state: Vec<FxHashMap<State, Rc<[u32]>>>,
    /// What is kept, at most [`MAX_RUNNABLE_KEPT`] (past it, lists are not kept).
    kept: usize,
}

/// The walk over combinations: the traces and what later threads may write.
struct Walk<'a> {
    prog: &'a Program,
    traces: &'a [Vec<Trace>],
    may_write: Vec<Vec<BTreeSet<Value>>>,
    pairs: Option<PairSets>,
    runnable: RefCell<Runnable>,
}

impl<'a> Walk<'a> {
    /// Chooses a trace for each thread from `chosen.len()` on; `so_far` is what the chosen
    /// traces read and write (when [`PairSets`] are used).
    fn walk<V: Visitor>(
        &self,
        chosen: &mut Vec<&'a Trace>,
        so_far: Pairs,
        v: &mut V,
    ) -> Result<(), ModelError> {
        v.step()?;
        if v.finished() {
            return Ok(());
        }
        let k = chosen.len();
        if k == self.traces.len() {
            if self.feasible(chosen, so_far) {
                v.visit(self.prog, chosen)?;
            }
            return Ok(());
        }
        for &i in self.runnable(k, chosen, so_far).iter() {
            let i = i as usize;
            let with = match &self.pairs {
                Some(ps) => {
                    let p = ps.of[k][i];
                    Pairs {
                        needs: so_far.needs | p.needs,
                        gives: so_far.gives | p.gives,
                    }
                }
                None => so_far,
            };
            chosen.push(&self.traces[k][i]);
            if v.may_reach(chosen) {
                self.walk(chosen, with, v)?;
            }
            chosen.pop();
        }
        Ok(())
    }

    /// The indices of thread `k`'s traces that may run after `chosen` (whose pairs are
    /// `so_far`): every read of the traces so far and of the new one may still find a write of
    /// its value among them, the initial values or what a later thread may write.
    fn runnable(&self, k: usize, chosen: &[&Trace], so_far: Pairs) -> Rc<[u32]> {
        let Some(ps) = &self.pairs else {
            let ts = self.traces[k].iter().enumerate();
            return ts
                .filter(|(_, t)| self.may_run(k, t, chosen))
                .map(|(i, _)| i as u32)
                .collect();
        };
        let later = ps.later[k + 1];
        // Whether a trace may run depends on the state only through these two sets.
        let state = (so_far.needs & !so_far.gives & !later, so_far.gives);
        if let Some(list) = self.runnable.borrow().by_state[k].get(&state) {
            return list.clone();
        }
        let list: Rc<[u32]> = ps.of[k]
            .iter()
            .enumerate()
            .filter(|(_, p)| (state.0 | p.needs) & !(state.1 | p.gives | later) == 0)
            .map(|(i, _)| i as u32)
            .collect();
        let mut memo = self.runnable.borrow_mut();
        let cost = list.len() + STATE_COST;
        if memo.kept + cost <= MAX_RUNNABLE_KEPT {
            memo.kept += cost;
            memo.by_state[k].insert(state, list.clone());
        }
        list
    }

    /// Whether every read of `t` (of thread `k`) may find a write of its value: the initial
    /// one, one of the traces `chosen` so far or `t`, or one a later thread may make (the
    /// search through events, for traces that write more pairs than a set holds).
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
    /// traces (or the initial one); `all` is what they read and write.
    fn feasible(&self, chosen: &[&Trace], all: Pairs) -> bool {
        if self.pairs.is_some() {
            return all.needs & !all.gives == 0;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus::{discover, load, GENERATED_DIR};
    use std::path::PathBuf;

    /// Records every combination handed to it, as the addresses of its traces.
    #[derive(Default)]
    struct Record(Vec<Vec<usize>>);

    impl Visitor for Record {
        fn step(&mut self) -> Result<(), ModelError> {
            Ok(())
        }
        fn finished(&self) -> bool {
            false
        }
        fn may_reach(&self, _: &[&Trace]) -> bool {
            true
        }
        fn visit(&mut self, _: &Program, chosen: &[&Trace]) -> Result<(), ModelError> {
            let at = chosen.iter().map(|t| *t as *const Trace as usize).collect();
            self.0.push(at);
            Ok(())
        }
    }

    /// The bit-set test of reads against writes, with its lists of runnable traces kept per
    /// state, and the event search it replaces (kept for traces that write more pairs than a
    /// set holds) hand the walk's visitor the same combinations, in the same order, for every
    /// hand-written test of the suite.
    #[test]
    fn pair_sets_and_the_event_search_keep_the_same_combinations() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("litmus");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir() && !p.ends_with(GENERATED_DIR))
            .collect();
        let corpus = root.join("../../shared/corpus");
        if corpus.is_dir() {
            dirs.push(corpus);
        } else {
            eprintln!("../shared/corpus is absent: comparing the own suite only");
        }
        let (mut compared, mut pruned) = (0, 0);
        for (path, test) in load(&discover(&dirs).unwrap()) {
            let Ok(test) = test else { continue };
            let Ok(prog) = Program::new(&test) else {
                continue;
            };
            let Ok((_, traces)) = prog.domains() else {
                continue;
            };
            let Some(sets) = PairSets::new(&prog, &traces) else {
                continue;
            };
            let (mut fast, mut slow) = (Record::default(), Record::default());
            walk_with(&prog, &traces, Some(sets), &mut fast).unwrap();
            walk_with(&prog, &traces, None, &mut slow).unwrap();
            assert_eq!(fast.0, slow.0, "{}", path.display());
            let all: usize = traces.iter().map(Vec::len).product();
            pruned += usize::from(fast.0.len() < all);
            compared += 1;
        }
        eprintln!("{compared} tests compared, {pruned} with combinations pruned");
        assert!(compared >= 200, "only {compared} tests compared");
        assert!(pruned >= 10, "only {pruned} tests had combinations pruned");
    }
}
