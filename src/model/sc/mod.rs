//! The sequentially consistent reference: every interleaving of the threads' instructions over
//! one memory (each instruction atomic, `atom` included), explored with memoisation so that
//! spin loops terminate. Used to label allowed outcomes SC or weak, and as an oracle: every
//! SC outcome must be allowed by the PTX model.
//!
//! A thread waiting at a CTA barrier (`bar.sync`/`bar.red`) waits for every other thread of its
//! CTA that has a barrier instruction that can match (same id and count, registers matching
//! anything) to arrive at the same instance or to finish. As in the model, a barrier that no
//! partner takes with the same key in an execution does not block: the waiting thread may also
//! leave at once, betting that the threads it waits for never arrive at that instance, and a
//! path on which one of them later does is abandoned. A barrier with a quorum `Q` lets its
//! thread go once `Q` threads of its CTA have arrived at its instance (the others
//! synchronise with it or pass later), and not before, even when no other thread can still
//! arrive (the model's group hangs then). `barrier.cluster.wait` waits for the
//! cluster's arrivals. Crossed barriers give no outcome, as in the model.

pub mod axiomatic;
mod fair;
mod seen;

use super::lower::Program;
use super::ModelError;
use crate::litmus::arith::{alu, rmw};
use crate::litmus::ast::{BarOp, BarRedOp, Barrier, Instr, Operand, Reg, Value};
use crate::outcome::{Observable, Outcome};
use seen::{Buffers, Seen};
use std::collections::BTreeSet;

/// The most states explored before giving up.
pub const MAX_STATES: usize = 100_000;

/// A CTA barrier key (id, count) with the instance number.
type BarInst = ((Value, Option<Value>), u32);

/// One state of the interleaving. `core` is flat so that cloning and hashing are cheap:
/// `[pc; n] [done; n] [cluster arrivals; n] [cluster waits; n] [cluster waiting (-1: no); n]`
/// then every thread's registers, then memory.
#[derive(Hash, PartialEq, Eq)]
struct St {
    core: Vec<Value>,
    /// `(thread, key, arrivals)` for CTA barriers.
    arrivals: Vec<(usize, (Value, Option<Value>), u32)>,
    /// `(thread, barrier instance)` of threads waiting at a CTA barrier.
    waiting: Vec<(usize, BarInst)>,
    /// `(thread, instance, predicate)` given to `bar.red`.
    preds: Vec<(usize, BarInst, bool)>,
    /// `(thread, barrier instance)` that thread must never arrive at: another thread left
    /// that instance without it.
    bets: Vec<(usize, BarInst)>,
    /// `(thread, quorum)` of threads waiting at a CTA barrier with a quorum: they leave once
    /// that many threads of their CTA have arrived at its instance.
    quorums: Vec<(usize, Value)>,
}

/// Field by field, so that `clone_from` reuses the buffers of a successor.
impl Clone for St {
    fn clone(&self) -> St {
        St {
            core: self.core.clone(),
            arrivals: self.arrivals.clone(),
            waiting: self.waiting.clone(),
            preds: self.preds.clone(),
            bets: self.bets.clone(),
            quorums: self.quorums.clone(),
        }
    }

    fn clone_from(&mut self, o: &St) {
        self.core.clone_from(&o.core);
        self.arrivals.clone_from(&o.arrivals);
        self.waiting.clone_from(&o.waiting);
        self.preds.clone_from(&o.preds);
        self.bets.clone_from(&o.bets);
        self.quorums.clone_from(&o.quorums);
    }
}

/// Offsets into [`St::core`].
struct Layout {
    n: usize,
    reg_base: Vec<usize>,
    mem_base: usize,
}

impl Layout {
    fn pc(&self, t: usize) -> usize {
        t
    }
    fn done(&self, t: usize) -> usize {
        self.n + t
    }
    fn cl_arr(&self, t: usize) -> usize {
        2 * self.n + t
    }
    fn cl_waits(&self, t: usize) -> usize {
        3 * self.n + t
    }
    fn cl_waiting(&self, t: usize) -> usize {
        4 * self.n + t
    }
    fn reg(&self, t: usize, r: usize) -> usize {
        self.reg_base[t] + r
    }
    fn mem(&self, l: usize) -> usize {
        self.mem_base + l
    }
}

