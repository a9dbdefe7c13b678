//! What each instruction reads, writes and accesses, and which registers and locations a test
//! names: the one walk over operands that every stage uses, so that no stage forgets an operand
//! (a barrier's id, count, quorum or predicate, an address offset).

use super::ast::{Addr, BarOp, Barrier, Instr, Operand, Prop, Proxy, Reg, Term, Test};

/// Whether a thread with this body loops: a branch goes back to a label at or before it.
pub fn loops(body: &[Instr]) -> bool {
    let label_at = |target: &super::ast::Label| {
        body.iter()
            .position(|i| matches!(i, Instr::Label(l) if l == target))
    };
    body.iter().enumerate().any(|(pc, i)| {
        matches!(i, Instr::Branch { target, .. } if label_at(target).is_some_and(|at| at <= pc))
    })
}

impl Instr {
    /// The register the instruction writes, if any.
    pub fn written(&self) -> Option<&Reg> {
        match self {
            Instr::Load { dst, .. }
            | Instr::Atom { dst, .. }
            | Instr::Mov { dst, .. }
            | Instr::Alu { dst, .. } => Some(dst),
            Instr::Barrier(Barrier::Cta {
                op: BarOp::Red { dst, .. },
                ..
            }) => Some(dst),
            _ => None,
        }
    }

