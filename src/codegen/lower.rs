//! Lowering of one role (test thread) to a PTX function `litmus_role_<r>`.
//!
//! Each role is a function of its own so that its memory operations can be found again in the
//! SASS, in program order, between the function's entry and its return. The function takes the
//! addresses of the locations it touches (global: 64-bit; shared: 32-bit, already mapped with
//! `mapa` for another CTA's shared memory) and the first hardware barrier of its block, and
//! returns its status (1 done, 2 timed out in a bounded loop) followed by the final values of
//! its observed registers. Nothing else touches memory inside a role function, so its SASS
//! memory operations are exactly the test's.

use super::domain::Analysis;
use super::layout::{as_u32, BarrierKey, Layout, WARP};
use super::ptx::{Order, PAddr, POp, PReg, PSpace, Src};
use super::soft_barrier::{SoftBarrier, GAVE_UP, SOFT_BOUND};
use super::CodegenError;
use crate::litmus::ast::{
    AluOp, AtomOp, BarOp, Barrier, CmpOp, Fence, Instr, LocationKind, Operand, Proxy,
    ProxyFenceKind, Reg, Scope, Sem, Space, Test, Value,
};
use crate::outcome::Observable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A synchronisation instruction of a role, in program order (the sequence every path of the
/// role runs exactly once, which idle lanes and timed-out roles replay).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SyncOp {
    /// `barrier.sync` on the test barrier at `index` of [`super::Shape::barriers`].
    CtaSync {
        /// Index of the test barrier id.
        index: u32,
        /// Participating threads.
        count: u32,
    },
    /// `barrier.arrive` on the test barrier at `index`.
    CtaArrive {
        /// Index of the test barrier id.
        index: u32,
        /// Participating threads.
        count: u32,
    },
    /// `barrier.cluster.arrive`.
    ClusterArrive {
        /// `.relaxed`.
        relaxed: bool,
    },
    /// `barrier.cluster.wait`.
    ClusterWait,
}

impl SyncOp {
    /// The PTX instruction (the barrier id register is `%bid`).
    pub fn as_pop(&self) -> POp {
        let id = PReg("%bid".into());
        match self {
            SyncOp::CtaSync { count, .. } => POp::BarrierSync { id, count: *count },
            SyncOp::CtaArrive { count, .. } => POp::BarrierArrive { id, count: *count },
            SyncOp::ClusterArrive { relaxed } => POp::ClusterArrive { relaxed: *relaxed },
            SyncOp::ClusterWait => POp::ClusterWait,
        }
    }

    /// Whether it is a cluster barrier operation.
    pub fn is_cluster(&self) -> bool {
        matches!(self, SyncOp::ClusterArrive { .. } | SyncOp::ClusterWait)
    }
}

/// A test instruction as it must appear in the role's code: its index in the thread's body
/// and the PTX it lowered to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestOp {
    /// Index in the thread's body.
    pub index: usize,
    /// The PTX instruction.
    pub op: POp,
}

/// One location argument of a role function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocArg {
    /// The memory location (aliases resolved).
    pub loc: String,
    /// How the role reaches it.
    pub space: PSpace,
    /// The memory view it goes through (0: the location's own address; k: the k-th generic
    /// alias's, see [`Layout::memory_views`]).
    #[serde(default)]
    pub view: u32,
    /// Bytes the argument is biased by (the caller passes `address - bias`, every access adds
    /// `bias` back as an immediate offset that survives into the SASS).
    pub bias: u32,
}

/// The instruction between two test operations of a role (see `Ctx::separate`).
pub const SEPARATOR: &str = "pmevent 15;";

/// The bias of the `k`-th location (in order of first access) of a role.
pub fn arg_bias(k: usize) -> u32 {
    16 * (k as u32 + 1)
}

/// A lowered role.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleCode {
    /// The test thread.
    pub role: usize,
    /// The PTX function's name.
    pub func: String,
    /// The function's text.
    pub ptx: String,
    /// Location arguments, one per access in program order (after the barrier base).
    pub args: Vec<LocArg>,
    /// Every register of the role, in the order of the returned words after the status.
    pub returns: Vec<Reg>,
    /// Memory operations, fences and barriers, in program order.
    pub ops: Vec<TestOp>,
    /// Barrier operations, in program order.
    pub syncs: Vec<SyncOp>,
    /// Whether the role has a backward branch (a bounded loop).
    pub loops: bool,
    /// Lowering decisions a reader should know about (e.g. `atom.sub` as `atom.add`).
    pub notes: Vec<String>,
}

