//! Reducing an optcheck failure to the smallest test that still shows it: whole threads
//! dropped first, then single instructions, each candidate kept when it still parses and its
//! kernel still fails with the same verdict; repeated until no single removal keeps the failure
//! (greedy delta debugging, one element at a time). The oracle is a parameter, so that the
//! reduction is tested with planted failures and used with any ptxas.

use crate::litmus::ast::{Prop, Term, Test};
use serde::Serialize;
use std::path::Path;

/// Most candidates one reduction tries (each is an assembly when the oracle is ptxas).
pub const MAX_TRIES: usize = 400;

/// How a kernel failed the check: the verdict's word and the exact SASS lines of the role
/// that failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The verdict (`reordered`, `merged`, ...).
    pub verdict: String,
    /// The failing role's main path as the disassembler printed it.
    pub sass_lines: Vec<String>,
}

/// The smallest failing test found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reduced {
    /// The reduced test in canonical form.
    pub text: String,
    /// Its threads.
    pub threads: usize,
    /// Its instructions, over every thread.
    pub instructions: usize,
    /// How it fails.
    pub failure: Failure,
    /// Candidates tried.
    pub tries: usize,
}

/// Reduces `test`, which fails as `failure`, with `fails` telling how a candidate fails (`None`:
/// it passes or cannot be built).
pub fn shrink(
    test: &Test,
    failure: Failure,
    mut fails: impl FnMut(&Test) -> Option<Failure>,
) -> Reduced {
    let (mut cur, mut fail, mut tries) = (test.clone(), failure, 0);
    'progress: while tries < MAX_TRIES {
        for cand in candidates(&cur) {
            if tries >= MAX_TRIES {
                break 'progress;
            }
            tries += 1;
            if let Some(f) = fails(&cand).filter(|f| f.verdict == fail.verdict) {
                (cur, fail) = (cand, f);
                continue 'progress;
            }
        }
        break;
    }
    Reduced {
        text: crate::litmus::print(&cur),
        threads: cur.threads.len(),
        instructions: cur.threads.iter().map(|t| t.body.len()).sum(),
        failure: fail,
        tries,
    }
}

/// Every test one removal away from `t` that still parses: each thread dropped (while two
/// remain), then each instruction, last ones first.
pub fn candidates(t: &Test) -> Vec<Test> {
    let drops = (0..t.threads.len())
        .filter(|_| t.threads.len() > 1)
        .map(|i| drop_thread(t, i));
    let cuts = t.threads.iter().enumerate().flat_map(|(i, th)| {
        (0..th.body.len()).rev().map(move |j| {
            let mut c = t.clone();
            c.threads[i].body.remove(j);
            c
        })
    });
    drops.chain(cuts).filter_map(|c| reparse(&c)).collect()
}

/// The candidate as the parser reads its printed text: `None` when it is no longer a test
/// (a branch to a dropped label, a barrier left without partners, ...).
fn reparse(t: &Test) -> Option<Test> {
    crate::litmus::parse(&crate::litmus::print(t), Path::new(&t.name)).ok()
}

/// `t` without thread `i`: later threads renumbered, its register initialisations and
/// observed registers gone, and each comparison of the condition that names it made `true`.
fn drop_thread(t: &Test, i: usize) -> Test {
    let mut c = t.clone();
    c.threads.remove(i);
    for (k, th) in c.threads.iter_mut().enumerate() {
        th.id = k;
    }
    c.reg_init.retain(|r| r.thread != i);
    for r in &mut c.reg_init {
        r.thread -= usize::from(r.thread > i);
    }
    c.extra_observed.retain(|term| !names(term, i));
    c.extra_observed
        .iter_mut()
        .for_each(|term| renumber(term, i));
    c.condition.prop = without_thread(&c.condition.prop, i);
    c
}

/// Whether a term is a register of thread `i`.
fn names(term: &Term, i: usize) -> bool {
    matches!(term, Term::Reg { thread, .. } if *thread == i)
}

/// A term of a thread after `i` moved down by one.
fn renumber(term: &mut Term, i: usize) {
    if let Term::Reg { thread, .. } = term {
        *thread -= usize::from(*thread > i);
    }
}

