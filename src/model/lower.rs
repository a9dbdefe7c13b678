//! From a test to what its threads can do: locations resolved to physical memory and virtual
//! addresses, and every path of every thread through its branches and loops, with the value each
//! read returns fixed per path (a *trace*). Values come from a per-location domain computed as a
//! fixpoint of what the threads can write; traces whose read values no write can supply are
//! dropped later, when traces of all threads are put together.
//!
//! Loops: an iteration that writes no memory, passes no barrier and changes no register that is
//! live at the loop head can be cut out of any execution without changing the outcome or adding
//! an axiom violation (its events only add constraints), so a trace that takes a back edge after
//! such an iteration is dropped (a spin loop's executions are those whose final iteration exits;
//! Dat3M's unrolling bound 1 gives the same); any other iteration is unrolled, up to
//! [`MAX_LOOP_ITERATIONS`].

use super::event::{BarrierKind, Event, FenceKind, Kind};
use super::ModelError;
use crate::litmus::arith::{alu, rmw};
use crate::litmus::ast::{
    Addr, AtomOp, BarOp, BarRedOp, Barrier, Fence, FenceSem, Instr, LocationKind, MembarLevel,
    Operand, Placement, Proxy, ProxyFenceKind, Reg, Scope, Sem, Test, Value,
};
use std::collections::{BTreeSet, HashMap};

/// How often one loop may be unrolled when its iterations have effects.
pub const MAX_LOOP_ITERATIONS: u32 = 16;
/// The most events one thread may produce on one path (dependencies are `u64` masks).
pub const MAX_THREAD_EVENTS: usize = 64;
/// The most paths one thread may have.
pub const MAX_TRACES: usize = 100_000;
/// Events held by all traces of a test at most: with about 150 bytes an event, this keeps the
/// model's traces under 1 GiB whatever the test.
pub const MAX_TRACE_EVENTS: usize = 6_000_000;
const MAX_STEPS: usize = 10_000;

/// Per memory the values it can hold, and per thread its traces over those values.
pub type Domains = (Vec<BTreeSet<Value>>, Vec<Vec<Trace>>);

/// A location name resolved: which physical memory it names and through which virtual address.
#[derive(Clone, Debug)]
pub struct LocRef {
    /// Index into [`Program::memories`].
    pub phys: usize,
    /// Virtual address id.
    pub vaddr: usize,
}

/// A memory location with storage of its own.
#[derive(Clone, Debug)]
pub struct Memory {
    /// Its name.
    pub name: String,
    /// Its initial value.
    pub init: Value,
}

/// A test resolved for the checker.
#[derive(Clone, Debug)]
pub struct Program {
    /// Physical memories (one per `Memory` location), in declaration order.
    pub memories: Vec<Memory>,
    /// Every location name.
    pub names: HashMap<String, LocRef>,
    /// Per thread: placement, body, labels and registers.
    pub threads: Vec<ThreadProg>,
}

/// One thread, ready to run.
#[derive(Clone, Debug)]
pub struct ThreadProg {
    /// Where it runs.
    pub place: Placement,
    /// Its instructions.
    pub body: Vec<Instr>,
    /// Label name -> index of the label in `body`.
    pub labels: HashMap<String, usize>,
    /// Register names; a register's index is its position here.
    pub regs: Vec<Reg>,
    /// Initial register values.
    pub reg_init: Vec<Value>,
    /// How many threads of the test share its CTA (for `bar.red.popc`).
    pub cta_size: usize,
    /// Per instruction: the registers (bit per index) whose value may still be read, by a later
    /// instruction or as a final value, before being overwritten.
    pub live_in: Vec<u64>,
}

/// A `bar.red` whose result was guessed and must be checked against the other participants.
#[derive(Clone, Copy, Debug)]
pub struct BarRedGuess {
    /// Local index of the barrier event.
    pub event: usize,
    /// The reduction.
    pub op: BarRedOp,
    /// This thread's predicate (non-zero is true).
    pub pred: bool,
    /// The guessed result.
    pub result: Value,
}