fn unsupported(construct: impl Into<String>, reason: impl Into<String>) -> CodegenError {
    CodegenError::Unsupported {
        construct: construct.into(),
        reason: reason.into(),
    }
}

/// The memory location a name reaches and the view it goes through, rejecting aliases the
/// GPU harness cannot provide.
fn memory_of<'t>(
    test: &'t Test,
    layout: &Layout,
    name: &str,
    role: usize,
) -> Result<(&'t str, u32), CodegenError> {
    let loc = test
        .location(name)
        .ok_or_else(|| CodegenError::Invalid(format!("P{role}: location {name} not declared")))?;
    let target = test
        .resolve(name)
        .ok_or_else(|| CodegenError::Invalid(format!("P{role}: alias {name} has no target")))?;
    match (&loc.kind, layout.view_of(test, name)) {
        (_, Some(view)) => Ok((target, view)),
        (
            LocationKind::Alias {
                proxy: Proxy::Generic,
                ..
            },
            None,
        ) => Err(unsupported(
            format!("P{role} accesses {name}, a generic alias of shared memory"),
            "the harness maps second virtual addresses of global memory only",
        )),
        (LocationKind::Alias { proxy, .. }, None) => Err(unsupported(
            format!("P{role} accesses {name}, a {proxy:?} alias"),
            "texture, surface and constant aliases need texture or surface objects or constant \
             banks bound to the location, which the GPU harness does not create",
        )),
        (LocationKind::Memory { .. }, None) => unreachable!("a memory location is its own view"),
    }
}

/// The sequence of synchronisation operations of a thread, with the checks that every path
/// through the thread runs all of them once, in order.
pub fn sync_sequence(
    test: &Test,
    layout: &Layout,
    analysis: &Analysis,
    role: usize,
) -> Result<Vec<SyncOp>, CodegenError> {
    let t = &test.threads[role];
    let place = &layout.shape.roles[role];
    let body = &t.body;
    let label_at = |l: &crate::litmus::ast::Label| {
        body.iter()
            .position(|i| matches!(i, Instr::Label(x) if x == l))
    };
    let is_sync = |i: &Instr| matches!(i, Instr::Barrier(_));
    for (b, i) in body.iter().enumerate() {
        if let Instr::Branch { target, .. } = i {
            let l = label_at(target).ok_or_else(|| {
                CodegenError::Invalid(format!("P{role}: branch to missing label {}", target.0))
            })?;
            let (lo, hi) = if l < b { (l, b) } else { (b, l) };
            if body[lo..=hi].iter().any(is_sync) {
                return Err(unsupported(
                    format!("a barrier of P{role} inside a loop or skipped by a branch"),
                    "every thread must reach each barrier exactly once so that the barrier's \
                     other participants (other instances included) are not left waiting",
                ));
            }
        }
    }
    let soft = !layout.shape.soft_barriers.is_empty();
    let mut out = Vec::new();
    for i in body {
        match i {
            // Software barriers are calls of the role, not hardware barrier sequences.
            Instr::Barrier(Barrier::Cta { .. }) if soft => {}
            Instr::Barrier(Barrier::Cta { op, id, count }) => {
                let key = BarrierKey::of(analysis, role, id, count)?;
                let index = layout
                    .shape
                    .barriers
                    .iter()
                    .position(|b| *b == key)
                    .expect("Shape::of collects every barrier") as u32;
                // Participants: the warp groups of this CTA with a role that uses the barrier.
                let groups = &layout.shape.groups[place.cluster as usize][place.cta as usize];
                let uses = |r: usize| {
                    test.threads[r].body.iter().any(|i| match i {
                        Instr::Barrier(Barrier::Cta { id, count, .. }) => {
                            BarrierKey::of(analysis, r, id, count).ok() == Some(key)
                        }
                        _ => false,
                    })
                };
                let participating_groups =
                    groups.iter().filter(|g| g.iter().any(|r| uses(*r))).count() as u32;
                let count = participating_groups * WARP;
                out.push(match op {
                    BarOp::Sync => SyncOp::CtaSync { index, count },
                    BarOp::Arrive => SyncOp::CtaArrive { index, count },
                    BarOp::Red { .. } => {
                        return Err(unsupported(
                            format!("bar.cta.red in P{role}"),
                            "the reduction would combine the predicates of every instance \
                             that shares the hardware barrier",
                        ))
                    }
                });
            }
            Instr::Barrier(Barrier::ClusterArrive { relaxed }) => {
                out.push(SyncOp::ClusterArrive { relaxed: *relaxed })
            }
            Instr::Barrier(Barrier::ClusterWait) => out.push(SyncOp::ClusterWait),
            _ => {}
        }
    }
    Ok(out)
}

