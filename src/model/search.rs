//! The search over the candidate executions of one combination of traces (PTX ISA §8.10):
//! the choice points below, each pruned by the axioms it decides, reporting every candidate to
//! a [`Sink`].
//!
//! 0. Barrier quorums: which barriers of each CTA barrier group with a quorum synchronise
//!    ([`Combo::bar_syncs`], one relation per choice; a single one without quorums).
//! 1. Reads-from, read by read; `no_thin_air` prunes a choice that closes a cycle with
//!    dependencies.
//! 2. Fence-SC order, one morally strong `fence.sc` pair at a time; a pair already ordered by
//!    base causality takes that order, and a partial order that dooms every completion is
//!    reported at once.
//! 3. Coherence: the minimal order causality forces (checked by `coherence`), then one
//!    orientation per still-unordered morally strong pair of writes; each complete candidate
//!    goes to [`axioms::first_violation`].
//!
//! Invariant: coherence is built minimal (initial writes first, edges forced by causality, one
//! orientation per morally strong pair of writes); since no axiom gets easier with more `co`
//! edges and `cause` does not depend on `co`, the allowed outcomes are exactly those of all
//! consistent executions. A location's final value is that of any `co`-maximal write.

use super::axioms::{self, Candidate};
use super::relation::{bit, members, Rel};
use super::relations::Combo;
use super::{Axiom, ModelError};

/// The most `fence.sc` pairs whose order is chosen, one level of the search each. Their
/// orders are not listed blindly (a pair base causality orders takes that order, and a partial
/// order that dooms every completion is cut at once), so the work is bounded by the candidate
/// budget and the caller's timeout; this only bounds the depth of the search.
const MAX_FSC_PAIRS: usize = 1024;

/// Where the search reports candidates.
pub trait Sink {
    /// Whether nothing more can be learnt from this combination (its outcome has a witness).
    fn settled(&self) -> bool;
    /// Counts one candidate; an error stops the search (a budget, a stop request).
    fn candidate(&mut self) -> Result<(), ModelError>;
    /// A consistent candidate, with its from-reads.
    fn allow(&mut self, combo: &Combo, parts: &Parts, fr: &Rel);
    /// An inconsistent candidate, the axiom it violates and the violating cycle.
    fn exclude(&mut self, combo: &Combo, parts: &Parts, axiom: Axiom, cycle: &[usize]);
}

/// The parts of a candidate execution that depend on choices (for reports).
pub struct Parts<'a> {
    /// Reads-from.
    pub rf: &'a Rel,
    /// Coherence, when built.
    pub co: Option<&'a Rel>,
    /// Program order with synchronisation (base causality before closure).
    pub sync: &'a Rel,
    /// Fence-SC order.
    pub fsc: &'a Rel,
    /// Causality order, when computed.
    pub cause: Option<&'a Rel>,
}

/// The choice points of a combination: each read's possible writes, the pairs of `fence.sc`
/// and of writes to order.
pub struct Choices {
    /// The reads, in event order.
    pub reads: Vec<usize>,
    /// Per read, the writes of its location and value.
    pub rf_cands: Vec<Vec<usize>>,
    /// Morally strong pairs of writes to one location (initial writes excluded).
    ms_write_pairs: Vec<(usize, usize)>,
    /// Morally strong pairs of `fence.sc` of different threads.
    fsc_pairs: Vec<(usize, usize)>,
}

