//! Which registers a thread may still read at each instruction: what tells a loop iteration
//! that changed nothing that matters from one that did.

use crate::litmus::ast::{Instr, Reg};
use std::collections::HashMap;

/// Backward liveness over the thread's control flow, a register bit mask per instruction (and
/// one past the end); every register is live at the end (final values are observable). More
/// than 63 registers: everything is live.
pub(super) fn liveness(body: &[Instr], labels: &HashMap<String, usize>, regs: &[Reg]) -> Vec<u64> {
    let all: u64 = if regs.len() >= 64 {
        return vec![u64::MAX; body.len() + 1];
    } else {
        (1u64 << regs.len()) - 1
    };
    let mask = |rs: Vec<&Reg>| {
        rs.into_iter().fold(0u64, |m, r| {
            m | 1u64 << regs.iter().position(|x| x == r).expect("collected")
        })
    };
    let n = body.len();
    let mut live = vec![0u64; n + 1];
    live[n] = all;
    loop {
        let mut changed = false;
        for pc in (0..n).rev() {
            let ins = &body[pc];
            let succ_live = match ins {
                Instr::Branch { cond, target } => {
                    let t = live[labels[&target.0]];
                    if cond.is_some() {
                        t | live[pc + 1]
                    } else {
                        t
                    }
                }
                _ => live[pc + 1],
            };
            let defs = mask(ins.written().into_iter().collect());
            let v = (succ_live & !defs) | mask(ins.read());
            if v != live[pc] {
                live[pc] = v;
                changed = true;
            }
        }
        if !changed {
            return live;
        }
    }
}
