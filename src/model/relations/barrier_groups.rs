//! CTA barrier groups of one combination of traces, as Dat3M reads `bar.cta.sync I[, A[, Q]]`:
//! barrier events meet per CTA, instance `I`, resource `A` and occurrence. A group without a
//! quorum completes only when every thread of its CTA that has the barrier reaches it, and all
//! of it synchronises; a group with quorum `Q` completes only when at least `Q` of its barriers
//! are reached, and then some `Q` of them synchronise — which ones is a choice of the
//! execution (partial synchronisation). A group that cannot complete hangs: the combination
//! gives no final state.

use super::super::event::{BarrierKind, Event, Kind};
use super::super::lower::Program;
use super::super::ModelError;
use super::place;
use crate::litmus::ast::{Barrier, Instr, Operand, Placement, Value};
use std::fmt;

/// The most synchronising sets one combination's quorums may give.
const MAX_SYNC_SETS: usize = 4096;

/// One CTA barrier group: its events and the largest quorum they name.
pub(super) struct Group {
    /// The barrier events, in event order.
    pub members: Vec<usize>,
    /// The largest quorum of a member, if any member has one.
    pub quorum: Option<Value>,
}

/// A barrier that no execution of a combination passes: a waiting thread needs more
/// participants than arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Hang {
    /// The barrier instance (Dat3M's `I`, PTX's `a`).
    pub id: Value,
    /// The resource (Dat3M's `A`), when given.
    pub resource: Option<Value>,
    /// The threads it needs: its quorum, or every thread of the CTA that has the barrier.
    pub needs: usize,
    /// The threads that arrive in the combination.
    pub arrive: usize,
}

impl fmt::Display for Hang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "barrier {}", self.id)?;
        if let Some(r) = self.resource {
            write!(f, " (resource {r})")?;
        }
        write!(f, " needs {} threads", self.needs)
    }
}

/// What a CTA barrier event is in its group.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Cta {
    id: Value,
    resource: Option<Value>,
    quorum: Option<Value>,
    occurrence: u32,
    waits: bool,
}

/// The CTA barrier operands of event `e`, if it is one.
fn cta(e: &Event) -> Option<Cta> {
    match e.kind {
        Kind::Barrier(BarrierKind::Cta {
            waits,
            id,
            count,
            quorum,
            instance,
        }) => Some(Cta {
            id,
            resource: count,
            quorum,
            occurrence: instance,
            waits,
        }),
        _ => None,
    }
}

/// The CTA barrier groups of `events`.
pub(super) fn groups(events: &[Event], places: &[Placement]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let Some(c) = cta(e) else {
            continue;
        };
        let same = |g: &Group| {
            let m = &events[g.members[0]];
            let d = cta(m).expect("a CTA barrier");
            (c.id, c.resource, c.occurrence) == (d.id, d.resource, d.occurrence)
                && place(places, m).same_cta(&place(places, e))
        };
        match out.iter_mut().find(|g| same(g)) {
            Some(g) => {
                g.members.push(i);
                g.quorum = g.quorum.max(c.quorum);
            }
            None => out.push(Group {
                members: vec![i],
                quorum: c.quorum,
            }),
        }
    }
    out
}

/// The first group of the combination that hangs: one with a waiting member whose quorum is
/// larger than its members, or, without a quorum, that a thread of its CTA having the barrier
/// (immediate instance and resource, in its program, as many times as the occurrence) does
/// not reach.
pub fn hang(prog: &Program, events: &[Event], groups: &[Group]) -> Option<Hang> {
    groups.iter().find_map(|g| group_hang(prog, events, g))
}

/// A waiting member of the first group of the combination that hangs (see [`hang`]).
pub fn waiting(prog: &Program, events: &[Event], groups: &[Group]) -> Option<usize> {
    let g = groups
        .iter()
        .find(|g| group_hang(prog, events, g).is_some())?;
    g.members
        .iter()
        .copied()
        .find(|&m| cta(&events[m]).is_some_and(|c| c.waits))
}