impl Choices {
    /// The choice points of `combo`; `None` when some read has no write to read from.
    pub fn new(combo: &Combo) -> Result<Option<Choices>, ModelError> {
        let events = &combo.events;
        let reads: Vec<usize> = (0..combo.len()).filter(|&i| events[i].is_read()).collect();
        let rf_cands: Vec<Vec<usize>> = reads
            .iter()
            .map(|&r| {
                members(combo.writes_of(events[r].loc))
                    .filter(|&w| events[w].value == events[r].value)
                    .collect()
            })
            .collect();
        if rf_cands.iter().any(|c| c.is_empty()) {
            return Ok(None);
        }
        let mut ms_write_pairs = Vec::new();
        for l in 0..combo.nlocs {
            let ws: Vec<usize> = members(combo.writes_of(l))
                .filter(|&w| w >= combo.nlocs)
                .collect();
            for (i, &a) in ws.iter().enumerate() {
                ms_write_pairs.extend(ws[i + 1..].iter().map(|&b| (a, b)));
            }
        }
        ms_write_pairs.retain(|&(a, b)| combo.ms.has(a, b));
        let scf: Vec<usize> = (0..combo.len())
            .filter(|&i| events[i].is_sc_fence())
            .collect();
        let mut fsc_pairs = Vec::new();
        for (i, &a) in scf.iter().enumerate() {
            fsc_pairs.extend(scf[i + 1..].iter().map(|&b| (a, b)));
        }
        fsc_pairs.retain(|&(a, b)| events[a].thread != events[b].thread && combo.ms.has(a, b));
        if fsc_pairs.len() > MAX_FSC_PAIRS {
            return Err(ModelError::TooLarge {
                what: format!("{} pairs of fence.sc to order", fsc_pairs.len()),
            });
        }
        Ok(Some(Choices {
            reads,
            rf_cands,
            ms_write_pairs,
            fsc_pairs,
        }))
    }

    /// Reads-from over the first `upto` reads, read `r` from `rf_of[r]`.
    pub fn rf_rel(&self, n: usize, rf_of: &[usize], upto: usize) -> Rel {
        let mut rf = Rel::new(n);
        for &r in &self.reads[..upto] {
            rf.add(rf_of[r], r);
        }
        rf
    }
}

/// Enumerates every candidate execution of `combo` and reports each to `out`.
pub fn run<S: Sink>(combo: &Combo, choices: &Choices, out: &mut S) -> Result<(), ModelError> {
    let n = combo.len();
    for bar_sync in &combo.bar_syncs {
        if out.settled() {
            break;
        }
        let search = Search {
            combo,
            ch: choices,
            bar_sync,
        };
        let mut rf_of = vec![usize::MAX; n];
        let mut stack: Vec<Rel> = (0..=choices.reads.len()).map(|_| Rel::new(n)).collect();
        stack[0] = combo.dep.closure();
        search.rf_dfs(0, &mut rf_of, &mut stack, out)?;
    }
    Ok(())
}

struct Search<'a> {
    combo: &'a Combo,
    ch: &'a Choices,
    /// The barrier synchronisation of this quorum choice.
    bar_sync: &'a Rel,
}

/// What the Fence-SC choice point carries down.
struct FscCtx<'a> {
    rf: &'a Rel,
    obs: &'a Rel,
    base: &'a Rel,
}

/// What the coherence choice point carries down.
struct CoCtx<'a> {
    rf: &'a Rel,
    cause: &'a Rel,
    base: &'a Rel,
    cb: &'a Rel,
    fsc: &'a Rel,
}

/// Adds `x -> y` to the closed relation `r`, keeping it closed.
fn add_closed(r: &mut Rel, x: usize, y: usize) {
    let add = r.row(y) | bit(y);
    for z in 0..r.len() {
        if z == x || r.has(z, x) {
            r.set_row(z, r.row(z) | add);
        }
    }
}