/// One path of one thread with the value of every read fixed.
#[derive(Clone, Debug)]
pub struct Trace {
    /// The events, in program order (thread-local indices).
    pub events: Vec<Event>,
    /// Per event: the local reads it depends on (address, data or control; an RMW's write
    /// always depends on its read, as in NVIDIA's ptx.als where `rmw` is part of `dep`).
    pub deps: Vec<u64>,
    /// Per event: the local reads its address is computed from.
    pub addr: Vec<u64>,
    /// Per event: the local reads the value it writes is computed from, through registers
    /// (an `exch` writes its operand, so its write has no data dependency on its read).
    pub data: Vec<u64>,
    /// Per event: the local reads a branch before it compared.
    pub ctrl: Vec<u64>,
    /// `(read, write)` halves of each atomic read-modify-write, local indices.
    pub rmw: Vec<(usize, usize)>,
    /// Final register values.
    pub regs: Vec<Value>,
    /// `bar.red` results to check.
    pub bar_red: Vec<BarRedGuess>,
    /// Why this path cannot be decided, if it reaches something undecidable; it stops there.
    pub fault: Option<ModelError>,
}

impl Program {
    /// Resolves a test.
    pub fn new(test: &Test) -> Result<Program, ModelError> {
        let mut memories = Vec::new();
        let mut names: HashMap<String, LocRef> = HashMap::new();
        let mut vaddrs = 0usize;
        for l in &test.locations {
            if let LocationKind::Memory { init, .. } = l.kind {
                names.insert(
                    l.name.clone(),
                    LocRef {
                        phys: memories.len(),
                        vaddr: vaddrs,
                    },
                );
                vaddrs += 1;
                memories.push(Memory {
                    name: l.name.clone(),
                    init,
                });
            }
        }
        // Aliases may name aliases declared later: resolve until nothing changes.
        loop {
            let mut progress = false;
            let mut pending = false;
            for l in &test.locations {
                if let LocationKind::Alias { proxy, target } = &l.kind {
                    if names.contains_key(&l.name) {
                        continue;
                    }
                    match names.get(target).cloned() {
                        Some(t) => {
                            let vaddr = if *proxy == Proxy::Generic {
                                vaddrs += 1;
                                vaddrs - 1
                            } else {
                                t.vaddr
                            };
                            names.insert(
                                l.name.clone(),
                                LocRef {
                                    phys: t.phys,
                                    vaddr,
                                },
                            );
                            progress = true;
                        }
                        None => pending = true,
                    }
                }
            }
            if !pending {
                break;
            }
            if !progress {
                return Err(ModelError::Unsupported {
                    construct: "location aliases".into(),
                    reason: "an alias names no memory (cycle or missing target)".into(),
                });
            }
        }
        let mut threads = Vec::new();
        for t in &test.threads {
            let mut labels = HashMap::new();
            let mut regs: Vec<Reg> = Vec::new();
            let mut add_reg = |r: &Reg| {
                if !regs.contains(r) {
                    regs.push(r.clone());
                }
            };
            for ri in test.reg_init.iter().filter(|ri| ri.thread == t.id) {
                add_reg(&ri.reg);
            }
            for (i, ins) in t.body.iter().enumerate() {
                if let Instr::Label(l) = ins {
                    labels.insert(l.0.clone(), i);
                }
                for r in instr_regs(ins) {
                    add_reg(r);
                }
            }
            for ins in &t.body {
                if let Instr::Branch { target, .. } = ins {
                    if !labels.contains_key(&target.0) {
                        return Err(ModelError::Unsupported {
                            construct: format!("branch to {}", target.0),
                            reason: format!("P{} has no such label", t.id),
                        });
                    }
                }
                for a in instr_addrs(ins) {
                    if !names.contains_key(&a.loc) {
                        // Undeclared locations are implicit memory with initial value 0.
                        names.insert(
                            a.loc.clone(),
                            LocRef {
                                phys: memories.len(),
                                vaddr: vaddrs,
                            },
                        );
                        vaddrs += 1;
                        memories.push(Memory {
                            name: a.loc.clone(),
                            init: 0,
                        });
                    }
                }
            }
            let reg_init = regs
                .iter()
                .map(|r| {
                    test.reg_init
                        .iter()
                        .rev()
                        .find(|ri| ri.thread == t.id && &ri.reg == r)
                        .map_or(0, |ri| ri.value)
                })
                .collect();
            let cta_size = test
                .threads
                .iter()
                .filter(|o| o.place.same_cta(&t.place))
                .count();
            let live_in = liveness(&t.body, &labels, &regs);
            threads.push(ThreadProg {
                place: t.place,
                body: t.body.clone(),
                labels,
                regs,
                reg_init,
                cta_size,
                live_in,
            });
        }
        Ok(Program {
            memories,
            names,
            threads,
        })
    }

