//! Differential property test: the built-in checker and the project's cat transcription of the
//! PTX v7.5 model (`models/ptx-v7.5.cat`, run by the cat interpreter) allow exactly the same
//! outcomes on seeded random tests (2–4 threads over three CTAs; `ld`, `st`, `fence`, `atom`,
//! `red` with every semantics and scope), and on every critical cycle of a broad pool of edges
//! up to six long. Bounded to seconds; `ptx-litmus model-diff` runs
//! the long version and compares with any other `.cat` file.

mod common;

use ptx_litmus::cat::builtin::PTX_7_5;
use ptx_litmus::cat::differential::{compare, random_test, run};
use ptx_litmus::cat::load;
use ptx_litmus::gen::random::Stream;
use ptx_litmus::gen::Family;
use ptx_litmus::litmus;
use ptx_litmus::model::Relation;
use std::path::Path;

#[test]
fn built_in_checker_and_own_v7_5_model_agree_on_random_tests() {
    let model = load(PTX_7_5).unwrap();
    let s = run(&model, 2026, 150, Stream::Plain);
    eprint!("{}", s.report(true));
    assert!(s.undecided.is_empty(), "{}", s.report(false));
    assert!(s.tests == 150 && s.with_rmw > 40, "{}", s.report(false));
    assert_eq!(s.agree, s.tests, "{}", s.report(true));
}

/// The allowed outcomes of a test, as the built-in checker computes them.
type Allowed = std::collections::BTreeSet<ptx_litmus::outcome::Outcome>;

/// Checks that tests `0..60` of `stream` of seed 2026 agree with the own model, and counts
/// those whose allowed set stands in `relation` to that of the same test in the plain stream.
fn agreeing_stream(stream: Stream, relation: fn(&Allowed, &Allowed) -> bool) -> usize {
    let model = load(PTX_7_5).unwrap();
    let s = run(&model, 2026, 60, stream);
    assert!(s.undecided.is_empty(), "{}", s.report(false));
    assert_eq!(s.agree, s.tests, "{}", s.report(true));
    let allowed = |i, stream| {
        let (_, t) = random_test(2026, i, stream);
        ptx_litmus::model::check(&t).unwrap().allowed
    };
    (0..60)
        .filter(|&i| relation(&allowed(i, stream), &allowed(i, Stream::Plain)))
        .count()
}

/// The barrier stream: the same agreement, and the barriers matter: they take outcomes away
/// from some tests (a barrier that synchronised nothing would pass the first check alone).
#[test]
fn built_in_checker_and_own_v7_5_model_agree_on_random_barrier_tests() {
    let narrowed = agreeing_stream(Stream::Barriers, |b, p| b.len() < p.len());
    assert!(
        narrowed >= 10,
        "barriers narrowed only {narrowed} of 60 tests"
    );
}

/// The proxy stream: the same agreement, and the proxies matter: reading or writing through
/// an alias or another proxy changes the allowed outcomes of some tests.
#[test]
fn built_in_checker_and_own_v7_5_model_agree_on_random_proxy_tests() {
    let changed = agreeing_stream(Stream::Proxies, |x, p| x != p);
    assert!(changed >= 10, "proxies changed only {changed} of 60 tests");
}

/// Every critical cycle of up to six edges over a broad pool of edges (`gen --enumerate`,
/// [`common::BROAD_CYCLES`]): the two sides decide each one and agree.
#[test]
fn built_in_checker_and_own_v7_5_model_agree_on_every_enumerated_cycle() {
    let family = Family::parse(common::BROAD_CYCLES, Path::new("broad")).unwrap();
    let model = load(PTX_7_5).unwrap();
    let tests = family.generate().unwrap();
    for g in &tests {
        let c = compare(&model, &g.test).unwrap_or_else(|e| panic!("{}: {e}", g.test.name));
        assert!(c.agrees(), "{}: {c:?}", g.test.name);
    }
    assert!(tests.len() >= 690, "only {} cycles", tests.len());
}