/// PTX for one synchronisation operation; `bar` holds the block's first hardware barrier.
pub fn sync_ptx(op: &SyncOp, bar: &str, out: &mut String) {
    if let SyncOp::CtaSync { index, .. } | SyncOp::CtaArrive { index, .. } = op {
        let _ = writeln!(out, "\tadd.u32 %bid, {bar}, {index};");
    }
    let _ = writeln!(out, "\t{}", op.as_pop());
}

struct Ctx<'a> {
    role: usize,
    regs: BTreeMap<String, usize>,
    args: Vec<LocArg>,
    next_arg: usize,
    out: String,
    ops: Vec<TestOp>,
    notes: Vec<String>,
    layout: &'a Layout,
    fresh: usize,
}

impl Ctx<'_> {
    fn reg(&self, r: &Reg) -> PReg {
        PReg(format!("%t{}", self.regs[&r.0]))
    }

    fn src(&self, o: &Operand) -> Src {
        match o {
            Operand::Imm(v) => Src::Imm(*v as u32),
            Operand::Reg(r) => Src::Reg(self.reg(r)),
        }
    }

    fn line(&mut self, s: impl AsRef<str>) {
        self.out.push('\t');
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    /// The address register of an access, adding the offset register when there is one.
    fn addr(
        &mut self,
        a: &crate::litmus::ast::Addr,
        test: &Test,
    ) -> Result<(PAddr, PSpace), CodegenError> {
        let (name, view) = memory_of(test, self.layout, &a.loc, self.role)?;
        // Each access has an argument of its own (see `LocArg`), in program order.
        let k = self.next_arg;
        self.next_arg += 1;
        debug_assert_eq!((self.args[k].loc.as_str(), self.args[k].view), (name, view));
        let space = self.args[k].space;
        let offset = self.args[k].bias;
        let base = match space {
            PSpace::Global => format!("%ga{k}"),
            _ => format!("%sa{k}"),
        };
        let at = |base: &str| PAddr {
            base: PReg(base.into()),
            offset,
        };
        Ok(match &a.offset {
            None => (at(&base), space),
            Some(r) => {
                let off = self.reg(r);
                if space == PSpace::Global {
                    self.line(format!("mul.wide.u32 %o64, {off}, 4;"));
                    self.line(format!("add.u64 %a64, {base}, %o64;"));
                    (at("%a64"), space)
                } else {
                    self.line(format!("shl.b32 %a32, {off}, 2;"));
                    self.line(format!("add.u32 %a32, {base}, %a32;"));
                    (at("%a32"), space)
                }
            }
        })
    }

    fn test_op(&mut self, index: usize, op: POp) {
        self.separate();
        self.line(op.to_string());
        self.ops.push(TestOp { index, op });
    }

    /// Keeps ptxas from moving one test operation across another: it schedules independent
    /// weak accesses freely (two weak loads of different locations come out swapped), but it
    /// never moves memory operations across a performance-monitor event, which has no
    /// meaning in the memory model and costs one PMTRIG.
    fn separate(&mut self) {
        if !self.ops.is_empty() {
            self.line(SEPARATOR);
        }
    }
}

/// The scope a strong `ld`/`st` prints: the test's, or `.gpu` (the ISA's default) when the test
/// gives none, since PTX requires a scope on `.relaxed`/`.acquire`/`.release`.
fn ldst_order(sem: Sem, scope: Option<Scope>) -> (Order, bool) {
    let defaulted = scope.is_none() && !matches!(sem, Sem::Weak | Sem::Volatile);
    let scope = match sem {
        Sem::Weak | Sem::Volatile => None,
        _ => Some(scope.unwrap_or(Scope::Gpu)),
    };
    (Order { sem, scope }, defaulted)
}

fn cmp_suffix(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "eq",
        CmpOp::Ne => "ne",
        CmpOp::Lt => "lt",
        CmpOp::Le => "le",
        CmpOp::Gt => "gt",
        CmpOp::Ge => "ge",
    }
}