    /// The physical memory a name refers to.
    pub fn phys_of(&self, name: &str) -> Option<usize> {
        self.names.get(name).map(|l| l.phys)
    }

    /// Every trace of every thread, with read values drawn from `domains` (per memory);
    /// refused past [`MAX_TRACE_EVENTS`] events in all, the model's memory cap.
    pub fn all_traces(&self, domains: &[BTreeSet<Value>]) -> Result<Vec<Vec<Trace>>, ModelError> {
        let mut events = 0usize;
        let mut all = Vec::with_capacity(self.threads.len());
        for (i, t) in self.threads.iter().enumerate() {
            let mut out = Vec::new();
            Runner {
                prog: self,
                thread: t,
                tid: i,
                domains,
            }
            .run(State::new(t), &mut out)?;
            events += out.iter().map(|tr| tr.events.len()).sum::<usize>();
            if events > MAX_TRACE_EVENTS {
                return Err(ModelError::TooLarge {
                    what: format!(
                        "the threads' traces hold more than {MAX_TRACE_EVENTS} events (the \
                         model's memory cap)"
                    ),
                });
            }
            all.push(out);
        }
        Ok(all)
    }

    /// The values each memory can hold in an execution free of thin air: initial values, then
    /// what the threads write when reading values found so far, repeated as often as an
    /// execution has writes (each value comes from a chain of at most that many reads-from).
    pub fn domains(&self) -> Result<Domains, ModelError> {
        let mut domains: Vec<BTreeSet<Value>> = self
            .memories
            .iter()
            .map(|m| BTreeSet::from([m.init]))
            .collect();
        let mut round = 0usize;
        loop {
            let traces = self.all_traces(&domains)?;
            let mut changed = false;
            let mut max_writes = 0usize;
            for per_thread in &traces {
                let mut most = 0;
                for tr in per_thread {
                    let mut w = 0;
                    for e in &tr.events {
                        if e.is_write() {
                            w += 1;
                            changed |= domains[e.loc].insert(e.value);
                        }
                    }
                    most = most.max(w);
                }
                max_writes += most;
            }
            round += 1;
            if !changed {
                return Ok((domains, traces));
            }
            if round > max_writes + 1 {
                let traces = self.all_traces(&domains)?;
                return Ok((domains, traces));
            }
        }
    }
}

/// The registers an instruction overwrites.
fn instr_defs(ins: &Instr) -> Vec<&Reg> {
    match ins {
        Instr::Load { dst, .. }
        | Instr::Atom { dst, .. }
        | Instr::Mov { dst, .. }
        | Instr::Alu { dst, .. } => vec![dst],
        Instr::Barrier(Barrier::Cta {
            op: BarOp::Red { dst, .. },
            ..
        }) => vec![dst],
        _ => vec![],
    }
}

