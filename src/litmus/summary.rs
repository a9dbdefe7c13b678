//! What a test uses, for listing and filtering: its features and the scopes of its operations.

use super::ast::*;

/// The features a test uses, in a fixed order: `fence.sc` (also `membar`), `fence.acq_rel`,
/// `fence.acquire`, `fence.release`, `fence.proxy`, `atom`, `red`, `bar` (CTA barriers),
/// `bar.red`, `bar-quorum` (a CTA barrier with Dat3M's quorum operand), `cluster-barrier`, `proxy` (texture, surface or constant accesses), `alias`,
/// `shared`, `cluster` (threads placed in clusters), `warp` (warp hints), `multi-gpu`, `branch`,
/// `dep` (address offsets), `alu` (register arithmetic and moves), `volatile`, `final-memory`
/// (memory values observed at the end).
pub fn features(test: &Test) -> Vec<&'static str> {
    let instrs = || test.threads.iter().flat_map(|t| &t.body);
    let any = |f: &dyn Fn(&Instr) -> bool| instrs().any(f);
    let mut out = Vec::new();
    let mut add = |name: &'static str, on: bool| {
        if on {
            out.push(name);
        }
    };
    let fence_sem = |s: FenceSem| move |i: &Instr| matches!(i, Instr::Fence(Fence::Memory { sem, .. }) if *sem == s);
    add(
        "fence.sc",
        any(&fence_sem(FenceSem::Sc)) || any(&|i| matches!(i, Instr::Fence(Fence::Membar(_)))),
    );
    add("fence.acq_rel", any(&fence_sem(FenceSem::AcqRel)));
    add("fence.acquire", any(&fence_sem(FenceSem::Acquire)));
    add("fence.release", any(&fence_sem(FenceSem::Release)));
    add(
        "fence.proxy",
        any(&|i| matches!(i, Instr::Fence(Fence::Proxy(_)))),
    );
    add("atom", any(&|i| matches!(i, Instr::Atom { .. })));
    add("red", any(&|i| matches!(i, Instr::Red { .. })));
    add(
        "bar",
        any(&|i| matches!(i, Instr::Barrier(Barrier::Cta { .. }))),
    );
    add(
        "bar.red",
        any(&|i| {
            matches!(
                i,
                Instr::Barrier(Barrier::Cta {
                    op: BarOp::Red { .. },
                    ..
                })
            )
        }),
    );
    add(
        "bar-quorum",
        any(&|i| {
            matches!(
                i,
                Instr::Barrier(Barrier::Cta {
                    quorum: Some(_),
                    ..
                })
            )
        }),
    );
    add(
        "cluster-barrier",
        any(&|i| {
            matches!(
                i,
                Instr::Barrier(Barrier::ClusterArrive { .. } | Barrier::ClusterWait)
            )
        }),
    );
    add(
        "proxy",
        any(&|i| match i {
            Instr::Load { proxy, .. } | Instr::Store { proxy, .. } => *proxy != Proxy::Generic,
            _ => false,
        }),
    );
    add(
        "alias",
        test.locations
            .iter()
            .any(|l| matches!(l.kind, LocationKind::Alias { .. })),
    );
    add(
        "shared",
        test.locations.iter().any(|l| {
            matches!(
                l.kind,
                LocationKind::Memory {
                    space: Space::Shared { .. },
                    ..
                }
            )
        }),
    );
    add(
        "cluster",
        test.threads.iter().any(|t| t.place.cluster.is_some()),
    );
    add("warp", test.threads.iter().any(|t| t.place.warp.is_some()));
    add(
        "multi-gpu",
        test.threads
            .iter()
            .any(|t| t.place.gpu != test.threads[0].place.gpu),
    );
    add("branch", any(&|i| matches!(i, Instr::Branch { .. })));
    add(
        "dep",
        any(&|i| super::parser::addr_of(i).is_some_and(|a| a.offset.is_some())),
    );
    add(
        "alu",
        any(&|i| matches!(i, Instr::Alu { .. } | Instr::Mov { .. })),
    );
    add(
        "volatile",
        any(&|i| match i {
            Instr::Load { sem, .. } => *sem == LoadSem::Volatile,
            Instr::Store { sem, .. } => *sem == StoreSem::Volatile,
            _ => false,
        }),
    );
    add(
        "final-memory",
        test.observed_terms()
            .iter()
            .any(|t| matches!(t, Term::Loc(_))),
    );
    out
}

/// The scopes at which the test's operations synchronise, narrowest first, without repeats.
///
/// A scope written on an instruction counts as written; a strong `atom`/`red`/`ld`/`st` with no
/// scope counts as `.gpu` (the ISA's default), `.volatile` as `.sys`, `membar.cta|gl|sys` as
/// `.cta|.gpu|.sys`, and the cluster barrier as `.cluster`. Weak accesses, proxy fences and CTA
/// barriers have no scope.
pub fn scopes(test: &Test) -> Vec<Scope> {
    let mut out: Vec<Scope> = test
        .threads
        .iter()
        .flat_map(|t| &t.body)
        .filter_map(|i| match i {
            Instr::Load { sem, scope, .. } => Sem::from(*sem).scope(*scope),
            Instr::Store { sem, scope, .. } => Sem::from(*sem).scope(*scope),
            Instr::Atom { sem, scope, .. } | Instr::Red { sem, scope, .. } => {
                Sem::from(*sem).scope(*scope)
            }
            Instr::Fence(Fence::Memory { scope, .. }) => Some(*scope),
            Instr::Fence(Fence::Membar(level)) => Some(level.scope()),
            Instr::Barrier(Barrier::ClusterArrive { .. } | Barrier::ClusterWait) => {
                Some(Scope::Cluster)
            }
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}
