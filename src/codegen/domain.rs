//! The finite value domain of every observable, over-approximated without the model: a
//! flow-insensitive fixpoint of the values each register and location can ever hold.
//!
//! The runtime normally builds a [`super::Layout`] from the model's domains; this analysis lets
//! `emit` and `sass` work on any test, model or not. It is sound (every value an execution can
//! produce is in the domain) because every instruction's effect is applied to every value its
//! operands can hold, whatever the order.

use super::CodegenError;
use crate::litmus::ast::{
    AluOp, AtomOp, BarOp, BarRedOp, Barrier, Instr, LocationKind, Operand, Test, Value,
};
use crate::outcome::{observables, Observable};
use std::collections::{BTreeMap, BTreeSet};

/// Most values one register or location may take before the analysis gives up.
pub const MAX_VALUES: usize = 64;

type Set = BTreeSet<Value>;

/// Applies an `atom`/`red` operation as PTX does on 32-bit values.
pub fn atom_result(op: AtomOp, old: Value, a: Value, b: Option<Value>) -> Value {
    let (o, x) = (old as u32, a as u32);
    let r = match op {
        AtomOp::Add => o.wrapping_add(x),
        AtomOp::Sub => o.wrapping_sub(x),
        AtomOp::Exch => x,
        AtomOp::Cas => {
            if o == x {
                b.map_or(o, |b| b as u32)
            } else {
                o
            }
        }
        AtomOp::Inc => {
            if o >= x {
                0
            } else {
                o + 1
            }
        }
        AtomOp::Dec => {
            if o == 0 || o > x {
                x
            } else {
                o - 1
            }
        }
        AtomOp::And => o & x,
        AtomOp::Or => o | x,
        AtomOp::Xor => o ^ x,
        AtomOp::Min => o.min(x),
        AtomOp::Max => o.max(x),
    };
    normalise(Value::from(r))
}

/// Register arithmetic on 32-bit values.
pub fn alu_result(op: AluOp, a: Value, b: Value) -> Value {
    let (a, b) = (a as u32, b as u32);
    normalise(Value::from(match op {
        AluOp::Add => a.wrapping_add(b),
        AluOp::Sub => a.wrapping_sub(b),
        AluOp::Mul => a.wrapping_mul(b),
        AluOp::And => a & b,
        AluOp::Or => a | b,
        AluOp::Xor => a ^ b,
    }))
}

/// A 32-bit device value as the test writes it: small negative numbers stay negative.
fn normalise(v: Value) -> Value {
    Value::from(v as u32 as i32)
}

type Regs = BTreeMap<(usize, String), Set>;

/// The fixpoint state: values per register and per memory location.
struct State<'t> {
    test: &'t Test,
    regs: Regs,
    locs: BTreeMap<String, Set>,
    changed: bool,
}