/// Every register a thread mentions (its body, its initial values, the condition), sorted by
/// name: the role function's registers and return words.
pub fn thread_registers(test: &Test, observables: &[Observable], role: usize) -> Vec<String> {
    let t = &test.threads[role];
    // Registers: every name the thread mentions, in name order.
    let mut names: Vec<String> = Vec::new();
    let mut note_reg = |r: &Reg| {
        if !names.contains(&r.0) {
            names.push(r.0.clone());
        }
    };
    let note_op = |o: &Operand, note_reg: &mut dyn FnMut(&Reg)| {
        if let Operand::Reg(r) = o {
            note_reg(r)
        }
    };
    for i in &t.body {
        match i {
            Instr::Load { dst, addr, .. } => {
                note_reg(dst);
                if let Some(r) = &addr.offset {
                    note_reg(r)
                }
            }
            Instr::Store { addr, src, .. } => {
                if let Some(r) = &addr.offset {
                    note_reg(r)
                }
                note_op(src, &mut note_reg);
            }
            Instr::Atom {
                dst,
                addr,
                src,
                src2,
                ..
            } => {
                note_reg(dst);
                if let Some(r) = &addr.offset {
                    note_reg(r)
                }
                note_op(src, &mut note_reg);
                if let Some(s) = src2 {
                    note_op(s, &mut note_reg);
                }
            }
            Instr::Red { addr, src, .. } => {
                if let Some(r) = &addr.offset {
                    note_reg(r)
                }
                note_op(src, &mut note_reg);
            }
            Instr::Mov { dst, src } => {
                note_reg(dst);
                note_op(src, &mut note_reg);
            }
            Instr::Alu { dst, a, b, .. } => {
                note_reg(dst);
                note_op(a, &mut note_reg);
                note_op(b, &mut note_reg);
            }
            Instr::Branch { cond: Some(c), .. } => {
                note_op(&c.a, &mut note_reg);
                note_op(&c.b, &mut note_reg);
            }
            _ => {}
        }
    }
    for o in observables {
        if let Observable::Reg { thread, reg } = o {
            if *thread == role {
                note_reg(reg);
            }
        }
    }
    for ri in test.reg_init.iter().filter(|ri| ri.thread == role) {
        note_reg(&ri.reg);
    }
    names.sort();
    names
}

