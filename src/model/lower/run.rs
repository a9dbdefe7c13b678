//! One thread run along every path: each instruction turned into its events, each read and
//! `bar.red` result forking the path once per value it may take, loops unrolled or cut as the
//! module documentation says.

use super::super::event::{BarrierKind, Event, FenceKind, Kind};
use super::super::ModelError;
use super::{
    BarRedGuess, LocRef, Program, Spin, ThreadProg, Trace, MAX_LOOP_ITERATIONS, MAX_THREAD_EVENTS,
    MAX_TRACES,
};
use crate::litmus::arith::{alu, rmw};
use crate::litmus::ast::{
    Addr, AtomOp, BarOp, BarRedOp, Barrier, BranchCond, Fence, FenceSem, Instr, Label, Operand,
    Proxy, ProxyFenceKind, Reg, Scope, Sem, Value,
};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The most instructions one path may run.
const MAX_STEPS: usize = 10_000;

/// The reads one event depends on: through its address, its written value, the branches
/// before it, and all of them.
#[derive(Clone, Copy, Default)]
struct EventDeps {
    all: u64,
    addr: u64,
    data: u64,
    ctrl: u64,
}

/// Where a thread is on one path.
#[derive(Clone, Default)]
pub(super) struct State {
    pc: usize,
    regs: Vec<Value>,
    /// Per register: the reads (event bits) its value depends on.
    rdeps: Vec<u64>,
    /// The reads the branches taken so far depend on.
    ctrl: u64,
    events: Vec<Event>,
    /// Per event, the reads it depends on (one vector, so a fork clones one more, not four).
    deps: Vec<EventDeps>,
    rmw: Vec<(usize, usize)>,
    bar_red: Vec<BarRedGuess>,
    /// Per label index: registers and event count when the label was last passed.
    snapshots: HashMap<usize, (Vec<Value>, usize)>,
    /// Per backward branch: how often it was taken.
    back_taken: HashMap<usize, u32>,
    bar_instances: Vec<((Value, Option<Value>), u32)>,
    cluster_arrivals: u32,
    cluster_waits: u32,
    steps: usize,
}

impl State {
    /// A thread at its first instruction with its initial registers.
    pub(super) fn new(t: &ThreadProg) -> State {
        State {
            pc: 0,
            regs: t.reg_init.clone(),
            rdeps: vec![0; t.regs.len()],
            ctrl: 0,
            events: Vec::new(),
            deps: Vec::new(),
            rmw: Vec::new(),
            bar_red: Vec::new(),
            snapshots: HashMap::new(),
            back_taken: HashMap::new(),
            bar_instances: Vec::new(),
            cluster_arrivals: 0,
            cluster_waits: 0,
            steps: 0,
        }
    }
}

/// What running one instruction leaves to do.
enum Flow {
    /// Go on with the next instruction.
    Next,
    /// This path is done: finished, forked into paths already run, or cut.
    Done,
}

/// Runs one thread of a program with read values drawn from `domains` (per memory).
pub(super) struct Runner<'a> {
    pub prog: &'a Program,
    pub thread: &'a ThreadProg,
    pub tid: usize,
    pub domains: &'a [BTreeSet<Value>],
    /// The location name of events that access no memory (one, shared by all).
    pub no_name: Arc<str>,
}

/// An atomic read-modify-write to run: its attributes and operands.
struct RmwOp<'a> {
    sem: Sem,
    scope: Option<Scope>,
    op: AtomOp,
    dst: Option<usize>,
    addr: &'a Addr,
    src: &'a Operand,
    src2: Option<&'a Operand>,
    is_red: bool,
}