/// The proposition with comparisons naming thread `i` made `true` and later threads renumbered.
fn without_thread(p: &Prop, i: usize) -> Prop {
    let rec = |q: &Prop| Box::new(without_thread(q, i));
    match p {
        Prop::Cmp { lhs, rhs, .. } if names(lhs, i) || names(rhs, i) => Prop::True,
        Prop::Cmp { lhs, op, rhs } => {
            let (mut lhs, mut rhs) = (lhs.clone(), rhs.clone());
            renumber(&mut lhs, i);
            renumber(&mut rhs, i);
            Prop::Cmp { lhs, op: *op, rhs }
        }
        Prop::Not(q) => Prop::Not(rec(q)),
        Prop::And(a, b) => Prop::And(rec(a), rec(b)),
        Prop::Or(a, b) => Prop::Or(rec(a), rec(b)),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus::ast::Instr;

    const IRIW: &str = "PTX IRIW
{
x=0; y=0;
}
 P0@cta 0,gpu 0    | P1@cta 1,gpu 0       | P2@cta 2,gpu 0       | P3@cta 3,gpu 0    ;
 st.relaxed.gpu x, 1 | ld.acquire.gpu r0, x | ld.acquire.gpu r0, y | st.relaxed.gpu y, 1 ;
 st.relaxed.gpu y, 2 | ld.acquire.gpu r1, y | ld.acquire.gpu r1, x |                   ;
exists (P1:r0 == 1 /\\ P1:r1 == 0 /\\ P2:r0 == 1 /\\ P2:r1 == 0)
";

    fn iriw() -> Test {
        crate::litmus::parse(IRIW, Path::new("IRIW")).unwrap()
    }

    /// A planted failure: "reordered" whenever some thread stores to two locations, with the
    /// stores as its SASS lines.
    fn two_stores(t: &Test) -> Option<Failure> {
        t.threads.iter().find_map(|th| {
            let stores: Vec<String> = th
                .body
                .iter()
                .filter(|i| matches!(i, Instr::Store { .. }))
                .map(crate::litmus::print_instr)
                .collect();
            (stores.len() >= 2).then(|| Failure {
                verdict: "reordered".into(),
                sass_lines: stores,
            })
        })
    }

    #[test]
    fn a_planted_failure_shrinks_to_its_one_thread() {
        let t = iriw();
        let f = two_stores(&t).unwrap();
        let r = shrink(&t, f, two_stores);
        assert_eq!((r.threads, r.instructions), (1, 2), "{}", r.text);
        assert_eq!(r.failure.sass_lines.len(), 2);
        // The reduced test is a test, P0's two stores, and still fails.
        let back = crate::litmus::parse(&r.text, Path::new("r")).unwrap();
        assert_eq!(back.threads[0].body, t.threads[0].body);
        assert!(two_stores(&back).is_some());
    }

    #[test]
    fn another_verdict_does_not_count_as_the_failure() {
        let t = iriw();
        let f = two_stores(&t).unwrap();
        // Every smaller test fails too, but as "merged": nothing is removed.
        let r = shrink(&t, f.clone(), |c| {
            Some(Failure {
                verdict: if c == &t { "reordered" } else { "merged" }.into(),
                sass_lines: vec![],
            })
        });
        assert_eq!((r.threads, r.instructions), (4, 7));
        assert_eq!(r.failure, f);
    }

    #[test]
    fn dropping_a_thread_renumbers_the_rest_and_the_condition() {
        let c = drop_thread(&iriw(), 1);
        assert_eq!(c.threads.len(), 3);
        assert_eq!(c.threads[1].id, 1);
        let text = crate::litmus::print(&c);
        assert!(text.contains("P1:r0 == 1"), "{text}");
        assert!(!text.contains("P2:") && !text.contains("P3"), "{text}");
        assert!(reparse(&c).is_some(), "{text}");
    }

    #[test]
    fn the_number_of_tries_is_bounded() {
        let t = iriw();
        let mut calls = 0;
        let f = two_stores(&t).unwrap();
        shrink(&t, f, |_| {
            calls += 1;
            None
        });
        assert!(
            calls <= MAX_TRIES && calls == candidates(&t).len(),
            "{calls}"
        );
    }
}