/// IRIW widened to three writers and three readers with `fence.sc` between each reader's
/// loads: the Fence-SC orders that causality forces (each reader's fence after the one before
/// it in the readers' cycle) settle each of the 2^9 reads-from choices with its first
/// candidate, where trying the fence pairs' orders one by one took 1,817 candidates; and the
/// own model, which orders them blindly, allows the same outcomes.
#[test]
fn forced_fence_sc_orders_decide_each_reads_from_choice_at_once() {
    let text = "family iriw-wide\niriw-wide 3\nbetween sc\nscope gpu\nplacement diffcta\n";
    let tests = Family::parse(text, Path::new("iriw-wide3"))
        .unwrap()
        .generate()
        .unwrap();
    assert_eq!(tests.len(), 1);
    let test = &tests[0].test;
    let v = ptx_litmus::model::check(test).unwrap();
    assert_eq!(v.candidates, 1 << 9, "{}", test.name);
    assert_eq!(v.result, ptx_litmus::model::CheckResult::No);
    let c = compare(&load(PTX_7_5).unwrap(), test).unwrap();
    assert!(c.agrees(), "{c:?}");
}

/// Both sides list every outcome that some candidate gives, allowed or excluded, and nothing
/// else (a location's final value is that of a coherence-last write, never the initial one
/// beside another): on `litmus/` and the published corpus their candidate outcomes are the
/// same. So `CoWW`'s `x == 1`, which only a candidate breaking `coherence` gives, is listed as
/// excluded by it, and `x == 0`, which no candidate gives, is not listed.
#[test]
fn both_sides_list_exactly_the_outcomes_of_their_candidates() {
    let model = load(PTX_7_5).unwrap();
    let tests = common::all_tests();
    for (p, t, _) in &tests {
        let c = compare(&model, t).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(c.agrees(), "{}: {c:?}", p.display());
    }
    assert!(tests.len() >= 200, "only {} tests", tests.len());
    let coww = common::load("litmus/coww/CoWW+wk.litmus");
    let v = ptx_litmus::model::check(&coww).unwrap();
    let listed: Vec<(Vec<i64>, &str)> = v
        .excluded
        .iter()
        .map(|e| (e.outcome.0.clone(), e.axiom.name()))
        .collect();
    assert_eq!(listed, vec![(vec![1], "coherence")]);
}

/// Every step of every excluded outcome's cycle is an edge drawn in the candidate execution
/// shown with it, or (`atomicity`) the step back along an RMW (`--explain` names each step
/// by its edge, and falls back to `cause` for a step it does not find), on `litmus/` and the
/// published corpus. A `fence.sc` pair whose order causality forces once showed `SB`'s
/// from-read as `cause`, without the edge; a from-read or coherence edge implied by others
/// was left out even where the cycle takes it; and `atomicity`'s step back was `cause`.
#[test]
fn each_step_of_an_exclusion_cycle_is_an_edge_of_its_execution() {
    let (mut steps, mut missing) = (0, Vec::new());
    for (p, t, _) in common::all_tests() {
        let v = ptx_litmus::model::check(&t).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        for e in &v.excluded {
            let c = &e.cycle;
            for (i, &a) in c.iter().enumerate() {
                let b = c[(i + 1) % c.len()];
                let edges = &e.execution.edges;
                let drawn = edges.iter().any(|&(_, x, y)| (x, y) == (a, b))
                    || edges.contains(&(Relation::Rmw, b, a));
                if !drawn && c.len() > 1 {
                    missing.push(format!(
                        "{}: {:?} excluded by {}, step e{a} -> e{b} of {c:?}",
                        common::name(&p),
                        e.outcome,
                        e.axiom
                    ));
                }
                steps += 1;
            }
        }
    }
    assert!(missing.is_empty(), "not drawn:\n{}", missing.join("\n"));
    assert!(steps > 1000, "only {steps} cycle steps");
}

/// M4, two `exch` of one location that each read the other's write, one `.cta` in another CTA
/// (so not morally strong): both the built-in checker and the own model forbid it by
/// `no_thin_air`, as NVIDIA's ptx.als does (`rmw` is part of `dep`). docs/model.md gives the
/// reasons; Dat3M's model allows it.
#[test]
fn m4_is_forbidden_by_no_thin_air_on_both_sides() {
    let text = "PTX M4\n{ x=0; }\n P0@cta 1,gpu 0 | P1@cta 0,gpu 0 ;\n \
                atom.relaxed.cta.exch r0, x, 1 | atom.relaxed.gpu.exch r0, x, 2 ;\n\
                exists (P0:r0 == 2 /\\ P1:r0 == 1)\n";
    let test = litmus::parse(text, Path::new("M4.litmus")).unwrap();
    let model = load(PTX_7_5).unwrap();
    let c = compare(&model, &test).unwrap();
    assert!(c.agrees(), "{c:?}");
    let v = ptx_litmus::model::check(&test).unwrap();
    assert_eq!(v.result, ptx_litmus::model::CheckResult::No);
    let e = v
        .excluded
        .iter()
        .find(|e| e.outcome.0 == vec![2, 1])
        .unwrap();
    assert_eq!(e.axiom.name(), "no_thin_air");
    // Without `rmw` in no_thin_air (Dat3M's reading), the same interpreter allows it.
    let dat3m_reading = PTX_7_5.replace(
        "acyclic (rf | addr | data | ctrl | rmw) as no_thin_air",
        "acyclic (rf | addr | data | ctrl) as no_thin_air",
    );
    assert_ne!(dat3m_reading, PTX_7_5);
    let c = compare(&load(&dat3m_reading).unwrap(), &test).unwrap();
    assert_eq!(c.only_cat.len(), 1, "{c:?}");
    assert_eq!(c.only_cat[0].1, "no_thin_air");
}

