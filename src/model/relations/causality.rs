//! The relations that follow from a reads-from choice (PTX ISA §8.9): observation,
//! synchronisation, causality order and from-reads.

use super::super::relation::{bit, members, Rel, Set};
use super::Combo;

impl Combo {
    /// Observation order `obs`: W →(ms ∩ rf) R, extended through atomic read-modify-writes
    /// (W →(ms ∩ rf) RMW → … →(ms ∩ rf) R).
    pub fn observation(&self, rf: &Rel) -> Rel {
        let rfms = rf.intersect(&self.ms);
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
        obs
    }

    /// Synchronisation without Fence-SC order: a release pattern whose write precedes in
    /// observation order a read of an acquire pattern, the pattern's first and last operations
    /// morally strong; and barrier synchronisation `bar_sync` (one of [`Combo::bar_syncs`]).
    pub fn synchronizes(&self, obs: &Rel, bar_sync: &Rel) -> Rel {
        let mut sync = self.rp.seq(obs).seq(&self.ap);
        sync.intersect_with(&self.ms);
        sync.union_with(bar_sync);
        sync
    }

    /// Causality order `cause = ppcb ∪ obs;ppcb`, with `ppcb` the proxy-preserved part of base
    /// causality `cb` (closed).
    pub fn cause(&self, obs: &Rel, cb: &Rel) -> Rel {
        let ppcb = self.proxies.preserved(&self.events, cb);
        let mut cause = obs.seq(&ppcb);
        cause.union_with(&ppcb);
        cause
    }

    /// For each event of `fences`, what an order from it and what an order to it add to
    /// causality order, so that an order `f1 -> f2` of `fence.sc` puts an access after one it
    /// reads from or reads before (`rf ∪ fr`, `back`), breaking `causality` in every completion,
    /// exactly when `from[f1] & to[f2] != 0`. `from[f]`: the accesses up to `f` in base
    /// causality `cb` (closed) and the writes they observe; `to[f]`: what the accesses from `f`
    /// on read from or read before. Only asked when every access is generic and each location
    /// has one address (`None` otherwise): then causality order is `cb` between accesses of one
    /// location, after an observation or not, and the order adds the pairs from the accesses up
    /// to `f1` to those from `f2` on.
    pub fn fence_order_reach(
        &self,
        (obs, cb, (rf, fr)): (&Rel, &Rel, (&Rel, &Rel)),
        fences: Set,
    ) -> Option<FenceReach> {
        if !self.proxies.plain {
            return None;
        }
        let n = self.len();
        let accesses = self.proxies.memory & !self.inits();
        let mut reach = FenceReach {
            from: vec![0; n],
            to: vec![0; n],
        };
        // `from` is first the accesses up to each fence, then also the writes they observe.
        for z in members(accesses) {
            for f in members(cb.row(z) & fences) {
                reach.from[f] |= bit(z);
            }
        }
        let mut observers: Vec<Set> = vec![0; n];
        for y in members(self.proxies.memory) {
            for z in members(obs.row(y)) {
                observers[z] |= bit(y);
            }
        }
        for f in members(fences) {
            let before = reach.from[f];
            reach.from[f] = members(before).fold(before, |acc, z| acc | observers[z]);
            reach.to[f] = members(cb.row(f) & self.proxies.memory)
                .fold(0, |acc, x| acc | rf.row(x) | fr.row(x));
        }
        Some(reach)
    }

    /// From-reads `fr = rf⁻¹ ; co`.
    pub fn fr(&self, rf: &Rel, co: &Rel) -> Rel {
        let mut fr = Rel::new(self.len());
        for (w, r) in rf.pairs() {
            fr.set_row(r, fr.row(r) | co.row(w));
        }
        fr
    }

    /// The initial writes.
    fn inits(&self) -> Set {
        (0..self.nlocs).fold(0, |acc, l| acc | bit(l))
    }
}

/// Per `fence.sc`, what an order from it and to it add to causality order
/// ([`Combo::fence_order_reach`]).
pub struct FenceReach {
    /// Per event: the accesses that an order from it puts before others.
    pub from: Vec<Set>,
    /// Per event: what the accesses after an order to it read from or read before.
    pub to: Vec<Set>,
}

impl FenceReach {
    /// Whether the order `f1 -> f2` breaks `causality` in every completion.
    pub fn breaks(&self, f1: usize, f2: usize) -> bool {
        self.from[f1] & self.to[f2] != 0
    }
}
