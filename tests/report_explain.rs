//! A report explains a violation from its record alone: each forbidden outcome seen with the
//! axiom and cycle the checker gives, the test's source and the replay command; forbidden
//! outcomes never seen are plotted with their bound ("0 in N, rate < …"); a matrix cell of
//! many tests stays short; code spans keep the condition's backslash single.

mod common;

use common::{load, scratch};
use ptx_litmus::litmus::ast::Test;
use ptx_litmus::outcome::{Histogram, Outcome};
use ptx_litmus::report::{plot, table, write_report};
use ptx_litmus::results::{
    write_result_set, Observed, Parameters, RunRecord, TestIdentity, TestRecord, ViolationDetail,
};
use ptx_litmus::verdict::Status;

/// The record of `test` observed with `counts` (values in observable order, count).
fn record(test: &Test, counts: &[(&[i64], u64)]) -> TestRecord {
    let model = ptx_litmus::model::check(test).unwrap();
    let hash = ptx_litmus::litmus::hash(test);
    let histogram = Histogram {
        counts: counts
            .iter()
            .map(|(v, n)| (Outcome(v.to_vec()), *n))
            .collect(),
        unexpected: 0,
    };
    let printed = ptx_litmus::litmus::print(test);
    let mut rec = TestRecord::new(
        TestIdentity {
            name: test.name.clone(),
            path: format!("litmus/corr/{}.litmus", test.name),
            hash: hash.clone(),
            condition: printed.lines().last().unwrap().to_string(),
        },
        &test.condition,
        &hash,
        &model,
        Observed {
            hash: &hash,
            histogram: &histogram,
            skipped: 0,
            elapsed_s: 1.0,
            parts: &[],
        },
    )
    .unwrap();
    if rec.verdict.status == Status::Violation {
        rec.violation = Some(ViolationDetail::of(test, &model, &rec.verdict));
    }
    rec
}

#[test]
fn a_violation_is_explained_with_axiom_cycle_source_and_replay() {
    let test = load("litmus/corr/CoRR+rlx.gpu+rlx.gpu.litmus");
    let seen = record(&test, &[(&[0, 0], 500), (&[1, 0], 3), (&[1, 1], 497)]);
    assert_eq!(seen.verdict.status, Status::Violation);
    let detail = seen.violation.clone().unwrap();
    let why = &detail.outcomes[0];
    let axiom = why.axiom.as_deref().unwrap();
    assert!(
        ["coherence", "sc_per_location", "causality"].contains(&axiom),
        "{axiom}"
    );
    assert!(why.cycle.as_deref().unwrap().contains("-->"));
    let dir = scratch("explain");
    let mut run = RunRecord::new("r", "cuda", vec![], Parameters::default(), "t");
    run.test_paths = vec![seen.path.clone()];
    write_result_set(&dir, &run, std::slice::from_ref(&seen), false).unwrap();
    let set = ptx_litmus::results::read_result_set(&dir).unwrap();
    assert_eq!(set.tests[0].violation, Some(detail.clone()), "kept on disk");
    write_report(&set, &dir, false).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let replay = table::replay_command();
    for page in [&md, &html] {
        assert!(page.contains(&format!("excluded by {axiom}")), "{page}");
        assert!(page.contains("st.relaxed.gpu x, 1"), "the source is shown");
        assert!(page.contains(&replay), "{replay}");
    }
    assert!(md.contains(why.cycle.as_deref().unwrap()));
    // Code spans show the condition as written: one backslash, not two.
    assert!(md.contains("`exists (P1:r0 == 1 /\\ P1:r1 == 0)`"), "{md}");
}

#[test]
fn a_forbidden_condition_never_seen_is_plotted_with_its_bound() {
    let test = load("litmus/corr/CoRR+rlx.gpu+rlx.gpu.litmus");
    let clean = record(&test, &[(&[0, 0], 600), (&[1, 1], 400)]);
    assert_eq!(clean.verdict.status, Status::Conformant);
    let svg = plot::svg(&clean).unwrap();
    assert!(svg.contains("forbidden: exists"), "the condition's row");
    let bound = ptx_litmus::report::format::rate(ptx_litmus::verdict::unseen_upper_bound_95(1000));
    assert!(
        bound.starts_with("2.99e-3") || bound.starts_with("3.00e-3"),
        "about 3/N"
    );
    assert!(
        svg.contains(&format!("0 in 1,000: rate &lt; {bound}")),
        "{svg}"
    );
    let seen = record(&test, &[(&[0, 0], 600), (&[1, 0], 1), (&[1, 1], 399)]);
    assert!(
        !plot::svg(&seen).unwrap().contains("0 in 1,000"),
        "seen: a bar"
    );
}

#[test]
fn a_crowded_matrix_cell_names_its_violations_and_counts_the_rest() {
    let test = load("litmus/corr/CoRR+rlx.gpu+rlx.gpu.litmus");
    let mut tests = Vec::new();
    for i in 0..40 {
        let mut t = record(&test, &[(&[0, 0], 10)]);
        t.name = format!("T{i:02}");
        tests.push(t);
    }
    let mut bad = record(&test, &[(&[1, 0], 1), (&[0, 0], 9)]);
    bad.name = "Z-violating".into();
    tests.push(bad);
    let refs: Vec<&TestRecord> = tests.iter().collect();
    let (shown, left) = table::cell_names(&refs);
    assert_eq!(shown[0].name, "Z-violating");
    assert_eq!(shown.len(), table::CELL_NAMES);
    assert_eq!(left, 41 - table::CELL_NAMES);
}
