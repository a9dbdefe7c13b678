//! Unit tests of the checker on classic shapes, built by hand.

use super::testkit::*;
use super::{check, check_within, sc_outcomes, Axiom, CheckResult, ModelError};
use crate::litmus::ast::{AtomOp, CmpOp, FenceSem, Proxy, Scope, Sem};

const W: Sem = Sem::Weak;
const GPU: Option<Scope> = Some(Scope::Gpu);

fn mp(wsem: Sem, rsem: Sem, same_cta: bool) -> crate::litmus::ast::Test {
    test(
        "MP",
        vec![loc("x"), loc("y")],
        vec![
            thread(
                0,
                0,
                vec![st(W, None, "x", imm(1)), st(wsem, GPU, "y", imm(1))],
            ),
            thread(
                1,
                if same_cta { 0 } else { 1 },
                vec![ld(rsem, GPU, "r0", "y"), ld(W, None, "r1", "x")],
            ),
        ],
        and(eq(1, "r0", 1), eq(1, "r1", 0)),
    )
}

#[test]
fn message_passing() {
    let weak = check(&mp(Sem::Relaxed, Sem::Relaxed, false)).unwrap();
    assert_eq!(weak.result, CheckResult::Ok);
    assert_eq!(weak.allowed.len(), 4);
    assert_eq!(weak.sc.len(), 3);
    let strong = check(&mp(Sem::Release, Sem::Acquire, false)).unwrap();
    assert_eq!(strong.result, CheckResult::No);
    assert_eq!(strong.allowed.len(), 3);
    let ex = strong
        .excluded
        .iter()
        .find(|e| e.outcome.0 == vec![1, 0])
        .expect("the weak outcome is excluded");
    assert_eq!(ex.axiom, Axiom::Causality);
    assert_eq!(strong.domains, vec![vec![0, 1], vec![0, 1]]);
}

