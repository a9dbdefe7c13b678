//! One emitter per kind of instruction, and the dispatcher that picks it. Each emitter writes
//! the instruction's PTX into the role's function and records the test operations it lowered
//! to, in program order, for the SASS check.

use super::args::memory_of;
use super::frame::soft_index;
use super::{is_cta_barrier, sync_lines, unsupported, Ctx, TestOp};
use crate::codegen::layout::as_u32;
use crate::codegen::proxy::UNSPELLED_FENCE;
use crate::codegen::ptx::{Order, PAddr, POp, PReg, PSpace, Src, SURFACE, SURFACE_ROW};
use crate::codegen::soft_barrier::{SoftBarrier, GAVE_UP, SOFT_BOUND};
use crate::codegen::CodegenError;
use crate::litmus::ast::{
    Addr, AluOp, AtomOp, Barrier, BranchCond, Fence, Instr, Label, LoadSem, Operand, Proxy,
    ProxyFenceKind, Reg, RmwSem, Scope, Sem, StoreSem, Value,
};

type Emitted = Result<(), CodegenError>;

/// Lowers instruction `cx.index` of the role.
pub(super) fn instr(cx: &mut Ctx, i: &Instr) -> Emitted {
    match i {
        Instr::Load {
            proxy: Proxy::Texture,
            dst,
            ..
        } => tld(cx, dst),
        Instr::Load {
            proxy: Proxy::Surface,
            dst,
            ..
        } => {
            let dst = cx.reg(dst);
            surface(cx, POp::Suld { dst })
        }
        Instr::Store {
            proxy: Proxy::Surface,
            src,
            ..
        } => {
            let src = cx.src_reg(src);
            surface(cx, POp::Sust { src })
        }
        Instr::Load {
            sem,
            scope,
            dst,
            addr,
            ..
        } => load(cx, *sem, *scope, dst, addr),
        Instr::Store {
            sem,
            scope,
            addr,
            src,
            ..
        } => store(cx, *sem, *scope, addr, src),
        Instr::Atom {
            sem,
            scope,
            op,
            dst,
            addr,
            src,
            src2,
        } => atom(cx, order(*sem, *scope), *op, dst, addr, src, src2),
        Instr::Red {
            sem,
            scope,
            op,
            addr,
            src,
        } => red(cx, *sem, *scope, *op, addr, src),
        Instr::Fence(f) => fence(cx, f),
        Instr::Barrier(b) => barrier(cx, b),
        Instr::Mov { dst, src } => mov(cx, dst, src),
        Instr::Alu { op, dst, a, b } => alu(cx, *op, dst, a, b),
        Instr::Label(l) => label(cx, l),
        Instr::Branch { cond, target } => branch(cx, cond.as_ref(), target),
    }
}

/// The semantics and scope as the test writes them.
fn order(sem: impl Into<Sem>, scope: Option<Scope>) -> Order {
    Order {
        sem: sem.into(),
        scope,
    }
}

impl Ctx<'_> {
    /// The address register of an access, adding the offset register when there is one.
    fn addr(&mut self, a: &Addr) -> Result<(PAddr, PSpace), CodegenError> {
        let (name, view) = memory_of(self.test, self.layout, &a.loc, self.role)?;
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

    /// The order a `ld`/`st` prints: weak and volatile ones name no scope; a strong one its
    /// scope, or the ISA's default when the test gives none (PTX requires a scope on
    /// `.relaxed`/`.acquire`/`.release`), which is noted.
    fn ldst_order(&mut self, what: &str, sem: Sem, scope: Option<Scope>) -> Order {
        if matches!(sem, Sem::Weak | Sem::Volatile) {
            return order(sem, None);
        }
        if scope.is_none() {
            self.notes.push(format!(
                "P{}: {what}.{} without a scope is emitted with .gpu, the ISA's default scope",
                self.role,
                sem.as_str()
            ));
        }
        order(sem, Some(Scope::or_default(scope)))
    }

    /// A source operand in a register: an immediate is moved into `%v` first.
    fn src_reg(&mut self, src: &Operand) -> PReg {
        match self.src(src) {
            Src::Reg(r) => r,
            Src::Imm(v) => {
                self.line(format!("mov.u32 %v, {v};"));
                PReg("%v".into())
            }
        }
    }

    /// `sub` has no PTX atomic: it is an `add` of the negated operand.
    fn negate_sub(&mut self, op: AtomOp, src: &Operand, what: &str) -> (Src, AtomOp) {
        if op != AtomOp::Sub {
            return (self.src(src), op);
        }
        self.notes.push(format!(
            "P{}: {what}.sub is emitted as {what}.add of the negated operand",
            self.role
        ));
        match self.src(src) {
            Src::Imm(v) => (Src::Imm(v.wrapping_neg()), AtomOp::Add),
            Src::Reg(r) => {
                self.line(format!("neg.s32 %v, {r};"));
                (Src::Reg(PReg("%v".into())), AtomOp::Add)
            }
        }
    }
}

