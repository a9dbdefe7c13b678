//! The interpreter: one role of one instance, one Rust atomic operation per memory instruction,
//! in program order. No allocation, no AST, no locks.

use super::program::{Op, Rmw, Role, Src, BARRIER_IDS, MAX_REGS, MAX_STEPS};
use super::wait::wait_until;
use crate::litmus::arith;
use crate::litmus::ast::{AtomOp, Value};
use std::sync::atomic::{fence, AtomicBool, AtomicI64, AtomicU32, Ordering};

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

/// Runs `role` on the instance whose memory is `mem` (its block) and barrier counters `bars`.
/// `regs` must hold the role's initial registers and holds the final ones afterwards; bounded
/// waits give up at once when `abandon` is set, and set it when they run out.
#[inline]
pub fn run(
    role: &Role,
    mem: &[AtomicI64],
    bars: &[AtomicU32],
    regs: &mut [Value; MAX_REGS],
    abandon: &AtomicBool,
) -> Status {
    let ops = &role.ops[..];
    let mut phase = [0u32; BARRIER_IDS];
    let mut pc = 0usize;
    let mut steps = 0u32;
    while let Some(op) = ops.get(pc) {
        steps += 1;
        if steps > MAX_STEPS {
            return Status::GaveUp;
        }
        pc += 1;
        match *op {
            Op::Load {
                dst,
                addr,
                dep,
                ord,
            } => {
                if dep.is_some_and(|r| regs[r as usize] != 0) {
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
                if dep.is_some_and(|r| regs[r as usize] != 0) {
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
                if dep.is_some_and(|r| regs[r as usize] != 0) {
                    return Status::Unexpected;
                }
                let cell = &mem[addr as usize];
                let a = val(regs, a);
                let old = match op {
                    Rmw::Add => cell.fetch_add(a, ord),
                    Rmw::Sub => cell.fetch_sub(a, ord),
                    Rmw::Exch => cell.swap(a, ord),
                    Rmw::Cas => match cell.compare_exchange(a, val(regs, b), ord, failure(ord)) {
                        Ok(v) | Err(v) => v,
                    },
                    Rmw::And => cell.fetch_and(a, ord),
                    Rmw::Or => cell.fetch_or(a, ord),
                    Rmw::Xor => cell.fetch_xor(a, ord),
                    Rmw::Inc | Rmw::Dec | Rmw::Min | Rmw::Max => {
                        // Unsigned 32-bit comparisons, exactly as the model computes them.
                        let op = match op {
                            Rmw::Inc => AtomOp::Inc,
                            Rmw::Dec => AtomOp::Dec,
                            Rmw::Min => AtomOp::Min,
                            _ => AtomOp::Max,
                        };
                        match cell
                            .fetch_update(ord, failure(ord), |old| arith::rmw(op, old, a, None))
                        {
                            Ok(v) | Err(v) => v,
                        }
                    }
                };
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
            Op::Bar {
                slot,
                participants,
                wait,
            } => {
                let counter = &bars[slot as usize];
                let p = &mut phase[slot as usize % BARRIER_IDS];
                *p += 1;
                let target = *p * participants;
                // The arrival releases everything before it; the waiter's acquire load makes
                // it visible after the barrier: the barrier's `synchronizes` edge.
                counter.fetch_add(1, Ordering::AcqRel);
                if wait && !wait_until(abandon, || counter.load(Ordering::Acquire) >= target) {
                    return Status::GaveUp;
                }
            }
        }
    }
    Status::Done
}