/// Every outcome some SC interleaving of `prog` produces.
pub fn outcomes(
    prog: &Program,
    observables: &[Observable],
) -> Result<BTreeSet<Outcome>, ModelError> {
    Ok(explore(prog, observables)?.out)
}

/// Whether some fair SC interleaving of `prog` never ends: the graph of the states met has a
/// strongly connected component with a cycle and no way out (the threads left step round it
/// for ever, each as often as the others). A state without successors is not one: all its
/// threads are done, or the path was abandoned (a bet on a barrier lost).
pub fn spins_for_ever(prog: &Program) -> Result<bool, ModelError> {
    let ex = explore(prog, &[])?;
    let mut next = Buffers::new();
    let succ: Vec<Vec<usize>> = (0..ex.seen.len())
        .map(|i| {
            ex.successors(ex.seen.get(i), &mut next);
            next.drain()
                .iter()
                .map(|s| ex.seen.find(s).expect("every successor was met"))
                .collect()
        })
        .collect();
    Ok(fair::closed_cycle(&succ))
}

/// Every state some SC interleaving of `prog` reaches.
fn explore<'a>(
    prog: &'a Program,
    observables: &'a [Observable],
) -> Result<Explorer<'a>, ModelError> {
    let n = prog.threads.len();
    let mut core = vec![0; 5 * n];
    for t in 0..n {
        core[4 * n + t] = -1;
    }
    let mut reg_base = Vec::new();
    for t in &prog.threads {
        reg_base.push(core.len());
        core.extend(&t.reg_init);
    }
    let mem_base = core.len();
    core.extend(prog.memories.iter().map(|m| m.init));
    let st = St {
        core,
        arrivals: Vec::new(),
        waiting: Vec::new(),
        preds: Vec::new(),
        bets: Vec::new(),
        quorums: Vec::new(),
    };
    let lay = Layout {
        n,
        reg_base,
        mem_base,
    };
    let mut ex = Explorer {
        prog,
        lay,
        observables,
        seen: Seen::new(),
        out: BTreeSet::new(),
    };
    let mut stack: Vec<usize> = ex.seen.insert(&st).into_iter().collect();
    let mut next = Buffers::new();
    while let Some(i) = stack.pop() {
        if ex.seen.len() > MAX_STATES {
            return Err(ModelError::TooLarge {
                what: format!("more than {MAX_STATES} sequentially consistent states"),
            });
        }
        ex.expand(i, &mut next);
        stack.extend(next.drain().iter().filter_map(|s| ex.seen.insert(s)));
    }
    Ok(ex)
}

struct Explorer<'a> {
    prog: &'a Program,
    lay: Layout,
    observables: &'a [Observable],
    /// Every state met; the work list holds their numbers.
    seen: Seen<St>,
    out: BTreeSet<Outcome>,
}

fn arrivals_at(s: &St, t: usize, key: (Value, Option<Value>)) -> u32 {
    s.arrivals
        .iter()
        .find(|(u, k, _)| *u == t && *k == key)
        .map_or(0, |(_, _, n)| *n)
}