#[test]
fn the_outcomes_and_witnesses_kept_are_bounded_in_bytes() {
    let t = mp(Sem::Relaxed, Sem::Relaxed, false);
    let kept = |limit: u64| check_within(&t, None, limit);
    assert_eq!(kept(1 << 20).unwrap(), check(&t).unwrap());
    // Four allowed outcomes, each with its witness, take more than 1 KiB.
    match kept(1 << 10) {
        Err(ModelError::TooLarge { what }) => {
            assert!(what.contains("more than 1 KiB"), "{what}");
            assert!(what.contains("--verdict-only"), "{what}");
        }
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn store_buffering_needs_sc_fences() {
    let sb = |f: bool| {
        let mk = |a: &str, b: &str, t: usize| {
            let mut body = vec![st(W, None, a, imm(1))];
            if f {
                body.push(fence(FenceSem::Sc, Scope::Gpu));
            }
            body.push(ld(W, None, "r0", b));
            thread(t, t as u32, body)
        };
        test(
            "SB",
            vec![loc("x"), loc("y")],
            vec![mk("x", "y", 0), mk("y", "x", 1)],
            and(eq(0, "r0", 0), eq(1, "r0", 0)),
        )
    };
    assert_eq!(check(&sb(false)).unwrap().result, CheckResult::Ok);
    let fenced = check(&sb(true)).unwrap();
    assert_eq!(fenced.result, CheckResult::No);
    let acq_rel_only = {
        let mut t = sb(true);
        for th in &mut t.threads {
            th.body[1] = fence(FenceSem::AcqRel, Scope::Gpu);
        }
        t
    };
    assert_eq!(check(&acq_rel_only).unwrap().result, CheckResult::Ok);
}

#[test]
fn coherence_of_two_racing_relaxed_writes_keeps_both_final_values() {
    // 2+2W-like: final value of x may be either write, for relaxed writes in different CTAs.
    let t = test(
        "CoWW",
        vec![loc("x")],
        vec![
            thread(0, 0, vec![st(Sem::Relaxed, GPU, "x", imm(1))]),
            thread(1, 1, vec![st(Sem::Relaxed, GPU, "x", imm(2))]),
        ],
        mem_eq("x", 1),
    );
    let v = check(&t).unwrap();
    let finals: Vec<i64> = v.allowed.iter().map(|o| o.0[0]).collect();
    assert_eq!(finals, vec![1, 2]);
}

#[test]
fn atomic_increments_are_not_lost() {
    let t = test(
        "Atom",
        vec![loc("x")],
        vec![
            thread(
                0,
                0,
                vec![atom(Sem::Relaxed, AtomOp::Add, "r0", "x", imm(1), None)],
            ),
            thread(
                1,
                1,
                vec![atom(Sem::Relaxed, AtomOp::Add, "r0", "x", imm(1), None)],
            ),
        ],
        mem_eq("x", 1),
    );
    let v = check(&t).unwrap();
    assert_eq!(v.result, CheckResult::No, "allowed: {:?}", v.allowed);
    // Weak read-modify-writes of a plain increment lose updates.
    let plain = test(
        "Plain",
        vec![loc("x")],
        vec![
            thread(
                0,
                0,
                vec![
                    ld(W, None, "r0", "x"),
                    crate::litmus::ast::Instr::Alu {
                        op: crate::litmus::ast::AluOp::Add,
                        dst: crate::litmus::ast::Reg("r0".into()),
                        a: r("r0"),
                        b: imm(1),
                    },
                    st(W, None, "x", r("r0")),
                ],
            ),
            thread(
                1,
                1,
                vec![atom(Sem::Relaxed, AtomOp::Add, "r0", "x", imm(1), None)],
            ),
        ],
        mem_eq("x", 1),
    );
    assert_eq!(check(&plain).unwrap().result, CheckResult::Ok);
}

#[test]
fn load_buffering_with_dependencies_is_forbidden() {
    let th = |t: usize, a: &str, b: &str| {
        thread(
            t,
            t as u32,
            vec![ld(W, None, "r0", a), st(W, None, b, r("r0"))],
        )
    };
    let t = test(
        "LB+datas",
        vec![loc("x"), loc("y")],
        vec![th(0, "x", "y"), th(1, "y", "x")],
        and(eq(0, "r0", 1), eq(1, "r0", 1)),
    );
    let v = check(&t).unwrap();
    // No value 1 is ever written: the outcome is outside the space altogether.
    assert_eq!(v.result, CheckResult::No);
    assert_eq!(v.domains, vec![vec![0], vec![0]]);
}

#[test]
fn spin_loop_is_cut_after_idle_iterations() {
    // P1 waits for the flag, then reads x: with release/acquire it must see 1.
    let t = test(
        "MP+loop",
        vec![loc("x"), loc("f")],
        vec![
            thread(
                0,
                0,
                vec![st(W, None, "x", imm(1)), st(Sem::Release, GPU, "f", imm(1))],
            ),
            thread(
                1,
                1,
                vec![
                    label("L"),
                    ld(Sem::Acquire, GPU, "r0", "f"),
                    br(CmpOp::Ne, r("r0"), imm(0), "E"),
                    goto("L"),
                    label("E"),
                    ld(W, None, "r1", "x"),
                ],
            ),
        ],
        eq(1, "r1", 0),
    );
    let v = check(&t).unwrap();
    assert_eq!(v.result, CheckResult::No);
    assert_eq!(v.allowed.len(), 1);
    assert_eq!(sc_outcomes(&t).unwrap(), v.allowed);
}

#[test]
fn a_write_before_a_spin_is_read_by_the_other_spinner() {
    // Each thread sets its flag, then waits for the other's: both exit, reading 1.
    let waiter = |id: u32, mine: &str, theirs: &str, label_name: &str| {
        thread(
            id as usize,
            id,
            vec![
                st(Sem::Relaxed, GPU, mine, imm(1)),
                label(label_name),
                ld(Sem::Relaxed, GPU, "r0", theirs),
                br(CmpOp::Eq, r("r0"), imm(0), label_name),
            ],
        )
    };
    let t = test(
        "Handshake",
        vec![loc("x"), loc("y")],
        vec![waiter(0, "x", "y", "L0"), waiter(1, "y", "x", "L1")],
        and(eq(0, "r0", 1), eq(1, "r0", 1)),
    );
    let v = check(&t).unwrap();
    assert_eq!(v.result, CheckResult::Ok);
    assert_eq!(v.allowed.len(), 1);
    assert_eq!(sc_outcomes(&t).unwrap(), v.allowed);
}

#[test]
fn barriers_order_a_cta() {
    let t = test(
        "SB+bar",
        vec![loc("x"), loc("y")],
        vec![
            thread(
                0,
                0,
                vec![st(W, None, "x", imm(1)), bar(0), ld(W, None, "r0", "y")],
            ),
            thread(
                1,
                0,
                vec![st(W, None, "y", imm(1)), bar(0), ld(W, None, "r0", "x")],
            ),
        ],
        and(eq(0, "r0", 0), eq(1, "r0", 0)),
    );
    let v = check(&t).unwrap();
    assert_eq!(v.result, CheckResult::No);
    assert_eq!(v.allowed.len(), 1);
}

#[test]
fn proxy_fence_orders_surface_write_with_generic_read() {
    let body = |fenced: bool| {
        let mut b = vec![stp(Proxy::Surface, "s", 1)];
        if fenced {
            b.push(crate::litmus::ast::Instr::Fence(
                crate::litmus::ast::Fence::Proxy(crate::litmus::ast::ProxyFenceKind::Surface),
            ));
        }
        b.push(ldp(Proxy::Generic, "r0", "x"));
        b
    };
    let mk = |fenced| {
        test(
            "CoWR-proxy",
            vec![loc("x"), alias("s", Proxy::Surface, "x")],
            vec![thread(0, 0, body(fenced))],
            eq(0, "r0", 0),
        )
    };
    assert_eq!(check(&mk(false)).unwrap().result, CheckResult::Ok);
    assert_eq!(check(&mk(true)).unwrap().result, CheckResult::No);
}

#[test]
fn check_is_deterministic() {
    let t = mp(Sem::Relaxed, Sem::Acquire, true);
    assert_eq!(check(&t).unwrap(), check(&t).unwrap());
}

/// Dat3M's quorum test shape: P0 writes `x` then waits at barrier 1 (resource 1, quorum
/// `q`), P1 waits then reads `x`, P2 only waits; the condition asks whether P1 reads 0.
fn quorum_test(q: crate::litmus::ast::Value) -> crate::litmus::ast::Test {
    test(
        "MP+bar-quorum",
        vec![loc("x")],
        vec![
            thread(0, 0, vec![st(W, None, "x", imm(1)), bar_quorum(1, 1, q)]),
            thread(1, 0, vec![bar_quorum(1, 1, q), ld(W, None, "r0", "x")]),
            thread(2, 0, vec![bar_quorum(1, 1, q)]),
        ],
        eq(1, "r0", 0),
    )
}

#[test]
fn a_quorum_below_the_participants_synchronises_only_some() {
    // Quorum 2 of 3: P1 and P2 may synchronise without P0, so P1 may miss P0's write.
    let v = check(&quorum_test(2)).unwrap();
    assert_eq!(v.result, CheckResult::Ok);
    assert_eq!(v.allowed.len(), 2);
    assert!(v.hangs.is_empty());
}

#[test]
fn a_quorum_of_every_participant_synchronises_all() {
    let v = check(&quorum_test(3)).unwrap();
    assert_eq!(v.result, CheckResult::No);
    assert_eq!(v.allowed.len(), 1);
}

#[test]
fn a_quorum_above_the_participants_hangs_and_says_so() {
    let t = quorum_test(4);
    let v = check(&t).unwrap();
    assert_eq!(v.result, CheckResult::No);
    assert!(v.allowed.is_empty());
    assert_eq!(
        v.hangs,
        vec!["barrier 1 (resource 1) needs 4 threads, at most 3 arrive".to_string()]
    );
    let text = crate::model::explain::explain(&t, &v).text;
    assert!(
        text.contains("no execution completes: barrier 1 (resource 1) needs 4 threads"),
        "{text}"
    );
}

#[test]
fn a_barrier_one_thread_skips_hangs_the_others() {
    // P1 jumps over its barrier 0: P0 waits for it for ever, so no execution completes.
    let t = test(
        "bar-skipped",
        vec![loc("x")],
        vec![
            thread(0, 0, vec![bar(0), st(W, None, "x", imm(1))]),
            thread(
                1,
                0,
                vec![
                    br(CmpOp::Eq, imm(0), imm(0), "L"),
                    bar(0),
                    crate::litmus::ast::Instr::Label(crate::litmus::ast::Label("L".into())),
                    ld(W, None, "r0", "x"),
                ],
            ),
        ],
        eq(1, "r0", 0),
    );
    let v = check(&t).unwrap();
    assert!(v.allowed.is_empty());
    assert_eq!(
        v.hangs,
        vec!["barrier 0 needs 2 threads, at most 1 arrive".to_string()]
    );
}

/// The `cause` edges of `ex`, as `(from, to)` event labels.
fn cause_edges(ex: &super::Execution) -> Vec<(String, String)> {
    let name = |i: usize| super::explain::event_name(ex, i);
    ex.edges
        .iter()
        .filter(|(r, _, _)| *r == super::Relation::Cause)
        .map(|&(_, a, b)| (name(a), name(b)))
        .collect()
}

#[test]
fn cause_edges_show_what_no_other_edge_does() {
    let strong = check(&mp(Sem::Release, Sem::Acquire, false)).unwrap();
    let graphs = strong.witnesses.iter();
    for ex in graphs.chain(strong.excluded.iter().map(|e| &*e.execution)) {
        for &(_, a, b) in ex
            .edges
            .iter()
            .filter(|(r, _, _)| *r == super::Relation::Cause)
        {
            assert!(ex.events[a].thread.is_some(), "cause from an initial write");
            let joining = ex.edges.iter().filter(|e| e.1 == a && e.2 == b).count();
            assert_eq!(joining, 1, "e{a}->e{b} drawn twice in {:?}", ex.edges);
        }
    }
    // The write of x causes the read of x through the release/acquire pair. Where the read
    // reads from it, `rf` already shows that; where it reads the initial value, the excluded
    // outcome's causality cycle is closed by that `cause` edge.
    let w_r = ("P0.0:W.weak x=1".to_string(), "P1.1:R.weak x=1".to_string());
    let seen = strong
        .witnesses
        .iter()
        .find(|w| w.outcome.0 == vec![1, 1])
        .unwrap();
    assert!(!cause_edges(seen).contains(&w_r), "{:?}", seen.edges);
    let ex = strong
        .excluded
        .iter()
        .find(|e| e.outcome.0 == vec![1, 0])
        .unwrap();
    let (x, y) = (ex.cycle[0], ex.cycle[1]);
    assert!(
        ex.execution.edges.contains(&(super::Relation::Cause, y, x)),
        "{:?}",
        ex.execution.edges
    );
    let w_r0 = ("P0.0:W.weak x=1".to_string(), "P1.1:R.weak x=0".to_string());
    assert_eq!(cause_edges(&ex.execution), vec![w_r0]);
}

#[test]
fn the_outcomes_of_one_candidate_excluded_before_its_coherence_share_one_execution() {
    // Load buffering through release and acquire, with a third thread writing 2 to both:
    // reading both stores closes a causality cycle, found before a coherence order is
    // chosen, so each final value of `x` and `y` (1 or 2; never the initial 0, which every
    // coherence order puts first) is an excluded outcome of the same candidate.
    let text = "PTX LB+rel+acq
{ x=0; y=0; }
 P0@cta 0,gpu 0        | P1@cta 1,gpu 0        | P2@cta 2,gpu 0 ;
 ld.acquire.gpu r0, x  | ld.acquire.gpu r1, y  | st.weak x, 2   ;
 st.release.gpu y, 1   | st.release.gpu x, 1   | st.weak y, 2   ;
exists (P0:r0 == 1 /\\ P1:r1 == 1 /\\ x == 1 /\\ y == 1)
";
    let t = crate::litmus::parse(text, std::path::Path::new("lb.litmus")).unwrap();
    let v = check(&t).unwrap();
    let cyclic: Vec<_> = v
        .excluded
        .iter()
        .filter(|e| e.outcome.0[..2] == [1, 1])
        .collect();
    assert_eq!(cyclic.len(), 4, "x and y each 1 or 2: {cyclic:?}");
    assert!(cyclic
        .iter()
        .all(|e| e.outcome.0[2..].iter().all(|&v| v > 0)));
    assert!(cyclic.iter().all(|e| e.axiom == Axiom::Causality));
    let first = &cyclic[0].execution;
    assert!(
        cyclic
            .iter()
            .all(|e| std::sync::Arc::ptr_eq(&e.execution, first)),
        "one graph for the four outcomes"
    );
}

#[test]
fn a_thread_refused_for_its_paths_is_told_why_its_loop_has_them() {
    // P0 adds until it reads 2, against another add: each unrolled read forks per value.
    let text = "PTX Count\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n L0: | \
                atom.relaxed.gpu.add r0, x, 1 ;\n atom.relaxed.gpu.add r0, x, 1 | ;\n \
                blt r0, 2, L0 | ;\nexists (x == 2)\n";
    let t = crate::litmus::parse(text, std::path::Path::new("count.litmus")).unwrap();
    match check(&t) {
        Err(ModelError::TooLarge { what }) => {
            assert!(what.starts_with("P0 has more than 100000 paths"), "{what}");
            assert!(what.contains("unrolled up to 16 times"), "{what}");
        }
        other => panic!("not refused: {other:?}"),
    }
}
