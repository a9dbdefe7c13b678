//! The interpreter: one role of one instance, one Rust atomic operation per memory instruction,
//! in program order. No allocation, no AST, no locks.

use super::program::{BarStep, Candidate, Op, Role, Src, MAX_REGS, MAX_STEPS, SLOT_WORDS};
use super::wait::wait_until;
use crate::litmus::arith;
use crate::litmus::ast::BarRedOp;
use crate::litmus::ast::{AtomOp, Value};
use std::sync::atomic::{fence, AtomicBool, AtomicI64, Ordering};

/// A CTA barrier event's key: its id value and its count value, if a count is given.
pub type Key = (Value, Option<Value>);

/// Slot state: nothing published yet (the value every slot is reset to).
const UNPUBLISHED: Value = 0;
/// Slot state: the instruction did not run in this instance (skipped, or the role ended).
const ABSENT: Value = 1;
/// Slot state: the instruction ran; `RAN + occurrence`, with the key in the next two words and
/// its [`vote`] in the fourth.
const RAN: Value = 2;

/// What a barrier event adds to a `bar.cta.red` it meets: 0 for a `sync` or an arrive (not a
/// participant of the reduction), else 1 + its predicate.
fn vote(pred: Option<bool>) -> Value {
    pred.map_or(0, |p| 1 + p as Value)
}

/// How one role's run of one instance ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Ran to the end.
    Done = 0,
    /// Produced something outside the test's meaning (an address dependency register that was
    /// not 0): counted in the histogram's `unexpected` bucket.
    Unexpected = 1,
    /// Gave up (a step limit or a bounded barrier wait ran out): the instance is skipped.
    GaveUp = 2,
}

#[inline(always)]
fn val(regs: &[Value; MAX_REGS], s: Src) -> Value {
    match s {
        Src::Imm(v) => v,
        Src::Reg(r) => regs[r as usize],
    }
}

#[inline(always)]
fn failure(ord: Ordering) -> Ordering {
    match ord {
        Ordering::Release => Ordering::Relaxed,
        Ordering::AcqRel => Ordering::Acquire,
        other => other,
    }
}

/// Where a role stands among its barrier instructions in one instance: `keys[k]` is the key
/// barrier `k` ran with (`None`: skipped), for `k < next`; it made `arrived` cluster arrivals
/// and `waited` cluster waits.
struct BarCursor<'a> {
    slots: &'a [AtomicI64],
    keys: &'a mut [Option<Key>],
    next: usize,
    arrived: usize,
    waited: usize,
}

