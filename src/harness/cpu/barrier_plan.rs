//! Where the CPU backend's barriers meet: per thread its CTA barrier instructions with the
//! slots they publish into and, for each `sync`, the instructions of other roles that may take
//! its key; the cluster barriers' arrival and wait slots. Planned once per test from the AST,
//! before registers are numbered (`program.rs` then resolves the operands).

use crate::litmus::ast::{BarOp, BarRedOp, Barrier, Instr, Operand, Reg, Test, Thread, Value};

/// CTA barrier instructions one role may have.
pub const MAX_BARS: usize = 32;

/// A barrier instruction of another role that a `sync` may meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The slot it publishes into.
    pub slot: u32,
    /// Its key (id, count) when that is the same in every execution: a `sync` whose run-time
    /// key differs does not wait for it.
    pub key: Option<(Value, Option<Value>)>,
    /// Whether the model waits for it: an immediate id and count (or none) and no quorum. A
    /// `sync` without a quorum that meets none of a role's instructions of its key, when the
    /// role has more of them than the `sync`'s occurrence, never completes in the model, so
    /// the instance is skipped.
    pub awaited: bool,
}

/// A CTA barrier instruction before registers are numbered: what `program.rs` makes a `Bar` of.
pub(super) struct BarPlan {
    pub(super) id: Operand,
    pub(super) count: Option<Operand>,
    pub(super) quorum: Option<Operand>,
    /// The id's value when it is the same in every execution.
    pub(super) fixed_id: Option<Value>,
    /// The count's value when it is given and the same in every execution.
    pub(super) fixed_count: Option<Value>,
    pub(super) waits: bool,
    pub(super) red: Option<(BarRedOp, Reg, Operand)>,
    pub(super) slot: Option<u32>,
    pub(super) partners: Vec<Vec<Candidate>>,
}

impl BarPlan {
    /// Whether the model counts it among the threads a barrier without a quorum waits for
    /// (`model/relations/barrier_groups.rs`): immediate id and count, no quorum.
    pub(super) fn awaited(&self) -> bool {
        matches!(self.id, Operand::Imm(_))
            && matches!(self.count, None | Some(Operand::Imm(_)))
            && self.quorum.is_none()
    }

    /// The key when it is the same in every execution.
    pub(super) fn fixed_key(&self) -> Option<(Value, Option<Value>)> {
        match (self.fixed_id, &self.count, self.fixed_count) {
            (Some(id), None, _) => Some((id, None)),
            (Some(id), Some(_), Some(c)) => Some((id, Some(c))),
            _ => None,
        }
    }
}

/// An operand's value when it is the same in every execution, else `None`.
fn fixed_value(test: &Test, thread: usize, written: &[&Reg], o: &Operand) -> Option<Value> {
    match o {
        Operand::Imm(v) => Some(*v),
        Operand::Reg(r) if !written.contains(&r) => Some(
            test.reg_init
                .iter()
                .rev()
                .find(|ri| ri.thread == thread && &ri.reg == r)
                .map_or(0, |ri| ri.value),
        ),
        Operand::Reg(_) => None,
    }
}

/// Whether two operand values, each fixed or not (`None`), may be equal.
fn may_equal(a: Option<Value>, b: Option<Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// Per thread, its CTA barrier instructions in program order, with the slots they publish
/// into and, for each `sync`, the instructions of other roles of its CTA that may take its key
/// (`cta_of` numbers CTAs); the number of slots.
pub(super) fn cta_barriers(
    test: &Test,
    cta_of: &[usize],
) -> Result<(Vec<Vec<BarPlan>>, usize), String> {
    let mut plans = Vec::with_capacity(test.threads.len());
    for t in &test.threads {
        plans.push(thread_plan(test, t)?);
    }
    let (groups, needed) = meetings(test, &plans, cta_of)?;
    let slots = number_slots(&mut plans, &needed);
    for (t, per_bar) in groups.into_iter().enumerate() {
        for (i, per_thread) in per_bar.into_iter().enumerate() {
            let candidate = |(u, j): (usize, usize)| {
                let o: &BarPlan = &plans[u][j];
                Candidate {
                    slot: o.slot.expect("a partner has a slot"),
                    key: o.fixed_key(),
                    awaited: o.awaited(),
                }
            };
            let partners = per_thread
                .into_iter()
                .map(|g| g.into_iter().map(candidate).collect())
                .collect();
            plans[t][i].partners = partners;
        }
    }
    Ok((plans, slots as usize))
}

/// Thread `t`'s CTA barrier instructions in program order, their slots and partners not yet
/// known.
fn thread_plan(test: &Test, t: &Thread) -> Result<Vec<BarPlan>, String> {
    let written: Vec<&Reg> = t.body.iter().filter_map(Instr::written).collect();
    let mut plan = Vec::new();
    for i in &t.body {
        let Instr::Barrier(Barrier::Cta {
            op,
            id,
            count,
            quorum,
        }) = i
        else {
            continue;
        };
        let (waits, red) = match op {
            BarOp::Sync => (true, None),
            BarOp::Arrive => (false, None),
            BarOp::Red { op, dst, pred } => (true, Some((*op, dst.clone(), pred.clone()))),
        };
        if plan.len() == MAX_BARS {
            return Err(format!(
                "more than {MAX_BARS} barrier instructions in one thread"
            ));
        }
        let fixed = |o: &Operand| fixed_value(test, t.id, &written, o);
        plan.push(BarPlan {
            id: id.clone(),
            count: count.clone(),
            quorum: quorum.clone(),
            fixed_id: fixed(id),
            fixed_count: count.as_ref().and_then(fixed),
            waits,
            red,
            slot: None,
            partners: Vec::new(),
        });
    }
    Ok(plan)
}

/// Per thread, per barrier, per other thread of its CTA: the (thread, barrier) pairs a waiting
/// barrier may meet; and which barriers some other one may meet (they publish into a slot).
/// The model relates two barrier events of different threads of one CTA with equal id, count
/// and occurrence; occurrences are not compared here: they are known only at run time.
fn meetings(
    test: &Test,
    plans: &[Vec<BarPlan>],
    cta_of: &[usize],
) -> Result<(Meetings, Vec<Vec<bool>>), String> {
    let mut groups = Vec::new();
    let mut needed: Vec<Vec<bool>> = plans.iter().map(|p| vec![false; p.len()]).collect();
    for (t, plan) in plans.iter().enumerate() {
        let mut per_bar = Vec::new();
        for b in plan {
            let mut per_thread = Vec::new();
            for (u, other) in plans.iter().enumerate() {
                if !b.waits || u == t || cta_of[u] != cta_of[t] {
                    continue;
                }
                let may: Vec<(usize, usize)> = other
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| {
                        o.count.is_some() == b.count.is_some()
                            && may_equal(b.fixed_id, o.fixed_id)
                            && may_equal(b.fixed_count, o.fixed_count)
                    })
                    .map(|(j, _)| (u, j))
                    .collect();
                if !may.is_empty() {
                    per_thread.push(may);
                }
            }
            refuse_unreachable_quorum(test, t, b, per_thread.len() + 1)?;
            for &(u, j) in per_thread.iter().flatten() {
                needed[u][j] = true;
            }
            per_bar.push(per_thread);
        }
        groups.push(per_bar);
    }
    Ok((groups, needed))
}