fn load(cx: &mut Ctx, sem: LoadSem, scope: Option<Scope>, dst: &Reg, addr: &Addr) -> Emitted {
    let (addr, space) = cx.addr(addr)?;
    let order = cx.ldst_order("ld", sem.into(), scope);
    let dst = cx.reg(dst);
    cx.test_op(POp::Ld {
        order,
        space,
        dst,
        addr,
    });
    Ok(())
}

/// A texture read: a fetch of the element its argument names (a texture read is weak and
/// has no scope, so there is nothing else to lower).
fn tld(cx: &mut Ctx, dst: &Reg) -> Emitted {
    let k = cx.next_arg;
    cx.next_arg += 1;
    debug_assert_eq!(cx.args[k].space, PSpace::Texture);
    let dst = cx.reg(dst);
    let index = PReg(format!("%xa{k}"));
    cx.test_op(POp::Tld { dst, index });
    Ok(())
}

/// A surface access (weak, no scope: the only surface semantics): the word index of its
/// argument turned into the coordinates `op` reads.
fn surface(cx: &mut Ctx, op: POp) -> Emitted {
    let k = cx.next_arg;
    cx.next_arg += 1;
    debug_assert_eq!(cx.args[k].space, PSpace::Surface);
    let [_, x, y] = SURFACE;
    cx.line(format!("rem.u32 {x}, %ya{k}, {SURFACE_ROW};"));
    cx.line(format!("shl.b32 {x}, {x}, 2;"));
    cx.line(format!("div.u32 {y}, %ya{k}, {SURFACE_ROW};"));
    cx.test_op(op);
    Ok(())
}

fn store(cx: &mut Ctx, sem: StoreSem, scope: Option<Scope>, addr: &Addr, src: &Operand) -> Emitted {
    let src = cx.src_reg(src);
    let (addr, space) = cx.addr(addr)?;
    let order = cx.ldst_order("st", sem.into(), scope);
    cx.test_op(POp::St {
        order,
        space,
        addr,
        src,
    });
    Ok(())
}

fn atom(
    cx: &mut Ctx,
    order: Order,
    op: AtomOp,
    dst: &Reg,
    addr: &Addr,
    src: &Operand,
    src2: &Option<Operand>,
) -> Emitted {
    let (a, op) = cx.negate_sub(op, src, "atom");
    let b = src2.as_ref().map(|s| cx.src(s));
    if (op == AtomOp::Cas) != b.is_some() {
        return Err(CodegenError::Invalid(format!(
            "P{}: atom.{} takes {} operands",
            cx.role,
            op.as_str(),
            if op == AtomOp::Cas { 2 } else { 1 }
        )));
    }
    let (addr, space) = cx.addr(addr)?;
    let dst = cx.reg(dst);
    cx.test_op(POp::Atom {
        order,
        space,
        op,
        dst,
        addr,
        a,
        b,
    });
    Ok(())
}

/// `red`: PTX has only `red.relaxed` and `red.release`. The model never lets a red's read form
/// an acquire pattern, so the acquire half of `red.acquire` and `red.acq_rel` is void and they
/// are given the equivalent instruction.
fn red(
    cx: &mut Ctx,
    sem: RmwSem,
    scope: Option<Scope>,
    op: AtomOp,
    addr: &Addr,
    src: &Operand,
) -> Emitted {
    let role = cx.role;
    let sem = match sem {
        RmwSem::Relaxed => Sem::Relaxed,
        RmwSem::Release => Sem::Release,
        RmwSem::AcqRel => {
            cx.notes.push(format!(
                "P{role}: red.acq_rel is emitted as red.release (a red never forms an acquire \
                 pattern, and PTX has no red.acq_rel)"
            ));
            Sem::Release
        }
        RmwSem::Acquire => {
            cx.notes.push(format!(
                "P{role}: red.acquire is emitted as red.relaxed (a red never forms an acquire \
                 pattern, and PTX has no red.acquire)"
            ));
            Sem::Relaxed
        }
    };
    if matches!(op, AtomOp::Cas | AtomOp::Exch) {
        return Err(CodegenError::Invalid(format!(
            "P{role}: red has no .{}",
            op.as_str()
        )));
    }
    let (a, op) = cx.negate_sub(op, src, "red");
    let (addr, space) = cx.addr(addr)?;
    cx.test_op(POp::Red {
        order: order(sem, scope),
        space,
        op,
        addr,
        a,
    });
    Ok(())
}