impl Runner<'_> {
    fn reg(&self, r: &Reg) -> usize {
        self.thread
            .regs
            .iter()
            .position(|x| x == r)
            .expect("every register of the body was collected")
    }

    fn operand(&self, st: &State, o: &Operand) -> (Value, u64) {
        match o {
            Operand::Imm(v) => (*v, 0),
            Operand::Reg(r) => {
                let i = self.reg(r);
                (st.regs[i], st.rdeps[i])
            }
        }
    }

    fn base_event(&self, kind: Kind, pc: usize) -> Event {
        Event {
            thread: Some(self.tid),
            instr: pc,
            kind,
            loc: 0,
            vaddr: 0,
            loc_name: Arc::clone(&self.no_name),
            value: 0,
            strong: true,
            acquire: false,
            release: false,
            scope: Scope::Sys,
            proxy: Proxy::Generic,
            from_red: false,
            atomic: false,
        }
    }

    /// Appends an event whose address comes from the reads `addr` and whose written value from
    /// the reads `data`.
    fn push(&self, st: &mut State, e: Event, addr: u64, data: u64) -> Result<usize, ModelError> {
        if st.events.len() >= MAX_THREAD_EVENTS {
            return Err(ModelError::TooLarge {
                what: format!(
                    "P{} has more than {MAX_THREAD_EVENTS} events on one path",
                    self.tid
                ),
            });
        }
        st.events.push(e);
        st.deps.push(EventDeps {
            all: addr | data | st.ctrl,
            addr,
            data,
            ctrl: st.ctrl,
        });
        Ok(st.events.len() - 1)
    }

    fn finish(
        &self,
        st: State,
        fault: Option<ModelError>,
        out: &mut Vec<Trace>,
    ) -> Result<(), ModelError> {
        self.push_trace(st, fault, None, out)
    }

    /// Ends a path that an idle iteration (from event `from`, back to `label`) cut. It is kept
    /// as a path that spins: its writes count while the values are found (the path that skips
    /// the iteration may read a value not found yet, written by a thread that waits for one of
    /// these writes), and it is what a thread that never leaves the loop does.
    fn cut(
        &self,
        st: &State,
        from: usize,
        label: &Label,
        out: &mut Vec<Trace>,
    ) -> Result<Flow, ModelError> {
        let spin = Spin {
            from,
            label: label.0.clone(),
        };
        self.push_trace(st.clone(), None, Some(spin), out)?;
        Ok(Flow::Done)
    }

    /// Pushes the path `st` as a trace, refused past [`MAX_TRACES`].
    fn push_trace(
        &self,
        st: State,
        fault: Option<ModelError>,
        spin: Option<Spin>,
        out: &mut Vec<Trace>,
    ) -> Result<(), ModelError> {
        if out.len() >= MAX_TRACES {
            return Err(ModelError::TooLarge {
                what: format!(
                    "P{} has more than {MAX_TRACES} paths{}",
                    self.tid,
                    self.loop_hint()
                ),
            });
        }
        out.push(Trace {
            events: st.events,
            deps: st.deps.iter().map(|d| d.all).collect(),
            addr: st.deps.iter().map(|d| d.addr).collect(),
            data: st.deps.iter().map(|d| d.data).collect(),
            ctrl: st.deps.iter().map(|d| d.ctrl).collect(),
            rmw: st.rmw,
            regs: st.regs,
            bar_red: st.bar_red,
            fault,
            spin,
        });
        Ok(())
    }

    /// Why a thread with loops has so many paths, for the message that refuses it.
    fn loop_hint(&self) -> String {
        if !crate::litmus::loops(&self.thread.body) {
            return String::new();
        }
        format!(
            " (a loop whose iterations write or change a live register is unrolled up to \
             {MAX_LOOP_ITERATIONS} times, and each read in it forks once per value its location \
             may hold)"
        )
    }

    /// Resolves an address; `Err(fault)` when the offset register is not 0.
    fn address(&self, st: &State, a: &Addr) -> Result<(LocRef, u64), ModelError> {
        let l = self.prog.names[&a.loc].clone();
        match &a.offset {
            None => Ok((l, 0)),
            Some(r) => {
                let i = self.reg(r);
                if st.regs[i] != 0 {
                    Err(ModelError::Unsupported {
                        construct: format!("address {}+{}", a.loc, r),
                        reason: format!(
                            "P{}: the offset register holds {} when the access runs (only 0 is modelled)",
                            self.tid, st.regs[i]
                        ),
                    })
                } else {
                    Ok((l, st.rdeps[i]))
                }
            }
        }
    }

    /// Runs the path from `st` to its end, pushing every trace to `out`.
    pub(super) fn run(&self, mut st: State, out: &mut Vec<Trace>) -> Result<(), ModelError> {
        loop {
            st.steps += 1;
            if st.steps > MAX_STEPS {
                return Err(ModelError::TooLarge {
                    what: format!("P{} runs more than {MAX_STEPS} steps on one path", self.tid),
                });
            }
            let pc = st.pc;
            let Some(ins) = self.thread.body.get(pc) else {
                return self.finish(st, None, out);
            };
            st.pc += 1;
            if let Flow::Done = self.step(&mut st, pc, ins, out)? {
                return Ok(());
            }
        }
    }

    /// Runs instruction `ins` at `pc`: one line per kind of instruction.
    fn step(
        &self,
        st: &mut State,
        pc: usize,
        ins: &Instr,
        out: &mut Vec<Trace>,
    ) -> Result<Flow, ModelError> {
        match ins {
            Instr::Label(_) => self.label(st, pc),
            Instr::Mov { dst, src } => self.mov(st, dst, src),
            Instr::Alu { op, dst, a, b } => {
                let ((va, da), (vb, db)) = (self.operand(st, a), self.operand(st, b));
                self.set(st, dst, alu(*op, va, vb), da | db)
            }
            Instr::Branch { cond, target } => self.branch(st, pc, cond.as_ref(), target, out),
            Instr::Load { .. } => self.load(st, pc, ins, out),
            Instr::Store { .. } => self.store(st, pc, ins, out),
            Instr::Atom { .. } | Instr::Red { .. } => self.atomic(st, pc, ins, out),
            Instr::Fence(f) => self.fence(st, pc, f),
            Instr::Barrier(b) => self.barrier(st, pc, b, out),
        }
    }

    /// Remembers the registers and events at a label, to tell a loop iteration that changed
    /// nothing.
    fn label(&self, st: &mut State, pc: usize) -> Result<Flow, ModelError> {
        st.snapshots.insert(pc, (st.regs.clone(), st.events.len()));
        Ok(Flow::Next)
    }

    fn mov(&self, st: &mut State, dst: &Reg, src: &Operand) -> Result<Flow, ModelError> {
        let (v, d) = self.operand(st, src);
        self.set(st, dst, v, d)
    }

    /// Writes register `dst` with value `v` depending on the reads `deps`.
    fn set(&self, st: &mut State, dst: &Reg, v: Value, deps: u64) -> Result<Flow, ModelError> {
        let i = self.reg(dst);
        st.regs[i] = v;
        st.rdeps[i] = deps;
        Ok(Flow::Next)
    }

    /// A branch: taken or not by its condition; a backward branch after an iteration that
    /// changed nothing cuts the path, and one taken too often ends it undecided.
    fn branch(
        &self,
        st: &mut State,
        pc: usize,
        cond: Option<&BranchCond>,
        target: &Label,
        out: &mut Vec<Trace>,
    ) -> Result<Flow, ModelError> {
        let taken = match cond {
            None => true,
            Some(c) => {
                let ((va, da), (vb, db)) = (self.operand(st, &c.a), self.operand(st, &c.b));
                st.ctrl |= da | db;
                c.op.eval(va, vb)
            }
        };
        if !taken {
            return Ok(Flow::Next);
        }
        let to = self.thread.labels[&target.0];
        if to <= pc {
            if let Some(from) = self.idle_iteration(st, to) {
                return self.cut(st, from, target, out);
            }
            let n = st.back_taken.entry(pc).or_insert(0);
            *n += 1;
            if *n > MAX_LOOP_ITERATIONS {
                let what = format!(
                    "P{}: the loop back to {} runs more than {MAX_LOOP_ITERATIONS} times",
                    self.tid, target.0
                );
                self.finish(st.clone(), Some(ModelError::TooLarge { what }), out)?;
                return Ok(Flow::Done);
            }
        }
        st.pc = to;
        Ok(Flow::Next)
    }

    /// Where the iteration since label `to` was last passed began, when it wrote no memory,
    /// passed no barrier and changed no register live at `to`: the path is subsumed by the one
    /// that skips it.
    fn idle_iteration(&self, st: &State, to: usize) -> Option<usize> {
        let (regs, at) = st.snapshots.get(&to)?;
        let effect = st.events[*at..]
            .iter()
            .any(|e| e.is_write() || matches!(e.kind, Kind::Barrier(_)));
        let changed = regs
            .iter()
            .zip(&st.regs)
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .fold(0u64, |m, (i, _)| m | (1u64 << i.min(63)));
        (!effect && changed & self.thread.live_in[to] == 0).then_some(*at)
    }

    /// The event of a memory access of `kind` to `l` through `addr`, with its semantics
    /// (strength; acquire for a read, release for a write), scope and proxy.
    fn access(
        &self,
        (kind, pc): (Kind, usize),
        (l, addr): (&LocRef, &Addr),
        (sem, scope, proxy): (Sem, Option<Scope>, Proxy),
    ) -> Event {
        let mut e = self.base_event(kind, pc);
        e.loc = l.phys;
        e.vaddr = l.vaddr;
        e.loc_name = addr.loc.as_str().into();
        e.strong = sem.is_strong();
        e.acquire = kind == Kind::Read && sem.acquires();
        e.release = kind == Kind::Write && sem.releases();
        e.scope = event_scope(sem, scope);
        e.proxy = proxy;
        e
    }

    /// A load: one path per value its location may hold.
    fn load(
        &self,
        st: &mut State,
        pc: usize,
        ins: &Instr,
        out: &mut Vec<Trace>,
    ) -> Result<Flow, ModelError> {
        let Instr::Load {
            sem,
            scope,
            proxy,
            dst,
            addr,
        } = ins
        else {
            unreachable!("a load")
        };
        let Some((l, adep)) = self.address_or_finish(st, addr, out)? else {
            return Ok(Flow::Done);
        };
        let sem = Sem::from(*sem);
        let e = self.access((Kind::Read, pc), (&l, addr), (sem, *scope, *proxy));
        let di = self.reg(dst);
        let values = &self.domains[l.phys];
        for (i, &v) in values.iter().enumerate() {
            let mut s2 = fork(st, i + 1 == values.len());
            let mut e2 = e.clone();
            e2.value = v;
            let idx = self.push(&mut s2, e2, adep, 0)?;
            s2.regs[di] = v;
            s2.rdeps[di] = 1u64 << idx;
            self.run(s2, out)?;
        }
        Ok(Flow::Done)
    }

    /// A store of its source operand.
    fn store(
        &self,
        st: &mut State,
        pc: usize,
        ins: &Instr,
        out: &mut Vec<Trace>,
    ) -> Result<Flow, ModelError> {
        let Instr::Store {
            sem,
            scope,
            proxy,
            addr,
            src,
        } = ins
        else {
            unreachable!("a store")
        };
        let Some((l, adep)) = self.address_or_finish(st, addr, out)? else {
            return Ok(Flow::Done);
        };
        let sem = Sem::from(*sem);
        let (v, d) = self.operand(st, src);
        let mut e = self.access((Kind::Write, pc), (&l, addr), (sem, *scope, *proxy));
        e.value = v;
        self.push(st, e, adep, d)?;
        Ok(Flow::Next)
    }

    /// An `atom` or a `red`.
    fn atomic(
        &self,
        st: &mut State,
        pc: usize,
        ins: &Instr,
        out: &mut Vec<Trace>,
    ) -> Result<Flow, ModelError> {
        let op = match ins {
            Instr::Atom {
                sem,
                scope,
                op,
                dst,
                addr,
                src,
                src2,
            } => RmwOp {
                sem: Sem::from(*sem),
                scope: *scope,
                op: *op,
                dst: Some(self.reg(dst)),
                addr,
                src,
                src2: src2.as_ref(),
                is_red: false,
            },
            Instr::Red {
                sem,
                scope,
                op,
                addr,
                src,
            } => RmwOp {
                sem: Sem::from(*sem),
                scope: *scope,
                op: *op,
                dst: None,
                addr,
                src,
                src2: None,
                is_red: true,
            },
            _ => unreachable!("an atom or a red"),
        };
        self.rmw(st, pc, &op, out)?;
        Ok(Flow::Done)
    }

    /// A read-modify-write: one path per value its location may hold, the write half computed
    /// from it (none when the operation writes nothing, as a failed `cas`).
    fn rmw(
        &self,
        st: &mut State,
        pc: usize,
        op: &RmwOp,
        out: &mut Vec<Trace>,
    ) -> Result<(), ModelError> {
        let Some((l, adep)) = self.address_or_finish(st, op.addr, out)? else {
            return Ok(());
        };
        let (a, da) = self.operand(st, op.src);
        let (b, db) = match op.src2 {
            Some(o) => {
                let (v, d) = self.operand(st, o);
                (Some(v), d)
            }
            None => (None, 0),
        };
        let mut r = self.access(
            (Kind::Read, pc),
            (&l, op.addr),
            (op.sem, op.scope, Proxy::Generic),
        );
        r.from_red = op.is_red;
        r.atomic = true;
        let mut w = r.clone();
        w.kind = Kind::Write;
        w.acquire = false;
        w.release = op.sem.releases();
        w.from_red = false;
        let values = &self.domains[l.phys];
        for (i, &old) in values.iter().enumerate() {
            let mut s2 = fork(st, i + 1 == values.len());
            let mut r2 = r.clone();
            r2.value = old;
            let ri = self.push(&mut s2, r2, adep, 0)?;
            if let Some(nv) = rmw(op.op, old, a, b) {
                let mut w2 = w.clone();
                w2.value = nv;
                // The new value is computed from the old one except for `exch`.
                let own = if op.op == AtomOp::Exch { 0 } else { 1u64 << ri };
                let wi = self.push(&mut s2, w2, adep, da | db | own)?;
                s2.deps[wi].all |= 1u64 << ri;
                s2.rmw.push((ri, wi));
            }
            if let Some(di) = op.dst {
                s2.regs[di] = old;
                s2.rdeps[di] = 1u64 << ri;
            }
            self.run(s2, out)?;
        }
        Ok(())
    }

    /// A fence event: `fence.sc` for a `membar`, the CTA scope for a proxy fence.
    fn fence(&self, st: &mut State, pc: usize, f: &Fence) -> Result<Flow, ModelError> {
        let (kind, scope) = match f {
            Fence::Memory { sem, scope } => {
                let kind = match sem {
                    FenceSem::Sc => FenceKind::Sc,
                    FenceSem::AcqRel => FenceKind::AcqRel,
                    FenceSem::Acquire => FenceKind::Acquire,
                    FenceSem::Release => FenceKind::Release,
                };
                (kind, *scope)
            }
            Fence::Membar(l) => (FenceKind::Sc, l.scope()),
            Fence::Proxy(k) => {
                let kind = match k {
                    ProxyFenceKind::Alias => FenceKind::ProxyAlias,
                    ProxyFenceKind::Texture => FenceKind::Proxy(Proxy::Texture),
                    ProxyFenceKind::Surface => FenceKind::Proxy(Proxy::Surface),
                    ProxyFenceKind::Constant => FenceKind::Proxy(Proxy::Constant),
                };
                (kind, Scope::Cta)
            }
        };
        let mut e = self.base_event(Kind::Fence(kind), pc);
        e.scope = scope;
        self.push(st, e, 0, 0)?;
        Ok(Flow::Next)
    }

    /// A barrier event, numbered by occurrence; a `bar.red` forks one path per result it may
    /// give (checked against its partners when traces are combined).
    fn barrier(
        &self,
        st: &mut State,
        pc: usize,
        b: &Barrier,
        out: &mut Vec<Trace>,
    ) -> Result<Flow, ModelError> {
        let kind = self.barrier_kind(st, b);
        let e = self.base_event(Kind::Barrier(kind), pc);
        let idx = self.push(st, e, 0, 0)?;
        let Barrier::Cta {
            op: BarOp::Red { op, dst, pred },
            ..
        } = b
        else {
            return Ok(Flow::Next);
        };
        let (pv, _) = self.operand(st, pred);
        let di = self.reg(dst);
        let results: Vec<Value> = match op {
            BarRedOp::Popc => (0..=self.thread.cta_size as Value).collect(),
            BarRedOp::And | BarRedOp::Or => vec![0, 1],
        };
        for r in results {
            let mut s2 = st.clone();
            s2.regs[di] = r;
            s2.rdeps[di] = 0;
            s2.bar_red.push(BarRedGuess {
                event: idx,
                op: *op,
                pred: pv != 0,
                result: r,
            });
            self.run(s2, out)?;
        }
        Ok(Flow::Done)
    }

    /// What barrier `b` is on this path: its operand values and its occurrence.
    fn barrier_kind(&self, st: &mut State, b: &Barrier) -> BarrierKind {
        match b {
            Barrier::Cta {
                op,
                id,
                count,
                quorum,
            } => {
                let (idv, _) = self.operand(st, id);
                let cv = count.as_ref().map(|c| self.operand(st, c).0);
                let qv = quorum.as_ref().map(|q| self.operand(st, q).0);
                let key = (idv, cv);
                let instance = match st.bar_instances.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, n)) => {
                        *n += 1;
                        *n - 1
                    }
                    None => {
                        st.bar_instances.push((key, 1));
                        0
                    }
                };
                BarrierKind::Cta {
                    waits: !matches!(op, BarOp::Arrive),
                    id: idv,
                    count: cv,
                    quorum: qv,
                    instance,
                }
            }
            Barrier::ClusterArrive { relaxed } => {
                st.cluster_arrivals += 1;
                BarrierKind::ClusterArrive {
                    relaxed: *relaxed,
                    instance: st.cluster_arrivals - 1,
                }
            }
            Barrier::ClusterWait => {
                st.cluster_waits += 1;
                BarrierKind::ClusterWait {
                    instance: st.cluster_waits - 1,
                }
            }
        }
    }

    /// The address of an access, or `None` once the path has been finished undecided (an
    /// offset register that is not 0).
    fn address_or_finish(
        &self,
        st: &State,
        addr: &Addr,
        out: &mut Vec<Trace>,
    ) -> Result<Option<(LocRef, u64)>, ModelError> {
        match self.address(st, addr) {
            Ok(x) => Ok(Some(x)),
            Err(f) => self.finish(st.clone(), Some(f), out).map(|()| None),
        }
    }
}

/// A copy of `st` for one of the paths a read forks into; the last path takes `st` itself,
/// which its caller no longer reads.
fn fork(st: &mut State, last: bool) -> State {
    if last {
        std::mem::take(st)
    } else {
        st.clone()
    }
}

/// The scope an access event carries: its semantics' scope, `.sys` for a weak access (never
/// read: weak accesses are morally strong with nothing).
fn event_scope(sem: Sem, scope: Option<Scope>) -> Scope {
    sem.scope(scope).unwrap_or(Scope::Sys)
}
