//! The finite value domain of every observable, over-approximated without the model: a
//! flow-insensitive fixpoint of the values each register and location can ever hold.
//!
//! Every kernel is laid out with these domains ([`super::build`], which the CUDA backend, `emit`
//! and `sass` call), so a kernel depends on the test alone, never on a model verdict;
//! [`super::Layout::new`] takes any other domains a caller has. The analysis is sound (every
//! value an execution can produce is in the domain) because every instruction's effect is
//! applied to every value its operands can hold, whatever the order.

use super::CodegenError;
use crate::litmus::arith::{self, normalise};
use crate::litmus::ast::{
    AtomOp, BarOp, BarRedOp, Barrier, Instr, LocationKind, Operand, Test, Value,
};
use crate::outcome::{observables, Observable};
use std::collections::{BTreeMap, BTreeSet};

/// Most values one register or location may take before the analysis gives up.
pub const MAX_VALUES: usize = 256;

type Set = BTreeSet<Value>;

type Regs = BTreeMap<(usize, String), Set>;

/// Values of a location, each with the set (a bit mask) of read-modify-write instructions
/// outside loops whose chain produced it: an execution runs such an instruction at most once,
/// so a chain never uses it twice. This keeps `atom.add` from counting up without bound.
type Chains = BTreeSet<(Value, u64)>;

