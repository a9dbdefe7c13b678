//! The sequentially consistent reference: every interleaving of the threads' instructions over
//! one memory (each instruction atomic, `atom` included), explored with memoisation so that
//! spin loops terminate. Used to label allowed outcomes SC or weak, and as an oracle: every
//! SC outcome must be allowed by the PTX model.
//!
//! A thread waiting at a CTA barrier (`bar.sync`/`bar.red`) waits for every other thread of its
//! CTA that has a barrier instruction that can match (same id and count, registers matching
//! anything) to arrive at the same instance or to finish; `barrier.cluster.wait` likewise for
//! the cluster's arrivals. Crossed barriers deadlock, as on hardware, and give no outcome.

use super::lower::{alu, atom_result, Program};
use super::ModelError;
use crate::litmus::ast::{BarOp, BarRedOp, Barrier, Instr, Operand, Value};
use crate::outcome::{Observable, Outcome};
use std::collections::{BTreeSet, HashSet};

/// The most states explored before giving up.
pub const MAX_STATES: usize = 2_000_000;

/// A CTA barrier key (id, count) with the instance number.
type BarInst = ((Value, Option<Value>), u32);

#[derive(Clone, Hash, PartialEq, Eq)]
struct St {
    pcs: Vec<usize>,
    done: Vec<bool>,
    regs: Vec<Vec<Value>>,
    mem: Vec<Value>,
    /// Per thread: arrivals per CTA barrier key.
    arrivals: Vec<Vec<BarInst>>,
    /// Per thread: the barrier it waits at (key, instance).
    waiting: Vec<Option<BarInst>>,
    /// Per thread: `bar.red` predicates given at each (key, instance).
    preds: Vec<Vec<(BarInst, bool)>>,
    cluster_arrivals: Vec<u32>,
    cluster_waits: Vec<u32>,
    cluster_waiting: Vec<Option<u32>>,
}

/// Every outcome some SC interleaving of `prog` produces.
pub fn outcomes(
    prog: &Program,
    observables: &[Observable],
) -> Result<BTreeSet<Outcome>, ModelError> {
    let n = prog.threads.len();
    let st = St {
        pcs: vec![0; n],
        done: vec![false; n],
        regs: prog.threads.iter().map(|t| t.reg_init.clone()).collect(),
        mem: prog.memories.iter().map(|m| m.init).collect(),
        arrivals: vec![Vec::new(); n],
        waiting: vec![None; n],
        preds: vec![Vec::new(); n],
        cluster_arrivals: vec![0; n],
        cluster_waits: vec![0; n],
        cluster_waiting: vec![None; n],
    };
    let mut ex = Explorer {
        prog,
        observables,
        seen: HashSet::new(),
        out: BTreeSet::new(),
    };
    let mut stack = vec![st];
    while let Some(s) = stack.pop() {
        if !ex.seen.insert(s.clone()) {
            continue;
        }
        if ex.seen.len() > MAX_STATES {
            return Err(ModelError::TooLarge {
                what: format!("more than {MAX_STATES} sequentially consistent states"),
            });
        }
        ex.expand(s, &mut stack);
    }
    Ok(ex.out)
}

struct Explorer<'a> {
    prog: &'a Program,
    observables: &'a [Observable],
    seen: HashSet<St>,
    out: BTreeSet<Outcome>,
}

fn arrivals_at(list: &[((Value, Option<Value>), u32)], key: (Value, Option<Value>)) -> u32 {
    list.iter().find(|(k, _)| *k == key).map_or(0, |(_, n)| *n)
}

