//! Proxies (PTX ISA §8.9.5, proxy-preserved base causality): the sets that say which accesses
//! share a proxy, an address or a location, and which proxy fences each access may pass.

use super::super::event::{Event, FenceKind, Kind};
use super::super::relation::{bit, members, Rel, Set};
use super::place;
use crate::litmus::ast::{Placement, Proxy};

/// Per event, the events it shares a proxy, address or location with, and the proxy fences it
/// may use.
pub struct ProxySets {
    /// Memory accesses through the generic proxy.
    generic: Set,
    /// Memory accesses.
    pub(super) memory: Set,
    /// `fence.proxy.alias` events.
    alias_fences: Set,
    /// Per memory access: the proxy fences of its proxy in its CTA.
    pf_for: Vec<Set>,
    /// Per memory access: the accesses of its virtual address.
    same_vaddr: Vec<Set>,
    /// Per memory access: the accesses of its physical location.
    same_phys: Vec<Set>,
    /// Per memory access: the accesses of its virtual address through its proxy in its CTA.
    same_proxy_cta: Vec<Set>,
    /// Whether every access is generic and no location has a second address: then base
    /// causality between accesses of one location is all preserved.
    pub(super) plain: bool,
}

impl ProxySets {
    /// The sets of `events`, placed by thread in `places`.
    pub(super) fn new(events: &[Event], places: &[Placement]) -> ProxySets {
        let n = events.len();
        let mut s = ProxySets {
            generic: 0,
            memory: 0,
            alias_fences: 0,
            pf_for: vec![0; n],
            same_vaddr: vec![0; n],
            same_phys: vec![0; n],
            same_proxy_cta: vec![0; n],
            plain: false,
        };
        for (i, e) in events.iter().enumerate() {
            if e.is_memory() {
                s.memory |= bit(i);
                if e.proxy == Proxy::Generic {
                    s.generic |= bit(i);
                }
            }
            if e.kind == Kind::Fence(FenceKind::ProxyAlias) {
                s.alias_fences |= bit(i);
            }
        }
        for (x, ex) in events.iter().enumerate() {
            if ex.is_memory() && !ex.is_init() {
                s.relate(x, events, places);
            }
        }
        s.plain = s.generic == s.memory && s.same_vaddr == s.same_phys;
        s
    }

    /// Fills the rows of memory access `x`.
    fn relate(&mut self, x: usize, events: &[Event], places: &[Placement]) {
        let ex = &events[x];
        let px = place(places, ex);
        for (y, ey) in events.iter().enumerate() {
            if ey.is_init() {
                continue;
            }
            let py = place(places, ey);
            if ex.proxy != Proxy::Generic
                && ey.kind == Kind::Fence(FenceKind::Proxy(ex.proxy))
                && px.same_cta(&py)
            {
                self.pf_for[x] |= bit(y);
            }
            if ey.is_memory() && ey.loc == ex.loc {
                self.same_phys[x] |= bit(y);
                if ey.vaddr == ex.vaddr {
                    self.same_vaddr[x] |= bit(y);
                    if ey.proxy == ex.proxy && px.same_cta(&py) {
                        self.same_proxy_cta[x] |= bit(y);
                    }
                }
            }
        }
    }

    /// Proxy-preserved base causality: the pairs of base causality `cb` between accesses of
    /// one location that the proxies let through — generic accesses of one address, one proxy
    /// of one address in one CTA, or a path through proxy fences (and, across aliases, a
    /// `fence.proxy.alias`).
    pub(super) fn preserved(&self, events: &[Event], cb: &Rel) -> Rel {
        let mut ppcb = Rel::new(events.len());
        for x in members(self.memory) {
            if events[x].is_init() {
                continue;
            }
            let row = cb.row(x) & self.same_phys[x];
            if row != 0 {
                // Generic accesses of one address: the rule's first case keeps the whole row.
                let kept = if self.plain {
                    row
                } else {
                    self.preserved_row(x, row, cb)
                };
                ppcb.set_row(x, kept);
            }
        }
        ppcb
    }

    /// The row of `x` in proxy-preserved base causality, among `row` (its `cb` successors of
    /// the same location), a few word operations per access: the search asks it of every
    /// candidate execution.
    fn preserved_row(&self, x: usize, row: Set, cb: &Rel) -> Set {
        let exit: Set = (self.generic & bit(x)) | (self.pf_for[x] & cb.row(x));
        let mut exit_reach: Set = 0;
        for a in members(exit) {
            exit_reach |= cb.row(a);
        }
        let mut alias_reach: Set = 0;
        for f in members(exit_reach & self.alias_fences) {
            alias_reach |= cb.row(f);
        }
        let both_generic = if self.generic & bit(x) != 0 {
            self.generic
        } else {
            0
        };
        let vaddr = row & self.same_vaddr[x];
        (vaddr & both_generic)
            | (row & self.same_proxy_cta[x])
            | (vaddr & self.entered(row, exit_reach, cb))
            | (row & self.entered(row, alias_reach, cb))
    }

    /// The accesses of `row` whose entry is in `from`: a generic access is its own entry, and
    /// an access through another proxy is entered by a proxy fence of its own that precedes it
    /// in `cb`.
    fn entered(&self, row: Set, from: Set, cb: &Rel) -> Set {
        let mut hit = row & self.generic & from;
        for y in members(row & !self.generic) {
            if members(self.pf_for[y] & from).any(|f| cb.has(f, y)) {
                hit |= bit(y);
            }
        }
        hit
    }
}
