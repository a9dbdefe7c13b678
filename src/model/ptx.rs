//! The relations and axioms of the PTX memory model (PTX ISA §8.7–§8.10) over one combination
//! of thread traces: the static relations (`po`, `dep`, `rmw`, morally strong, release and
//! acquire patterns, barrier synchronisation) once, then every reads-from choice, every
//! Fence-SC order and every minimal coherence order, checking the six axioms.
//!
//! Invariant: coherence is built minimal (initial writes first, edges forced by causality, one
//! orientation per morally strong pair of writes); since no axiom gets easier with more `co`
//! edges and `cause` does not depend on `co`, the allowed outcomes are exactly those of all
//! consistent executions. A location's final value is that of any `co`-maximal write.

use super::enumerate::Collector;
use super::event::{BarrierKind, Event, FenceKind, Kind};
use super::lower::{Program, Trace};
use super::relation::{bit, members, Rel, Set, MAX_EVENTS};
use super::{Axiom, ModelError};
use crate::litmus::ast::{BarRedOp, Placement, Proxy, Scope, Value};

/// The most `fence.sc` pairs whose order is enumerated (2^k orders).
const MAX_FSC_PAIRS: usize = 64;

/// One combination of traces (one per thread) as an event graph, with the relations that do
/// not depend on reads-from.
pub struct Combo {
    /// Events: the initial write of memory `i` is event `i`, then each thread's events.
    pub events: Vec<Event>,
    /// Number of memories (initial writes).
    pub nlocs: usize,
    /// Program order (transitive).
    pub po: Rel,
    /// Immediate program order (for drawing).
    pub po_imm: Rel,
    /// Address, data and control dependencies.
    pub dep: Rel,
    /// Read half to write half of each atomic read-modify-write.
    pub rmw: Rel,
    /// Morally strong.
    pub ms: Rel,
    /// First operation of a release pattern -> a strong write of it.
    rp: Rel,
    /// A strong read of an acquire pattern -> its last operation.
    ap: Rel,
    /// Barrier synchronisation.
    pub bar_sync: Rel,
    /// Program order between morally strong accesses to the same address.
    poloc_ms: Rel,
    reads: Vec<usize>,
    rf_cands: Vec<Vec<usize>>,
    writes_of: Vec<Set>,
    ms_write_pairs: Vec<(usize, usize)>,
    fsc_pairs: Vec<(usize, usize)>,
    generic: Set,
    memory: Set,
    alias_fences: Set,
    /// Per memory event: the proxy fences of its proxy in its CTA.
    pf_for: Vec<Set>,
    same_vaddr: Vec<Set>,
    same_phys: Vec<Set>,
    same_proxy_cta: Vec<Set>,
}

fn placement(places: &[Placement], e: &Event) -> Option<Placement> {
    e.thread.map(|t| places[t])
}

