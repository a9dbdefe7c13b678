//! The plain-text conformance summary printed at the end of `run` (and by `report`):
//! violations first, then every test with its counts, condition observation and weak rate.

use super::format;
use crate::results::{judge_model, JudgeModel, RunRecord, TestRecord};
use crate::text::pad;
use crate::verdict::Status;
use std::fmt::Write;

/// The summary of a run: one line per test, violations first, then totals.
pub fn render(run: &RunRecord, tests: &[TestRecord]) -> String {
    let mut s = String::new();
    let machine = run
        .provenance
        .get("gpu")
        .or_else(|| run.provenance.get("cpu"))
        .map(|m| format!(" ({m})"))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "run {} on {}{machine}, seed {}{}",
        run.run_id,
        run.backend,
        run.parameters.seed,
        if run.partial { ", PARTIAL" } else { "" }
    );
    let model = JudgeModel::of_run(run);
    if model.checker != judge_model::BUILT_IN {
        let _ = writeln!(s, "judged by the model {}", model.label());
    }
    let name_w = tests
        .iter()
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    // The CPU backend's rates hold for the CPU it got: shown per test when recorded.
    let cpu = tests.iter().any(|t| t.notes.contains_key("cpu_used"));
    let _ = writeln!(
        s,
        "{:<10}  {}  {:>15}  {:>13}  {:>13}  {:>9}  {:>9}  {:<9}  {:>9}{}",
        "status",
        pad("test", name_w),
        "instances",
        "sc",
        "weak",
        "forbidden",
        "unexpect",
        "condition",
        "weak/inst",
        if cpu { "    cpu" } else { "" }
    );
    for t in ordered(tests) {
        let v = &t.verdict;
        let status = match v.status {
            Status::Violation => "VIOLATION",
            Status::Conformant | Status::NoData => v.status.as_str(),
        };
        let _ = writeln!(
            s,
            "{:<10}  {}  {:>15}  {:>13}  {:>13}  {:>9}  {:>9}  {:<9}  {:>9}{}",
            status,
            pad(&t.name, name_w),
            format::count(v.instances),
            format::count(v.counts.sc),
            format::count(v.counts.weak),
            format::count(v.counts.forbidden),
            format::count(v.counts.unexpected),
            v.observation.to_string(),
            format::rate(t.rates.weak_per_instance),
            match (cpu, t.notes.get("cpu_used")) {
                (true, Some(c)) => format!("  {c:>5}"),
                (true, None) => format!("  {:>5}", "-"),
                (false, _) => String::new(),
            }
        );
    }
    let _ = writeln!(s, "{}", totals_line(run, tests));
    s
}

/// Violations first (most violating instances first), then by name and path.
pub fn ordered(tests: &[TestRecord]) -> Vec<&TestRecord> {
    let mut v: Vec<&TestRecord> = tests.iter().collect();
    v.sort_by(|a, b| {
        let key = |t: &TestRecord| {
            (
                t.verdict.status != Status::Violation,
                std::cmp::Reverse(t.verdict.counts.forbidden + t.verdict.counts.unexpected),
            )
        };
        key(a)
            .cmp(&key(b))
            .then_with(|| (&a.name, &a.path).cmp(&(&b.name, &b.path)))
    });
    v
}

/// Counts of tests by status, in one sentence.
pub fn totals_line(run: &RunRecord, tests: &[TestRecord]) -> String {
    let n = |st: Status| tests.iter().filter(|t| t.verdict.status == st).count();
    let weak = tests.iter().filter(|t| t.verdict.counts.weak > 0).count();
    let mut line = format!(
        "{} tests: {} violation{}, {} conformant, {} no data; weak behaviour seen in {} test{}",
        tests.len(),
        n(Status::Violation),
        if n(Status::Violation) == 1 { "" } else { "s" },
        n(Status::Conformant),
        n(Status::NoData),
        weak,
        if weak == 1 { "" } else { "s" },
    );
    if !run.skipped_tests.is_empty() {
        let _ = write!(line, "; {} not run", run.skipped_tests.len());
    }
    line
}
