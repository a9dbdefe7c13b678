//! The search over the candidate executions of one combination of traces (PTX ISA §8.10):
//! the choice points below, each pruned by the axioms it decides, reporting every candidate to
//! a [`Sink`].
//!
//! 0. Barrier quorums: which barriers of each CTA barrier group with a quorum synchronise
//!    ([`Combo::bar_syncs`], one relation per choice; a single one without quorums).
//! 1. Reads-from, read by read; `no_thin_air` prunes a choice that closes a cycle with
//!    dependencies.
//! 2. Fence-SC order: first the orders every consistent completion must take (a pair whose
//!    one order would put an access after one it reads from or reads before takes the other),
//!    then one morally strong `fence.sc` pair at a time; a pair already ordered by base
//!    causality takes that order, and a partial order that dooms every completion is reported
//!    at once.
//! 3. Coherence: the minimal order causality forces (checked by `coherence`), then one
//!    orientation per still-unordered morally strong pair of writes; each complete candidate
//!    goes to [`axioms::first_violation`].
//! 4. After each reads-from choice, the outcomes no candidate searched gives (a final write
//!    that causality puts before another) are shown by the candidate that puts it last,
//!    which breaks `coherence` ([`Search::exclude_late`]), so that every outcome of a
//!    candidate is listed, allowed or excluded.
//!
//! Invariant: coherence is built minimal (initial writes first, edges forced by causality, one
//! orientation per morally strong pair of writes); since no axiom gets easier with more `co`
//! edges and `cause` does not depend on `co`, the allowed outcomes are exactly those of all
//! consistent executions. A location's final value is that of any `co`-maximal write.

