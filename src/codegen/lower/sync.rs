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
                op,
                id,
                count,
                quorum,
            }) => {
                let mut op = cta_barrier(test, layout, analysis, role, (op, id, count))?;
                if let Some(q) = quorum {
                    op = with_quorum(test, layout, analysis, role, op, (id, count, q))?;
                }
                out.push(op)
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

/// A quorum barrier on hardware. Each role of a test CTA is its own warp group (unless warp
/// hints share a warp), whose warp runs 32 instances of the role, one per lane; a warp's
/// arrival counts as 32 threads. So a quorum of `Q` test threads is the thread count
/// `32 * Q` (a multiple of the warp size, as PTX requires): the barrier completes when `Q` of
/// the role warps using it have arrived, and those synchronise. With `R` role warps using it,
/// `R / Q` phases complete per occurrence; `deadlock.rs` refuses a test where that leaves one
/// waiting. The quorum must be known before the launch and shared by every instruction of
/// the barrier, and each role using the barrier must have a warp of its own.
fn with_quorum(
    test: &Test,
    layout: &Layout,
    analysis: &Analysis,
    role: usize,
    op: SyncOp,
    (id, count, quorum): (&Operand, &Option<Operand>, &Operand),
) -> Result<SyncOp, CodegenError> {
    let q = analysis.constant(role, quorum).ok_or_else(|| {
        unsupported(
            format!("a barrier quorum of P{role} that depends on a loaded value"),
            "the hardware thread count is fixed before the launch",
        )
    })?;
    let place = &layout.shape.roles[role];
    let groups = &layout.shape.groups[place.cluster as usize][place.cta as usize];
    let shared = groups[place.group as usize].len() > 1;
    let users = match op {
        SyncOp::CtaSync { count, .. } | SyncOp::CtaArrive { count, .. } => count / WARP,
        _ => 0,
    };
    if shared {
        return Err(unsupported(
            format!("a barrier quorum of P{role}, whose warp it shares with other roles"),
            "the hardware counts a warp's arrival as one, so a quorum of test threads needs \
             one warp per role",
        ));
    }
    let Some(q) = u32::try_from(q).ok().filter(|&q| (1..=users).contains(&q)) else {
        return Err(unsupported(
            format!("the barrier quorum {q} of P{role}"),
            format!(
                "no execution completes: the barrier needs {q} threads, at most {users} of its \
                 CTA arrive"
            ),
        ));
    };
    same_quorum(test, analysis, groups, role, (id, count), q)?;
    Ok(match op {
        SyncOp::CtaSync { index, .. } => SyncOp::CtaSync {
            index,
            count: q * WARP,
        },
        SyncOp::CtaArrive { index, .. } => SyncOp::CtaArrive {
            index,
            count: q * WARP,
        },
        other => other,
    })
}

/// Refuses a quorum `q` that another instruction of the same barrier in the CTA (`groups`)
/// lacks or gives another value: one hardware barrier has one thread count.
fn same_quorum(
    test: &Test,
    analysis: &Analysis,
    groups: &[Vec<usize>],
    role: usize,
    (id, count): (&Operand, &Option<Operand>),
    q: u32,
) -> Result<(), CodegenError> {
    let key_of = |r: usize, id: &Operand, count: &Option<Operand>| {
        BarrierKey::of(analysis, r, id, count).ok()
    };
    let key = key_of(role, id, count);
    let differs = groups.iter().flatten().any(|&r| {
        test.threads[r].body.iter().any(|i| match i {
            Instr::Barrier(Barrier::Cta {
                id,
                count,
                quorum: qr,
                ..
            }) if key_of(r, id, count) == key => {
                qr.as_ref().and_then(|x| analysis.constant(r, x)) != Some(i64::from(q))
            }
            _ => false,
        })
    });
    if !differs {
        return Ok(());
    }
    Err(unsupported(
        format!(
            "barrier {} of P{role} with a quorum some of its instructions lack or differ in",
            key.map_or(0, |k| k.id)
        ),
        "one hardware barrier has one thread count",
    ))
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
