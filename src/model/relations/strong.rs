//! Moral strength (PTX ISA §8.7): which pairs of operations are strong enough towards each
//! other to order anything.

use super::super::event::Event;
use super::super::relation::{members, Rel};
use super::place;
use crate::litmus::ast::Placement;

/// `morally_strong`: two distinct operations of threads (never an initial write), in the same
/// thread or both strong with each one's scope including the other's thread, through the same
/// proxy, and overlapping completely when both access memory.
pub(super) fn morally_strong(events: &[Event], places: &[Placement]) -> Rel {
    let n = events.len();
    let mut ms = Rel::new(n);
    for a in 0..n {
        for b in 0..n {
            if a == b || events[a].is_init() || events[b].is_init() {
                continue;
            }
            let (ea, eb) = (&events[a], &events[b]);
            let (pa, pb) = (place(places, ea), place(places, eb));
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
    ms
}

/// Program order between morally strong memory accesses (to the same address, as moral
/// strength requires): the `po-loc` of `sc_per_location`.
pub(super) fn po_loc_ms(events: &[Event], po: &Rel, ms: &Rel) -> Rel {
    let mut poloc = Rel::new(events.len());
    for (a, ea) in events.iter().enumerate() {
        for b in members(po.row(a)) {
            if ea.is_memory() && events[b].is_memory() && ms.has(a, b) {
                poloc.add(a, b);
            }
        }
    }
    poloc
}
