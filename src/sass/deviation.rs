//! What kind of change a failed check found, in the vocabulary of a compiler matrix: an access
//! reordered, two merged into one, one dropped, one added, or its strength or scope changed
//! (a fence weakened or missing counts as dropped or weakened). Read from the expected and
//! found accesses of the failing role, not from the check's message.

use super::check::{expect, is_access, Event};
use super::disasm::SassInstr;
use crate::codegen::RoleCode;
use serde::{Deserialize, Serialize};

/// A kind of difference between what a role asked for and its SASS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Deviation {
    /// The test's accesses are all there, in another order.
    Reordered,
    /// Fewer accesses, one of them to the location of its neighbour: two became one.
    Merged,
    /// An access, a fence or the whole function is missing.
    Dropped,
    /// An access the test does not have.
    Added,
    /// The accesses are there in order, one with another strength, scope or operation, or a
    /// fence is narrower than asked.
    StrengthOrScope,
}

impl Deviation {
    /// The word a matrix cell shows.
    pub fn as_str(self) -> &'static str {
        match self {
            Deviation::Reordered => "reordered",
            Deviation::Merged => "merged",
            Deviation::Dropped => "dropped",
            Deviation::Added => "added",
            Deviation::StrengthOrScope => "strength/scope",
        }
    }
}

fn offset_of(ev: &Event) -> Option<u64> {
    match ev {
        Event::Access { offset, .. } => Some(*offset),
        _ => None,
    }
}

/// Classifies a role whose check failed, from its function's instructions (`None`: missing).
pub fn classify(role: &RoleCode, sass: Option<&[SassInstr]>) -> Deviation {
    let Some(sass) = sass else {
        return Deviation::Dropped;
    };
    let main: Vec<&SassInstr> = sass.iter().take_while(|i| i.base() != "RET").collect();
    let found: Vec<&SassInstr> = main.iter().copied().filter(|i| is_access(i)).collect();
    let events: Vec<Event> = role.ops.iter().flat_map(|o| expect(&o.op)).collect();
    let wanted: Vec<&Event> = events.iter().filter(|e| offset_of(e).is_some()).collect();
    if found.len() > wanted.len() {
        return Deviation::Added;
    }
    if found.len() < wanted.len() {
        let neighbours = wanted
            .windows(2)
            .any(|w| offset_of(w[0]) == offset_of(w[1]));
        return if neighbours {
            Deviation::Merged
        } else {
            Deviation::Dropped
        };
    }
    let in_order = wanted.iter().zip(&found).all(|(e, i)| e.matches(i));
    if !in_order {
        let mut a: Vec<u64> = wanted.iter().filter_map(|e| offset_of(e)).collect();
        let mut b: Vec<u64> = found.iter().map(|i| i.offset()).collect();
        let same_places = a.iter().zip(&b).all(|(x, y)| x == y);
        a.sort_unstable();
        b.sort_unstable();
        return if !same_places && a == b {
            Deviation::Reordered
        } else {
            Deviation::StrengthOrScope
        };
    }
    // Every access is right: a fence or barrier event is missing or too narrow.
    let fences_found = main.iter().filter(|i| i.base() == "MEMBAR").count();
    let fences_wanted = events
        .iter()
        .filter(|e| matches!(e, Event::Membar { .. }))
        .count();
    if fences_found >= fences_wanted && fences_wanted > 0 {
        Deviation::StrengthOrScope
    } else {
        Deviation::Dropped
    }
}