/// Lowers role `role` of `test` under `layout`.
pub fn lower_role(
    test: &Test,
    layout: &Layout,
    analysis: &Analysis,
    role: usize,
) -> Result<RoleCode, CodegenError> {
    let t = &test.threads[role];
    let place = &layout.shape.roles[role];
    let syncs = sync_sequence(test, layout, analysis, role)?;
    let names = thread_registers(test, &layout.observables, role);
    // Every register is returned, observed or not, so that ptxas cannot drop a load or turn
    // an atom into a red because its result looks dead.
    let returns: Vec<Reg> = names.iter().map(|n| Reg(n.clone())).collect();
    // Location arguments: one per access, in program order. Separate (equal-valued) pointers
    // keep ptxas from proving two accesses hit one address, so it can neither merge two
    // loads nor drop a store; the bias names the location in the SASS.
    let mut touched: Vec<(String, u32)> = Vec::new();
    let mut accessed: Vec<(String, u32)> = Vec::new();
    for i in &t.body {
        let a = match i {
            Instr::Load { addr, proxy, .. } | Instr::Store { addr, proxy, .. } => {
                if *proxy != Proxy::Generic {
                    return Err(unsupported(
                        format!("a {proxy:?}-proxy access of P{role} to {}", addr.loc),
                        "texture, surface and constant accesses need texture/surface objects \
                         or constant banks bound to the location, which the GPU harness does \
                         not create",
                    ));
                }
                addr
            }
            Instr::Atom { addr, .. } | Instr::Red { addr, .. } => addr,
            _ => continue,
        };
        let (m, view) = memory_of(test, layout, &a.loc, role)?;
        let m = (m.to_string(), view);
        if !touched.contains(&m) {
            touched.push(m.clone());
        }
        accessed.push(m);
    }
    let mut args = Vec::new();
    for (name, view) in &accessed {
        let l = layout
            .locations
            .iter()
            .find(|l| l.name == *name)
            .expect("an accessed location is a memory location");
        let space = match l.space {
            Space::Global => PSpace::Global,
            Space::Shared { owner } => {
                let o = &layout.shape.roles[owner];
                if o.cluster != place.cluster {
                    return Err(CodegenError::Invalid(format!(
                        "P{role} touches {}, shared memory of P{owner}'s CTA in another cluster",
                        l.name
                    )));
                }
                if o.cta == place.cta {
                    PSpace::SharedCta
                } else {
                    PSpace::SharedCluster
                }
            }
        };
        let slot = touched
            .iter()
            .position(|t| t.0 == *name && t.1 == *view)
            .expect("touched");
        args.push(LocArg {
            loc: l.name.clone(),
            space,
            view: *view,
            bias: arg_bias(slot),
        });
    }
    let mut cx = Ctx {
        role,
        regs: names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect(),
        args,
        next_arg: 0,
        out: String::new(),
        ops: Vec::new(),
        notes: Vec::new(),
        layout,
        fresh: 0,
    };
    let _ = cx.layout;
    let labels: BTreeMap<String, usize> = t
        .body
        .iter()
        .enumerate()
        .filter_map(|(i, x)| match x {
            Instr::Label(l) => Some((l.0.clone(), i)),
            _ => None,
        })
        .collect();
    let loops = t.body.iter().enumerate().any(|(i, x)| {
        matches!(x, Instr::Branch { target, .. } if labels.get(&target.0).is_some_and(|l| *l < i))
    });
    let soft = !layout.shape.soft_barriers.is_empty();
    // A software barrier can time out, so its role always counts the barriers it passed.
    let count_syncs = (loops && !syncs.is_empty()) || (soft && t.body.iter().any(is_soft));
    let is_hard = |i: &Instr| matches!(i, Instr::Barrier(_)) && !(soft && is_soft(i));
    for ri in test.reg_init.iter().filter(|ri| ri.thread == role) {
        let r = cx.reg(&ri.reg);
        cx.line(format!("mov.u32 {r}, {};", ri.value as u32));
    }
    for (index, i) in t.body.iter().enumerate() {
        match i {
            Instr::Load {
                sem,
                scope,
                dst,
                addr,
                ..
            } => {
                if matches!(sem, Sem::Release | Sem::AcqRel) {
                    return Err(CodegenError::Invalid(format!(
                        "P{role}: a load cannot be .{}",
                        sem.as_str()
                    )));
                }
                let (a, space) = cx.addr(addr, test)?;
                let op = POp::Ld {
                    order: {
                        let (order, defaulted) = ldst_order(*sem, *scope);
                        if defaulted {
                            cx.notes.push(format!(
                                "P{role}: ld.{} without a scope is emitted with .gpu, the \
                                 ISA's default scope",
                                sem.as_str()
                            ));
                        }
                        order
                    },
                    space,
                    dst: cx.reg(dst),
                    addr: a,
                };
                cx.test_op(index, op);
            }
            Instr::Store {
                sem,
                scope,
                addr,
                src,
                ..
            } => {
                if matches!(sem, Sem::Acquire | Sem::AcqRel) {
                    return Err(CodegenError::Invalid(format!(
                        "P{role}: a store cannot be .{}",
                        sem.as_str()
                    )));
                }
                let v = match cx.src(src) {
                    Src::Reg(r) => r,
                    Src::Imm(v) => {
                        cx.line(format!("mov.u32 %v, {v};"));
                        PReg("%v".into())
                    }
                };
                let (a, space) = cx.addr(addr, test)?;
                let op = POp::St {
                    order: {
                        let (order, defaulted) = ldst_order(*sem, *scope);
                        if defaulted {
                            cx.notes.push(format!(
                                "P{role}: st.{} without a scope is emitted with .gpu, the \
                                 ISA's default scope",
                                sem.as_str()
                            ));
                        }
                        order
                    },
                    space,
                    addr: a,
                    src: v,
                };
                cx.test_op(index, op);
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
                if matches!(sem, Sem::Weak | Sem::Volatile) {
                    return Err(CodegenError::Invalid(format!(
                        "P{role}: atom cannot be .{}",
                        sem.as_str()
                    )));
                }
                let (a_src, op) = negate_sub(&mut cx, *op, src, "atom");
                let b = src2.as_ref().map(|s| cx.src(s));
                if (op == AtomOp::Cas) != b.is_some() {
                    return Err(CodegenError::Invalid(format!(
                        "P{role}: atom.{} takes {} operands",
                        op.as_str(),
                        if op == AtomOp::Cas { 2 } else { 1 }
                    )));
                }
                let (a, space) = cx.addr(addr, test)?;
                let p = POp::Atom {
                    order: Order {
                        sem: *sem,
                        scope: *scope,
                    },
                    space,
                    op,
                    dst: cx.reg(dst),
                    addr: a,
                    a: a_src,
                    b,
                };
                cx.test_op(index, p);
            }
            Instr::Red {
                sem,
                scope,
                op,
                addr,
                src,
            } => {
                let sem = match sem {
                    Sem::Relaxed | Sem::Release => *sem,
                    // The model never lets a red's read form an acquire pattern, so the
                    // acquire half of these is void and PTX (which has no red.acquire or
                    // red.acq_rel) is given the equivalent instruction.
                    Sem::AcqRel => {
                        cx.notes.push(format!(
                            "P{role}: red.acq_rel is emitted as red.release (a red never forms \
                             an acquire pattern, and PTX has no red.acq_rel)"
                        ));
                        Sem::Release
                    }
                    Sem::Acquire => {
                        cx.notes.push(format!(
                            "P{role}: red.acquire is emitted as red.relaxed (a red never forms \
                             an acquire pattern, and PTX has no red.acquire)"
                        ));
                        Sem::Relaxed
                    }
                    Sem::Weak | Sem::Volatile => {
                        return Err(CodegenError::Invalid(format!(
                            "P{role}: red cannot be .{}",
                            sem.as_str()
                        )))
                    }
                };
                if matches!(op, AtomOp::Cas | AtomOp::Exch) {
                    return Err(CodegenError::Invalid(format!(
                        "P{role}: red has no .{}",
                        op.as_str()
                    )));
                }
                let (a_src, op) = negate_sub(&mut cx, *op, src, "red");
                let (a, space) = cx.addr(addr, test)?;
                let p = POp::Red {
                    order: Order { sem, scope: *scope },
                    space,
                    op,
                    addr: a,
                    a: a_src,
                };
                cx.test_op(index, p);
            }
            Instr::Fence(f) => {
                let p = match f {
                    Fence::Memory { sem, scope } => POp::Fence {
                        sem: *sem,
                        scope: *scope,
                    },
                    Fence::Membar(l) => POp::Membar(*l),
                    Fence::Proxy(ProxyFenceKind::Alias) => POp::FenceProxyAlias,
                    Fence::Proxy(k) => {
                        return Err(unsupported(
                            format!("fence.proxy.{k:?} in P{role}").to_lowercase(),
                            "texture, surface and constant proxies are not run on the GPU",
                        ))
                    }
                };
                cx.test_op(index, p);
            }
            Instr::Barrier(Barrier::Cta { id, count, .. }) if soft => {
                let n = layout
                    .shape
                    .soft_barriers
                    .iter()
                    .position(|b| b.role == role && b.index == index)
                    .expect("Shape::of plans every CTA barrier of a soft test");
                cx.separate();
                let b = &layout.shape.soft_barriers[n];
                soft_call(&mut cx, b, n, id, count);
                if !b.arrive {
                    cx.line("setp.eq.u32 %pt, %v, 0;");
                    cx.line("@%pt bra LITMUS_TIMEOUT;");
                }
                cx.line("add.u32 %nsync, %nsync, 1;");
            }
            Instr::Barrier(_) => {
                let k = t.body[..index].iter().filter(|i| is_hard(i)).count();
                cx.separate();
                let mut s = String::new();
                sync_ptx(&syncs[k], "%bar", &mut s);
                cx.out.push_str(&s);
                cx.ops.push(TestOp {
                    index,
                    op: syncs[k].as_pop(),
                });
                if count_syncs {
                    cx.line("add.u32 %nsync, %nsync, 1;");
                }
            }
            Instr::Mov { dst, src } => {
                let (d, s) = (cx.reg(dst), cx.src(src));
                cx.line(format!("mov.u32 {d}, {s};"));
            }
            Instr::Alu { op, dst, a, b } => {
                let m = match op {
                    AluOp::Add => "add.u32",
                    AluOp::Sub => "sub.u32",
                    AluOp::Mul => "mul.lo.u32",
                    AluOp::And => "and.b32",
                    AluOp::Or => "or.b32",
                    AluOp::Xor => "xor.b32",
                };
                let (d, a, b) = (cx.reg(dst), cx.src(a), cx.src(b));
                cx.line(format!("{m} {d}, {a}, {b};"));
            }
            Instr::Label(l) => {
                let k = labels[&l.0];
                cx.out.push_str(&format!("LITMUS_L{k}:\n"));
            }
            Instr::Branch { cond, target } => {
                let k = *labels.get(&target.0).ok_or_else(|| {
                    CodegenError::Invalid(format!("P{role}: branch to missing label {}", target.0))
                })?;
                let backward = k < index;
                let budget = |cx: &mut Ctx| {
                    cx.line("sub.u32 %budget, %budget, 1;");
                    cx.line("setp.eq.u32 %pt, %budget, 0;");
                    cx.line("@%pt bra LITMUS_TIMEOUT;");
                };
                match cond {
                    None => {
                        if backward {
                            budget(&mut cx);
                        }
                        cx.line(format!("bra LITMUS_L{k};"));
                    }
                    Some(c) => {
                        let a = match cx.src(&c.a) {
                            Src::Reg(r) => r.0,
                            Src::Imm(v) => {
                                cx.line(format!("mov.u32 %v, {v};"));
                                "%v".into()
                            }
                        };
                        let b = cx.src(&c.b);
                        cx.line(format!("setp.{}.s32 %pc, {a}, {b};", cmp_suffix(c.op)));
                        if backward {
                            cx.fresh += 1;
                            let skip = format!("LITMUS_F{}", cx.fresh);
                            cx.line(format!("@!%pc bra {skip};"));
                            budget(&mut cx);
                            cx.line(format!("bra LITMUS_L{k};"));
                            cx.out.push_str(&format!("{skip}:\n"));
                        } else {
                            cx.line(format!("@%pc bra LITMUS_L{k};"));
                        }
                    }
                }
            }
        }
    }
    // Assemble the function around the body.
    let func = format!("litmus_role_{role}");
    let mut f = String::new();
    let ret_words = 1 + returns.len();
    let _ = write!(
        f,
        ".func (.param .align 4 .b8 litmus_ret[{}]) {func}(.param .b32 litmus_bar",
        4 * ret_words
    );
    if soft {
        f.push_str(", .param .b64 litmus_sync");
    }
    for (k, a) in cx.args.iter().enumerate() {
        let ty = if a.space == PSpace::Global {
            "b64"
        } else {
            "b32"
        };
        let _ = write!(f, ", .param .{ty} litmus_loc{k}");
    }
    f.push_str(")\n{\n");
    let _ = writeln!(
        f,
        "\t// P{role} of {}",
        test.name.replace(['\n', '\r'], " ")
    );
    if !names.is_empty() {
        let _ = writeln!(f, "\t.reg .b32 %t<{}>;", names.len());
    }
    f.push_str("\t.reg .b32 %bar, %bid, %nsync, %budget, %status, %v, %a32;\n");
    f.push_str("\t.reg .b64 %a64, %o64;\n\t.reg .pred %pt, %pc;\n");
    for (k, a) in cx.args.iter().enumerate() {
        if a.space == PSpace::Global {
            let _ = writeln!(f, "\t.reg .b64 %ga{k};");
        } else {
            let _ = writeln!(f, "\t.reg .b32 %sa{k};");
        }
    }
    f.push_str("\tld.param.b32 %bar, [litmus_bar];\n");
    if soft {
        f.push_str("\t.reg .b64 %sync;\n\t.reg .b32 %key;\n\t.reg .pred %pk;\n");
        f.push_str("\tld.param.b64 %sync, [litmus_sync];\n");
    }
    for (k, a) in cx.args.iter().enumerate() {
        if a.space == PSpace::Global {
            let _ = writeln!(f, "\tld.param.b64 %ga{k}, [litmus_loc{k}];");
        } else {
            let _ = writeln!(f, "\tld.param.b32 %sa{k}, [litmus_loc{k}];");
        }
    }
    for k in 0..names.len() {
        let _ = writeln!(f, "\tmov.u32 %t{k}, 0;");
    }
    let _ = writeln!(f, "\tmov.u32 %nsync, 0;");
    let _ = writeln!(f, "\tmov.u32 %budget, {};", layout.loop_bound);
    f.push_str(&cx.out);
    f.push_str(
        "\tmov.u32 %status, 1;\n\tbra.uni LITMUS_END;\nLITMUS_TIMEOUT:\n\tmov.u32 %status, 2;\n",
    );
    // A timed-out role still runs the barriers it has not reached, so that no other thread
    // waits for it forever.
    let mut hard = syncs.iter();
    let steps = t
        .body
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, Instr::Barrier(_)));
    for (k, (index, i)) in steps.enumerate() {
        let _ = writeln!(f, "\tsetp.le.u32 %pt, %nsync, {k};");
        if soft && is_soft(i) {
            let n = layout
                .shape
                .soft_barriers
                .iter()
                .position(|b| b.role == role && b.index == index)
                .expect("planned");
            let _ = writeln!(f, "\t@!%pt bra LITMUS_PASSED_{k};");
            let _ = writeln!(
                f,
                "\t{{ .param .b64 s_base; .param .b32 s_me; st.param.b64 [s_base], %sync; st.param.b32 [s_me], {n}; call litmus_soft_abandon, (s_base, s_me); }}"
            );
            let _ = writeln!(f, "LITMUS_PASSED_{k}:");
            continue;
        }
        let s = hard
            .next()
            .expect("one hardware sequence entry per hardware barrier");
        let mut one = String::new();
        sync_ptx(s, "%bar", &mut one);
        for l in one.lines() {
            let _ = writeln!(f, "\t@%pt {}", l.trim_start());
        }
    }
    f.push_str("LITMUS_END:\n\tst.param.b32 [litmus_ret+0], %status;\n");
    for (k, r) in returns.iter().enumerate() {
        let _ = writeln!(
            f,
            "\tst.param.b32 [litmus_ret+{}], {};",
            4 * (k + 1),
            cx.reg(r)
        );
    }
    f.push_str("\tret;\n}\n");
    Ok(RoleCode {
        role,
        func,
        ptx: f,
        args: cx.args,
        returns,
        ops: cx.ops,
        syncs,
        loops,
        notes: cx.notes,
    })
}