impl Search<'_> {
    /// Chooses the write of read `k` and on; `stack[k]` is `(rf ∪ dep)+` of the choices so
    /// far, so a choice that closes a cycle (`no_thin_air`) is seen at once.
    fn rf_dfs<S: Sink>(
        &self,
        k: usize,
        rf_of: &mut Vec<usize>,
        stack: &mut Vec<Rel>,
        out: &mut S,
    ) -> Result<(), ModelError> {
        if k == self.ch.reads.len() {
            return self.with_rf(rf_of, out);
        }
        let r = self.ch.reads[k];
        for &w in &self.ch.rf_cands[k] {
            if out.settled() {
                break;
            }
            rf_of[r] = w;
            if w == r || stack[k].has(r, w) {
                out.candidate()?;
                let rf = self.ch.rf_rel(self.combo.len(), rf_of, k + 1);
                let cycle = axioms::no_thin_air(self.combo, &rf).unwrap_or_else(|| vec![w, r]);
                let none = Rel::new(self.combo.len());
                let parts = Parts {
                    rf: &rf,
                    co: None,
                    sync: &self.combo.po,
                    fsc: &none,
                    cause: None,
                };
                out.exclude(self.combo, &parts, Axiom::NoThinAir, &cycle);
                continue;
            }
            let (lo, hi) = stack.split_at_mut(k + 1);
            let next = &mut hi[0];
            next.clone_from(&lo[k]);
            add_closed(next, w, r);
            self.rf_dfs(k + 1, rf_of, stack, out)?;
        }
        rf_of[r] = usize::MAX;
        Ok(())
    }

    /// With reads-from chosen: observation, synchronisation, then the Fence-SC choice point.
    fn with_rf<S: Sink>(&self, rf_of: &[usize], out: &mut S) -> Result<(), ModelError> {
        let n = self.combo.len();
        let rf = self.ch.rf_rel(n, rf_of, self.ch.reads.len());
        let obs = self.combo.observation(&rf);
        let base = self
            .combo
            .po
            .union(&self.combo.synchronizes(&obs, self.bar_sync));
        let cb0 = base.closure();
        let ctx = FscCtx {
            rf: &rf,
            obs: &obs,
            base: &base,
        };
        self.fsc_dfs(0, cb0, Rel::new(n), &ctx, out)
    }

    /// Orders the morally strong `fence.sc` pairs one by one; a pair already ordered by base
    /// causality (with the orders chosen so far) takes that order, since the other one would
    /// violate `fence_sc` at once.
    fn fsc_dfs<S: Sink>(
        &self,
        i: usize,
        ord: Rel,
        fsc: Rel,
        ctx: &FscCtx,
        out: &mut S,
    ) -> Result<(), ModelError> {
        if i == self.ch.fsc_pairs.len() {
            let mut base = ctx.base.clone();
            base.union_with(&fsc);
            return self.with_fsc(ctx.rf, ctx.obs, &base, &fsc, &ord, out);
        }
        let (a, b) = self.ch.fsc_pairs[i];
        let choices: &[(usize, usize)] = if ord.has(a, b) {
            &[(a, b)]
        } else if ord.has(b, a) {
            &[(b, a)]
        } else {
            &[(a, b), (b, a)]
        };
        for &(x, y) in choices {
            if out.settled() {
                break;
            }
            let mut f = fsc.clone();
            f.add(x, y);
            let mut o = ord.clone();
            if !o.has(x, y) {
                add_closed(&mut o, x, y);
            }
            if i + 1 < self.ch.fsc_pairs.len() {
                if let Some((axiom, cycle)) = self.doomed(ctx, &f, &o) {
                    out.candidate()?;
                    let mut base = ctx.base.clone();
                    base.union_with(&f);
                    let parts = Parts {
                        rf: ctx.rf,
                        co: None,
                        sync: &base,
                        fsc: &f,
                        cause: None,
                    };
                    out.exclude(self.combo, &parts, axiom, &cycle);
                    continue;
                }
            }
            self.fsc_dfs(i + 1, o, f, ctx, out)?;
        }
        Ok(())
    }

    /// Whether a partial Fence-SC order `fsc` (closed with base causality into `ord`) already
    /// dooms every completion: all axioms only get harder as base causality grows, so a
    /// violation found with the orders chosen so far (and the minimal coherence they force) is
    /// found again in every completion.
    fn doomed(&self, ctx: &FscCtx, fsc: &Rel, ord: &Rel) -> Option<(Axiom, Vec<usize>)> {
        if let Some(cycle) = axioms::fence_sc_partial(self.combo, ord) {
            return Some((Axiom::FenceSc, cycle));
        }
        let cause = self.combo.cause(ctx.obs, ord);
        if let Some(x) = axioms::causality_order_irreflexive(&cause) {
            return Some((Axiom::Causality, vec![x]));
        }
        let (raw, co) = self.co_min(&cause);
        if let Some(cycle) = axioms::coherence(&raw, &co) {
            return Some((Axiom::Coherence, cycle));
        }
        let mut base = ctx.base.clone();
        base.union_with(fsc);
        let fr = self.combo.fr(ctx.rf, &co);
        let c = Candidate {
            rf: ctx.rf,
            fsc,
            base: &base,
            cb: ord,
            cause: &cause,
            co: &co,
            fr: &fr,
        };
        axioms::first_violation(self.combo, &c)
    }

    /// The minimal coherence order forced by causality, before and after closure: initial
    /// writes first, then what causality orders.
    fn co_min(&self, cause: &Rel) -> (Rel, Rel) {
        let mut co = Rel::new(self.combo.len());
        for l in 0..self.combo.nlocs {
            let ws = self.combo.writes_of(l);
            co.set_row(l, ws & !bit(l));
            for w in members(ws & !bit(l)) {
                co.set_row(w, cause.row(w) & ws);
            }
        }
        let raw = co.clone();
        co.close();
        (raw, co)
    }

    /// With Fence-SC order chosen (`base` includes it, `cb` its closure): `fence_sc`, the
    /// irreflexivity of causality order and `coherence` of the minimal `co`, then the
    /// coherence choice point.
    fn with_fsc<S: Sink>(
        &self,
        rf: &Rel,
        obs: &Rel,
        base: &Rel,
        fsc: &Rel,
        cb: &Rel,
        out: &mut S,
    ) -> Result<(), ModelError> {
        let mut parts = Parts {
            rf,
            co: None,
            sync: base,
            fsc,
            cause: None,
        };
        if let Some(cycle) = axioms::fence_sc(fsc, cb, base) {
            out.candidate()?;
            out.exclude(self.combo, &parts, Axiom::FenceSc, &cycle);
            return Ok(());
        }
        let cause = self.combo.cause(obs, cb);
        parts.cause = Some(&cause);
        if let Some(x) = axioms::causality_order_irreflexive(&cause) {
            out.candidate()?;
            let mut cycle = base.path(x, x).unwrap_or_else(|| vec![x]);
            cycle.pop();
            out.exclude(self.combo, &parts, Axiom::Causality, &cycle);
            return Ok(());
        }
        let (co_raw, co) = self.co_min(&cause);
        if let Some(cycle) = axioms::coherence(&co_raw, &co) {
            out.candidate()?;
            parts.co = Some(&co_raw);
            out.exclude(self.combo, &parts, Axiom::Coherence, &cycle);
            return Ok(());
        }
        let ctx = CoCtx {
            rf,
            cause: &cause,
            base,
            cb,
            fsc,
        };
        self.co_dfs(0, co, &ctx, out)
    }

    /// Orients the morally strong pairs of writes from the `i`-th on that `co` leaves
    /// unordered.
    fn co_dfs<S: Sink>(
        &self,
        i: usize,
        co: Rel,
        ctx: &CoCtx,
        out: &mut S,
    ) -> Result<(), ModelError> {
        let pairs = &self.ch.ms_write_pairs;
        let i = i + pairs[i..]
            .iter()
            .take_while(|&&(a, b)| co.has(a, b) || co.has(b, a))
            .count();
        if i == pairs.len() {
            return self.check_leaf(&co, ctx, out);
        }
        let (a, b) = pairs[i];
        for (x, y) in [(a, b), (b, a)] {
            if out.settled() {
                break;
            }
            let mut c = co.clone();
            add_closed(&mut c, x, y);
            self.co_dfs(i + 1, c, ctx, out)?;
        }
        Ok(())
    }

    /// A complete candidate: allowed, or excluded by the first axiom it violates.
    fn check_leaf<S: Sink>(&self, co: &Rel, ctx: &CoCtx, out: &mut S) -> Result<(), ModelError> {
        out.candidate()?;
        let parts = Parts {
            rf: ctx.rf,
            co: Some(co),
            sync: ctx.base,
            fsc: ctx.fsc,
            cause: Some(ctx.cause),
        };
        let fr = self.combo.fr(ctx.rf, co);
        let c = Candidate {
            rf: ctx.rf,
            fsc: ctx.fsc,
            base: ctx.base,
            cb: ctx.cb,
            cause: ctx.cause,
            co,
            fr: &fr,
        };
        match axioms::first_violation(self.combo, &c) {
            Some((axiom, cycle)) => out.exclude(self.combo, &parts, axiom, &cycle),
            None => out.allow(self.combo, &parts, &fr),
        }
        Ok(())
    }
}