/// Per thread, per barrier, per other thread: the (thread, barrier) pairs it may meet.
type Meetings = Vec<Vec<Vec<Vec<(usize, usize)>>>>;

/// Gives each barrier that another may meet its slot, in thread then program order; the
/// number of slots.
fn number_slots(plans: &mut [Vec<BarPlan>], needed: &[Vec<bool>]) -> u32 {
    let mut slots = 0u32;
    for (t, plan) in plans.iter_mut().enumerate() {
        for (j, b) in plan.iter_mut().enumerate() {
            if needed[t][j] {
                b.slot = Some(slots);
                slots += 1;
            }
        }
    }
    slots
}

/// Refuses a `sync` of thread `t` whose quorum is larger than the threads of its CTA that
/// may reach a barrier of its key (`arrive`, itself included): every execution would wait
/// there for ever (the model's hang), so there is nothing to run.
fn refuse_unreachable_quorum(
    test: &Test,
    t: usize,
    b: &BarPlan,
    arrive: usize,
) -> Result<(), String> {
    let written: Vec<&Reg> = test.threads[t]
        .body
        .iter()
        .filter_map(Instr::written)
        .collect();
    let q = b
        .quorum
        .as_ref()
        .and_then(|q| fixed_value(test, t, &written, q));
    match q {
        Some(q) if b.waits && q > arrive as Value => Err(format!(
            "no execution completes: barrier {} of P{t} needs {q} threads, at most {arrive} arrive",
            b.fixed_id.map_or_else(|| "?".into(), |v| v.to_string())
        )),
        _ => Ok(()),
    }
}

/// Cluster-barrier slots, numbered from `first`: per thread, the slot of each of its arrivals
/// that another thread of its cluster may wait for, and per wait the slots it waits for; the
/// total number of slots (`first` included).
///
/// The model relates a thread's `k`-th non-relaxed arrive to the `k`-th wait of every other
/// thread of its cluster. With no cluster barrier inside a loop (refused), the `k`-th arrival
/// at run time is among the thread's arrive instructions, so it has at most as many arrivals
/// as arrive instructions, and a wait whose partner has fewer never waits for it.
pub(super) fn cluster_barriers(
    test: &Test,
    first: usize,
) -> (Vec<Vec<u32>>, Vec<WaitSlots>, usize) {
    let count = |t: &crate::litmus::ast::Thread, wait: bool| {
        t.body
            .iter()
            .filter(|i| match i {
                Instr::Barrier(Barrier::ClusterWait) => wait,
                Instr::Barrier(Barrier::ClusterArrive { .. }) => !wait,
                _ => false,
            })
            .count()
    };
    let arrives: Vec<usize> = test.threads.iter().map(|t| count(t, false)).collect();
    let waits: Vec<usize> = test.threads.iter().map(|t| count(t, true)).collect();
    let others = |t: usize| {
        test.threads
            .iter()
            .filter(move |u| u.id != t && u.place.same_cluster(&test.threads[t].place))
            .map(|u| u.id)
    };
    let mut next = first as u32;
    let arrive_slots: Vec<Vec<u32>> = test
        .threads
        .iter()
        .map(|t| {
            let waited = others(t.id).map(|u| waits[u]).max().unwrap_or(0);
            (0..arrives[t.id].min(waited))
                .map(|_| {
                    next += 1;
                    next - 1
                })
                .collect()
        })
        .collect();
    let wait_slots = test
        .threads
        .iter()
        .map(|t| {
            (0..waits[t.id])
                .map(|k| {
                    others(t.id)
                        .filter_map(|u| arrive_slots[u].get(k).copied())
                        .collect()
                })
                .collect()
        })
        .collect();
    (arrive_slots, wait_slots, next as usize)
}

/// Per cluster wait of a thread, the slots it waits for.
pub(super) type WaitSlots = Vec<Vec<u32>>;