impl BarCursor<'_> {
    /// Marks the role's barrier instructions before `k` not yet reached as skipped, publishing
    /// that to whoever may wait for them.
    fn skip_to(&mut self, role: &Role, k: usize) {
        for b in self.next..k {
            self.keys[b] = None;
            if let Some(s) = role.bars[b].slot {
                self.slots[s as usize * SLOT_WORDS].store(ABSENT, Ordering::Release);
            }
        }
        self.next = self.next.max(k);
    }

    /// Runs a barrier instruction; false when a wait ran out. Out of line: the interpreter
    /// loop stays small.
    #[inline(never)]
    fn step(
        &mut self,
        role: &Role,
        step: BarStep,
        regs: &mut [Value; MAX_REGS],
        abandon: &AtomicBool,
    ) -> bool {
        match step {
            BarStep::Cta(k) => self.cta(role, k as usize, regs, abandon),
            BarStep::ClusterArrive { release } => {
                self.arrive(role, release);
                true
            }
            BarStep::ClusterWait => self.wait(role, abandon),
        }
    }

    /// Runs CTA barrier instruction `k`: records its key and occurrence, publishes them if
    /// some `sync` may meet it and, for a `sync`, meets every other role that may take its
    /// key; false when a wait ran out.
    fn cta(
        &mut self,
        role: &Role,
        k: usize,
        regs: &mut [Value; MAX_REGS],
        abandon: &AtomicBool,
    ) -> bool {
        let bar = &role.bars[k];
        self.skip_to(role, k);
        let key = (val(regs, bar.id), bar.count.map(|c| val(regs, c)));
        let occurrence = self.keys[..k].iter().filter(|&&o| o == Some(key)).count() as u32;
        self.keys[k] = Some(key);
        self.next = k + 1;
        let pred = bar.red.map(|r| val(regs, r.pred) != 0);
        if let Some(s) = bar.slot {
            publish(self.slots, s, key, occurrence, vote(pred));
        }
        if let Some(q) = bar.quorum.filter(|_| bar.waits) {
            return meet_quorum(
                self.slots,
                &bar.partners,
                (key, occurrence),
                val(regs, q),
                abandon,
            );
        }
        let Some(red) = bar.red else {
            // An arrive has no partners: it never waits, it only releases to the syncs that
            // meet it. A `sync` that misses a partner the model waits for never completes in
            // the model: the instance is skipped.
            return bar.partners.iter().all(|candidates| {
                meet_slot(self.slots, candidates, key, occurrence, abandon)
                    .is_some_and(|m| !matches!(m, Probe::Missed { awaited: true }))
            });
        };
        // The model reduces over the `bar.cta.red` events of the CTA with this key and
        // occurrence: this one and those among the partners met.
        let (mut trues, mut all) = ((pred == Some(true)) as Value, 1);
        for candidates in &bar.partners {
            match meet_slot(self.slots, candidates, key, occurrence, abandon) {
                None | Some(Probe::Missed { awaited: true }) => return false,
                Some(Probe::Missed { .. } | Probe::Pending) => {}
                Some(Probe::Met(s)) => {
                    // Written before the state that the acquire load in `meet_slot` read.
                    let v = self.slots[s as usize * SLOT_WORDS + 3].load(Ordering::Relaxed);
                    if v != 0 {
                        all += 1;
                        trues += (v == vote(Some(true))) as Value;
                    }
                }
            }
        }
        regs[red.dst as usize] = match red.op {
            BarRedOp::Popc => trues,
            BarRedOp::And => (trues == all) as Value,
            BarRedOp::Or => (trues > 0) as Value,
        };
        true
    }

    /// A cluster arrival: publishes it (with a release store unless `.relaxed`) when another
    /// role may wait for it.
    fn arrive(&mut self, role: &Role, release: bool) {
        if let Some(&s) = role.arrive_slots.get(self.arrived) {
            let ord = if release {
                Ordering::Release
            } else {
                Ordering::Relaxed
            };
            self.slots[s as usize * SLOT_WORDS].store(RAN, ord);
        }
        self.arrived += 1;
    }

    /// A cluster wait: waits (acquire) until every other role of the cluster has made its
    /// arrival of the same number or will never make it; false when a wait ran out.
    fn wait(&mut self, role: &Role, abandon: &AtomicBool) -> bool {
        let k = self.waited;
        self.waited += 1;
        role.wait_slots.get(k).is_none_or(|slots| {
            slots.iter().all(|&s| {
                let w = &self.slots[s as usize * SLOT_WORDS];
                wait_until(abandon, || w.load(Ordering::Acquire) != UNPUBLISHED)
            })
        })
    }

    /// Publishes the barrier instructions the role did not reach and the cluster arrivals it
    /// did not make as absent. Out of line: it runs only for roles with barriers.
    #[inline(never)]
    fn finish(&mut self, role: &Role) {
        self.skip_to(role, role.bars.len());
        for &s in role.arrive_slots.iter().skip(self.arrived) {
            self.slots[s as usize * SLOT_WORDS].store(ABSENT, Ordering::Release);
        }
    }
}

/// Publishes that a barrier instruction ran with `key` as its `occurrence`-th event of that
/// key, with its `bar.cta.red` [`vote`]: the id, count and vote first, then the state with a
/// release store, so that a partner whose acquire load sees the state sees them and everything
/// this role did before.
pub fn publish(slots: &[AtomicI64], slot: u32, key: Key, occurrence: u32, vote: Value) {
    let w = &slots[slot as usize * SLOT_WORDS..][..SLOT_WORDS];
    w[1].store(key.0, Ordering::Relaxed);
    w[2].store(key.1.unwrap_or(0), Ordering::Relaxed);
    w[3].store(vote, Ordering::Relaxed);
    w[0].store(RAN + occurrence as Value, Ordering::Release);
}

/// What one other role's publications say about a `sync` that ran with a key as its
/// `occurrence`-th event of that key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// The instruction to look at next is not published yet.
    Pending,
    /// The instruction in this slot ran with the same key and occurrence: the model's
    /// synchronisation, made by the acquire load of its release publication.
    Met(u32),
    /// None of them did or can any more; `awaited`: more than `occurrence` of them have that
    /// key as their fixed key and the model waits for them (an immediate key and no quorum).
    Missed {
        /// Whether the model waits for this role at that barrier.
        awaited: bool,
    },
}