/// Backward liveness over the thread's control flow; every register is live at the end (final
/// values are observable). More than 64 registers: everything is live.
fn liveness(body: &[Instr], labels: &HashMap<String, usize>, regs: &[Reg]) -> Vec<u64> {
    let all: u64 = if regs.len() >= 64 {
        return vec![u64::MAX; body.len() + 1];
    } else {
        (1u64 << regs.len()) - 1
    };
    let idx = |r: &Reg| 1u64 << regs.iter().position(|x| x == r).expect("collected");
    let n = body.len();
    let mut live = vec![0u64; n + 1];
    live[n] = all;
    loop {
        let mut changed = false;
        for pc in (0..n).rev() {
            let ins = &body[pc];
            let succ_live = match ins {
                Instr::Branch { cond, target } => {
                    let t = live[labels[&target.0]];
                    if cond.is_some() {
                        t | live[pc + 1]
                    } else {
                        t
                    }
                }
                _ => live[pc + 1],
            };
            let defs: u64 = instr_defs(ins).into_iter().map(idx).fold(0, |a, b| a | b);
            let all_regs: u64 = instr_regs(ins).into_iter().map(idx).fold(0, |a, b| a | b);
            let uses = all_regs & !defs | uses_also_defined(ins, &idx);
            let v = (succ_live & !defs) | uses;
            if v != live[pc] {
                live[pc] = v;
                changed = true;
            }
        }
        if !changed {
            return live;
        }
    }
}

/// Registers both read and written by an instruction (`add r, r, 1`).
fn uses_also_defined(ins: &Instr, idx: &dyn Fn(&Reg) -> u64) -> u64 {
    let mut u = 0;
    let mut op = |o: &Operand| {
        if let Operand::Reg(r) = o {
            u |= idx(r);
        }
    };
    match ins {
        Instr::Mov { src, .. } => op(src),
        Instr::Alu { a, b, .. } => {
            op(a);
            op(b);
        }
        Instr::Atom {
            src, src2, addr, ..
        } => {
            op(src);
            if let Some(s) = src2 {
                op(s);
            }
            if let Some(r) = &addr.offset {
                u |= idx(r);
            }
        }
        Instr::Load { addr, .. } => {
            if let Some(r) = &addr.offset {
                u |= idx(r);
            }
        }
        Instr::Barrier(Barrier::Cta { op: bop, id, count }) => {
            op(id);
            if let Some(c) = count {
                op(c);
            }
            if let BarOp::Red { pred, .. } = bop {
                op(pred);
            }
        }
        _ => {}
    }
    u
}

fn instr_regs(ins: &Instr) -> Vec<&Reg> {
    let mut v = Vec::new();
    fn addr_reg<'a>(a: &'a Addr, v: &mut Vec<&'a Reg>) {
        if let Some(r) = &a.offset {
            v.push(r);
        }
    }
    fn opnd<'a>(o: &'a Operand, v: &mut Vec<&'a Reg>) {
        if let Operand::Reg(r) = o {
            v.push(r);
        }
    }
    match ins {
        Instr::Load { dst, addr, .. } => {
            v.push(dst);
            addr_reg(addr, &mut v);
        }
        Instr::Store { addr, src, .. } => {
            addr_reg(addr, &mut v);
            opnd(src, &mut v);
        }
        Instr::Atom {
            dst,
            addr,
            src,
            src2,
            ..
        } => {
            v.push(dst);
            addr_reg(addr, &mut v);
            opnd(src, &mut v);
            if let Some(s) = src2 {
                opnd(s, &mut v);
            }
        }
        Instr::Red { addr, src, .. } => {
            addr_reg(addr, &mut v);
            opnd(src, &mut v);
        }
        Instr::Mov { dst, src } => {
            v.push(dst);
            opnd(src, &mut v);
        }
        Instr::Alu { dst, a, b, .. } => {
            v.push(dst);
            opnd(a, &mut v);
            opnd(b, &mut v);
        }
        Instr::Branch { cond: Some(c), .. } => {
            opnd(&c.a, &mut v);
            opnd(&c.b, &mut v);
        }
        Instr::Barrier(Barrier::Cta { op, id, count }) => {
            opnd(id, &mut v);
            if let Some(c) = count {
                opnd(c, &mut v);
            }
            if let BarOp::Red { dst, pred, .. } = op {
                v.push(dst);
                opnd(pred, &mut v);
            }
        }
        _ => {}
    }
    v
}

