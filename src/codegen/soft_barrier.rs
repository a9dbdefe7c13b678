//! Software CTA barriers, for tests whose barrier id or thread count is a value loaded at run
//! time.
//!
//! The model lets two CTA barriers synchronise only when they agree on id and count value, and
//! lets a thread pass a barrier that no partner takes with the same key. A hardware barrier has
//! neither property: its id and count are fixed when the thread arrives, and partners that took
//! another id leave it waiting forever. So when some barrier of a test depends on a loaded
//! value, every CTA barrier of that test runs as a software barrier in the instance's result
//! slots (`ptx/soft_barrier.ptx`): each barrier publishes its key with a relaxed store, waits
//! until every potential partner has published, and only when some partner took the same key
//! does it synchronise, with a fence–flag–fence handshake (release and acquire patterns at CTA
//! scope). Partners that took another key exchange only relaxed accesses, so the outcomes the
//! model allows without synchronisation stay observable. A wait that runs out marks the
//! instance skipped; it never passes a barrier unsynchronised.

use super::barrier_key::BarrierKey;
use super::domain::Analysis;
use super::CodegenError;
use crate::litmus::arith::normalise;
use crate::litmus::ast::{BarOp, Barrier, Instr, Operand, Test, Value};
use serde::{Deserialize, Serialize};

/// Most software barrier instructions in one test (partners are a 32-bit mask).
pub const MAX_SOFT_BARRIERS: usize = 32;

/// Most keys one barrier instruction may take (each costs two comparisons in the role).
pub const MAX_KEYS: usize = 64;

/// Polls a software barrier makes in all before its role gives up (the instance is then
/// skipped): far more than a partner of the same CTA needs, short enough that a deadlock of
/// crossed barriers costs milliseconds, not the launch.
pub const SOFT_BOUND: u32 = 1 << 20;

/// The key word of a role that gave up before (or while) reaching the barrier: matches no
/// key, so that no partner waits for it.
pub const GAVE_UP: u32 = u32::MAX;

/// One CTA barrier instruction run in software.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SoftBarrier {
    /// The test thread.
    pub role: usize,
    /// Index in the thread's body.
    pub index: usize,
    /// `bar.cta.arrive` (releases to partners, waits for none) rather than `bar.cta.sync`.
    pub arrive: bool,
    /// The keys it can take, each with its code (the word it publishes, never 0 or
    /// [`GAVE_UP`]).
    pub keys: Vec<(BarrierKey, u32)>,
    /// Bit `n` set: software barrier `n` belongs to another role of the same CTA and can take
    /// one of the same keys.
    pub partners: u32,
}

/// Whether some CTA barrier of `test` has an id or count that is not a constant.
pub fn needed(test: &Test, analysis: &Analysis) -> bool {
    test.threads.iter().any(|t| {
        t.body.iter().any(|i| match i {
            Instr::Barrier(Barrier::Cta { id, count, .. }) => {
                analysis.constant(t.id, id).is_none()
                    || count
                        .as_ref()
                        .is_some_and(|c| analysis.constant(t.id, c).is_none())
            }
            _ => false,
        })
    })
}

fn values(analysis: &Analysis, thread: usize, o: &Operand) -> Vec<Value> {
    match o {
        Operand::Imm(v) => vec![normalise(*v)],
        Operand::Reg(r) => analysis.reg(thread, &r.0),
    }
}

fn unsupported(construct: String, reason: &str) -> CodegenError {
    CodegenError::Unsupported {
        construct,
        reason: reason.into(),
    }
}

/// The software barriers of `test`, in thread order then program order; `same_cta` says which
/// threads run in one CTA.
pub fn plan(
    test: &Test,
    analysis: &Analysis,
    same_cta: impl Fn(usize, usize) -> bool,
) -> Result<Vec<SoftBarrier>, CodegenError> {
    let mut out: Vec<SoftBarrier> = Vec::new();
    let mut table: Vec<BarrierKey> = Vec::new();
    for t in &test.threads {
        for (index, i) in t.body.iter().enumerate() {
            if let Instr::Barrier(Barrier::Cta {
                quorum: Some(_), ..
            }) = i
            {
                return Err(unsupported(
                    format!("a barrier quorum of P{} in a test whose barrier keys are loaded at run time", t.id),
                    "the software barrier waits for every partner with its key",
                ));
            }
            if let Instr::Barrier(Barrier::Cta { op, id, count, .. }) = i {
                out.push(barrier(
                    analysis,
                    (t.id, index),
                    (op, id, count),
                    &mut table,
                )?);
            }
        }
    }
    if out.len() > MAX_SOFT_BARRIERS {
        return Err(unsupported(
            format!("{} CTA barrier instructions", out.len()),
            "the software barrier tracks at most 32 per test",
        ));
    }
    one_per_key(&out)?;
    let masks: Vec<u32> = out
        .iter()
        .map(|x| {
            out.iter()
                .enumerate()
                .filter(|(_, y)| y.role != x.role && same_cta(x.role, y.role) && shares_key(x, y))
                .fold(0, |m, (n, _)| m | 1 << n)
        })
        .collect();
    for (x, m) in out.iter_mut().zip(masks) {
        x.partners = m;
    }
    Ok(out)
}