/// The fixpoint state: values per register and per memory location.
struct State<'t> {
    test: &'t Test,
    regs: Regs,
    locs: BTreeMap<String, Chains>,
    /// The mask bit of each read-modify-write outside loops, by (thread, index).
    rmw_bits: BTreeMap<(usize, usize), u64>,
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

    fn add_loc(&mut self, name: &str, vals: Chains) -> Result<(), CodegenError> {
        let e = self.locs.get_mut(name).expect("a resolved memory location");
        let before = e.len();
        e.extend(vals);
        self.changed |= e.len() != before;
        if e.len() > MAX_VALUES * 16 {
            return Err(too_many(format!("location {name}")));
        }
        Ok(())
    }

    /// The values a read-modify-write at (t, k) can read, with their chains, skipping chains
    /// that already used it.
    fn rmw_reads(&self, name: &str, t: usize, k: usize) -> (u64, Vec<(Value, u64)>) {
        let bit = self.rmw_bits.get(&(t, k)).copied().unwrap_or(0);
        let old = self.locs[name]
            .iter()
            .filter(|(_, m)| m & bit == 0)
            .copied()
            .collect();
        (bit, old)
    }

    /// Adds the values a read-modify-write at (t, k) of `op` on `loc` writes; returns those it
    /// reads.
    fn rmw(
        &mut self,
        (t, k): (usize, usize),
        op: AtomOp,
        loc: &str,
        src: &Operand,
        src2: Option<&Operand>,
    ) -> Result<Set, CodegenError> {
        let name = self.loc_name(loc)?;
        let (bit, old) = self.rmw_reads(&name, t, k);
        let a = self.operand(t, src);
        let b: Vec<Option<Value>> = match src2 {
            Some(o) => self.operand(t, o).into_iter().map(Some).collect(),
            None => vec![None],
        };
        let mut new = Chains::new();
        for (o, m) in &old {
            for x in &a {
                for y in &b {
                    new.insert((arith::rmw(op, *o, *x, *y).unwrap_or(*o), m | bit));
                }
            }
        }
        self.add_loc(&name, new)?;
        Ok(old.iter().map(|(v, _)| *v).collect())
    }

    fn step(&mut self, t: usize, k: usize, i: &Instr) -> Result<(), CodegenError> {
        match i {
            Instr::Load { dst, addr, .. } => {
                let vals = self.locs[&self.loc_name(&addr.loc)?]
                    .iter()
                    .map(|(v, _)| *v)
                    .collect();
                self.add_reg(t, &dst.0, vals)
            }
            Instr::Store { addr, src, .. } => {
                let vals = self.operand(t, src).into_iter().map(|v| (v, 0)).collect();
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
                let old = self.rmw((t, k), *op, &addr.loc, src, src2.as_ref())?;
                self.add_reg(t, &dst.0, old)
            }
            Instr::Red { op, addr, src, .. } => {
                self.rmw((t, k), *op, &addr.loc, src, None).map(drop)
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
                        vals.insert(arith::alu(*op, *x, *y));
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

/// Whether instruction `k` lies between a label and a later branch back to it.
pub fn in_loop(body: &[Instr], k: usize) -> bool {
    body.iter().enumerate().any(|(b, i)| match i {
        Instr::Branch { target, .. } => body[..b]
            .iter()
            .position(|x| matches!(x, Instr::Label(l) if l == target))
            .is_some_and(|l| l <= k && k <= b),
        _ => false,
    })
}

fn too_many(what: String) -> CodegenError {
    CodegenError::Unsupported {
        construct: what,
        reason: format!("more than {MAX_VALUES} possible values"),
    }
}

/// The values every register and memory location of a test can hold.
pub struct Analysis {
    regs: Regs,
    locs: BTreeMap<String, Chains>,
    reg_init: BTreeMap<(usize, String), Value>,
}

impl Analysis {
    /// Runs the analysis. Each round applies every instruction once to the values found so
    /// far; a loop-free test executes each instruction at most once, so as many rounds as the
    /// test has instructions (plus one) reach every value it can produce. A test with loops is
    /// cut off at the same number of rounds, as the model unrolls loops a bounded number of
    /// times; values beyond land in the unexpected bucket, where they are reported.
    pub fn of(test: &Test) -> Result<Analysis, CodegenError> {
        let mut rmw_bits = BTreeMap::new();
        for t in &test.threads {
            for (k, i) in t.body.iter().enumerate() {
                if matches!(i, Instr::Atom { .. } | Instr::Red { .. })
                    && !in_loop(&t.body, k)
                    && rmw_bits.len() < 64
                {
                    let bit = 1u64 << rmw_bits.len();
                    rmw_bits.insert((t.id, k), bit);
                }
            }
        }
        let mut state = State {
            test,
            regs: Regs::new(),
            locs: BTreeMap::new(),
            rmw_bits,
            changed: true,
        };
        for l in &test.locations {
            if let LocationKind::Memory { init, .. } = l.kind {
                state
                    .locs
                    .insert(l.name.clone(), Chains::from([(normalise(init), 0)]));
            }
        }
        let rounds = 1 + test.threads.iter().map(|t| t.body.len()).sum::<usize>();
        for _ in 0..rounds {
            if !state.changed {
                break;
            }
            state.changed = false;
            for t in &test.threads {
                for (k, i) in t.body.iter().enumerate() {
                    state.step(t.id, k, i)?;
                }
            }
        }
        let reg_init = test
            .reg_init
            .iter()
            .map(|i| ((i.thread, i.reg.0.clone()), normalise(i.value)))
            .collect();
        Ok(Analysis {
            regs: state.regs,
            locs: state.locs,
            reg_init,
        })
    }

    /// The values register `reg` of thread `thread` can hold.
    pub fn reg(&self, thread: usize, reg: &str) -> Vec<Value> {
        match self.regs.get(&(thread, reg.to_string())) {
            Some(s) => s.iter().copied().collect(),
            None => vec![self
                .reg_init
                .get(&(thread, reg.to_string()))
                .copied()
                .unwrap_or(0)],
        }
    }

    /// The value of an operand when it can only be one.
    pub fn constant(&self, thread: usize, o: &Operand) -> Option<Value> {
        match o {
            Operand::Imm(v) => Some(normalise(*v)),
            Operand::Reg(r) => match self.reg(thread, &r.0).as_slice() {
                [v] => Some(*v),
                _ => None,
            },
        }
    }

    /// The values memory location `name` (resolved) can hold.
    pub fn loc(&self, name: &str) -> Vec<Value> {
        let vals: Set = self
            .locs
            .get(name)
            .map(|s| s.iter().map(|(v, _)| *v).collect())
            .unwrap_or_default();
        vals.into_iter().collect()
    }
}

/// Per observable of `test` (in [`observables`] order), the sorted values it can take.
pub fn static_domains(test: &Test) -> Result<Vec<Vec<Value>>, CodegenError> {
    let a = Analysis::of(test)?;
    observables(test)
        .iter()
        .map(|o| match o {
            Observable::Reg { thread, reg } => Ok(a.reg(*thread, &reg.0)),
            Observable::Loc(name) => {
                let target = test.resolve(name).ok_or_else(|| {
                    CodegenError::Invalid(format!("location {name} is not declared"))
                })?;
                Ok(a.loc(target))
            }
        })
        .collect()
}
