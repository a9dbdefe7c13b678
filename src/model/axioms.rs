//! The six axioms of the PTX memory model (PTX ISA §8.10), one function each, named as in the
//! ISA and NVIDIA's `ptx.als`. Each returns `None` when the candidate satisfies it, else the
//! events of a cycle that violates it, in the order the explanation draws them.
//!
//! [`first_violation`] checks a complete candidate in ISA order. The search decides
//! `coherence`, `fence_sc` and `no_thin_air` (and the first half of `causality`) while it
//! makes its choices, calling the same functions, so a complete candidate already satisfies
//! them; `first_violation` re-checks those only in debug builds.

use super::relation::{cycle_of, members, Rel};
use super::relations::Combo;
use super::Axiom;

/// A candidate execution with every choice made: what the axioms read.
pub struct Candidate<'a> {
    /// Reads-from.
    pub rf: &'a Rel,
    /// Fence-SC order.
    pub fsc: &'a Rel,
    /// Base causality before closure (program order, synchronisation, Fence-SC order).
    pub base: &'a Rel,
    /// Base causality, closed.
    pub cb: &'a Rel,
    /// Causality order.
    pub cause: &'a Rel,
    /// Coherence, closed.
    pub co: &'a Rel,
    /// From-reads.
    pub fr: &'a Rel,
}

/// §8.10.1 Coherence: coherence order is a strict partial order, so its closure `co` is
/// irreflexive. The cycle is one of the edges `co_raw` the closure was built from.
pub fn coherence(co_raw: &Rel, co: &Rel) -> Option<Vec<usize>> {
    co.is_reflexive_somewhere()?;
    Some(co_raw.find_cycle().unwrap_or_default())
}

/// §8.10.2 Fence-SC: Fence-SC order `fsc` does not contradict base causality `cb` (its
/// closure; `base` the edges it was closed from): no morally strong pair of `fence.sc` is
/// ordered one way by `fsc` and the other way by `cb`. Checked over base causality, not the
/// location-restricted causality order, over which it would be vacuous.
pub fn fence_sc(fsc: &Rel, cb: &Rel, base: &Rel) -> Option<Vec<usize>> {
    let (a, b) = fsc.pairs().find(|&(a, b)| cb.has(b, a))?;
    let mut path = base.path(b, a).unwrap_or_else(|| vec![b, a]);
    path.pop();
    let mut cycle = vec![a];
    cycle.extend(path);
    Some(cycle)
}

/// §8.10.2 Fence-SC before every `fence.sc` pair is ordered: a `fence.sc` on a cycle of base
/// causality `ord` with the orders chosen so far, which every completion keeps.
pub fn fence_sc_partial(combo: &Combo, ord: &Rel) -> Option<Vec<usize>> {
    let x = ord.is_reflexive_somewhere()?;
    combo.events[x].is_sc_fence().then(|| vec![x])
}

/// §8.10.3 Atomicity: no write morally strong to both halves of an atomic read-modify-write
/// comes between them, after the read (`fr`) and before the write (`co`).
pub fn atomicity(combo: &Combo, co: &Rel, fr: &Rel) -> Option<Vec<usize>> {
    for (r, w) in combo.rmw.pairs() {
        for x in members(fr.row(r) & combo.ms.row(r)) {
            if co.has(x, w) && combo.ms.has(x, w) {
                return Some(vec![r, x, w]);
            }
        }
    }
    None
}

/// §8.10.4 No Thin Air: `rf ∪ dep` is acyclic, so no value justifies itself.
pub fn no_thin_air(combo: &Combo, rf: &Rel) -> Option<Vec<usize>> {
    cycle_of(rf.len(), |i| combo.dep.row(i) | rf.row(i))
}

/// §8.10.5 Sequential Consistency Per Location: communication between morally strong
/// operations and program order between morally strong accesses of one address,
/// `(ms ∩ (rf ∪ co ∪ fr)) ∪ po-loc`, are acyclic.
pub fn sc_per_location(combo: &Combo, rf: &Rel, co: &Rel, fr: &Rel) -> Option<Vec<usize>> {
    cycle_of(rf.len(), |i| {
        ((rf.row(i) | co.row(i) | fr.row(i)) & combo.ms.row(i)) | combo.po_loc_ms.row(i)
    })
}

/// §8.10.6 Causality, its first half: causality order is irreflexive. Decidable as soon as
/// reads-from and Fence-SC order are chosen; the event returned lies on a cycle.
pub fn causality_order_irreflexive(cause: &Rel) -> Option<usize> {
    cause.is_reflexive_somewhere()
}

/// §8.10.6 Causality: communication does not contradict causality order, `(rf ∪ fr) ; cause`
/// is irreflexive (a read never reads from, or before, a write it causes).
pub fn causality(rf: &Rel, fr: &Rel, cause: &Rel) -> Option<Vec<usize>> {
    for x in 0..rf.len() {
        for y in members(rf.row(x) | fr.row(x)) {
            if cause.has(y, x) {
                return Some(vec![x, y]);
            }
        }
    }
    None
}

/// The first axiom, in ISA order, that a complete candidate violates, with its cycle.
pub fn first_violation(combo: &Combo, c: &Candidate) -> Option<(Axiom, Vec<usize>)> {
    debug_assert!(
        coherence(c.co, c.co).is_none(),
        "the search builds co acyclic"
    );
    debug_assert!(
        fence_sc(c.fsc, c.cb, c.base).is_none(),
        "the search orders fsc"
    );
    if let Some(cycle) = atomicity(combo, c.co, c.fr) {
        return Some((Axiom::Atomicity, cycle));
    }
    debug_assert!(no_thin_air(combo, c.rf).is_none(), "the search prunes rf");
    if let Some(cycle) = sc_per_location(combo, c.rf, c.co, c.fr) {
        return Some((Axiom::ScPerLocation, cycle));
    }
    debug_assert!(causality_order_irreflexive(c.cause).is_none());
    causality(c.rf, c.fr, c.cause).map(|cycle| (Axiom::Causality, cycle))
}