/// CTA barrier instruction `index` of thread `role`, `bar.cta.<op> id{, count}`, with every key
/// it can take and their codes (`table` numbers the keys of the test, from 1).
fn barrier(
    analysis: &Analysis,
    (role, index): (usize, usize),
    (op, id, count): (&BarOp, &Operand, &Option<Operand>),
    table: &mut Vec<BarrierKey>,
) -> Result<SoftBarrier, CodegenError> {
    let arrive = match op {
        BarOp::Sync => false,
        BarOp::Arrive => true,
        BarOp::Red { .. } => {
            return Err(unsupported(
                format!("bar.cta.red in P{role} of a test with run-time barrier keys"),
                "the software barrier does not compute reductions",
            ))
        }
    };
    let ids = values(analysis, role, id);
    let counts: Vec<Option<Value>> = match count {
        None => vec![None],
        Some(c) => values(analysis, role, c).into_iter().map(Some).collect(),
    };
    if ids.len() * counts.len() > MAX_KEYS {
        return Err(unsupported(
            format!(
                "a barrier of P{role} with {} possible (id, count) pairs",
                ids.len() * counts.len()
            ),
            "the software barrier compares a role's key with at most 64 pairs",
        ));
    }
    let mut keys = Vec::new();
    for id in &ids {
        for count in &counts {
            let key = BarrierKey {
                id: *id,
                count: *count,
            };
            let code = match table.iter().position(|k| *k == key) {
                Some(p) => p,
                None => {
                    table.push(key);
                    table.len() - 1
                }
            };
            keys.push((key, code as u32 + 1));
        }
    }
    Ok(SoftBarrier {
        role,
        index,
        arrive,
        keys,
        partners: 0,
    })
}

/// Whether two software barriers can take the same key.
fn shares_key(a: &SoftBarrier, b: &SoftBarrier) -> bool {
    a.keys
        .iter()
        .any(|(k, _)| b.keys.iter().any(|(l, _)| k == l))
}

/// No role has two barriers that can take the same key: the model pairs the n-th barrier of a
/// key with the partners' n-th, and with run-time keys n itself would depend on the execution.
fn one_per_key(barriers: &[SoftBarrier]) -> Result<(), CodegenError> {
    for (a, x) in barriers.iter().enumerate() {
        for y in &barriers[a + 1..] {
            if x.role == y.role && shares_key(x, y) {
                return Err(unsupported(
                    format!(
                        "two barriers of P{} (instructions {} and {}) that can take the same \
                         run-time key",
                        x.role, x.index, y.index
                    ),
                    "the software barrier pairs each barrier instruction with one instruction \
                     of each partner",
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus::parse;

    /// The plan of `src` with thread `t` in CTA `ctas[t]`.
    fn soft(src: &str, ctas: &[u32]) -> Result<Vec<SoftBarrier>, CodegenError> {
        let t = parse(src, std::path::Path::new("t.litmus")).expect("parses");
        let a = Analysis::of(&t).expect("analysis");
        assert!(needed(&t, &a));
        plan(&t, &a, |x, y| ctas[x] == ctas[y])
    }

    const DYN: &str = "PTX dyn\n{ x=0; y=0; z=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 | P2@cta 0,gpu 0 ;\n st.weak x, 1 | st.weak y, 1 | st.weak z, 1 ;\n ld.weak r2, z | bar.cta.sync 1, 1 | bar.cta.arrive 2 ;\n bar.cta.sync 1, r2 | ld.weak r1, x | ;\n ld.weak r0, y | | ;\nexists (P0:r0 == 0 /\\ P1:r1 == 0)\n";

    #[test]
    fn partners_are_the_other_roles_of_the_cta_that_can_take_the_same_key() {
        let s = soft(DYN, &[0, 0, 0]).expect("plans");
        assert_eq!(s.len(), 3);
        // P0's barrier (index 2) can be (1, 0) or (1, 1); P1's is (1, 1); P2's is (2, none).
        assert_eq!((s[0].role, s[0].index), (0, 2));
        assert_eq!((s[1].role, s[1].index), (1, 1));
        assert_eq!((s[0].keys.len(), s[1].keys.len()), (2, 1));
        assert!(s[2].arrive);
        assert_eq!(s[0].partners, 0b010);
        assert_eq!(s[1].partners, 0b001);
        assert_eq!(s[2].partners, 0);
        // Equal keys share a code, distinct keys do not, and no code is 0 or GAVE_UP.
        let code = |b: &SoftBarrier, id: Value, count: Option<Value>| {
            b.keys
                .iter()
                .find(|(k, _)| *k == BarrierKey { id, count })
                .map(|(_, c)| *c)
        };
        assert_eq!(code(&s[0], 1, Some(1)), code(&s[1], 1, Some(1)));
        assert_ne!(code(&s[0], 1, Some(0)), code(&s[0], 1, Some(1)));
        assert!(s
            .iter()
            .flat_map(|b| &b.keys)
            .all(|(_, c)| *c != 0 && *c != GAVE_UP));
    }

    #[test]
    fn roles_of_other_ctas_are_never_partners() {
        let s = soft(DYN, &[0, 1, 0]).expect("plans");
        assert!(s.iter().all(|b| b.partners == 0));
    }

    #[test]
    fn a_role_with_two_barriers_that_can_share_a_key_is_refused() {
        let src = "PTX two\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n ld.weak r2, x | st.weak x, 1 ;\n bar.cta.sync r2 | bar.cta.sync 1 ;\n bar.cta.sync 1 | ;\nexists (P0:r2 == 1)\n";
        let e = soft(src, &[0, 0]).expect_err("refused");
        assert!(e.to_string().contains("same run-time key"), "{e}");
    }
}
