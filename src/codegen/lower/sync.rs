//! The barrier sequence of a role: the synchronisation operations every path through the role
//! runs exactly once, in order, which idle lanes and timed-out roles replay.

use super::unsupported;
use crate::codegen::barrier_key::BarrierKey;
use crate::codegen::domain::Analysis;
use crate::codegen::layout::{Layout, WARP};
use crate::codegen::ptx::{POp, PReg};
use crate::codegen::CodegenError;
use crate::litmus::ast::{BarOp, Barrier, Instr, Label, Operand, Test};
use serde::{Deserialize, Serialize};

/// A synchronisation instruction of a role, in program order (the sequence every path of the
/// role runs exactly once, which idle lanes and timed-out roles replay).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SyncOp {
    /// `barrier.sync` on the test barrier at `index` of [`crate::codegen::layout::Shape::barriers`].
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

/// The branches of a role never loop over or skip a barrier: every thread must reach each
/// barrier exactly once so that the barrier's other participants are not left waiting.
fn check_paths(body: &[Instr], role: usize) -> Result<(), CodegenError> {
    let label_at = |l: &Label| {
        body.iter()
            .position(|i| matches!(i, Instr::Label(x) if x == l))
    };
    for (b, i) in body.iter().enumerate() {
        if let Instr::Branch { target, .. } = i {
            let l = label_at(target).ok_or_else(|| {
                CodegenError::Invalid(format!("P{role}: branch to missing label {}", target.0))
            })?;
            let (lo, hi) = if l < b { (l, b) } else { (b, l) };
            if body[lo..=hi].iter().any(|i| matches!(i, Instr::Barrier(_))) {
                return Err(unsupported(
                    format!("a barrier of P{role} inside a loop or skipped by a branch"),
                    "every thread must reach each barrier exactly once so that the barrier's \
                     other participants (other instances included) are not left waiting",
                ));
            }
        }
    }
    Ok(())
}

/// The hardware CTA barrier `bar.cta.<op> id, count` of `role`: its index among the test's
/// barriers and its participants, the warps of the role's CTA whose groups have a role that
/// uses the same barrier.
fn cta_barrier(
    test: &Test,
    layout: &Layout,
    analysis: &Analysis,
    role: usize,
    (op, id, count): (&BarOp, &Operand, &Option<Operand>),
) -> Result<SyncOp, CodegenError> {
    let key = BarrierKey::of(analysis, role, id, count)?;
    let index = layout
        .shape
        .barriers
        .iter()
        .position(|b| *b == key)
        .expect("Shape::of collects every barrier") as u32;
    let place = &layout.shape.roles[role];
    let groups = &layout.shape.groups[place.cluster as usize][place.cta as usize];
    let uses = |r: usize| {
        test.threads[r].body.iter().any(|i| match i {
            Instr::Barrier(Barrier::Cta { id, count, .. }) => {
                BarrierKey::of(analysis, r, id, count).ok() == Some(key)
            }
            _ => false,
        })
    };
    let count = groups.iter().filter(|g| g.iter().any(|r| uses(*r))).count() as u32 * WARP;
    match op {
        BarOp::Sync => Ok(SyncOp::CtaSync { index, count }),
        BarOp::Arrive => Ok(SyncOp::CtaArrive { index, count }),
        BarOp::Red { .. } => Err(unsupported(
            format!("bar.cta.red in P{role}"),
            "the reduction would combine the predicates of every instance that shares the \
             hardware barrier",
        )),
    }
}

/// The sequence of synchronisation operations of a thread, with the checks that every path
/// through the thread runs all of them once, in order. CTA barriers run in software are calls
/// of the role, not part of the sequence.
pub(super) fn sequence(
    test: &Test,
    layout: &Layout,
    analysis: &Analysis,
    role: usize,
) -> Result<Vec<SyncOp>, CodegenError> {
    let body = &test.threads[role].body;
    check_paths(body, role)?;
    let soft = !layout.shape.soft_barriers.is_empty();
    let mut out = Vec::new();
    for i in body {
        match i {
            Instr::Barrier(Barrier::Cta { .. }) if soft => {}
            Instr::Barrier(Barrier::Cta {
                quorum: Some(_), ..
            }) => {
                return Err(unsupported(
                    format!("a barrier quorum in P{role}"),
                    "quorums are not mapped to hardware thread counts yet",
                ))
            }
            Instr::Barrier(Barrier::Cta { op, id, count, .. }) => {
                out.push(cta_barrier(test, layout, analysis, role, (op, id, count))?)
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

/// PTX lines (without indentation) of one synchronisation operation; `bar` holds the block's
/// first hardware barrier.
pub fn sync_lines(op: &SyncOp, bar: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let SyncOp::CtaSync { index, .. } | SyncOp::CtaArrive { index, .. } = op {
        out.push(format!("add.u32 %bid, {bar}, {index};"));
    }
    out.push(op.as_pop().to_string());
    out
}
