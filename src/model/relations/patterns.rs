//! Release and acquire patterns (PTX ISA §8.8): each pattern as a relation from the operation
//! that starts it to a strong access that ends it, the forms a synchronisation can take.

use super::super::event::Event;
use super::super::relation::{members, Rel};

/// A release pattern, first operation -> a strong write of it: a release write alone or
/// followed in program order by a strong write to the same address, or a release fence
/// followed by any strong write.
pub(super) fn release_patterns(events: &[Event], po: &Rel) -> Rel {
    let mut rp = Rel::new(events.len());
    let strong_write = |e: &Event| e.is_write() && e.strong;
    for (a, ea) in events.iter().enumerate() {
        let release_write = ea.is_write() && ea.release;
        if release_write {
            rp.add(a, a);
        }
        for b in members(po.row(a)) {
            let eb = &events[b];
            let same_address_write = release_write && strong_write(eb) && ea.vaddr == eb.vaddr;
            if same_address_write || (ea.is_release_fence() && strong_write(eb)) {
                rp.add(a, b);
            }
        }
    }
    rp
}

/// An acquire pattern, a strong read of it -> its last operation: an acquire read alone or
/// preceded in program order by a strong read of the same address, or any strong read
/// followed by an acquire fence. The read half of a `red` takes part in none.
pub(super) fn acquire_patterns(events: &[Event], po: &Rel) -> Rel {
    let mut ap = Rel::new(events.len());
    let strong_read = |e: &Event| e.is_read() && e.strong && !e.from_red;
    let acquire_read = |e: &Event| e.is_read() && e.acquire && !e.from_red;
    for (a, ea) in events.iter().enumerate() {
        if acquire_read(ea) {
            ap.add(a, a);
        }
        if !strong_read(ea) {
            continue;
        }
        for b in members(po.row(a)) {
            let eb = &events[b];
            if (acquire_read(eb) && ea.vaddr == eb.vaddr) || eb.is_acquire_fence() {
                ap.add(a, b);
            }
        }
    }
    ap
}