fn instr_addrs(ins: &Instr) -> Vec<&Addr> {
    match ins {
        Instr::Load { addr, .. }
        | Instr::Store { addr, .. }
        | Instr::Atom { addr, .. }
        | Instr::Red { addr, .. } => vec![addr],
        _ => vec![],
    }
}

/// `(strong, acquire, release, scope)` of a memory access with semantics `sem`.
fn access_attrs(sem: Sem, scope: Option<Scope>) -> (bool, bool, bool, Scope) {
    let scope = scope.unwrap_or(Scope::Gpu);
    match sem {
        Sem::Weak => (false, false, false, Scope::Sys),
        Sem::Relaxed => (true, false, false, scope),
        Sem::Volatile => (true, false, false, Scope::Sys),
        Sem::Acquire => (true, true, false, scope),
        Sem::Release => (true, false, true, scope),
        Sem::AcqRel => (true, true, true, scope),
    }
}

#[derive(Clone)]
struct State {
    pc: usize,
    regs: Vec<Value>,
    rdeps: Vec<u64>,
    ctrl: u64,
    events: Vec<Event>,
    deps: Vec<u64>,
    addr: Vec<u64>,
    data: Vec<u64>,
    ctrl_of: Vec<u64>,
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
    fn new(t: &ThreadProg) -> State {
        State {
            pc: 0,
            regs: t.reg_init.clone(),
            rdeps: vec![0; t.regs.len()],
            ctrl: 0,
            events: Vec::new(),
            deps: Vec::new(),
            addr: Vec::new(),
            data: Vec::new(),
            ctrl_of: Vec::new(),
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

struct Runner<'a> {
    prog: &'a Program,
    thread: &'a ThreadProg,
    tid: usize,
    domains: &'a [BTreeSet<Value>],
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
            loc_name: String::new(),
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
        st.deps.push(addr | data | st.ctrl);
        st.addr.push(addr);
        st.data.push(data);
        st.ctrl_of.push(st.ctrl);
        Ok(st.events.len() - 1)
    }

    fn finish(
        &self,
        st: State,
        fault: Option<ModelError>,
        out: &mut Vec<Trace>,
    ) -> Result<(), ModelError> {
        if out.len() >= MAX_TRACES {
            return Err(ModelError::TooLarge {
                what: format!("P{} has more than {MAX_TRACES} paths", self.tid),
            });
        }
        out.push(Trace {
            events: st.events,
            deps: st.deps,
            addr: st.addr,
            data: st.data,
            ctrl: st.ctrl_of,
            rmw: st.rmw,
            regs: st.regs,
            bar_red: st.bar_red,
            fault,
        });
        Ok(())
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

    fn run(&self, mut st: State, out: &mut Vec<Trace>) -> Result<(), ModelError> {
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
            match ins {
                Instr::Label(_) => {
                    st.snapshots.insert(pc, (st.regs.clone(), st.events.len()));
                }
                Instr::Mov { dst, src } => {
                    let (v, d) = self.operand(&st, src);
                    let i = self.reg(dst);
                    st.regs[i] = v;
                    st.rdeps[i] = d;
                }
                Instr::Alu { op, dst, a, b } => {
                    let (va, da) = self.operand(&st, a);
                    let (vb, db) = self.operand(&st, b);
                    let i = self.reg(dst);
                    st.regs[i] = alu(*op, va, vb);
                    st.rdeps[i] = da | db;
                }
                Instr::Branch { cond, target } => {
                    let taken = match cond {
                        None => true,
                        Some(c) => {
                            let (va, da) = self.operand(&st, &c.a);
                            let (vb, db) = self.operand(&st, &c.b);
                            st.ctrl |= da | db;
                            c.op.eval(va, vb)
                        }
                    };
                    if taken {
                        let to = self.thread.labels[&target.0];
                        if to <= pc {
                            if let Some((regs, at)) = st.snapshots.get(&to) {
                                let effect = st.events[*at..]
                                    .iter()
                                    .any(|e| e.is_write() || matches!(e.kind, Kind::Barrier(_)));
                                let changed = regs
                                    .iter()
                                    .zip(&st.regs)
                                    .enumerate()
                                    .filter(|(_, (a, b))| a != b)
                                    .fold(0u64, |m, (i, _)| m | (1u64 << i.min(63)));
                                if !effect && changed & self.thread.live_in[to] == 0 {
                                    // This iteration changed nothing that matters later: the
                                    // path is subsumed by the one that skips it.
                                    return Ok(());
                                }
                            }
                            let n = st.back_taken.entry(pc).or_insert(0);
                            *n += 1;
                            if *n > MAX_LOOP_ITERATIONS {
                                let what = format!(
                                    "P{}: the loop back to {} runs more than {MAX_LOOP_ITERATIONS} times",
                                    self.tid, target.0
                                );
                                return self.finish(st, Some(ModelError::TooLarge { what }), out);
                            }
                        }
                        st.pc = to;
                    }
                }
                Instr::Load {
                    sem,
                    scope,
                    proxy,
                    dst,
                    addr,
                } => {
                    let (l, adep) = match self.address(&st, addr) {
                        Ok(x) => x,
                        Err(f) => return self.finish(st, Some(f), out),
                    };
                    let sem = &Sem::from(*sem);
                    let (strong, acquire, release, scope) = access_attrs(*sem, *scope);
                    if release {
                        return Err(unsupported_sem("a load", *sem));
                    }
                    let mut e = self.base_event(Kind::Read, pc);
                    e.loc = l.phys;
                    e.vaddr = l.vaddr;
                    e.loc_name = addr.loc.clone();
                    e.strong = strong;
                    e.acquire = acquire;
                    e.scope = scope;
                    e.proxy = *proxy;
                    let di = self.reg(dst);
                    for &v in &self.domains[l.phys] {
                        let mut s2 = st.clone();
                        let mut e2 = e.clone();
                        e2.value = v;
                        let idx = self.push(&mut s2, e2, adep, 0)?;
                        s2.regs[di] = v;
                        s2.rdeps[di] = 1u64 << idx;
                        self.run(s2, out)?;
                    }
                    return Ok(());
                }
                Instr::Store {
                    sem,
                    scope,
                    proxy,
                    addr,
                    src,
                } => {
                    let (l, adep) = match self.address(&st, addr) {
                        Ok(x) => x,
                        Err(f) => return self.finish(st, Some(f), out),
                    };
                    let sem = &Sem::from(*sem);
                    let (strong, acquire, release, scope) = access_attrs(*sem, *scope);
                    if acquire {
                        return Err(unsupported_sem("a store", *sem));
                    }
                    let (v, d) = self.operand(&st, src);
                    let mut e = self.base_event(Kind::Write, pc);
                    e.loc = l.phys;
                    e.vaddr = l.vaddr;
                    e.loc_name = addr.loc.clone();
                    e.value = v;
                    e.strong = strong;
                    e.release = release;
                    e.scope = scope;
                    e.proxy = *proxy;
                    self.push(&mut st, e, adep, d)?;
                }
                Instr::Atom {
                    sem,
                    scope,
                    op,
                    dst,
                    addr,
                    src,
                    src2,
                } => {
                    let di = Some(self.reg(dst));
                    let s2 = src2.as_ref();
                    let sem = &Sem::from(*sem);
                    return self.rmw(st, pc, *sem, *scope, *op, di, addr, src, s2, false, out);
                }
                Instr::Red {
                    sem,
                    scope,
                    op,
                    addr,
                    src,
                } => {
                    let sem = &Sem::from(*sem);
                    return self.rmw(st, pc, *sem, *scope, *op, None, addr, src, None, true, out);
                }
                Instr::Fence(f) => {
                    let (kind, scope) = match f {
                        Fence::Memory { sem, scope } => (
                            match sem {
                                FenceSem::Sc => FenceKind::Sc,
                                FenceSem::AcqRel => FenceKind::AcqRel,
                                FenceSem::Acquire => FenceKind::Acquire,
                                FenceSem::Release => FenceKind::Release,
                            },
                            *scope,
                        ),
                        Fence::Membar(l) => (
                            FenceKind::Sc,
                            match l {
                                MembarLevel::Cta => Scope::Cta,
                                MembarLevel::Gl => Scope::Gpu,
                                MembarLevel::Sys => Scope::Sys,
                            },
                        ),
                        Fence::Proxy(k) => (
                            match k {
                                ProxyFenceKind::Alias => FenceKind::ProxyAlias,
                                ProxyFenceKind::Texture => FenceKind::Proxy(Proxy::Texture),
                                ProxyFenceKind::Surface => FenceKind::Proxy(Proxy::Surface),
                                ProxyFenceKind::Constant => FenceKind::Proxy(Proxy::Constant),
                            },
                            Scope::Cta,
                        ),
                    };
                    let mut e = self.base_event(Kind::Fence(kind), pc);
                    e.scope = scope;
                    self.push(&mut st, e, 0, 0)?;
                }
                Instr::Barrier(b) => {
                    let kind = match b {
                        Barrier::Cta { op, id, count } => {
                            let (idv, _) = self.operand(&st, id);
                            let cv = count.as_ref().map(|c| self.operand(&st, c).0);
                            let key = (idv, cv);
                            let instance =
                                match st.bar_instances.iter_mut().find(|(k, _)| *k == key) {
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
                    };
                    let e = self.base_event(Kind::Barrier(kind), pc);
                    let idx = self.push(&mut st, e, 0, 0)?;
                    if let Instr::Barrier(Barrier::Cta {
                        op: BarOp::Red { op, dst, pred },
                        ..
                    }) = ins
                    {
                        let (pv, _) = self.operand(&st, pred);
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
                        return Ok(());
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn rmw(
        &self,
        st: State,
        pc: usize,
        sem: Sem,
        scope: Option<Scope>,
        op: AtomOp,
        dst: Option<usize>,
        addr: &Addr,
        src: &Operand,
        src2: Option<&Operand>,
        is_red: bool,
        out: &mut Vec<Trace>,
    ) -> Result<(), ModelError> {
        let (l, adep) = match self.address(&st, addr) {
            Ok(x) => x,
            Err(f) => return self.finish(st, Some(f), out),
        };
        let (strong, acquire, release, scope) = access_attrs(sem, scope);
        if !strong {
            return Err(unsupported_sem("an atomic operation", sem));
        }
        let (a, da) = self.operand(&st, src);
        let (b, db) = match src2 {
            Some(o) => {
                let (v, d) = self.operand(&st, o);
                (Some(v), d)
            }
            None => (None, 0),
        };
        let mut r = self.base_event(Kind::Read, pc);
        r.loc = l.phys;
        r.vaddr = l.vaddr;
        r.loc_name = addr.loc.clone();
        r.acquire = acquire;
        r.scope = scope;
        r.from_red = is_red;
        r.atomic = true;
        let mut w = r.clone();
        w.kind = Kind::Write;
        w.acquire = false;
        w.release = release;
        w.from_red = false;
        for &old in &self.domains[l.phys] {
            let mut s2 = st.clone();
            let mut r2 = r.clone();
            r2.value = old;
            let ri = self.push(&mut s2, r2, adep, 0)?;
            if let Some(nv) = rmw(op, old, a, b) {
                let mut w2 = w.clone();
                w2.value = nv;
                // The new value is computed from the old one except for `exch`.
                let own = if op == AtomOp::Exch { 0 } else { 1u64 << ri };
                let wi = self.push(&mut s2, w2, adep, da | db | own)?;
                s2.deps[wi] |= 1u64 << ri;
                s2.rmw.push((ri, wi));
            }
            if let Some(di) = dst {
                s2.regs[di] = old;
                s2.rdeps[di] = 1u64 << ri;
            }
            self.run(s2, out)?;
        }
        Ok(())
    }
}

fn unsupported_sem(what: &str, sem: Sem) -> ModelError {
    ModelError::Unsupported {
        construct: format!("{what} with .{}", sem.as_str()),
        reason: "PTX has no such operation".into(),
    }
}
