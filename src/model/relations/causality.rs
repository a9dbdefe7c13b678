//! The relations that follow from a reads-from choice (PTX ISA §8.9): observation,
//! synchronisation, causality order and from-reads.

use super::super::relation::Rel;
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

    /// From-reads `fr = rf⁻¹ ; co`.
    pub fn fr(&self, rf: &Rel, co: &Rel) -> Rel {
        let mut fr = Rel::new(self.len());
        for (w, r) in rf.pairs() {
            fr.set_row(r, fr.row(r) | co.row(w));
        }
        fr
    }
}
