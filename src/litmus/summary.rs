//! What a test uses, for listing and filtering: its features and the scopes of its operations.

use super::ast::*;

/// The features a test uses, in a fixed order: `fence.sc` (also `membar`), `fence.acq_rel`,
/// `fence.acquire`, `fence.release`, `fence.proxy`, `atom`, `red`, `bar` (CTA barriers),
/// `bar.red`, `bar-quorum` (a CTA barrier with Dat3M's quorum operand), `cluster-barrier`,
/// `proxy` (texture, surface or constant accesses), `alias`,
/// `shared`, `cluster` (threads placed in clusters), `warp` (warp hints), `multi-gpu`, `branch`,
/// `dep` (address offsets), `alu` (register arithmetic and moves), `volatile`, `final-memory`
/// (memory values observed at the end).
pub fn features(test: &Test) -> Vec<&'static str> {
    FEATURES
        .iter()
        .filter(|(_, shown)| shown(test))
        .map(|(name, _)| *name)
        .collect()
}

/// Whether a test shows a feature.
type Shows = fn(&Test) -> bool;

/// Each feature with what shows it in a test, in the order [`features`] lists them.
#[rustfmt::skip]
const FEATURES: &[(&str, Shows)] = &[
    ("fence.sc", |t| has(t, |i| {
        matches!(i, Instr::Fence(Fence::Membar(_))) || fence_is(i, FenceSem::Sc)
    })),
    ("fence.acq_rel", |t| has(t, |i| fence_is(i, FenceSem::AcqRel))),
    ("fence.acquire", |t| has(t, |i| fence_is(i, FenceSem::Acquire))),
    ("fence.release", |t| has(t, |i| fence_is(i, FenceSem::Release))),
    ("fence.proxy", |t| has(t, |i| matches!(i, Instr::Fence(Fence::Proxy(_))))),
    ("atom", |t| has(t, |i| matches!(i, Instr::Atom { .. }))),
    ("red", |t| has(t, |i| matches!(i, Instr::Red { .. }))),
    ("bar", |t| has(t, |i| matches!(i, Instr::Barrier(Barrier::Cta { .. })))),
    ("bar.red", |t| has(t, |i| {
        matches!(i, Instr::Barrier(Barrier::Cta { op: BarOp::Red { .. }, .. }))
    })),
    ("bar-quorum", |t| has(t, |i| {
        matches!(i, Instr::Barrier(Barrier::Cta { quorum: Some(_), .. }))
    })),
    ("cluster-barrier", |t| has(t, |i| {
        matches!(i, Instr::Barrier(Barrier::ClusterArrive { .. } | Barrier::ClusterWait))
    })),
    ("proxy", |t| has(t, |i| match i {
        Instr::Load { proxy, .. } | Instr::Store { proxy, .. } => *proxy != Proxy::Generic,
        _ => false,
    })),
    ("alias", |t| t.locations.iter().any(|l| matches!(l.kind, LocationKind::Alias { .. }))),
    ("shared", |t| t.locations.iter().any(|l| {
        matches!(l.kind, LocationKind::Memory { space: Space::Shared { .. }, .. })
    })),
    ("cluster", |t| t.threads.iter().any(|th| th.place.cluster.is_some())),
    ("warp", |t| t.threads.iter().any(|th| th.place.warp.is_some())),
    ("multi-gpu", |t| t.threads.iter().any(|th| th.place.gpu != t.threads[0].place.gpu)),
    ("branch", |t| has(t, |i| matches!(i, Instr::Branch { .. }))),
    ("dep", |t| has(t, |i| super::parser::addr_of(i).is_some_and(|a| a.offset.is_some()))),
    ("alu", |t| has(t, |i| matches!(i, Instr::Alu { .. } | Instr::Mov { .. }))),
    ("volatile", |t| has(t, |i| match i {
        Instr::Load { sem, .. } => *sem == LoadSem::Volatile,
        Instr::Store { sem, .. } => *sem == StoreSem::Volatile,
        _ => false,
    })),
    ("final-memory", |t| t.observed_terms().iter().any(|term| matches!(term, Term::Loc(_)))),
];

/// Whether an instruction of `test` is one `f` picks.
fn has(test: &Test, f: impl Fn(&Instr) -> bool) -> bool {
    test.threads.iter().flat_map(|t| &t.body).any(f)
}

/// Whether `i` is a memory fence of semantics `s`.
fn fence_is(i: &Instr, s: FenceSem) -> bool {
    matches!(i, Instr::Fence(Fence::Memory { sem, .. }) if *sem == s)
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