/// How group `g` hangs, if it does.
fn group_hang(prog: &Program, events: &[Event], g: &Group) -> Option<Hang> {
    let first = &events[g.members[0]];
    let Cta {
        id,
        resource,
        occurrence,
        ..
    } = cta(first)?;
    let waits = g
        .members
        .iter()
        .any(|&m| cta(&events[m]).is_some_and(|c| c.waits));
    if !waits {
        return None;
    }
    let arrive = g.members.len();
    let unquorate = g
        .members
        .iter()
        .any(|&m| cta(&events[m]).is_some_and(|c| c.quorum.is_none()));
    let needs = match g.quorum {
        Some(q) if !unquorate => usize::try_from(q).unwrap_or(0),
        _ => {
            let cta_of = first.thread.map(|t| prog.threads[t].place)?;
            let mut threads: Vec<usize> =
                g.members.iter().filter_map(|&m| events[m].thread).collect();
            threads.extend(users(prog, &cta_of, (id, resource), occurrence));
            threads.sort_unstable();
            threads.dedup();
            threads
                .len()
                .max(usize::try_from(g.quorum.unwrap_or(0)).unwrap_or(0))
        }
    };
    (needs > arrive).then_some(Hang {
        id,
        resource,
        needs,
        arrive,
    })
}

/// The threads of the CTA at `cta` whose program has more than `occurrence` CTA barrier
/// instructions without a quorum on immediate instance `id` and resource `resource`: those
/// the `occurrence`-th barrier of that key waits for.
fn users(
    prog: &Program,
    cta: &Placement,
    (id, resource): (Value, Option<Value>),
    occurrence: u32,
) -> Vec<usize> {
    let matches = |i: &Instr| match i {
        Instr::Barrier(Barrier::Cta {
            id: Operand::Imm(i2),
            count,
            quorum: None,
            ..
        }) => {
            *i2 == id
                && match count {
                    None => resource.is_none(),
                    Some(Operand::Imm(c)) => resource == Some(*c),
                    Some(Operand::Reg(_)) => false,
                }
        }
        _ => false,
    };
    prog.threads
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            t.place.same_cta(cta)
                && t.body.iter().filter(|i| matches(i)).count() > occurrence as usize
        })
        .map(|(u, _)| u)
        .collect()
}

/// Every choice of the barrier events that synchronise: per group, all its members without a
/// quorum and enough of the others to make up the quorum (a larger set only adds
/// synchronisation, so it allows no more outcomes and is left out).
pub(super) fn sync_sets(events: &[Event], groups: &[Group]) -> Result<Vec<Vec<usize>>, ModelError> {
    let mut sets: Vec<Vec<usize>> = vec![Vec::new()];
    for g in groups {
        let (must, may): (Vec<usize>, Vec<usize>) = g
            .members
            .iter()
            .partition(|&&m| cta(&events[m]).is_some_and(|c| c.quorum.is_none()));
        let want = match g.quorum {
            None => g.members.len(),
            Some(q) => usize::try_from(q)
                .unwrap_or(0)
                .clamp(must.len(), g.members.len()),
        };
        let picks = subsets(&may, want - must.len());
        if sets.len().saturating_mul(picks.len()) > MAX_SYNC_SETS {
            return Err(ModelError::TooLarge {
                what: format!("more than {MAX_SYNC_SETS} choices of the threads a barrier quorum synchronises"),
            });
        }
        let must = &must;
        sets = sets
            .iter()
            .flat_map(|s| {
                picks.iter().map(move |p| {
                    let mut s2 = s.clone();
                    s2.extend(must);
                    s2.extend(p);
                    s2
                })
            })
            .collect();
    }
    Ok(sets)
}

/// The subsets of `items` of size `k`.
fn subsets(items: &[usize], k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    if items.len() < k {
        return Vec::new();
    }
    let (first, rest) = (items[0], &items[1..]);
    let mut out: Vec<Vec<usize>> = subsets(rest, k - 1)
        .into_iter()
        .map(|mut s| {
            s.insert(0, first);
            s
        })
        .collect();
    out.extend(subsets(rest, k));
    out
}

/// Whether `a` and `b` are in one group.
pub(super) fn same_group(groups: &[Group], a: usize, b: usize) -> bool {
    groups
        .iter()
        .any(|g| g.members.contains(&a) && g.members.contains(&b))
}

#[cfg(test)]
mod tests {
    use super::subsets;

    #[test]
    fn subsets_of_size_k() {
        assert_eq!(
            subsets(&[1, 2, 3], 2),
            vec![vec![1, 2], vec![1, 3], vec![2, 3]]
        );
        assert_eq!(subsets(&[1, 2], 0), vec![Vec::<usize>::new()]);
        assert!(subsets(&[1], 2).is_empty());
    }
}