/// Whether an instruction is a CTA barrier (run in software when the test's plan says so).
fn is_soft(i: &Instr) -> bool {
    matches!(i, Instr::Barrier(Barrier::Cta { .. }))
}

/// Emits software barrier `n`: the role's run-time key as its code, then the call; a sync
/// leaves its verdict (0: timed out) in `%v`.
fn soft_call(cx: &mut Ctx, b: &SoftBarrier, n: usize, id: &Operand, count: &Option<Operand>) {
    // A value outside the analysed domain (impossible while the analysis is sound) would
    // publish GAVE_UP and synchronise with nobody.
    if matches!(id, Operand::Reg(_)) || matches!(count, Some(Operand::Reg(_))) {
        cx.line(format!("mov.u32 %key, {GAVE_UP};"));
    }
    for (key, code) in &b.keys {
        let mut tests: Vec<(PReg, Value)> = Vec::new();
        if let Operand::Reg(r) = id {
            tests.push((cx.reg(r), key.id));
        }
        if let (Some(Operand::Reg(r)), Some(v)) = (count, key.count) {
            tests.push((cx.reg(r), v));
        }
        if tests.is_empty() {
            cx.line(format!("mov.u32 %key, {code};"));
            continue;
        }
        for (k, (r, v)) in tests.iter().enumerate() {
            let v = as_u32(*v);
            if k == 0 {
                cx.line(format!("setp.eq.u32 %pk, {r}, {v};"));
            } else {
                cx.line(format!("setp.eq.and.u32 %pk, {r}, {v}, %pk;"));
            }
        }
        cx.line(format!("@%pk mov.u32 %key, {code};"));
    }
    let op = POp::SoftBarrier {
        arrive: b.arrive,
        barrier: n as u32,
    };
    if b.arrive {
        cx.line(format!(
            "{{ .param .b64 s_base; .param .b32 s_me; .param .b32 s_key; st.param.b64 [s_base], %sync; st.param.b32 [s_me], {n}; st.param.b32 [s_key], %key; call litmus_soft_arrive, (s_base, s_me, s_key); }}"
        ));
    } else {
        cx.line(format!(
            "{{ .param .b32 s_ok; .param .b64 s_base; .param .b32 s_me; .param .b32 s_partners; .param .b32 s_key; .param .b32 s_bound; st.param.b64 [s_base], %sync; st.param.b32 [s_me], {n}; st.param.b32 [s_partners], {}; st.param.b32 [s_key], %key; st.param.b32 [s_bound], {SOFT_BOUND}; call (s_ok), litmus_soft_sync, (s_base, s_me, s_partners, s_key, s_bound); ld.param.b32 %v, [s_ok]; }}",
            b.partners
        ));
    }
    cx.ops.push(TestOp { index: b.index, op });
}

/// `sub` has no PTX atomic: it is an `add` of the negated operand.
fn negate_sub(cx: &mut Ctx, op: AtomOp, src: &Operand, what: &str) -> (Src, AtomOp) {
    if op != AtomOp::Sub {
        return (cx.src(src), op);
    }
    cx.notes.push(format!(
        "P{}: {what}.sub is emitted as {what}.add of the negated operand",
        cx.role
    ));
    match cx.src(src) {
        Src::Imm(v) => (Src::Imm(v.wrapping_neg()), AtomOp::Add),
        Src::Reg(r) => {
            cx.line(format!("neg.s32 %v, {r};"));
            (Src::Reg(PReg("%v".into())), AtomOp::Add)
        }
    }
}