impl State<'_> {
    fn reg_init(&self, t: usize, r: &str) -> Value {
        self.test
            .reg_init
            .iter()
            .find(|i| i.thread == t && i.reg.0 == r)
            .map_or(0, |i| normalise(i.value))
    }

    fn reg(&self, t: usize, r: &str) -> Set {
        self.regs
            .get(&(t, r.to_string()))
            .cloned()
            .unwrap_or_else(|| Set::from([self.reg_init(t, r)]))
    }

    fn operand(&self, t: usize, o: &Operand) -> Set {
        match o {
            Operand::Imm(v) => Set::from([normalise(*v)]),
            Operand::Reg(r) => self.reg(t, &r.0),
        }
    }

    fn loc_name(&self, name: &str) -> Result<String, CodegenError> {
        self.test
            .resolve(name)
            .map(str::to_string)
            .ok_or_else(|| CodegenError::Invalid(format!("location {name} is not declared")))
    }

    fn add_reg(&mut self, t: usize, r: &str, vals: Set) -> Result<(), CodegenError> {
        let init = self.reg_init(t, r);
        let e = self
            .regs
            .entry((t, r.to_string()))
            .or_insert_with(|| Set::from([init]));
        let before = e.len();
        e.extend(vals);
        self.changed |= e.len() != before;
        if e.len() > MAX_VALUES {
            return Err(too_many(format!("register P{t}:{r}")));
        }
        Ok(())
    }

    fn add_loc(&mut self, name: &str, vals: Set) -> Result<(), CodegenError> {
        let e = self.locs.get_mut(name).expect("a resolved memory location");
        let before = e.len();
        e.extend(vals);
        self.changed |= e.len() != before;
        if e.len() > MAX_VALUES {
            return Err(too_many(format!("location {name}")));
        }
        Ok(())
    }

    fn step(&mut self, t: usize, i: &Instr) -> Result<(), CodegenError> {
        match i {
            Instr::Load { dst, addr, .. } => {
                let vals = self.locs[&self.loc_name(&addr.loc)?].clone();
                self.add_reg(t, &dst.0, vals)
            }
            Instr::Store { addr, src, .. } => {
                let vals = self.operand(t, src);
                let name = self.loc_name(&addr.loc)?;
                self.add_loc(&name, vals)
            }
            Instr::Atom {
                op,
                dst,
                addr,
                src,
                src2,
                ..
            } => {
                let name = self.loc_name(&addr.loc)?;
                let old = self.locs[&name].clone();
                let a = self.operand(t, src);
                let b: Vec<Option<Value>> = match src2 {
                    Some(o) => self.operand(t, o).into_iter().map(Some).collect(),
                    None => vec![None],
                };
                let mut new = Set::new();
                for o in &old {
                    for x in &a {
                        for y in &b {
                            new.insert(atom_result(*op, *o, *x, *y));
                        }
                    }
                }
                self.add_reg(t, &dst.0, old)?;
                self.add_loc(&name, new)
            }
            Instr::Red { op, addr, src, .. } => {
                let name = self.loc_name(&addr.loc)?;
                let old = self.locs[&name].clone();
                let a = self.operand(t, src);
                let mut new = Set::new();
                for o in &old {
                    for x in &a {
                        new.insert(atom_result(*op, *o, *x, None));
                    }
                }
                self.add_loc(&name, new)
            }
            Instr::Mov { dst, src } => {
                let vals = self.operand(t, src);
                self.add_reg(t, &dst.0, vals)
            }
            Instr::Alu { op, dst, a, b } => {
                let (a, b) = (self.operand(t, a), self.operand(t, b));
                let mut vals = Set::new();
                for x in &a {
                    for y in &b {
                        vals.insert(alu_result(*op, *x, *y));
                    }
                }
                self.add_reg(t, &dst.0, vals)
            }
            Instr::Barrier(Barrier::Cta {
                op: BarOp::Red { op, dst, .. },
                ..
            }) => {
                let vals: Set = match op {
                    BarRedOp::Popc => (0..=self.test.threads.len() as Value).collect(),
                    BarRedOp::And | BarRedOp::Or => Set::from([0, 1]),
                };
                self.add_reg(t, &dst.0, vals)
            }
            Instr::Fence(_) | Instr::Barrier(_) | Instr::Branch { .. } | Instr::Label(_) => Ok(()),
        }
    }
}

fn too_many(what: String) -> CodegenError {
    CodegenError::Unsupported {
        construct: what,
        reason: format!("more than {MAX_VALUES} possible values"),
    }
}

/// Per observable of `test` (in [`observables`] order), the sorted values it can take.
pub fn static_domains(test: &Test) -> Result<Vec<Vec<Value>>, CodegenError> {
    let mut state = State {
        test,
        regs: Regs::new(),
        locs: BTreeMap::new(),
        changed: true,
    };
    for l in &test.locations {
        if let LocationKind::Memory { init, .. } = l.kind {
            state
                .locs
                .insert(l.name.clone(), Set::from([normalise(init)]));
        }
    }
    while state.changed {
        state.changed = false;
        for t in &test.threads {
            for i in &t.body {
                state.step(t.id, i)?;
            }
        }
    }
    observables(test)
        .iter()
        .map(|o| match o {
            Observable::Reg { thread, reg } => Ok(state.reg(*thread, &reg.0).into_iter().collect()),
            Observable::Loc(name) => {
                Ok(state.locs[&state.loc_name(name)?].iter().copied().collect())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomics_follow_ptx_32_bit_semantics() {
        assert_eq!(atom_result(AtomOp::Inc, 3, 3, None), 0);
        assert_eq!(atom_result(AtomOp::Inc, 2, 3, None), 3);
        assert_eq!(atom_result(AtomOp::Dec, 0, 5, None), 5);
        assert_eq!(atom_result(AtomOp::Cas, 1, 1, Some(7)), 7);
        assert_eq!(atom_result(AtomOp::Cas, 2, 1, Some(7)), 2);
        assert_eq!(atom_result(AtomOp::Sub, 0, 1, None), -1);
        assert_eq!(alu_result(AluOp::Mul, 0x10000, 0x10000), 0);
    }
}