fn fence(cx: &mut Ctx, f: &Fence) -> Emitted {
    let op = match f {
        Fence::Memory { sem, scope } => POp::Fence {
            sem: *sem,
            scope: *scope,
        },
        Fence::Membar(l) => POp::Membar(*l),
        Fence::Proxy(ProxyFenceKind::Alias) => POp::FenceProxyAlias,
        Fence::Proxy(k) => {
            return Err(unsupported(
                format!("fence.proxy.{} in P{}", k.as_str(), cx.role),
                UNSPELLED_FENCE,
            ))
        }
    };
    cx.test_op(op);
    Ok(())
}

fn barrier(cx: &mut Ctx, b: &Barrier) -> Emitted {
    let index = cx.index;
    cx.separate();
    if let (true, Barrier::Cta { id, count, .. }) = (cx.soft, b) {
        soft_barrier(cx, index, id, count);
    } else {
        // The k-th hardware barrier of the role runs the k-th entry of its sequence.
        let test = cx.test;
        let body = &test.threads[cx.role].body[..index];
        let k = body
            .iter()
            .filter(|i| matches!(i, Instr::Barrier(_)) && !(cx.soft && is_cta_barrier(i)))
            .count();
        let op = cx.syncs[k].clone();
        for l in sync_lines(&op, "%bar") {
            cx.line(l);
        }
        cx.ops.push(TestOp {
            index,
            op: op.as_pop(),
        });
        if !cx.count_syncs {
            return Ok(());
        }
    }
    cx.line("add.u32 %nsync, %nsync, 1;");
    Ok(())
}

/// A CTA barrier run in software: the role's run-time key as its code, then the call; a sync
/// that timed out (its verdict `%v` is 0) ends the role on the timed-out path.
fn soft_barrier(cx: &mut Ctx, index: usize, id: &Operand, count: &Option<Operand>) {
    let n = soft_index(cx.layout, cx.role, index);
    let layout = cx.layout;
    let b = &layout.shape.soft_barriers[n];
    soft_call(cx, b, n, id, count);
    if !b.arrive {
        cx.line("setp.eq.u32 %pt, %v, 0;");
        cx.line("@%pt bra LITMUS_TIMEOUT;");
    }
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

fn mov(cx: &mut Ctx, dst: &Reg, src: &Operand) -> Emitted {
    let (d, s) = (cx.reg(dst), cx.src(src));
    cx.line(format!("mov.u32 {d}, {s};"));
    Ok(())
}

fn alu(cx: &mut Ctx, op: AluOp, dst: &Reg, a: &Operand, b: &Operand) -> Emitted {
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
    Ok(())
}

fn label(cx: &mut Ctx, l: &Label) -> Emitted {
    let k = cx.labels[&l.0];
    cx.f.label(format!("LITMUS_L{k}"));
    Ok(())
}

/// A branch; a backward one spends one unit of the loop budget and ends the role on the
/// timed-out path when the budget runs out.
fn branch(cx: &mut Ctx, cond: Option<&BranchCond>, target: &Label) -> Emitted {
    let k = *cx.labels.get(&target.0).ok_or_else(|| {
        CodegenError::Invalid(format!(
            "P{}: branch to missing label {}",
            cx.role, target.0
        ))
    })?;
    let backward = k < cx.index;
    let budget = |cx: &mut Ctx| {
        cx.line("sub.u32 %budget, %budget, 1;");
        cx.line("setp.eq.u32 %pt, %budget, 0;");
        cx.line("@%pt bra LITMUS_TIMEOUT;");
    };
    let Some(c) = cond else {
        if backward {
            budget(cx);
        }
        cx.line(format!("bra LITMUS_L{k};"));
        return Ok(());
    };
    let a = match cx.src(&c.a) {
        Src::Reg(r) => r.0,
        Src::Imm(v) => {
            cx.line(format!("mov.u32 %v, {v};"));
            "%v".into()
        }
    };
    let b = cx.src(&c.b);
    cx.line(format!("setp.{}.s32 %pc, {a}, {b};", c.op.suffix()));
    if backward {
        cx.fresh += 1;
        let skip = format!("LITMUS_F{}", cx.fresh);
        cx.line(format!("@!%pc bra {skip};"));
        budget(cx);
        cx.line(format!("bra LITMUS_L{k};"));
        cx.f.label(skip);
    } else {
        cx.line(format!("@%pc bra LITMUS_L{k};"));
    }
    Ok(())
}