/// Reads, without waiting, one other role's barrier instructions that may take `key`
/// (`candidates`, in its program order, which is also the order it publishes them in),
/// skipping those whose fixed key differs. The partner's occurrences of a key only grow, so
/// one that ran with the key at a higher occurrence ends the search as well.
pub fn probe(slots: &[AtomicI64], candidates: &[Candidate], key: Key, occurrence: u32) -> Probe {
    let awaited = candidates
        .iter()
        .filter(|c| c.awaited && c.key == Some(key))
        .count()
        > occurrence as usize;
    for c in candidates {
        if c.key.is_some_and(|k| k != key) {
            continue;
        }
        let w = &slots[c.slot as usize * SLOT_WORDS..][..SLOT_WORDS];
        let state = w[0].load(Ordering::Acquire);
        if state == UNPUBLISHED {
            return Probe::Pending;
        }
        if state == ABSENT {
            continue;
        }
        // Only candidates with a count when `key` has one (and vice versa) are listed.
        if (w[1].load(Ordering::Relaxed), w[2].load(Ordering::Relaxed))
            != (key.0, key.1.unwrap_or(0))
        {
            continue;
        }
        let theirs = (state - RAN) as u32;
        if theirs >= occurrence {
            return match theirs == occurrence {
                true => Probe::Met(c.slot),
                false => Probe::Missed { awaited },
            };
        }
    }
    Probe::Missed { awaited }
}

/// Meets one other role at a `sync`: waits (acquire, bounded) until [`probe`] is no longer
/// pending; `None` when the wait ran out.
pub fn meet_slot(
    slots: &[AtomicI64],
    candidates: &[Candidate],
    key: Key,
    occurrence: u32,
    abandon: &AtomicBool,
) -> Option<Probe> {
    let mut seen = Probe::Pending;
    wait_until(abandon, || {
        seen = probe(slots, candidates, key, occurrence);
        seen != Probe::Pending
    })
    .then_some(seen)
}

/// A `sync` with quorum `quorum`: waits (bounded) until `quorum - 1` other roles have met it
/// at `(key, occurrence)` — it synchronises with those it met — or no more can; false when
/// the wait ran out or fewer than the quorum can ever meet (the model's hang: the instance
/// is skipped). A role that arrives after the quorum left meets those already published.
pub fn meet_quorum(
    slots: &[AtomicI64],
    partners: &[Vec<Candidate>],
    (key, occurrence): (Key, u32),
    quorum: Value,
    abandon: &AtomicBool,
) -> bool {
    let mut met = 0;
    let done = wait_until(abandon, || {
        let mut pending = false;
        met = 0;
        for c in partners {
            match probe(slots, c, key, occurrence) {
                Probe::Met(_) => met += 1,
                Probe::Pending => pending = true,
                Probe::Missed { .. } => {}
            }
        }
        met + 1 >= quorum || !pending
    });
    done && met + 1 >= quorum
}

/// Runs `role` on the instance whose memory is `mem` (its block) and barrier slots `slots`.
/// `regs` must hold the role's initial registers and holds the final ones afterwards; `keys`
/// is scratch space with one entry per barrier instruction of the role. Bounded waits give up
/// at once when `abandon` is set, and set it when they run out. However the role ends, every
/// barrier slot it has not published is published as absent, so no partner waits for it.
#[inline]
pub fn run(
    role: &Role,
    mem: &[AtomicI64],
    slots: &[AtomicI64],
    keys: &mut [Option<Key>],
    regs: &mut [Value; MAX_REGS],
    abandon: &AtomicBool,
) -> Status {
    let mut bars = BarCursor {
        slots,
        keys,
        next: 0,
        arrived: 0,
        waited: 0,
    };
    let status = interpret(role, mem, &mut bars, regs, abandon);
    if !role.bars.is_empty() || !role.arrive_slots.is_empty() {
        bars.finish(role);
    }
    status
}

/// How many times a role whose loop ran [`MAX_STEPS`] yields its core and runs as many again
/// before it gives the instance up: a spin waits on a partner that a loaded machine may not
/// have scheduled yet (with none, two handshaking spinners on a busy 2-core machine gave up
/// every instance), while a spin that nothing ends costs a few yields more.
const PATIENCE: u32 = 16;