impl Explorer<'_> {
    fn opnd(&self, s: &St, t: usize, o: &Operand) -> Value {
        match o {
            Operand::Imm(v) => *v,
            Operand::Reg(r) => s.regs[t][self.reg(t, r)],
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

    fn may_arrive_cluster(&self, u: usize) -> bool {
        self.prog.threads[u]
            .body
            .iter()
            .any(|i| matches!(i, Instr::Barrier(Barrier::ClusterArrive { .. })))
    }

    fn blocked(&self, s: &St, t: usize) -> bool {
        let place = self.prog.threads[t].place;
        if let Some((key, k)) = s.waiting[t] {
            for u in 0..s.pcs.len() {
                if u == t || !self.prog.threads[u].place.same_cta(&place) || s.done[u] {
                    continue;
                }
                if self.may_use(u, key) && arrivals_at(&s.arrivals[u], key) <= k {
                    return true;
                }
            }
        }
        if let Some(k) = s.cluster_waiting[t] {
            for u in 0..s.pcs.len() {
                if u == t || !self.prog.threads[u].place.same_cluster(&place) || s.done[u] {
                    continue;
                }
                if self.may_arrive_cluster(u) && s.cluster_arrivals[u] <= k {
                    return true;
                }
            }
        }
        false
    }

    fn expand(&mut self, s: St, stack: &mut Vec<St>) {
        if s.done.iter().all(|d| *d) {
            self.record(&s);
            return;
        }
        for t in 0..s.pcs.len() {
            if s.done[t] || self.blocked(&s, t) {
                continue;
            }
            let mut s2 = s.clone();
            if s2.waiting[t].is_some() || s2.cluster_waiting[t].is_some() {
                // Leaving the barrier is a step of its own.
                if let Some((key, k)) = s2.waiting[t].take() {
                    self.finish_red(&mut s2, t, key, k);
                }
                s2.cluster_waiting[t] = None;
                stack.push(s2);
                continue;
            }
            if self.step(&mut s2, t) {
                stack.push(s2);
            }
        }
    }

    /// Writes the reduction of a `bar.red` once the barrier opens.
    fn finish_red(&self, s: &mut St, t: usize, key: (Value, Option<Value>), k: u32) {
        let pc = s.pcs[t] - 1;
        if let Instr::Barrier(Barrier::Cta {
            op: BarOp::Red { op, dst, .. },
            ..
        }) = &self.prog.threads[t].body[pc]
        {
            let place = self.prog.threads[t].place;
            let preds: Vec<bool> = (0..s.pcs.len())
                .filter(|u| self.prog.threads[*u].place.same_cta(&place))
                .flat_map(|u| {
                    s.preds[u]
                        .iter()
                        .filter(|(kk, _)| *kk == (key, k))
                        .map(|(_, p)| *p)
                        .collect::<Vec<_>>()
                })
                .collect();
            let v = match op {
                BarRedOp::Popc => preds.iter().filter(|p| **p).count() as Value,
                BarRedOp::And => preds.iter().all(|p| *p) as Value,
                BarRedOp::Or => preds.iter().any(|p| *p) as Value,
            };
            let d = self.reg(t, dst);
            s.regs[t][d] = v;
        }
    }

    /// Runs one instruction of thread `t`; `false` when the path is abandoned.
    fn step(&self, s: &mut St, t: usize) -> bool {
        let th = &self.prog.threads[t];
        // Labels, moves and arithmetic are invisible to other threads: run them with the next
        // memory instruction.
        loop {
            let Some(ins) = th.body.get(s.pcs[t]) else {
                s.done[t] = true;
                return true;
            };
            s.pcs[t] += 1;
            match ins {
                Instr::Label(_) => continue,
                Instr::Mov { dst, src } => {
                    let v = self.opnd(s, t, src);
                    let d = self.reg(t, dst);
                    s.regs[t][d] = v;
                    continue;
                }
                Instr::Alu { op, dst, a, b } => {
                    let v = alu(*op, self.opnd(s, t, a), self.opnd(s, t, b));
                    let d = self.reg(t, dst);
                    s.regs[t][d] = v;
                    continue;
                }
                Instr::Branch { cond, target } => {
                    let taken = cond
                        .as_ref()
                        .is_none_or(|c| c.op.eval(self.opnd(s, t, &c.a), self.opnd(s, t, &c.b)));
                    if taken {
                        s.pcs[t] = th.labels[&target.0];
                    }
                    // A branch may close a loop: make it a step so memoisation sees the state.
                    return true;
                }
                Instr::Load { dst, addr, .. } => {
                    let Some(l) = self.addr(s, t, addr) else {
                        return false;
                    };
                    let d = self.reg(t, dst);
                    s.regs[t][d] = s.mem[l];
                }
                Instr::Store { addr, src, .. } => {
                    let Some(l) = self.addr(s, t, addr) else {
                        return false;
                    };
                    s.mem[l] = self.opnd(s, t, src);
                }
                Instr::Atom {
                    op,
                    dst,
                    addr,
                    src,
                    src2,
                    ..
                } => {
                    let Some(l) = self.addr(s, t, addr) else {
                        return false;
                    };
                    let old = s.mem[l];
                    let a = self.opnd(s, t, src);
                    let b = src2.as_ref().map(|o| self.opnd(s, t, o));
                    if let Some(v) = atom_result(*op, old, a, b) {
                        s.mem[l] = v;
                    }
                    let d = self.reg(t, dst);
                    s.regs[t][d] = old;
                }
                Instr::Red { op, addr, src, .. } => {
                    let Some(l) = self.addr(s, t, addr) else {
                        return false;
                    };
                    let a = self.opnd(s, t, src);
                    if let Some(v) = atom_result(*op, s.mem[l], a, None) {
                        s.mem[l] = v;
                    }
                }
                Instr::Fence(_) => {}
                Instr::Barrier(Barrier::Cta { op, id, count }) => {
                    let key = (
                        self.opnd(s, t, id),
                        count.as_ref().map(|c| self.opnd(s, t, c)),
                    );
                    let k = arrivals_at(&s.arrivals[t], key);
                    match s.arrivals[t].iter_mut().find(|(kk, _)| *kk == key) {
                        Some((_, n)) => *n += 1,
                        None => s.arrivals[t].push((key, 1)),
                    }
                    if let BarOp::Red { pred, .. } = op {
                        let p = self.opnd(s, t, pred) != 0;
                        s.preds[t].push(((key, k), p));
                    }
                    if !matches!(op, BarOp::Arrive) {
                        s.waiting[t] = Some((key, k));
                    }
                }
                Instr::Barrier(Barrier::ClusterArrive { .. }) => s.cluster_arrivals[t] += 1,
                Instr::Barrier(Barrier::ClusterWait) => {
                    s.cluster_waiting[t] = Some(s.cluster_waits[t]);
                    s.cluster_waits[t] += 1;
                }
            }
            return true;
        }
    }

    fn addr(&self, s: &St, t: usize, a: &crate::litmus::ast::Addr) -> Option<usize> {
        if let Some(r) = &a.offset {
            if s.regs[t][self.reg(t, r)] != 0 {
                return None;
            }
        }
        self.prog.phys_of(&a.loc)
    }

    fn record(&mut self, s: &St) {
        let vals = self
            .observables
            .iter()
            .map(|o| match o {
                Observable::Reg { thread, reg } => self.prog.threads[*thread]
                    .regs
                    .iter()
                    .position(|r| r == reg)
                    .map_or(0, |i| s.regs[*thread][i]),
                Observable::Loc(name) => self.prog.phys_of(name).map_or(0, |l| s.mem[l]),
            })
            .collect();
        self.out.insert(Outcome(vals));
    }
}