/// Every critical cycle through RMWs up to six edges ([`common::RMW_CYCLES`]): the own model
/// agrees with the checker on each, and taking `rmw` out of `no_thin_air` (Dat3M's reading)
/// allows more on some, each time an outcome the checker excludes by `no_thin_air` alone.
#[test]
fn enumerated_rmw_cycles_find_the_no_thin_air_class() {
    let family = Family::parse(common::RMW_CYCLES, Path::new("rmw")).unwrap();
    let own = load(PTX_7_5).unwrap();
    let dat3m_reading = load(&PTX_7_5.replace(
        "acyclic (rf | addr | data | ctrl | rmw) as no_thin_air",
        "acyclic (rf | addr | data | ctrl) as no_thin_air",
    ))
    .unwrap();
    let mut differ = 0;
    for g in family.generate().unwrap() {
        let name = &g.test.name;
        let c = compare(&own, &g.test).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(c.agrees(), "{name}: {c:?}");
        let d = compare(&dat3m_reading, &g.test).unwrap();
        assert!(d.only_builtin.is_empty(), "{name}: {d:?}");
        assert!(
            d.only_cat.iter().all(|(_, a)| a == "no_thin_air"),
            "{name}: {d:?}"
        );
        differ += usize::from(!d.agrees());
    }
    assert!(
        differ >= 20,
        "only {differ} RMW cycles tell the readings apart"
    );
}

/// Message passing whose release is a `fence.sc` (C++'s seq_cst store, `fence.sc;
/// st.relaxed` in the PTX ABI) and whose reader acquires: forbidden by `causality` on both
/// sides, since `fence.sc` is a release and an acquire fence (NVIDIA's ptx.als: its release
/// and acquire fences are `FenceAcqRel + FenceSC`). Reading `fence.sc` out of the fence patterns, as Dat3M's file does
/// (they name `F & ACQ_REL`, and its parser tags `fence.sc` `SC` alone), allows it.
#[test]
fn a_fence_sc_is_a_release_fence_on_both_sides() {
    let text = "PTX MP-fence.sc\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
                st.relaxed.gpu x, 1 | ld.acquire.gpu r0, y ;\n \
                fence.sc.gpu | ld.relaxed.gpu r1, x ;\n st.relaxed.gpu y, 1 | ;\n\
                exists (P1:r0 == 1 /\\ P1:r1 == 0)\n";
    let test = litmus::parse(text, Path::new("MP-fence.sc.litmus")).unwrap();
    let c = compare(&load(PTX_7_5).unwrap(), &test).unwrap();
    assert!(c.agrees(), "{c:?}");
    let v = ptx_litmus::model::check(&test).unwrap();
    assert_eq!(v.result, ptx_litmus::model::CheckResult::No);
    let e = v
        .excluded
        .iter()
        .find(|e| e.outcome.0 == vec![1, 0])
        .unwrap();
    assert_eq!(e.axiom.name(), "causality");
    let dat3m_reading = PTX_7_5
        .replace(
            "let release-fence = F & (SC | ACQ_REL | REL)",
            "let release-fence = F & (ACQ_REL | REL)",
        )
        .replace(
            "let acquire-fence = F & (SC | ACQ_REL | ACQ)",
            "let acquire-fence = F & (ACQ_REL | ACQ)",
        );
    assert_ne!(dat3m_reading, PTX_7_5);
    let c = compare(&load(&dat3m_reading).unwrap(), &test).unwrap();
    assert_eq!(c.only_cat.len(), 1, "{c:?}");
    assert_eq!(c.only_cat[0].1, "causality");
}