// One arm per instruction in one loop: the hot path, kept in one function so that no
// instruction costs a call.
#[inline(always)]
#[allow(clippy::too_many_lines)]
fn interpret(
    role: &Role,
    mem: &[AtomicI64],
    bars: &mut BarCursor,
    regs: &mut [Value; MAX_REGS],
    abandon: &AtomicBool,
) -> Status {
    let ops = &role.ops[..];
    let mut pc = 0usize;
    let mut steps = 0u32;
    let mut patience = PATIENCE;
    while let Some(op) = ops.get(pc) {
        steps += 1;
        if steps > MAX_STEPS {
            if patience == 0 || abandon.load(Ordering::Relaxed) {
                return Status::GaveUp;
            }
            patience -= 1;
            steps = 0;
            std::thread::yield_now();
        }
        pc += 1;
        match *op {
            Op::Load {
                dst,
                addr,
                dep,
                ord,
            } => {
                if unmet(dep, regs) {
                    return Status::Unexpected;
                }
                regs[dst as usize] = mem[addr as usize].load(ord);
            }
            Op::Store {
                addr,
                dep,
                src,
                ord,
            } => {
                if unmet(dep, regs) {
                    return Status::Unexpected;
                }
                mem[addr as usize].store(val(regs, src), ord);
            }
            Op::Rmw {
                op,
                dst,
                addr,
                dep,
                a,
                b,
                ord,
            } => {
                if unmet(dep, regs) {
                    return Status::Unexpected;
                }
                let old = rmw(&mem[addr as usize], op, val(regs, a), val(regs, b), ord);
                if let Some(d) = dst {
                    regs[d as usize] = old;
                }
            }
            Op::Fence(ord) => fence(ord),
            Op::Mov { dst, src } => regs[dst as usize] = val(regs, src),
            Op::Alu { op, dst, a, b } => {
                let (a, b) = (val(regs, a), val(regs, b));
                // The same 32-bit arithmetic the model computes with.
                regs[dst as usize] = arith::alu(op, a, b);
            }
            Op::Branch { cond, target } => {
                let taken = match cond {
                    None => true,
                    Some((c, a, b)) => c.eval(val(regs, a), val(regs, b)),
                };
                if taken {
                    pc = target as usize;
                }
            }
            Op::Bar(step) => {
                if !bars.step(role, step, regs, abandon) {
                    return Status::GaveUp;
                }
            }
        }
    }
    Status::Done
}

/// Whether the register added to an access's address (an address dependency) is not 0: the
/// backend's locations are fixed words, so any other value is an unexpected outcome.
#[inline(always)]
fn unmet(dep: Option<u8>, regs: &[Value; MAX_REGS]) -> bool {
    dep.is_some_and(|r| regs[r as usize] != 0)
}