impl Combo {
    /// Builds the event graph of one trace per thread; `None` when the traces cannot run
    /// together (a `bar.red` result that the participants' predicates do not give).
    pub fn new(prog: &Program, traces: &[&Trace]) -> Result<Option<Combo>, ModelError> {
        let nlocs = prog.memories.len();
        let mut events: Vec<Event> = prog
            .memories
            .iter()
            .enumerate()
            .map(|(i, m)| Event {
                thread: None,
                instr: 0,
                kind: Kind::Write,
                loc: i,
                vaddr: usize::MAX,
                loc_name: m.name.clone(),
                value: m.init,
                strong: false,
                acquire: false,
                release: false,
                scope: Scope::Sys,
                proxy: Proxy::Generic,
                from_red: false,
                atomic: false,
            })
            .collect();
        let mut offsets = Vec::new();
        for t in traces {
            offsets.push(events.len());
            events.extend(t.events.iter().cloned());
        }
        let n = events.len();
        if n > MAX_EVENTS {
            return Err(ModelError::TooLarge {
                what: format!("{n} events (at most {MAX_EVENTS})"),
            });
        }
        let places: Vec<Placement> = prog.threads.iter().map(|t| t.place).collect();
        let mut po = Rel::new(n);
        let mut po_imm = Rel::new(n);
        let mut dep = Rel::new(n);
        let mut rmw = Rel::new(n);
        for (ti, t) in traces.iter().enumerate() {
            let off = offsets[ti];
            let len = t.events.len();
            for i in 0..len {
                for j in i + 1..len {
                    po.add(off + i, off + j);
                }
                if i + 1 < len {
                    po_imm.add(off + i, off + i + 1);
                }
                for r in members(t.deps[i] as u128) {
                    dep.add(off + r, off + i);
                }
            }
            for &(r, w) in &t.rmw {
                rmw.add(off + r, off + w);
            }
        }
        // bar.red results must be the reduction over the participants of the same instance.
        let key = |e: &Event| match e.kind {
            Kind::Barrier(BarrierKind::Cta {
                id,
                count,
                instance,
                ..
            }) => Some((id, count, instance)),
            _ => None,
        };
        let mut guesses = Vec::new();
        for (ti, t) in traces.iter().enumerate() {
            for g in &t.bar_red {
                guesses.push((ti, offsets[ti] + g.event, *g));
            }
        }
        for &(ti, ev, g) in &guesses {
            let group: Vec<bool> = guesses
                .iter()
                .filter(|(tj, ej, _)| {
                    places[*tj].same_cta(&places[ti]) && key(&events[*ej]) == key(&events[ev])
                })
                .map(|(_, _, h)| h.pred)
                .collect();
            let expect: Value = match g.op {
                BarRedOp::Popc => group.iter().filter(|p| **p).count() as Value,
                BarRedOp::And => group.iter().all(|p| *p) as Value,
                BarRedOp::Or => group.iter().any(|p| *p) as Value,
            };
            if expect != g.result {
                return Ok(None);
            }
        }
        let mut ms = Rel::new(n);
        let mut generic: Set = 0;
        let mut memory: Set = 0;
        let mut alias_fences: Set = 0;
        for (i, e) in events.iter().enumerate() {
            if e.is_memory() {
                memory |= bit(i);
                if e.proxy == Proxy::Generic {
                    generic |= bit(i);
                }
            }
            if e.kind == Kind::Fence(FenceKind::ProxyAlias) {
                alias_fences |= bit(i);
            }
        }
        for a in 0..n {
            for b in 0..n {
                if a == b || events[a].is_init() || events[b].is_init() {
                    continue;
                }
                let (ea, eb) = (&events[a], &events[b]);
                let (pa, pb) = (
                    placement(&places, ea).unwrap(),
                    placement(&places, eb).unwrap(),
                );
                let related = ea.thread == eb.thread
                    || (ea.strong_op()
                        && eb.strong_op()
                        && pa.scope_includes(ea.scope, &pb)
                        && pb.scope_includes(eb.scope, &pa));
                let same_proxy = ea.proxy == eb.proxy;
                let overlap = !(ea.is_memory() && eb.is_memory()) || ea.vaddr == eb.vaddr;
                if related && same_proxy && overlap {
                    ms.add(a, b);
                }
            }
        }
        let mut rp = Rel::new(n);
        let mut ap = Rel::new(n);
        let mut poloc_ms = Rel::new(n);
        let strong_write = |e: &Event| e.is_write() && e.strong;
        let strong_read = |e: &Event| e.is_read() && e.strong && !e.from_red;
        for a in 0..n {
            let ea = &events[a];
            if ea.is_write() && ea.release {
                rp.add(a, a);
            }
            if ea.is_read() && ea.acquire && !ea.from_red {
                ap.add(a, a);
            }
            for b in members(po.row(a)) {
                let eb = &events[b];
                if ea.is_write() && ea.release && strong_write(eb) && ea.vaddr == eb.vaddr {
                    rp.add(a, b);
                }
                if ea.is_release_fence() && strong_write(eb) {
                    rp.add(a, b);
                }
                if strong_read(ea)
                    && eb.is_read()
                    && eb.acquire
                    && !eb.from_red
                    && ea.vaddr == eb.vaddr
                {
                    ap.add(a, b);
                }
                if strong_read(ea) && eb.is_acquire_fence() {
                    ap.add(a, b);
                }
                if ea.is_memory() && eb.is_memory() && ms.has(a, b) {
                    poloc_ms.add(a, b);
                }
            }
        }
        let mut bar_sync = Rel::new(n);
        for a in 0..n {
            for b in 0..n {
                let (ea, eb) = (&events[a], &events[b]);
                if a == b || ea.thread == eb.thread || ea.is_init() || eb.is_init() {
                    continue;
                }
                let (pa, pb) = (
                    placement(&places, ea).unwrap(),
                    placement(&places, eb).unwrap(),
                );
                match (ea.kind, eb.kind) {
                    (
                        Kind::Barrier(BarrierKind::Cta {
                            id: i1,
                            count: c1,
                            instance: k1,
                            ..
                        }),
                        Kind::Barrier(BarrierKind::Cta {
                            waits: true,
                            id: i2,
                            count: c2,
                            instance: k2,
                        }),
                    ) if pa.same_cta(&pb) && i1 == i2 && c1 == c2 && k1 == k2 => bar_sync.add(a, b),
                    (
                        Kind::Barrier(BarrierKind::ClusterArrive {
                            relaxed: false,
                            instance: k1,
                        }),
                        Kind::Barrier(BarrierKind::ClusterWait { instance: k2 }),
                    ) if pa.same_cluster(&pb) && k1 == k2 => bar_sync.add(a, b),
                    _ => {}
                }
            }
        }
        let mut reads = Vec::new();
        let mut writes_of = vec![0u128; nlocs];
        for (i, e) in events.iter().enumerate() {
            if e.is_read() {
                reads.push(i);
            }
            if e.is_write() {
                writes_of[e.loc] |= bit(i);
            }
        }
        let rf_cands: Vec<Vec<usize>> = reads
            .iter()
            .map(|&r| {
                members(writes_of[events[r].loc])
                    .filter(|&w| events[w].value == events[r].value)
                    .collect()
            })
            .collect();
        if rf_cands.iter().any(|c| c.is_empty()) {
            return Ok(None);
        }
        let mut ms_write_pairs = Vec::new();
        for ws_l in &writes_of {
            let ws: Vec<usize> = members(*ws_l).filter(|&w| w >= nlocs).collect();
            for (i, &a) in ws.iter().enumerate() {
                for &b in &ws[i + 1..] {
                    if ms.has(a, b) {
                        ms_write_pairs.push((a, b));
                    }
                }
            }
        }
        let scf: Vec<usize> = (0..n).filter(|&i| events[i].is_sc_fence()).collect();
        let mut fsc_pairs = Vec::new();
        for (i, &a) in scf.iter().enumerate() {
            for &b in &scf[i + 1..] {
                if events[a].thread != events[b].thread && ms.has(a, b) {
                    fsc_pairs.push((a, b));
                }
            }
        }
        if fsc_pairs.len() > MAX_FSC_PAIRS {
            return Err(ModelError::TooLarge {
                what: format!("{} pairs of fence.sc to order", fsc_pairs.len()),
            });
        }
        let mut pf_for = vec![0u128; n];
        let mut same_vaddr = vec![0u128; n];
        let mut same_phys = vec![0u128; n];
        let mut same_proxy_cta = vec![0u128; n];
        for x in 0..n {
            let ex = &events[x];
            if !ex.is_memory() || ex.is_init() {
                continue;
            }
            let px = placement(&places, ex).unwrap();
            for (y, ey) in events.iter().enumerate() {
                if ey.is_init() {
                    continue;
                }
                let py = placement(&places, ey).unwrap();
                if ex.proxy != Proxy::Generic
                    && ey.kind == Kind::Fence(FenceKind::Proxy(ex.proxy))
                    && px.same_cta(&py)
                {
                    pf_for[x] |= bit(y);
                }
                if ey.is_memory() && ey.loc == ex.loc {
                    same_phys[x] |= bit(y);
                    if ey.vaddr == ex.vaddr {
                        same_vaddr[x] |= bit(y);
                        if ey.proxy == ex.proxy && px.same_cta(&py) {
                            same_proxy_cta[x] |= bit(y);
                        }
                    }
                }
            }
        }
        Ok(Some(Combo {
            events,
            nlocs,
            po,
            po_imm,
            dep,
            rmw,
            ms,
            rp,
            ap,
            bar_sync,
            poloc_ms,
            reads,
            rf_cands,
            writes_of,
            ms_write_pairs,
            fsc_pairs,
            generic,
            memory,
            alias_fences,
            pf_for,
            same_vaddr,
            same_phys,
            same_proxy_cta,
        }))
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// The writes to memory `loc`.
    pub fn writes_of(&self, loc: usize) -> Set {
        self.writes_of[loc]
    }

    /// Enumerates every candidate execution of this combination and reports each to `out`.
    pub fn run(&self, out: &mut Collector) -> Result<(), ModelError> {
        let n = self.len();
        let reach = self.dep.closure();
        let mut rf_of = vec![usize::MAX; n];
        let mut stack: Vec<Rel> = (0..=self.reads.len()).map(|_| Rel::new(n)).collect();
        stack[0] = reach;
        self.rf_dfs(0, &mut rf_of, &mut stack, out)
    }

    /// Enumerates the sequentially consistent candidates of this combination (Shasha–Snir:
    /// some total coherence order per location with `po ∪ rf ∪ co ∪ fr` acyclic and no write
    /// between the halves of an RMW) and reports their outcomes. Barriers are not handled.
    pub fn run_sc(&self, out: &mut Collector) -> Result<(), ModelError> {
        let mut rf_of = vec![usize::MAX; self.len()];
        self.sc_rf(0, &mut rf_of, out)
    }

    fn sc_rf(
        &self,
        k: usize,
        rf_of: &mut Vec<usize>,
        out: &mut Collector,
    ) -> Result<(), ModelError> {
        if out.settled() {
            return Ok(());
        }
        if k < self.reads.len() {
            let r = self.reads[k];
            for &w in &self.rf_cands[k] {
                rf_of[r] = w;
                self.sc_rf(k + 1, rf_of, out)?;
            }
            return Ok(());
        }
        let rf = self.rf_rel(rf_of, self.reads.len());
        let porf = self.po.union(&rf);
        if porf.find_cycle().is_some() {
            out.candidate()?;
            return Ok(());
        }
        let locs: Vec<Vec<usize>> = (0..self.nlocs)
            .map(|l| members(self.writes_of[l] & !bit(l)).collect())
            .collect();
        let mut co = Rel::new(self.len());
        self.sc_co(0, &locs, &mut vec![], &rf, &porf, &mut co, out)
    }

    /// Builds a total coherence order location by location (initial write first).
    #[allow(clippy::too_many_arguments)]
    fn sc_co(
        &self,
        l: usize,
        locs: &[Vec<usize>],
        order: &mut Vec<usize>,
        rf: &Rel,
        porf: &Rel,
        co: &mut Rel,
        out: &mut Collector,
    ) -> Result<(), ModelError> {
        if out.settled() {
            return Ok(());
        }
        if l == locs.len() {
            out.candidate()?;
            let mut closed = co.clone();
            closed.close();
            let fr = self.fr_of(rf, &closed);
            for (r, w) in self.rmw.pairs() {
                if fr.row(r) & closed.inverse_col(w) != 0 {
                    return Ok(());
                }
            }
            let mut g = porf.union(&closed);
            g.union_with(&fr);
            if g.find_cycle().is_none() {
                out.allow_sc(self, &closed);
            }
            return Ok(());
        }
        if order.len() == locs[l].len() {
            let mut prev = l;
            let saved: Vec<(usize, Set)> = std::iter::once(l)
                .chain(order.iter().copied())
                .map(|e| (e, co.row(e)))
                .collect();
            for &w in order.iter() {
                co.add(prev, w);
                prev = w;
            }
            let mut rest = Vec::new();
            self.sc_co(l + 1, locs, &mut rest, rf, porf, co, out)?;
            for (e, row) in saved {
                co.set_row(e, row);
            }
            return Ok(());
        }
        for &w in &locs[l] {
            if order.contains(&w) {
                continue;
            }
            order.push(w);
            self.sc_co(l, locs, order, rf, porf, co, out)?;
            order.pop();
        }
        Ok(())
    }

    fn rf_dfs(
        &self,
        k: usize,
        rf_of: &mut Vec<usize>,
        stack: &mut Vec<Rel>,
        out: &mut Collector,
    ) -> Result<(), ModelError> {
        if k == self.reads.len() {
            return self.with_rf(rf_of, out);
        }
        let r = self.reads[k];
        for &w in &self.rf_cands[k] {
            if out.settled() {
                break;
            }
            rf_of[r] = w;
            if w == r || stack[k].has(r, w) {
                out.candidate()?;
                // rf ∪ dep would close a cycle through this read.
                let mut g = self.dep.clone();
                for &rr in &self.reads[..=k] {
                    g.add(rf_of[rr], rr);
                }
                let cycle = g.find_cycle().unwrap_or_else(|| vec![w, r]);
                let rf = self.rf_rel(rf_of, k + 1);
                let none = Rel::new(self.len());
                let parts = Parts {
                    rf: &rf,
                    co: None,
                    sync: &self.po,
                    fsc: &none,
                };
                out.exclude_parts(self, &parts, Axiom::NoThinAir, &cycle);
                continue;
            }
            let (lo, hi) = stack.split_at_mut(k + 1);
            let next = &mut hi[0];
            next.clone_from(&lo[k]);
            let add = next.row(r) | bit(r);
            for x in 0..self.len() {
                if x == w || next.has(x, w) {
                    next.set_row(x, next.row(x) | add);
                }
            }
            self.rf_dfs(k + 1, rf_of, stack, out)?;
        }
        rf_of[r] = usize::MAX;
        Ok(())
    }

    fn rf_rel(&self, rf_of: &[usize], upto: usize) -> Rel {
        let mut rf = Rel::new(self.len());
        for &r in &self.reads[..upto] {
            rf.add(rf_of[r], r);
        }
        rf
    }

    fn with_rf(&self, rf_of: &[usize], out: &mut Collector) -> Result<(), ModelError> {
        let n = self.len();
        let rf = self.rf_rel(rf_of, self.reads.len());
        let rfms = rf.intersect(&self.ms);
        // Observation order: W ->(ms ∩ rf) R, extended through atomic read-modify-writes.
        let mut obs = rfms.clone();
        let step = self.rmw.seq(&rfms);
        loop {
            let next = obs.seq(&step);
            let before = obs.clone();
            obs.union_with(&next);
            if obs == before {
                break;
            }
        }
        let mut sync = self.rp.seq(&obs).seq(&self.ap);
        sync.intersect_with(&self.ms);
        sync.union_with(&self.bar_sync);
        let base = self.po.union(&sync);
        let cb0 = base.closure();
        let fsc = Rel::new(n);
        let ctx = FscCtx {
            rf: &rf,
            obs: &obs,
            base: &base,
        };
        self.fsc_dfs(0, cb0, fsc, &ctx, out)
    }

    /// Orders the morally strong `fence.sc` pairs one by one; a pair already ordered by base
    /// causality (with the orders chosen so far) takes that order, since the other one would
    /// violate `fence_sc` at once.
    fn fsc_dfs(
        &self,
        i: usize,
        ord: Rel,
        fsc: Rel,
        ctx: &FscCtx,
        out: &mut Collector,
    ) -> Result<(), ModelError> {
        if i == self.fsc_pairs.len() {
            let mut base = ctx.base.clone();
            base.union_with(&fsc);
            return self.with_fsc(ctx.rf, ctx.obs, &base, &fsc, &ord, out);
        }
        let (a, b) = self.fsc_pairs[i];
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
                let add = o.row(y) | bit(y);
                for z in 0..self.len() {
                    if z == x || o.has(z, x) {
                        o.set_row(z, o.row(z) | add);
                    }
                }
            }
            if i + 1 < self.fsc_pairs.len() {
                if let Some((axiom, cycle)) = self.doomed(ctx.rf, ctx.obs, &o) {
                    out.candidate()?;
                    let mut base = ctx.base.clone();
                    base.union_with(&f);
                    let parts = Parts {
                        rf: ctx.rf,
                        co: None,
                        sync: &base,
                        fsc: &f,
                    };
                    out.exclude_parts(self, &parts, axiom, &cycle);
                    continue;
                }
            }
            self.fsc_dfs(i + 1, o, f, ctx, out)?;
        }
        Ok(())
    }

    /// Causality order: proxy-preserved base causality, possibly preceded by observation.
    fn cause_of(&self, obs: &Rel, cb: &Rel) -> Rel {
        let n = self.len();
        let cbt = cb.inverse();
        // Proxy-preserved base causality.
        let mut ppcb = Rel::new(n);
        for x in members(self.memory) {
            if self.events[x].is_init() {
                continue;
            }
            let row = cb.row(x) & self.same_phys[x];
            if row == 0 {
                continue;
            }
            let exit: Set = (self.generic & bit(x)) | (self.pf_for[x] & cb.row(x));
            let mut exit_reach: Set = 0;
            for a in members(exit) {
                exit_reach |= cb.row(a);
            }
            let mut alias_reach: Set = 0;
            for f in members(exit_reach & self.alias_fences) {
                alias_reach |= cb.row(f);
            }
            let mut prow: Set = 0;
            for y in members(row) {
                let gen_pair = self.generic & bit(x) != 0 && self.generic & bit(y) != 0;
                let vaddr = self.same_vaddr[x] & bit(y) != 0;
                let entry: Set = (self.generic & bit(y)) | (self.pf_for[y] & cbt.row(y));
                let ok = (vaddr && gen_pair)
                    || self.same_proxy_cta[x] & bit(y) != 0
                    || (vaddr && exit_reach & entry != 0)
                    || alias_reach & entry != 0;
                if ok {
                    prow |= bit(y);
                }
            }
            ppcb.set_row(x, prow);
        }
        let mut cause = obs.seq(&ppcb);
        cause.union_with(&ppcb);
        cause
    }

    /// The minimal coherence order forced by causality, before and after closure.
    fn co_min(&self, cause: &Rel) -> (Rel, Rel) {
        let mut co = Rel::new(self.len());
        for l in 0..self.nlocs {
            let ws = self.writes_of[l];
            co.set_row(l, ws & !bit(l));
            for w in members(ws & !bit(l)) {
                co.set_row(w, cause.row(w) & ws);
            }
        }
        let raw = co.clone();
        co.close();
        (raw, co)
    }

    /// Whether a partial Fence-SC order already dooms every completion: all axioms only get
    /// harder as base causality grows, so a violation found with the orders chosen so far (and
    /// the minimal coherence they force) is found again in every completion.
    fn doomed(&self, rf: &Rel, obs: &Rel, ord: &Rel) -> Option<(Axiom, Vec<usize>)> {
        if let Some(x) = ord.is_reflexive_somewhere() {
            if self.events[x].is_sc_fence() {
                return Some((Axiom::FenceSc, vec![x]));
            }
        }
        let cause = self.cause_of(obs, ord);
        if let Some(x) = cause.is_reflexive_somewhere() {
            return Some((Axiom::Causality, vec![x]));
        }
        let (raw, co) = self.co_min(&cause);
        if co.is_reflexive_somewhere().is_some() {
            return Some((Axiom::Coherence, raw.find_cycle().unwrap_or_default()));
        }
        self.leaf_violation(rf, &co, &cause)
    }

    fn with_fsc(
        &self,
        rf: &Rel,
        obs: &Rel,
        base: &Rel,
        fsc: &Rel,
        cb: &Rel,
        out: &mut Collector,
    ) -> Result<(), ModelError> {
        // fence_sc: Fence-SC order may not contradict base causality.
        for (a, b) in fsc.pairs() {
            if cb.has(b, a) {
                out.candidate()?;
                let mut cycle = base.path(b, a).unwrap_or_else(|| vec![b, a]);
                cycle.pop();
                let mut c = vec![a];
                c.extend(cycle);
                let parts = Parts {
                    rf,
                    co: None,
                    sync: base,
                    fsc,
                };
                out.exclude_parts(self, &parts, Axiom::FenceSc, &c);
                return Ok(());
            }
        }
        let cause = self.cause_of(obs, cb);
        if let Some(x) = cause.is_reflexive_somewhere() {
            out.candidate()?;
            let mut cycle = base.path(x, x).unwrap_or_else(|| vec![x]);
            cycle.pop();
            let parts = Parts {
                rf,
                co: None,
                sync: base,
                fsc,
            };
            out.exclude_parts(self, &parts, Axiom::Causality, &cycle);
            return Ok(());
        }
        // Minimal coherence: initial writes first, then what causality forces.
        let (co_raw, co) = self.co_min(&cause);
        if co.is_reflexive_somewhere().is_some() {
            out.candidate()?;
            let cycle = co_raw.find_cycle().unwrap_or_default();
            let parts = Parts {
                rf,
                co: Some(&co_raw),
                sync: base,
                fsc,
            };
            out.exclude_parts(self, &parts, Axiom::Coherence, &cycle);
            return Ok(());
        }
        let ctx = Ctx {
            rf,
            cause: &cause,
            base,
            fsc,
        };
        self.co_dfs(0, co, &ctx, out)
    }

    fn co_dfs(&self, i: usize, co: Rel, ctx: &Ctx, out: &mut Collector) -> Result<(), ModelError> {
        let mut i = i;
        while i < self.ms_write_pairs.len() {
            let (a, b) = self.ms_write_pairs[i];
            if !co.has(a, b) && !co.has(b, a) {
                break;
            }
            i += 1;
        }
        if i == self.ms_write_pairs.len() {
            return self.check_leaf(&co, ctx, out);
        }
        let (a, b) = self.ms_write_pairs[i];
        for (x, y) in [(a, b), (b, a)] {
            if out.settled() {
                break;
            }
            let mut c = co.clone();
            let add = c.row(y) | bit(y);
            for z in 0..self.len() {
                if z == x || c.has(z, x) {
                    c.set_row(z, c.row(z) | add);
                }
            }
            self.co_dfs(i + 1, c, ctx, out)?;
        }
        Ok(())
    }

    fn check_leaf(&self, co: &Rel, ctx: &Ctx, out: &mut Collector) -> Result<(), ModelError> {
        out.candidate()?;
        let parts = Parts {
            rf: ctx.rf,
            co: Some(co),
            sync: ctx.base,
            fsc: ctx.fsc,
        };
        match self.leaf_violation(ctx.rf, co, ctx.cause) {
            Some((axiom, cycle)) => out.exclude_parts(self, &parts, axiom, &cycle),
            None => {
                let fr = self.fr_of(ctx.rf, co);
                out.allow(self, &parts, &fr);
            }
        }
        Ok(())
    }

    /// `fr = rf⁻¹ ; co`.
    fn fr_of(&self, rf: &Rel, co: &Rel) -> Rel {
        let mut fr = Rel::new(self.len());
        for (w, r) in rf.pairs() {
            fr.set_row(r, fr.row(r) | co.row(w));
        }
        fr
    }

    /// The first of `atomicity`, `sc_per_location`, `causality` that a candidate with this
    /// coherence order violates, with a cycle.
    fn leaf_violation(&self, rf: &Rel, co: &Rel, cause: &Rel) -> Option<(Axiom, Vec<usize>)> {
        let n = self.len();
        let fr = self.fr_of(rf, co);
        // atomicity: no morally strong write between the halves of an RMW.
        for (r, w) in self.rmw.pairs() {
            for x in members(fr.row(r) & self.ms.row(r)) {
                if co.has(x, w) && self.ms.has(x, w) {
                    return Some((Axiom::Atomicity, vec![r, x, w]));
                }
            }
        }
        // sc_per_location.
        let mut com = rf.union(co);
        com.union_with(&fr);
        com.intersect_with(&self.ms);
        com.union_with(&self.poloc_ms);
        if let Some(cycle) = com.find_cycle() {
            return Some((Axiom::ScPerLocation, cycle));
        }
        // causality: irreflexive((rf ∪ fr) ; cause).
        let rffr = rf.union(&fr);
        for x in 0..n {
            for y in members(rffr.row(x)) {
                if cause.has(y, x) {
                    return Some((Axiom::Causality, vec![x, y]));
                }
            }
        }
        None
    }
}

struct FscCtx<'a> {
    rf: &'a Rel,
    obs: &'a Rel,
    base: &'a Rel,
}

struct Ctx<'a> {
    rf: &'a Rel,
    cause: &'a Rel,
    base: &'a Rel,
    fsc: &'a Rel,
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
}
