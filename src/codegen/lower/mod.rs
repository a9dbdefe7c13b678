//! Lowering of one role (test thread) to a PTX function `litmus_role_<r>`.
//!
//! Each role is a function of its own so that its memory operations can be found again in the
//! SASS, in program order, between the function's entry and its return. The function takes the
//! addresses of the locations it touches (global: 64-bit; shared: 32-bit, already mapped with
//! `mapa` for another CTA's shared memory) and the first hardware barrier of its block, and
//! returns its status (1 done, 2 timed out in a bounded loop) followed by the final values of
//! its observed registers. Nothing else touches memory inside a role function, so its SASS
//! memory operations are exactly the test's.
//!
//! `args` decides the location arguments, `sync` the barrier sequence, `frame` writes the
//! function around the body (signature, declarations, parameters, the timed-out path and the
//! returns) and `emitters` lowers each instruction, one emitter per kind.

mod args;
mod emitters;
mod frame;
mod sync;

pub use args::LocArg;
pub use sync::{sync_lines, SyncOp};

use super::domain::Analysis;
use super::func::Func;
use super::layout::Layout;
use super::ptx::{POp, PReg, Src};
use super::CodegenError;
use crate::litmus::ast::{Barrier, Instr, Operand, Reg, Test};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A test instruction as it must appear in the role's code: its index in the thread's body
/// and the PTX it lowered to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestOp {
    /// Index in the thread's body.
    pub index: usize,
    /// The PTX instruction.
    pub op: POp,
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

/// The instruction between two test operations of a role (see `Ctx::separate`).
const SEPARATOR: &str = "pmevent 15;";

fn unsupported(construct: impl Into<String>, reason: impl Into<String>) -> CodegenError {
    CodegenError::Unsupported {
        construct: construct.into(),
        reason: reason.into(),
    }
}

/// Whether an instruction is a CTA barrier (run in software when the test's plan says so).
fn is_cta_barrier(i: &Instr) -> bool {
    matches!(i, Instr::Barrier(Barrier::Cta { .. }))
}

/// What the emitters of one role share: the test, the role's registers and arguments, the
/// function being written and what it records.
struct Ctx<'a> {
    test: &'a Test,
    layout: &'a Layout,
    role: usize,
    /// The instruction being lowered (its index in the thread's body).
    index: usize,
    /// Register name to its number (`%t<n>`).
    regs: BTreeMap<String, usize>,
    args: Vec<LocArg>,
    next_arg: usize,
    /// Label name to its instruction index (`LITMUS_L<index>`).
    labels: BTreeMap<String, usize>,
    /// The hardware barrier sequence of the role.
    syncs: Vec<SyncOp>,
    /// Whether CTA barriers run in software.
    soft: bool,
    /// Whether the role counts the barriers it passed (for the timed-out path).
    count_syncs: bool,
    f: Func,
    ops: Vec<TestOp>,
    notes: Vec<String>,
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
        self.f.line(s);
    }

    /// Emits `op` as the test operation of the instruction being lowered.
    fn test_op(&mut self, op: POp) {
        self.separate();
        self.line(op.to_string());
        self.ops.push(TestOp {
            index: self.index,
            op,
        });
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

/// Each label of a role's body with its instruction's index, and whether a branch goes back
/// (the body loops).
fn labels_and_loops(body: &[Instr]) -> (BTreeMap<String, usize>, bool) {
    let labels: BTreeMap<String, usize> = body
        .iter()
        .enumerate()
        .filter_map(|(i, x)| match x {
            Instr::Label(l) => Some((l.0.clone(), i)),
            _ => None,
        })
        .collect();
    let loops = body.iter().enumerate().any(|(i, x)| {
        matches!(x, Instr::Branch { target, .. } if labels.get(&target.0).is_some_and(|l| *l < i))
    });
    (labels, loops)
}

/// Lowers role `role` of `test` under `layout`.
pub fn lower_role(
    test: &Test,
    layout: &Layout,
    analysis: &Analysis,
    role: usize,
) -> Result<RoleCode, CodegenError> {
    let body = &test.threads[role].body;
    let syncs = sync::sequence(test, layout, analysis, role)?;
    // Every register is returned, observed or not, so that ptxas cannot drop a load or turn
    // an atom into a red because its result looks dead.
    let returns = test.thread_registers(role);
    let args = args::location_args(test, layout, role)?;
    let (labels, loops) = labels_and_loops(body);
    let soft = !layout.shape.soft_barriers.is_empty();
    // A software barrier can time out, so its role always counts the barriers it passed.
    let count_syncs = (loops && !syncs.is_empty()) || (soft && body.iter().any(is_cta_barrier));
    let mut cx = Ctx {
        test,
        layout,
        role,
        index: 0,
        regs: returns
            .iter()
            .enumerate()
            .map(|(i, r)| (r.0.clone(), i))
            .collect(),
        f: frame::open(test, layout, role, returns.len(), &args),
        args,
        next_arg: 0,
        labels,
        syncs,
        soft,
        count_syncs,
        ops: Vec::new(),
        notes: Vec::new(),
        fresh: 0,
    };
    for ri in test.reg_init.iter().filter(|ri| ri.thread == role) {
        let r = cx.reg(&ri.reg);
        cx.line(format!("mov.u32 {r}, {};", ri.value as u32));
    }
    for (index, i) in body.iter().enumerate() {
        cx.index = index;
        emitters::instr(&mut cx, i)?;
    }
    frame::close(&mut cx, &returns);
    Ok(RoleCode {
        role,
        func: frame::name(role),
        ptx: cx.f.render(),
        args: cx.args,
        returns,
        ops: cx.ops,
        syncs: cx.syncs,
        loops,
        notes: cx.notes,
    })
}