/// One atomic read-modify-write of `cell` with operands `a` (and `b`, CAS's new value);
/// returns the value it read.
#[inline(always)]
fn rmw(cell: &AtomicI64, op: AtomOp, a: Value, b: Value, ord: Ordering) -> Value {
    match op {
        AtomOp::Add => cell.fetch_add(a, ord),
        AtomOp::Sub => cell.fetch_sub(a, ord),
        AtomOp::Exch => cell.swap(a, ord),
        AtomOp::Cas => match cell.compare_exchange(a, b, ord, failure(ord)) {
            Ok(v) | Err(v) => v,
        },
        AtomOp::And => cell.fetch_and(a, ord),
        AtomOp::Or => cell.fetch_or(a, ord),
        AtomOp::Xor => cell.fetch_xor(a, ord),
        // Unsigned 32-bit comparisons, exactly as the model computes them.
        AtomOp::Inc | AtomOp::Dec | AtomOp::Min | AtomOp::Max => {
            match cell.fetch_update(ord, failure(ord), |old| arith::rmw(op, old, a, None)) {
                Ok(v) | Err(v) => v,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::cpu::layout::Layout;
    use crate::harness::cpu::program::{compile, Program};
    use std::path::Path;

    /// Whether [`meet_slot`] finds a meeting (`Some(true)`), none (`Some(false)`), or its wait ran
    /// out (`None`).
    fn meet(
        slots: &[AtomicI64],
        candidates: &[Candidate],
        key: Key,
        occurrence: u32,
        abandon: &AtomicBool,
    ) -> Option<bool> {
        meet_slot(slots, candidates, key, occurrence, abandon).map(|m| matches!(m, Probe::Met(_)))
    }

    fn slots(n: usize) -> Vec<AtomicI64> {
        (0..n * SLOT_WORDS).map(|_| AtomicI64::new(0)).collect()
    }

    /// Candidates in these slots, keys known only at run time.
    fn any(slots: &[u32]) -> Vec<Candidate> {
        slots
            .iter()
            .map(|&slot| Candidate {
                slot,
                key: None,
                awaited: false,
            })
            .collect()
    }

    fn absent(slots: &[AtomicI64], slot: u32) {
        slots[slot as usize * SLOT_WORDS].store(ABSENT, Ordering::Relaxed);
    }

    #[test]
    fn meet_matches_key_and_occurrence_in_the_partners_order() {
        // Set: a wait for an unpublished slot fails at once instead of spinning.
        let gave_up = AtomicBool::new(true);
        let s = slots(4);
        publish(&s, 0, (1, None), 0, 0);
        absent(&s, 1);
        publish(&s, 2, (1, None), 1, 0);
        publish(&s, 3, (1, Some(2)), 0, 0);
        assert_eq!(
            meet(&s, &any(&[0, 1, 2]), (1, None), 0, &gave_up),
            Some(true)
        );
        // The first event of the key is not the second: go on to the partner's next one.
        assert_eq!(
            meet(&s, &any(&[0, 1, 2]), (1, None), 1, &gave_up),
            Some(true)
        );
        assert_eq!(
            meet(&s, &any(&[0, 1, 2]), (1, None), 2, &gave_up),
            Some(false)
        );
        // Another id, or another count, is another barrier.
        assert_eq!(
            meet(&s, &any(&[0, 1, 2]), (2, None), 0, &gave_up),
            Some(false)
        );
        assert_eq!(meet(&s, &any(&[3]), (1, Some(3)), 0, &gave_up), Some(false));
        assert_eq!(meet(&s, &any(&[3]), (1, Some(2)), 0, &gave_up), Some(true));
        let t = slots(2);
        // The partner's only candidate is still to come: no answer without waiting.
        assert_eq!(meet(&t, &any(&[0]), (1, None), 0, &gave_up), None);
        // Its occurrence of the key is already past ours: no later one can match, so the
        // still unpublished slot 1 is not waited for.
        publish(&t, 0, (1, None), 1, 0);
        assert_eq!(meet(&t, &any(&[0, 1]), (1, None), 0, &gave_up), Some(false));
        // A candidate whose fixed key is another is not waited for.
        let other = Candidate {
            slot: 1,
            key: Some((1, Some(2))),
            awaited: true,
        };
        assert_eq!(meet(&t, &[other], (1, Some(3)), 0, &gave_up), Some(false));
        assert_eq!(meet(&t, &[other], (1, Some(2)), 0, &gave_up), None);
    }

    fn program(text: &str) -> Program {
        let test = crate::litmus::parse(text, Path::new("t.litmus")).expect("test parses");
        compile(&test, &Layout::new(test.locations.len(), false)).expect("compiles")
    }

    /// Runs `role` of `p` alone, with every wait failing at once and location 0 (the first
    /// declared) holding `x`; its status.
    fn alone(p: &Program, role: usize, s: &[AtomicI64], x: Value) -> Status {
        let mem: Vec<AtomicI64> = (0..64).map(|_| AtomicI64::new(0)).collect();
        mem[0].store(x, Ordering::Relaxed);
        let mut keys = vec![None; p.roles[role].bars.len()];
        let mut regs = p.roles[role].init;
        let gave_up = AtomicBool::new(true);
        run(&p.roles[role], &mem, s, &mut keys, &mut regs, &gave_up)
    }

    #[test]
    fn a_bar_red_reduces_the_predicates_of_the_bar_reds_it_meets() {
        let p = program(
            "PTX t
{ x=0; P2:r0=0; }
 P0@cta 0,gpu 0             | P1@cta 0,gpu 0 | P2@cta 0,gpu 0             | P3@cta 1,gpu 0            ;
 bar.cta.red.popc r1, 1, 1  | bar.cta.sync 1 | ld.weak r0, x              | bar.cta.red.popc r1, 1, 1 ;
 bar.cta.red.and r2, 1, 1   |                | bar.cta.red.popc r1, 1, r0 |                           ;
 bar.cta.red.or r3, 1, 0    |                | bar.cta.red.and r2, 1, r0  |                           ;
                            |                | bar.cta.red.or r3, 1, r0   |                           ;
exists (x == 0)",
        );
        for x in [0, 1] {
            let s = slots(p.barrier_slots);
            // Each gives up at a barrier whose partner has not published yet, having published
            // its own: P2 at its first, P1 at its only one.
            assert_eq!(alone(&p, 2, &s, x), Status::GaveUp);
            assert_eq!(alone(&p, 1, &s, x), Status::GaveUp);
            let mem: Vec<AtomicI64> = (0..64).map(|_| AtomicI64::new(0)).collect();
            let mut keys = vec![None; 3];
            let mut regs = p.roles[0].init;
            let (s2, done) = (slots(p.barrier_slots), AtomicBool::new(true));
            for (i, w) in s.iter().enumerate() {
                s2[i].store(w.load(Ordering::Relaxed), Ordering::Relaxed);
            }
            // P0's first meets P1's sync (no vote) and P2's red (x). P2 gave up before its
            // second, which the model's second barrier 1 waits for: P0 gives the instance up
            // there. P3 is in another CTA.
            let st = run(&p.roles[0], &mem, &s2, &mut keys, &mut regs, &done);
            assert_eq!(st, Status::GaveUp, "x={x}");
            // Register r1 is numbered 0.
            assert_eq!(regs[0], 1 + x, "x={x}");
        }
    }

    fn state(s: &[AtomicI64], slot: u32) -> Value {
        s[slot as usize * SLOT_WORDS].load(Ordering::Relaxed)
    }

    #[test]
    fn an_arrive_only_releases() {
        let p = program(
            "PTX t
{ x=0; }
 P0@cta 0,gpu 0   | P1@cta 0,gpu 0 | P2@cta 0,gpu 0   ;
 bar.cta.arrive 1 | bar.cta.sync 1 | bar.cta.arrive 1 ;
exists (x == 0)",
        );
        let s = slots(p.barrier_slots);
        // An arrive does not wait, even for a partner that has not arrived.
        assert_eq!(alone(&p, 0, &s, 0), Status::Done);
        // A sync waits for every arrive that may meet it: P2 has not arrived yet.
        assert_eq!(alone(&p, 1, &s, 0), Status::GaveUp);
        assert_eq!(alone(&p, 2, &s, 0), Status::Done);
        assert_eq!(alone(&p, 1, &s, 0), Status::Done);
    }

    #[test]
    fn occurrences_count_earlier_events_of_the_same_key_and_skips_are_published() {
        let p = program(
            "PTX t
{ x=0; P0:r0=0; }
 P0@cta 0,gpu 0    | P1@cta 0,gpu 0    ;
 bar.cta.arrive 1  | bar.cta.sync 1    ;
 bar.cta.arrive 2  | bar.cta.sync 1    ;
 ld.weak r0, x     | bar.cta.sync 2    ;
 bar.cta.arrive r0 | bar.cta.sync 1, 2 ;
 bne r0, 7, L      |                   ;
 bar.cta.arrive 1  |                   ;
 L:                |                   ;
 bar.cta.arrive 1  |                   ;
exists (x == 0)",
        );
        let slot = |k: usize| p.roles[0].bars[k].slot.expect("P1 may meet it");
        for x in [0, 1, 7] {
            let s = slots(p.barrier_slots);
            assert_eq!(alone(&p, 0, &s, x), Status::Done);
            assert_eq!(state(&s, slot(0)), RAN, "x={x}");
            assert_eq!(state(&s, slot(1)), RAN, "x={x}");
            // `bar.cta.arrive r0` is key 1's second event when x = 1, else its key's first.
            assert_eq!(state(&s, slot(2)), RAN + (x == 1) as Value, "x={x}");
            assert_eq!(
                s[slot(2) as usize * SLOT_WORDS + 1].load(Ordering::Relaxed),
                x
            );
            // Skipped unless x = 7, and then key 1's second (third) event.
            let fourth = if x == 7 { RAN + 1 } else { ABSENT };
            assert_eq!(state(&s, slot(3)), fourth, "x={x}");
            let fifth = 1 + (x == 1) as Value + (x == 7) as Value;
            assert_eq!(state(&s, slot(4)), RAN + fifth, "x={x}");
            // P1 then finds a partner or learns there is none for each of its syncs, without
            // waiting (its `bar.cta.sync 1, 2` has no candidate at all).
            assert_eq!(alone(&p, 1, &s, x), Status::Done, "x={x}");
        }
    }

    #[test]
    fn a_cluster_wait_waits_for_the_same_numbered_arrival_of_each_other_role() {
        let p = program(
            "PTX t
{ x=0; P0:r0=0; }
 P0@cta 0,cluster 0,gpu 0       | P1@cta 1,cluster 0,gpu 0 | P2@cta 0,cluster 1,gpu 0 ;
 ld.weak r0, x                  | barrier.cluster.wait     | barrier.cluster.arrive   ;
 bne r0, 1, L                   | barrier.cluster.wait     | barrier.cluster.wait     ;
 barrier.cluster.arrive.relaxed |                          |                          ;
 L:                             |                          |                          ;
 barrier.cluster.arrive         |                          |                          ;
exists (x == 0)",
        );
        // P0's two arrivals are waited for by P1; P2 is in another cluster.
        assert_eq!(p.roles[0].arrive_slots, vec![0, 1]);
        assert_eq!(p.roles[1].wait_slots, vec![vec![0], vec![1]]);
        assert!(p.roles[2].arrive_slots.is_empty());
        assert_eq!(p.roles[2].wait_slots, vec![Vec::<u32>::new()]);
        assert_eq!(p.barrier_slots, 2);
        let s = slots(p.barrier_slots);
        // P1 waits for an arrival not made yet, and P2 for nobody.
        assert_eq!(alone(&p, 1, &s, 0), Status::GaveUp);
        assert_eq!(alone(&p, 2, &s, 0), Status::Done);
        // With x = 0 P0 branches over its relaxed arrive: one arrival, its second is absent.
        assert_eq!(alone(&p, 0, &s, 0), Status::Done);
        assert_eq!((state(&s, 0), state(&s, 1)), (RAN, ABSENT));
        assert_eq!(alone(&p, 1, &s, 0), Status::Done);
        let s = slots(p.barrier_slots);
        assert_eq!(alone(&p, 0, &s, 1), Status::Done);
        assert_eq!((state(&s, 0), state(&s, 1)), (RAN, RAN));
    }

    #[test]
    fn a_role_that_ends_early_publishes_its_remaining_barriers_as_absent() {
        let p = program(
            "PTX t
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0   ;
 bar.cta.sync 1 | bar.cta.arrive 1 ;
 bar.cta.sync 2 | bar.cta.sync 2   ;
exists (x == 0)",
        );
        let s = slots(p.barrier_slots);
        // P0 gives up at its first barrier (P1 has not arrived), and still says it will not
        // reach its second, so P1 does not wait for it.
        assert_eq!(alone(&p, 0, &s, 0), Status::GaveUp);
        assert_eq!(state(&s, p.roles[0].bars[1].slot.unwrap()), ABSENT);
        // P1's barrier 2 waits for P0's, which never comes: in the model the instance never
        // completes, so P1 gives it up too (without waiting: every wait of `alone` fails).
        assert_eq!(alone(&p, 1, &s, 0), Status::GaveUp);
        assert_eq!(state(&s, p.roles[1].bars[1].slot.unwrap()), RAN);
    }

    #[test]
    fn a_quorum_sync_goes_once_the_quorum_met_and_a_late_one_meets_those_published() {
        let p = program(
            "PTX t
{ x=0; }
 P0@cta 0,gpu 0       | P1@cta 0,gpu 0       | P2@cta 0,gpu 0       ;
 bar.cta.sync 1, 1, 2 | bar.cta.sync 1, 1, 2 | bar.cta.sync 1, 1, 2 ;
exists (x == 0)",
        );
        let s = slots(p.barrier_slots);
        // Alone, P2 publishes its arrival and cannot make up the quorum of 2.
        assert_eq!(alone(&p, 2, &s, 0), Status::GaveUp);
        assert_eq!(state(&s, p.roles[2].bars[0].slot.unwrap()), RAN);
        // P1 meets P2 and goes without P0: a partial synchronisation.
        assert_eq!(alone(&p, 1, &s, 0), Status::Done);
        // P0, later, meets both published arrivals.
        assert_eq!(alone(&p, 0, &s, 0), Status::Done);
        let met = |role: usize| {
            meet_quorum(
                &s,
                &p.roles[role].bars[0].partners,
                ((1, Some(1)), 0),
                3,
                &AtomicBool::new(true),
            )
        };
        // A quorum of 3 is met once all three are published.
        assert!(met(0));
    }
}
