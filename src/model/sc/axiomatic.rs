//! The axiomatic SC check, a second oracle beside the interleaving reference: a candidate is
//! sequentially consistent when some total coherence order per location makes
//! `po ∪ rf ∪ co ∪ fr` acyclic with no write between the halves of an RMW (Shasha–Snir).
//! It enumerates over the same combinations of traces as the PTX search. A CTA barrier
//! orders everything before a synchronising barrier before each barrier waiting for it and
//! what follows, per choice of the barriers a quorum synchronises (the checker's
//! `bar_syncs`); cluster barriers are not handled (a relaxed arrival orders nothing in the
//! model, but its wait still waits for it in an interleaving).

use super::super::relation::{bit, members, Rel};
use super::super::relations::Combo;
use super::super::search::Choices;
use super::super::ModelError;

/// Where the SC check reports.
pub trait ScSink {
    /// Whether nothing more can be learnt from this combination.
    fn settled(&self) -> bool;
    /// Counts one candidate; an error stops the search.
    fn candidate(&mut self) -> Result<(), ModelError>;
    /// A sequentially consistent candidate, its coherence order total.
    fn allow_sc(&mut self, combo: &Combo, co: &Rel);
}

/// Enumerates the sequentially consistent candidates of `combo` and reports them to `out`.
pub fn run<S: ScSink>(combo: &Combo, choices: &Choices, out: &mut S) -> Result<(), ModelError> {
    for bar_sync in &combo.bar_syncs {
        if out.settled() {
            break;
        }
        let order = combo.po.union(&barrier_order(&combo.po, bar_sync));
        let mut rf_of = vec![usize::MAX; combo.len()];
        ScSearch {
            combo,
            ch: choices,
            order: &order,
        }
        .rf(0, &mut rf_of, out)?;
    }
    Ok(())
}

/// The order CTA barriers impose on an interleaving. A barrier event stands for the moment
/// its thread leaves it; the thread arrives right after its program-order predecessors. So
/// every event before a barrier that synchronises comes before each barrier of another thread
/// waiting for it, and before what follows that barrier. Two barriers that wait for each other
/// stay unordered; crossed barriers (`PC-bar-sync-sync-3`) close a cycle through both.
fn barrier_order(po: &Rel, bar_sync: &Rel) -> Rel {
    let n = po.len();
    let mut order = Rel::new(n);
    for a in 0..n {
        let after = members(bar_sync.row(a)).fold(0, |s, b| s | bit(b) | po.row(b));
        if after == 0 {
            continue;
        }
        for x in members(po.inverse_col(a)) {
            order.set_row(x, order.row(x) | after);
        }
    }
    order
}

struct ScSearch<'a> {
    combo: &'a Combo,
    ch: &'a Choices,
    /// Program order with the order barriers impose.
    order: &'a Rel,
}

/// What the coherence enumeration reads: per location its writes, reads-from and `po ∪ rf`.
struct CoCtx<'a> {
    locs: &'a [Vec<usize>],
    rf: &'a Rel,
    porf: &'a Rel,
}

impl ScSearch<'_> {
    /// Chooses the write of read `k` and on, then every total coherence order.
    fn rf<S: ScSink>(
        &self,
        k: usize,
        rf_of: &mut Vec<usize>,
        out: &mut S,
    ) -> Result<(), ModelError> {
        if out.settled() {
            return Ok(());
        }
        if k < self.ch.reads.len() {
            let r = self.ch.reads[k];
            for &w in &self.ch.rf_cands[k] {
                rf_of[r] = w;
                self.rf(k + 1, rf_of, out)?;
            }
            return Ok(());
        }
        let combo = self.combo;
        let rf = self.ch.rf_rel(combo.len(), rf_of, self.ch.reads.len());
        let porf = self.order.union(&rf);
        if porf.find_cycle().is_some() {
            out.candidate()?;
            return Ok(());
        }
        let locs: Vec<Vec<usize>> = (0..combo.nlocs)
            .map(|l| members(combo.writes_of(l) & !bit(l)).collect())
            .collect();
        let ctx = CoCtx {
            locs: &locs,
            rf: &rf,
            porf: &porf,
        };
        let mut co = Rel::new(combo.len());
        self.co(0, &mut vec![], &ctx, &mut co, out)
    }

    /// Builds a total coherence order location by location (initial write first); `order`
    /// holds the writes of location `l` placed so far.
    fn co<S: ScSink>(
        &self,
        l: usize,
        order: &mut Vec<usize>,
        ctx: &CoCtx,
        co: &mut Rel,
        out: &mut S,
    ) -> Result<(), ModelError> {
        if out.settled() {
            return Ok(());
        }
        if l == ctx.locs.len() {
            return self.leaf(ctx, co, out);
        }
        if order.len() == ctx.locs[l].len() {
            let mut prev = l;
            let saved: Vec<(usize, u128)> = std::iter::once(l)
                .chain(order.iter().copied())
                .map(|e| (e, co.row(e)))
                .collect();
            for &w in order.iter() {
                co.add(prev, w);
                prev = w;
            }
            self.co(l + 1, &mut Vec::new(), ctx, co, out)?;
            for (e, row) in saved {
                co.set_row(e, row);
            }
            return Ok(());
        }
        for &w in &ctx.locs[l] {
            if order.contains(&w) {
                continue;
            }
            order.push(w);
            self.co(l, order, ctx, co, out)?;
            order.pop();
        }
        Ok(())
    }

    /// A candidate with a total coherence order: SC unless an RMW is split or
    /// `po ∪ rf ∪ co ∪ fr` (with the barriers' order) has a cycle.
    fn leaf<S: ScSink>(&self, ctx: &CoCtx, co: &Rel, out: &mut S) -> Result<(), ModelError> {
        out.candidate()?;
        let mut closed = co.clone();
        closed.close();
        let fr = self.combo.fr(ctx.rf, &closed);
        for (r, w) in self.combo.rmw.pairs() {
            if fr.row(r) & closed.inverse_col(w) != 0 {
                return Ok(());
            }
        }
        let mut g = ctx.porf.union(&closed);
        g.union_with(&fr);
        if g.find_cycle().is_none() {
            out.allow_sc(self.combo, &closed);
        }
        Ok(())
    }
}