use super::axioms::{self, Candidate};
use super::relation::{bit, members, Rel, Set};
use super::relations::Combo;
use super::{Axiom, ModelError};
use std::cell::RefCell;

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
    /// Whether every outcome of `combo` whose final writes are `co`-maximal (any write but an
    /// initial one, without `co`) is allowed or excluded already, so that a doomed candidate
    /// would show nothing new.
    fn explained(&self, combo: &Combo, co: Option<&Rel>) -> bool;
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
    /// The `fence.sc` of those pairs.
    fsc_fences: Set,
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
        let fsc_fences = fsc_pairs
            .iter()
            .fold(0, |acc, &(a, b)| acc | bit(a) | bit(b));
        Ok(Some(Choices {
            reads,
            rf_cands,
            ms_write_pairs,
            fsc_pairs,
            fsc_fences,
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
    /// The first candidate whose minimal coherence holds, for [`Search::exclude_late`].
    late: RefCell<Option<Late>>,
}

/// A (partial) Fence-SC order whose minimal coherence holds: the orders, base causality with
/// them, causality order and the minimal coherence before and after closure.
struct Late {
    fsc: Rel,
    sync: Rel,
    cause: Rel,
    raw: Rel,
    co: Rel,
}

/// A partial Fence-SC order that dooms every completion: the orders of a candidate that shows
/// it, the axiom it breaks and the cycle.
struct Doomed {
    fsc: Rel,
    axiom: Axiom,
    cycle: Vec<usize>,
    /// The candidate with the minimal coherence, when that holds: the cycle lies in it.
    with_co: Option<Box<Late>>,
}

/// The Fence-SC orders forced before the search, as [`Search::forced`] finds them.
enum Forced {
    /// Every completion is doomed.
    Doomed(Doomed),
    /// The orders forced, their closure with base causality, and the orders not taken.
    Open(Rel, Rel, Vec<(usize, usize)>),
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

    /// With reads-from chosen: observation, synchronisation, the Fence-SC orders forced, then
    /// the Fence-SC choice point.
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
            late: RefCell::new(None),
        };
        if self.ch.fsc_pairs.is_empty() {
            self.fsc_dfs(0, cb0, Rel::new(n), &ctx, out)?;
        } else {
            match self.forced(&ctx, cb0) {
                Forced::Doomed(d) => self.exclude_doomed(&ctx, d, out)?,
                Forced::Open(f, o, not_taken) => {
                    self.fsc_dfs(0, o, f, &ctx, out)?;
                    for &order in &not_taken {
                        if out.settled() {
                            break;
                        }
                        self.show_not_taken(&ctx, order, out)?;
                    }
                }
            }
        }
        self.exclude_late(&ctx, out)?;
        debug_assert!(
            out.settled() || out.explained(self.combo, None),
            "an outcome of a reads-from choice is neither allowed nor excluded"
        );
        Ok(())
    }

    /// Excludes by `coherence` each outcome still unexplained, which the first candidate
    /// whose minimal coherence holds shows: some final write of it is coherence-before
    /// another write there (else a candidate searched would give it), forced so by causality
    /// order; the candidate that puts it last instead has a write before another in
    /// causality order and after it in coherence order. The coherence order shown is that of
    /// its location; any order of the other locations gives the same.
    fn exclude_late<S: Sink>(&self, ctx: &FscCtx, out: &mut S) -> Result<(), ModelError> {
        let Some(late) = ctx.late.take() else {
            return Ok(());
        };
        for l in 0..self.combo.nlocs {
            let ws = self.combo.writes_of(l) & !bit(l);
            for w in members(ws) {
                if out.explained(self.combo, None) {
                    return Ok(());
                }
                // A last write after `w`, reached by edges of causality order.
                let after = late.co.row(w) & ws;
                let Some(m) = members(after).find(|&m| late.co.row(m) & ws == 0) else {
                    continue;
                };
                let Some(cycle) = late.raw.path(w, m) else {
                    continue;
                };
                let co = self.put_last(l, w, &late.co);
                let parts = Parts {
                    rf: ctx.rf,
                    co: Some(&co),
                    sync: &late.sync,
                    fsc: &late.fsc,
                    cause: Some(&late.cause),
                };
                out.candidate()?;
                out.exclude(self.combo, &parts, Axiom::Coherence, &cycle);
            }
        }
        Ok(())
    }

    /// The coherence order `co` of the writes to memory `l` with `w` moved last (the initial
    /// write still first); the other memories' rows are left empty.
    fn put_last(&self, l: usize, w: usize, co: &Rel) -> Rel {
        let ws = self.combo.writes_of(l) & !bit(l);
        let mut last = Rel::new(self.combo.len());
        last.set_row(l, ws);
        for z in members(ws & !bit(w)) {
            last.set_row(z, (co.row(z) & ws) | bit(w));
        }
        last
    }

    /// Searches the candidates with an order `x -> y` that [`Search::forced`] did not take,
    /// all doomed, when some outcome they may give has no explanation yet: the search without the forced
    /// orders would have excluded it there. Its coherence orders are chosen as at a complete
    /// Fence-SC order, so an outcome excluded is shown with its execution whole; what is still
    /// unexplained then is shown by the doomed order with its minimal coherence, whose
    /// maximal writes include the final writes of every completion, so that every outcome the
    /// search without forced orders excludes is excluded here too.
    fn show_not_taken<S: Sink>(
        &self,
        ctx: &FscCtx,
        (x, y): (usize, usize),
        out: &mut S,
    ) -> Result<(), ModelError> {
        let mut fsc = Rel::new(self.combo.len());
        fsc.add(x, y);
        let mut base = ctx.base.clone();
        base.union_with(&fsc);
        let cb = base.closure();
        let (_, co) = self.co_min(&self.combo.cause(ctx.obs, &cb));
        if out.explained(self.combo, Some(&co)) {
            return Ok(());
        }
        self.with_fsc(ctx, &base, &fsc, &cb, out)?;
        if out.explained(self.combo, Some(&co)) {
            return Ok(());
        }
        match self.doomed_by(ctx, &cb, (x, y)) {
            Some(d) => self.exclude_doomed(ctx, d, out),
            None => Ok(()),
        }
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
            return self.with_fsc(ctx, &base, &fsc, &ord, out);
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
                if let Err(d) = self.doomed(ctx, &f, &o) {
                    self.exclude_doomed(ctx, d, out)?;
                    continue;
                }
            }
            self.fsc_dfs(i + 1, o, f, ctx, out)?;
        }
        Ok(())
    }

    /// Reports a partial Fence-SC order that dooms every completion: with its minimal
    /// coherence when that holds (its outcomes those of its coherence-last writes; the others
    /// are left to [`Search::exclude_late`], which may take this candidate), else with every
    /// final value its writes allow.
    fn exclude_doomed<S: Sink>(
        &self,
        ctx: &FscCtx,
        d: Doomed,
        out: &mut S,
    ) -> Result<(), ModelError> {
        out.candidate()?;
        let mut base = ctx.base.clone();
        base.union_with(&d.fsc);
        let parts = Parts {
            rf: ctx.rf,
            co: d.with_co.as_ref().map(|l| &l.co),
            sync: &base,
            fsc: &d.fsc,
            cause: d.with_co.as_ref().map(|l| &l.cause),
        };
        out.exclude(self.combo, &parts, d.axiom, &d.cycle);
        if let Some(l) = d.with_co {
            ctx.late.borrow_mut().get_or_insert(*l);
        }
        Ok(())
    }

    /// The Fence-SC orders that every consistent completion of base causality `cb0` (closed)
    /// takes: a pair whose one order would break `causality` at once (by
    /// [`Combo::fence_order_reach`]) takes the other. Doomed when both orders of a pair break
    /// it, when the orders so taken close a cycle, or when `cb0` alone already breaks an axiom
    /// (with the orders of a candidate that shows it). Exact, since every completion with an
    /// order not taken is doomed; it spares the search the orders of unrelated pairs that it
    /// would otherwise try, and fail, before meeting the few that matter (in IRIW-like tests
    /// each reader's fence must come after the one before it in the cycle).
    fn forced(&self, ctx: &FscCtx, ord: Rel) -> Forced {
        let fsc = Rel::new(self.combo.len());
        let fr = match self.doomed(ctx, &fsc, &ord) {
            Err(d) => return Forced::Doomed(d),
            Ok(fr) => fr,
        };
        let Some(reach) = self
            .combo
            .fence_order_reach((ctx.obs, &ord, (ctx.rf, &fr)), self.ch.fsc_fences)
        else {
            return Forced::Open(fsc, ord, Vec::new());
        };
        let mut forced = Vec::new();
        for &(a, b) in &self.ch.fsc_pairs {
            if ord.has(a, b) || ord.has(b, a) {
                continue;
            }
            match (reach.breaks(a, b), reach.breaks(b, a)) {
                (true, true) => return self.show(ctx, ord, (a, b)),
                (true, false) => forced.push((b, a)),
                (false, true) => forced.push((a, b)),
                (false, false) => {}
            }
        }
        let (mut f, mut o) = (fsc.clone(), ord.clone());
        for &(x, y) in &forced {
            debug_assert!(
                self.doomed_by(ctx, &ord, (y, x)).is_some(),
                "the order {y} -> {x} was taken for one that dooms every completion"
            );
            f.add(x, y);
            if !o.has(x, y) {
                add_closed(&mut o, x, y);
            }
        }
        // The forced orders may close a cycle between them: then the other order of one of
        // them, which breaks causality, is the doomed candidate to show.
        if let Some(&(x, y)) = forced.iter().find(|&&(x, y)| o.has(y, x)) {
            return self.show(ctx, ord, (y, x));
        }
        let not_taken = forced.iter().map(|&(x, y)| (y, x)).collect();
        Forced::Open(f, o, not_taken)
    }

    /// Doomed by the order `x -> y` (see [`Search::doomed_by`]); with nothing forced should
    /// that ever not hold.
    fn show(&self, ctx: &FscCtx, ord: Rel, (x, y): (usize, usize)) -> Forced {
        match self.doomed_by(ctx, &ord, (x, y)) {
            Some(d) => Forced::Doomed(d),
            None => Forced::Open(Rel::new(self.combo.len()), ord, Vec::new()),
        }
    }

    /// The order `x -> y`, which [`Combo::fence_order_reach`] found to break causality, added
    /// to base causality `ord`, as a doomed candidate; `None` should that ever not hold.
    fn doomed_by(&self, ctx: &FscCtx, ord: &Rel, (x, y): (usize, usize)) -> Option<Doomed> {
        let mut fsc = Rel::new(self.combo.len());
        fsc.add(x, y);
        let mut o = ord.clone();
        add_closed(&mut o, x, y);
        let found = self.doomed(ctx, &fsc, &o).err();
        debug_assert!(
            found.is_some(),
            "the order {x} -> {y} breaks causality yet is not doomed"
        );
        found
    }

    /// Whether a partial Fence-SC order `fsc` (closed with base causality into `ord`) already
    /// dooms every completion: all axioms only get harder as base causality grows, so a
    /// violation found with the orders chosen so far (and the minimal coherence they force) is
    /// found again in every completion. When not, its causality order and from-reads.
    fn doomed(&self, ctx: &FscCtx, fsc: &Rel, ord: &Rel) -> Result<Rel, Doomed> {
        let fail = |axiom, cycle, with_co| Doomed {
            fsc: fsc.clone(),
            axiom,
            cycle,
            with_co,
        };
        if let Some(cycle) = axioms::fence_sc_partial(self.combo, ord) {
            return Err(fail(Axiom::FenceSc, cycle, None));
        }
        let cause = self.combo.cause(ctx.obs, ord);
        if let Some(x) = axioms::causality_order_irreflexive(&cause) {
            return Err(fail(Axiom::Causality, vec![x], None));
        }
        let (raw, co) = self.co_min(&cause);
        if let Some(cycle) = axioms::coherence(&raw, &co) {
            return Err(fail(Axiom::Coherence, cycle, None));
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
        let Some((axiom, cycle)) = axioms::first_violation(self.combo, &c) else {
            return Ok(fr);
        };
        let with_co = Box::new(Late {
            fsc: fsc.clone(),
            sync: base,
            cause,
            raw,
            co,
        });
        Err(fail(axiom, cycle, Some(with_co)))
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
        ctx: &FscCtx,
        base: &Rel,
        fsc: &Rel,
        cb: &Rel,
        out: &mut S,
    ) -> Result<(), ModelError> {
        let (rf, obs) = (ctx.rf, ctx.obs);
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
            // No coherence order holds: every final write is shown, the cycle by causality.
            out.candidate()?;
            out.exclude(self.combo, &parts, Axiom::Coherence, &cycle);
            return Ok(());
        }
        if ctx.late.borrow().is_none() {
            *ctx.late.borrow_mut() = Some(Late {
                fsc: fsc.clone(),
                sync: base.clone(),
                cause: cause.clone(),
                raw: co_raw,
                co: co.clone(),
            });
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