    /// The operands the instruction reads, in the order written (an address offset is a
    /// register operand of its own, see [`Instr::read`]).
    pub fn operands(&self) -> Vec<&Operand> {
        match self {
            Instr::Store { src, .. } | Instr::Red { src, .. } | Instr::Mov { src, .. } => {
                vec![src]
            }
            Instr::Atom { src, src2, .. } => std::iter::once(src).chain(src2).collect(),
            Instr::Alu { a, b, .. } => vec![a, b],
            Instr::Branch { cond: Some(c), .. } => vec![&c.a, &c.b],
            Instr::Barrier(Barrier::Cta {
                op,
                id,
                count,
                quorum,
            }) => {
                let pred = match op {
                    BarOp::Red { pred, .. } => Some(pred),
                    _ => None,
                };
                std::iter::once(id)
                    .chain(count)
                    .chain(quorum)
                    .chain(pred)
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// The registers the instruction reads: its address offset, then its register operands.
    pub fn read(&self) -> Vec<&Reg> {
        let offset = self.addr().and_then(|a| a.offset.as_ref());
        let regs = self.operands().into_iter().filter_map(|o| match o {
            Operand::Reg(r) => Some(r),
            Operand::Imm(_) => None,
        });
        offset.into_iter().chain(regs).collect()
    }

    /// Every register the instruction names: the one it writes, then those it reads.
    pub fn registers(&self) -> Vec<&Reg> {
        self.written().into_iter().chain(self.read()).collect()
    }

    /// The address of a memory access (`ld`, `st`, `atom`, `red` through any proxy).
    pub fn addr(&self) -> Option<&Addr> {
        match self {
            Instr::Load { addr, .. }
            | Instr::Store { addr, .. }
            | Instr::Atom { addr, .. }
            | Instr::Red { addr, .. } => Some(addr),
            _ => None,
        }
    }

    /// The address of a memory access, to rewrite it.
    pub fn addr_mut(&mut self) -> Option<&mut Addr> {
        match self {
            Instr::Load { addr, .. }
            | Instr::Store { addr, .. }
            | Instr::Atom { addr, .. }
            | Instr::Red { addr, .. } => Some(addr),
            _ => None,
        }
    }

    /// The proxy a memory access goes through (`atom` and `red` are always generic).
    pub fn proxy(&self) -> Option<Proxy> {
        match self {
            Instr::Load { proxy, .. } | Instr::Store { proxy, .. } => Some(*proxy),
            Instr::Atom { .. } | Instr::Red { .. } => Some(Proxy::Generic),
            _ => None,
        }
    }
}

impl Prop {
    /// The terms of the proposition, left to right.
    pub fn terms(&self) -> Vec<&Term> {
        match self {
            Prop::True | Prop::False => Vec::new(),
            Prop::Cmp { lhs, rhs, .. } => vec![lhs, rhs],
            Prop::Not(p) => p.terms(),
            Prop::And(a, b) | Prop::Or(a, b) => {
                let mut t = a.terms();
                t.extend(b.terms());
                t
            }
        }
    }
}

impl Prop {
    /// The terms of the proposition, left to right, to rewrite them.
    pub fn terms_mut(&mut self) -> Vec<&mut Term> {
        match self {
            Prop::True | Prop::False => Vec::new(),
            Prop::Cmp { lhs, rhs, .. } => vec![lhs, rhs],
            Prop::Not(p) => p.terms_mut(),
            Prop::And(a, b) | Prop::Or(a, b) => {
                let mut t = a.terms_mut();
                t.extend(b.terms_mut());
                t
            }
        }
    }
}

impl Test {
    /// The terms through which the final state is observed: the condition's, then those of the
    /// `locations [..]` clause.
    pub fn observed_terms(&self) -> Vec<&Term> {
        let mut t = self.condition.prop.terms();
        t.extend(&self.extra_observed);
        t
    }

    /// [`Test::observed_terms`], to rewrite them.
    pub fn observed_terms_mut(&mut self) -> Vec<&mut Term> {
        let mut t = self.condition.prop.terms_mut();
        t.extend(&mut self.extra_observed);
        t
    }

    /// Every register thread `thread` names, in its body, its initial values, the condition and
    /// the `locations` clause, sorted by name and without repeats.
    pub fn thread_registers(&self, thread: usize) -> Vec<Reg> {
        let body = self.threads[thread].body.iter().flat_map(Instr::registers);
        let observed = self.observed_terms().into_iter().filter_map(|t| match t {
            Term::Reg { thread: u, reg } if *u == thread => Some(reg),
            _ => None,
        });
        let init = self
            .reg_init
            .iter()
            .filter(|ri| ri.thread == thread)
            .map(|ri| &ri.reg);
        let mut regs: Vec<Reg> = body.chain(observed).chain(init).cloned().collect();
        regs.sort();
        regs.dedup();
        regs
    }
}

#[cfg(test)]
mod tests {
    use crate::litmus::parse;
    use std::path::Path;

    #[test]
    fn a_branch_back_is_a_loop_and_one_forward_is_not() {
        let body = |rows: &str| {
            let src = format!("PTX t\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n{rows}exists (x == 0)\n");
            parse(&src, Path::new("t.litmus")).unwrap().threads[0]
                .body
                .clone()
        };
        let back = body(" L: ;\n ld.weak r0, x ;\n beq r0, 0, L ;\n");
        let forward = body(" beq r0, 0, L ;\n ld.weak r0, x ;\n L: ;\n");
        let to_itself = body(" L: ;\n bra L ;\n");
        assert!(super::loops(&back));
        assert!(!super::loops(&forward));
        assert!(super::loops(&to_itself));
    }

    #[test]
    fn every_operand_is_walked_barriers_included() {
        let src = "PTX t\n{ x=0; P0:r9=1; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x+r1 ;\n \
                   bar.cta.red.popc r2, r3, r4 ;\n bar.cta.sync r5, r6 ;\n \
                   atom.relaxed.gpu.cas r7, x, r8, 2 ;\nexists (P0:r0 == 0 /\\ P0:r10 == 1)\n";
        let t = parse(src, Path::new("t.litmus")).expect("parses");
        let names = |regs: Vec<&crate::litmus::ast::Reg>| {
            regs.iter().map(|r| r.0.clone()).collect::<Vec<_>>()
        };
        let b = &t.threads[0].body;
        assert_eq!(names(b[0].registers()), ["r0", "r1"]);
        assert_eq!(names(b[1].registers()), ["r2", "r3", "r4"]);
        assert_eq!(names(b[2].read()), ["r5", "r6"]);
        assert_eq!(names(b[3].registers()), ["r7", "r8"]);
        assert_eq!(b[3].addr().map(|a| a.loc.as_str()), Some("x"));
        assert!(b[1].addr().is_none());
        let all: Vec<String> = t.thread_registers(0).into_iter().map(|r| r.0).collect();
        assert_eq!(
            all,
            ["r0", "r1", "r10", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9"]
        );
    }
}