impl Explorer<'_> {
    fn opnd(&self, s: &St, t: usize, o: &Operand) -> Value {
        match o {
            Operand::Imm(v) => *v,
            Operand::Reg(r) => s.core[self.lay.reg(t, self.reg(t, r))],
        }
    }

    fn reg(&self, t: usize, r: &crate::litmus::ast::Reg) -> usize {
        self.prog.threads[t]
            .regs
            .iter()
            .position(|x| x == r)
            .expect("register collected")
    }

    /// Whether thread `u` has a CTA barrier instruction that can match `key`.
    fn may_use(&self, u: usize, key: (Value, Option<Value>)) -> bool {
        self.prog.threads[u].body.iter().any(|i| match i {
            Instr::Barrier(Barrier::Cta { id, count, .. }) => {
                let id_ok = match id {
                    Operand::Imm(v) => *v == key.0,
                    Operand::Reg(_) => true,
                };
                let count_ok = match (count, key.1) {
                    (None, None) => true,
                    (Some(Operand::Imm(v)), Some(c)) => *v == c,
                    (Some(Operand::Reg(_)), Some(_)) => true,
                    _ => false,
                };
                id_ok && count_ok
            }
            _ => false,
        })
    }

    /// Whether thread `u` surely arrives at instance `k` of `key`: it has no branch and more
    /// than `k` barrier instructions whose immediate id and count are `key`. Betting that it
    /// never does would only be abandoned later.
    fn surely_arrives(&self, u: usize, key: (Value, Option<Value>), k: u32) -> bool {
        let body = &self.prog.threads[u].body;
        if body.iter().any(|i| matches!(i, Instr::Branch { .. })) {
            return false;
        }
        let exact = body
            .iter()
            .filter(|i| match i {
                Instr::Barrier(Barrier::Cta { id, count, .. }) => {
                    *id == Operand::Imm(key.0) && *count == key.1.map(Operand::Imm)
                }
                _ => false,
            })
            .count();
        exact > k as usize
    }

    fn may_arrive_cluster(&self, u: usize) -> bool {
        self.prog.threads[u]
            .body
            .iter()
            .any(|i| matches!(i, Instr::Barrier(Barrier::ClusterArrive { .. })))
    }

    fn done(&self, s: &St, u: usize) -> bool {
        s.core[self.lay.done(u)] != 0
    }

    /// Whether thread `t` waits at a CTA barrier with a quorum that fewer threads of its CTA
    /// than the quorum have reached: it waits, with no bet to leave, even when no other
    /// thread can still arrive (the barrier hangs, as in the model).
    fn quorum_unmet(&self, s: &St, t: usize) -> bool {
        let place = self.prog.threads[t].place;
        let Some((_, (key, k))) = s.waiting.iter().find(|(u, _)| *u == t) else {
            return false;
        };
        let Some((_, q)) = s.quorums.iter().find(|(u, _)| *u == t) else {
            return false;
        };
        let arrived = (0..self.lay.n)
            .filter(|&u| {
                self.prog.threads[u].place.same_cta(&place) && arrivals_at(s, u, *key) > *k
            })
            .count();
        (arrived as Value) < *q
    }

    /// The threads that thread `t`, waiting at a CTA barrier, still waits for (none once a
    /// quorum it waits for is met).
    fn awaited(&self, s: &St, t: usize) -> Vec<usize> {
        let place = self.prog.threads[t].place;
        let Some((_, (key, k))) = s.waiting.iter().find(|(u, _)| *u == t) else {
            return Vec::new();
        };
        if s.quorums.iter().any(|(u, _)| *u == t) && !self.quorum_unmet(s, t) {
            return Vec::new();
        }
        (0..self.lay.n)
            .filter(|&u| {
                u != t
                    && self.prog.threads[u].place.same_cta(&place)
                    && !self.done(s, u)
                    && self.may_use(u, *key)
                    && arrivals_at(s, u, *key) <= *k
            })
            .collect()
    }

    fn blocked(&self, s: &St, t: usize) -> bool {
        let place = self.prog.threads[t].place;
        let n = self.lay.n;
        if self.quorum_unmet(s, t) || !self.awaited(s, t).is_empty() {
            return true;
        }
        let k = s.core[self.lay.cl_waiting(t)];
        if k >= 0 {
            for u in 0..n {
                if u == t || !self.prog.threads[u].place.same_cluster(&place) || self.done(s, u) {
                    continue;
                }
                if self.may_arrive_cluster(u) && s.core[self.lay.cl_arr(u)] <= k {
                    return true;
                }
            }
        }
        false
    }

    /// Records state `i`'s outcome when every thread is done, else puts its successors in
    /// `next`.
    fn expand(&mut self, i: usize, next: &mut Buffers<St>) {
        let s = self.seen.get(i);
        if (0..self.lay.n).all(|t| self.done(s, t)) {
            let o = self.outcome(s);
            self.out.insert(o);
            return;
        }
        self.successors(s, next);
    }

    /// The states one step of one thread leads to from `s`, in thread order.
    fn successors(&self, s: &St, next: &mut Buffers<St>) {
        let n = self.lay.n;
        for t in 0..n {
            if self.done(s, t) {
                continue;
            }
            if self.blocked(s, t) {
                let awaited = self.awaited(s, t);
                let waiting = s.waiting.iter().position(|(u, _)| *u == t);
                let hopeless = |inst: BarInst| {
                    awaited
                        .iter()
                        .any(|&u| self.surely_arrives(u, inst.0, inst.1))
                };
                if let (false, Some(i)) = (
                    awaited.is_empty() || self.quorum_unmet(s, t),
                    waiting.filter(|&i| !hopeless(s.waiting[i].1)),
                ) {
                    let s2 = next.push_copy(s);
                    let (_, inst) = s2.waiting.remove(i);
                    s2.quorums.retain(|(u, _)| *u != t);
                    s2.bets.extend(awaited.into_iter().map(|u| (u, inst)));
                    s2.bets.sort();
                    s2.bets.dedup();
                    self.finish_red(s2, t, inst.0, inst.1);
                }
                continue;
            }
            let s2 = next.push_copy(s);
            let cw = self.lay.cl_waiting(t);
            let bar_wait = s2.waiting.iter().position(|(u, _)| *u == t);
            if bar_wait.is_some() || s2.core[cw] >= 0 {
                // Leaving the barrier is a step of its own.
                if let Some(i) = bar_wait {
                    let (_, (key, k)) = s2.waiting.remove(i);
                    s2.quorums.retain(|(u, _)| *u != t);
                    self.finish_red(s2, t, key, k);
                }
                s2.core[cw] = -1;
                continue;
            }
            if !self.step(s2, t) {
                next.pop();
            }
        }
    }

    /// Writes the reduction of a `bar.red` once the barrier opens.
    fn finish_red(&self, s: &mut St, t: usize, key: (Value, Option<Value>), k: u32) {
        let pc = s.core[self.lay.pc(t)] as usize - 1;
        if let Instr::Barrier(Barrier::Cta {
            op: BarOp::Red { op, dst, .. },
            ..
        }) = &self.prog.threads[t].body[pc]
        {
            let place = self.prog.threads[t].place;
            let preds: Vec<bool> = s
                .preds
                .iter()
                .filter(|(u, kk, _)| {
                    self.prog.threads[*u].place.same_cta(&place) && *kk == (key, k)
                })
                .map(|(_, _, p)| *p)
                .collect();
            let v = match op {
                BarRedOp::Popc => preds.iter().filter(|p| **p).count() as Value,
                BarRedOp::And => preds.iter().all(|p| *p) as Value,
                BarRedOp::Or => preds.iter().any(|p| *p) as Value,
            };
            let d = self.lay.reg(t, self.reg(t, dst));
            s.core[d] = v;
        }
    }

    /// Runs one instruction of thread `t`; `false` when the path is abandoned.
    fn step(&self, s: &mut St, t: usize) -> bool {
        let th = &self.prog.threads[t];
        // Labels, moves and arithmetic are invisible to other threads: run them with the next
        // memory instruction.
        loop {
            let pc = s.core[self.lay.pc(t)] as usize;
            let Some(ins) = th.body.get(pc) else {
                s.core[self.lay.done(t)] = 1;
                return true;
            };
            s.core[self.lay.pc(t)] += 1;
            match ins {
                Instr::Label(_) => {}
                Instr::Mov { dst, src } => self.set(s, t, dst, self.opnd(s, t, src)),
                Instr::Alu { op, dst, a, b } => {
                    let v = alu(*op, self.opnd(s, t, a), self.opnd(s, t, b));
                    self.set(s, t, dst, v);
                }
                Instr::Branch { cond, target } => {
                    let taken = cond
                        .as_ref()
                        .is_none_or(|c| c.op.eval(self.opnd(s, t, &c.a), self.opnd(s, t, &c.b)));
                    if taken {
                        s.core[self.lay.pc(t)] = th.labels[&target.0] as Value;
                    }
                    // A branch may close a loop: make it a step so memoisation sees the state.
                    return true;
                }
                Instr::Fence(_) => return true,
                Instr::Barrier(b) => return self.barrier(s, t, b),
                Instr::Load { .. }
                | Instr::Store { .. }
                | Instr::Atom { .. }
                | Instr::Red { .. } => return self.access(s, t, ins),
            }
        }
    }

    /// Writes register `dst` of thread `t`.
    fn set(&self, s: &mut St, t: usize, dst: &Reg, v: Value) {
        let d = self.lay.reg(t, self.reg(t, dst));
        s.core[d] = v;
    }

    /// Runs memory access `ins` of thread `t` atomically; `false` when its address is not
    /// modelled (an offset register that is not 0).
    fn access(&self, s: &mut St, t: usize, ins: &Instr) -> bool {
        let Some(l) = ins.addr().and_then(|a| self.addr(s, t, a)) else {
            return false;
        };
        let m = self.lay.mem(l);
        match ins {
            Instr::Load { dst, .. } => self.set(s, t, dst, s.core[m]),
            Instr::Store { src, .. } => s.core[m] = self.opnd(s, t, src),
            Instr::Atom {
                op, dst, src, src2, ..
            } => {
                let old = s.core[m];
                let a = self.opnd(s, t, src);
                let b = src2.as_ref().map(|o| self.opnd(s, t, o));
                if let Some(v) = rmw(*op, old, a, b) {
                    s.core[m] = v;
                }
                self.set(s, t, dst, old);
            }
            Instr::Red { op, src, .. } => {
                let a = self.opnd(s, t, src);
                if let Some(v) = rmw(*op, s.core[m], a, None) {
                    s.core[m] = v;
                }
            }
            _ => unreachable!("a memory access"),
        }
        true
    }

    /// Thread `t` arrives at barrier `b`; `false` when a partner already left this instance
    /// without it.
    fn barrier(&self, s: &mut St, t: usize, b: &Barrier) -> bool {
        let Barrier::Cta {
            op,
            id,
            count,
            quorum,
        } = b
        else {
            if let Barrier::ClusterArrive { .. } = b {
                s.core[self.lay.cl_arr(t)] += 1;
            } else {
                s.core[self.lay.cl_waiting(t)] = s.core[self.lay.cl_waits(t)];
                s.core[self.lay.cl_waits(t)] += 1;
            }
            return true;
        };
        let key = (
            self.opnd(s, t, id),
            count.as_ref().map(|c| self.opnd(s, t, c)),
        );
        let k = arrivals_at(s, t, key);
        if s.bets.contains(&(t, (key, k))) {
            return false;
        }
        match s
            .arrivals
            .iter_mut()
            .find(|(u, kk, _)| *u == t && *kk == key)
        {
            Some((_, _, n)) => *n += 1,
            None => {
                s.arrivals.push((t, key, 1));
                s.arrivals.sort();
            }
        }
        if let BarOp::Red { pred, .. } = op {
            let p = self.opnd(s, t, pred) != 0;
            s.preds.push((t, (key, k), p));
            s.preds.sort();
        }
        if !matches!(op, BarOp::Arrive) {
            s.waiting.push((t, (key, k)));
            s.waiting.sort();
            if let Some(q) = quorum {
                s.quorums.push((t, self.opnd(s, t, q)));
                s.quorums.sort();
            }
        }
        true
    }

    fn addr(&self, s: &St, t: usize, a: &crate::litmus::ast::Addr) -> Option<usize> {
        if let Some(r) = &a.offset {
            if s.core[self.lay.reg(t, self.reg(t, r))] != 0 {
                return None;
            }
        }
        self.prog.phys_of(&a.loc)
    }

    /// The observables' values in final state `s`.
    fn outcome(&self, s: &St) -> Outcome {
        let vals = self
            .observables
            .iter()
            .map(|o| match o {
                Observable::Reg { thread, reg } => self.prog.threads[*thread]
                    .regs
                    .iter()
                    .position(|r| r == reg)
                    .map_or(0, |i| s.core[self.lay.reg(*thread, i)]),
                Observable::Loc(name) => self
                    .prog
                    .phys_of(name)
                    .map_or(0, |l| s.core[self.lay.mem(l)]),
            })
            .collect();
        Outcome(vals)
    }
}
