//! Compact builders for hand-written tests of the model (no parser needed).

use crate::litmus::ast::*;

/// A global location `name = 0`.
pub fn loc(name: &str) -> Location {
    Location {
        name: name.into(),
        kind: LocationKind::Memory {
            init: 0,
            space: Space::Global,
        },
    }
}

/// An alias of `target` through `proxy`.
pub fn alias(name: &str, proxy: Proxy, target: &str) -> Location {
    Location {
        name: name.into(),
        kind: LocationKind::Alias {
            proxy,
            target: target.into(),
        },
    }
}

/// A register operand.
pub fn r(name: &str) -> Operand {
    Operand::Reg(Reg(name.into()))
}

/// An immediate operand.
pub fn imm(v: Value) -> Operand {
    Operand::Imm(v)
}

fn addr(l: &str) -> Addr {
    Addr {
        loc: l.into(),
        offset: None,
    }
}

/// `ld.sem.scope dst, l`.
pub fn ld(sem: Sem, scope: Option<Scope>, dst: &str, l: &str) -> Instr {
    Instr::Load {
        sem: sem.try_into().expect("a load's semantics"),
        scope,
        proxy: Proxy::Generic,
        dst: Reg(dst.into()),
        addr: addr(l),
    }
}

/// A load through a proxy.
pub fn ldp(proxy: Proxy, dst: &str, l: &str) -> Instr {
    Instr::Load {
        sem: LoadSem::Weak,
        scope: None,
        proxy,
        dst: Reg(dst.into()),
        addr: addr(l),
    }
}

/// `st.sem.scope l, v`.
pub fn st(sem: Sem, scope: Option<Scope>, l: &str, v: Operand) -> Instr {
    Instr::Store {
        sem: sem.try_into().expect("a store's semantics"),
        scope,
        proxy: Proxy::Generic,
        addr: addr(l),
        src: v,
    }
}

/// A store through a proxy.
pub fn stp(proxy: Proxy, l: &str, v: Value) -> Instr {
    Instr::Store {
        sem: StoreSem::Weak,
        scope: None,
        proxy,
        addr: addr(l),
        src: imm(v),
    }
}

/// `atom.sem.gpu.op dst, l, a`.
pub fn atom(sem: Sem, op: AtomOp, dst: &str, l: &str, a: Operand, b: Option<Operand>) -> Instr {
    Instr::Atom {
        sem: sem.try_into().expect("an atom's semantics"),
        scope: Some(Scope::Gpu),
        op,
        dst: Reg(dst.into()),
        addr: addr(l),
        src: a,
        src2: b,
    }
}

/// `fence.sem.scope`.
pub fn fence(sem: FenceSem, scope: Scope) -> Instr {
    Instr::Fence(Fence::Memory { sem, scope })
}

/// `bar.cta.sync id`.
pub fn bar(id: Value) -> Instr {
    Instr::Barrier(Barrier::Cta {
        op: BarOp::Sync,
        id: imm(id),
        count: None,
        quorum: None,
    })
}

/// `bar.cta.sync id, resource, quorum` (Dat3M's three-operand form).
pub fn bar_quorum(id: Value, resource: Value, quorum: Value) -> Instr {
    Instr::Barrier(Barrier::Cta {
        op: BarOp::Sync,
        id: imm(id),
        count: Some(imm(resource)),
        quorum: Some(imm(quorum)),
    })
}

/// A conditional branch.
pub fn br(op: CmpOp, a: Operand, b: Operand, l: &str) -> Instr {
    Instr::Branch {
        cond: Some(BranchCond { op, a, b }),
        target: Label(l.into()),
    }
}

/// `goto l`.
pub fn goto(l: &str) -> Instr {
    Instr::Branch {
        cond: None,
        target: Label(l.into()),
    }
}

/// `l:`.
pub fn label(l: &str) -> Instr {
    Instr::Label(Label(l.into()))
}

/// `P{id}@cta cta,gpu 0` with a body.
pub fn thread(id: usize, cta: u32, body: Vec<Instr>) -> Thread {
    Thread {
        id,
        place: Placement {
            warp: None,
            cta,
            cluster: None,
            gpu: 0,
        },
        body,
    }
}

/// `P{t}:{reg} == v`.
pub fn eq(t: usize, reg: &str, v: Value) -> Prop {
    Prop::Cmp {
        lhs: Term::Reg {
            thread: t,
            reg: Reg(reg.into()),
        },
        op: CmpOp::Eq,
        rhs: Term::Const(v),
    }
}

/// `l == v` on a final memory value.
pub fn mem_eq(l: &str, v: Value) -> Prop {
    Prop::Cmp {
        lhs: Term::Loc(l.into()),
        op: CmpOp::Eq,
        rhs: Term::Const(v),
    }
}

/// `a /\ b`.
pub fn and(a: Prop, b: Prop) -> Prop {
    Prop::And(Box::new(a), Box::new(b))
}

/// A test with an `exists` condition.
pub fn test(name: &str, locations: Vec<Location>, threads: Vec<Thread>, prop: Prop) -> Test {
    Test {
        name: name.into(),
        doc: vec![],
        locations,
        reg_init: vec![],
        threads,
        extra_observed: vec![],
        condition: Condition {
            quantifier: Quantifier::Exists,
            prop,
        },
    }
}
