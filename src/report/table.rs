//! What the HTML and Markdown reports show, computed once so the two always agree: run facts,
//! per-test rows, violating outcomes and the test × verdict matrix.

use super::format;
use crate::harness::notes;
use crate::litmus::ast::Quantifier;
use crate::model::CheckResult;
use crate::results::{JudgeModel, ResultSet, RunRecord, TestRecord};
use crate::verdict::{Class, Observation, Status};
use std::collections::BTreeMap;

/// The explanation printed under every report.
pub const NOTE: &str = "A violation is an observed outcome that the PTX model forbids, or a value \
outside the test's outcome space. Absence is bounded, not claimed: an allowed outcome not seen in \
N instances has a rate below 1 - 0.05^(1/N) (about 3/N) with 95 % confidence; it is never \
reported as forbidden. Rates are per observed instance and per second of test time.";

/// The run's facts as label/value pairs, in a fixed order.
pub fn run_facts(run: &RunRecord) -> Vec<(String, String)> {
    let mut v = vec![
        ("run".to_string(), run.run_id.clone()),
        ("backend".to_string(), run.backend.clone()),
        ("model".to_string(), JudgeModel::of_run(run).label()),
    ];
    for (k, val) in &run.provenance {
        if !JudgeModel::is_key(k) {
            v.push((k.clone(), val.clone()));
        }
    }
    parameter_facts(run, &mut v);
    if let Some(s) = run.shard {
        v.push(("shard".into(), s.to_string()));
    }
    if !run.merged_from.is_empty() {
        v.push(("merged from".into(), run.merged_from.join(", ")));
    }
    if !run.merged_parts.is_empty() {
        let seeds: Vec<String> = run
            .merged_parts
            .iter()
            .map(|p| format!("{} (seed {})", p.run_id, p.parameters.seed))
            .collect();
        v.push(("parts".into(), seeds.join(", ")));
    }
    v.push(("started".into(), run.started.clone()));
    v.push(("finished".into(), run.finished.clone()));
    v.push(("elapsed".into(), format::seconds(run.elapsed_s)));
    v.push((
        "partial".into(),
        if run.partial { "yes" } else { "no" }.into(),
    ));
    v.push((
        "tool".into(),
        format!(
            "ptx-litmus {} ({}, {})",
            run.tool_version, run.git_revision, run.build_profile
        ),
    ));
    v.push(("command line".into(), run.command_line.join(" ")));
    v
}

/// The run's parameters as label/value pairs: preset, stress, seed, budget, incantations.
fn parameter_facts(run: &RunRecord, v: &mut Vec<(String, String)>) {
    let p = &run.parameters;
    // The stress settings are the GPU kernel's; a CPU run records them (they name the
    // experiment for `merge`) but does not use them.
    let gpu_only = if run.backend == "cpu" {
        " (GPU only, unused here)"
    } else {
        ""
    };
    v.push((format!("preset{gpu_only}"), p.preset.clone()));
    if !p.stress_set.is_empty() {
        let set: Vec<String> = p
            .stress_set
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        v.push(("stress set".into(), set.join(", ")));
    }
    v.push(("seed".into(), p.seed.to_string()));
    if let Some(i) = p.iterations {
        v.push(("iterations".into(), i.to_string()));
    }
    if let Some(i) = p.instances_per_iteration {
        v.push(("instances per iteration".into(), i.to_string()));
    }
    if let Some(s) = p.time_budget_s {
        v.push(("time budget per test".into(), format::seconds(s)));
    }
    if !p.incantations.is_empty() {
        let list: Vec<String> = p
            .incantations
            .iter()
            .map(|(k, val)| format!("{k}={}", json_scalar(val)))
            .collect();
        v.push((format!("incantations{gpu_only}"), list.join(", ")));
    }
    for (k, val) in &p.other {
        v.push((k.clone(), json_scalar(val)));
    }
}

fn json_scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An outcome's text, `P1:r0=1 P1:r1=0`.
pub fn outcome_text(t: &TestRecord, values: &[i64]) -> String {
    t.observables
        .iter()
        .zip(values)
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One violating outcome: its text, count, class, and why the model forbids it (when known).
pub type Violating = (String, u64, Class, Option<String>);

/// Every forbidden or unexpected outcome observed.
pub fn violating_outcomes(t: &TestRecord) -> Vec<Violating> {
    let mut v: Vec<Violating> = t
        .verdict
        .outcomes
        .iter()
        .filter(|o| o.count > 0 && matches!(o.class, Class::Forbidden | Class::Unexpected))
        .map(|o| {
            let why = match o.class {
                Class::Forbidden => why_forbidden(t, &o.values.0),
                _ => Some("a value no write of the test produces".to_string()),
            };
            (outcome_text(t, &o.values.0), o.count, o.class, why)
        })
        .collect();
    let listed: u64 = v
        .iter()
        .filter(|x| x.2 == Class::Unexpected)
        .map(|x| x.1)
        .sum();
    let bucket = t.verdict.counts.unexpected - listed;
    if bucket > 0 {
        v.push((
            "values outside the outcome space".into(),
            bucket,
            Class::Unexpected,
            None,
        ));
    }
    v
}

/// Why the model forbids the observed outcome `values` of `t`: the axiom and its cycle, as
/// recorded with the violation; `None` for an older record without them.
pub fn why_forbidden(t: &TestRecord, values: &[i64]) -> Option<String> {
    let o = t
        .violation
        .as_ref()?
        .outcomes
        .iter()
        .find(|o| o.values.0 == values)?;
    Some(match (&o.axiom, &o.cycle) {
        (Some(axiom), Some(cycle)) => format!("excluded by {axiom}; cycle {cycle}"),
        (Some(axiom), None) => format!("excluded by {axiom}"),
        _ => "no candidate execution of the model produces it".to_string(),
    })
}

/// The command that runs a set again with the same tests, seed and settings, from the set's
/// folder (a report names no folder, so a copy of the set renders the same bytes).
pub fn replay_command() -> String {
    format!("ptx-litmus run --replay {}", crate::results::RUN_FILE)
}

/// One row of the per-test table, already formatted.
pub struct Row {
    /// `VIOLATION`, `conformant` or `no data`.
    pub status: String,
    /// The condition's observation with its witness counts.
    pub observed: String,
    /// Instances.
    pub instances: String,
    /// The weak outcomes seen with their counts, or `none`.
    pub weak_seen: String,
    /// Weak instances per instance.
    pub weak_per_instance: String,
    /// Weak instances per second.
    pub weak_per_second: String,
    /// The 95 % bound on each unseen allowed outcome, with how many there are.
    pub unseen_bound: String,
    /// Test time, with the cores' worth of CPU the CPU backend got (`0.5 s (cpu 1.96)`).
    pub time: String,
}

impl Row {
    /// The row of a test.
    pub fn of(t: &TestRecord) -> Row {
        let v = &t.verdict;
        let weak: Vec<String> = v
            .weak_seen()
            .map(|o| {
                format!(
                    "{} ×{}",
                    outcome_text(t, &o.values.0),
                    format::count(o.count)
                )
            })
            .collect();
        let unseen = v.unseen_allowed().count();
        Row {
            status: match v.status {
                Status::Violation => "VIOLATION".into(),
                s => s.as_str().into(),
            },
            observed: format!(
                "{} ({} of {})",
                v.observation,
                format::count(v.positive),
                format::count(v.instances)
            ),
            instances: format::count(v.instances),
            weak_seen: if weak.is_empty() {
                "none".into()
            } else {
                weak.join("; ")
            },
            weak_per_instance: format::rate(t.rates.weak_per_instance),
            weak_per_second: format::rate(t.rates.weak_per_second),
            unseen_bound: match t.rates.unseen_upper_bound_95 {
                Some(b) if unseen > 0 => format!(
                    "{} ({unseen} outcome{})",
                    format::rate(Some(b)),
                    if unseen == 1 { "" } else { "s" }
                ),
                _ if unseen > 0 => format!("no data ({unseen} unseen)"),
                _ => "all seen".into(),
            },
            time: match t.notes.get(notes::CPU_USED) {
                Some(c) => format!("{} (cpu {c})", format::seconds(t.observed.elapsed_s)),
                None => format::seconds(t.observed.elapsed_s),
            },
        }
    }
}

/// The most test names a matrix cell shows; a fuller cell shows its violations and the first
/// names up to this many, then how many more there are (each test has its row in the table).
pub const CELL_NAMES: usize = 8;

/// The file stem of `t`, one of `set`'s tests, from `stems` (in the order of `set.tests`):
/// what its anchor and plot file are named after.
pub fn stem_of(set: &ResultSet, stems: &[String], t: &TestRecord) -> String {
    set.tests
        .iter()
        .position(|x| std::ptr::eq(x, t))
        .and_then(|i| stems.get(i))
        .cloned()
        .unwrap_or_default()
}

/// What follows the names a matrix cell shows: `, … and N more`, or nothing.
pub fn and_more(left: usize) -> String {
    if left > 0 {
        format!(", … and {left} more")
    } else {
        String::new()
    }
}

/// The names a matrix cell shows: violations first, then by name, at most [`CELL_NAMES`]
/// (violations are never left out), and how many tests are left out.
pub fn cell_names<'a>(cell: &[&'a TestRecord]) -> (Vec<&'a TestRecord>, usize) {
    let mut v: Vec<&TestRecord> = cell.to_vec();
    v.sort_by_key(|t| (t.verdict.status != Status::Violation, t.name.clone()));
    let violations = v
        .iter()
        .filter(|t| t.verdict.status == Status::Violation)
        .count();
    v.truncate(CELL_NAMES.max(violations));
    let left = cell.len() - v.len();
    (v, left)
}

/// The test × verdict matrix: rows by quantifier and model answer, columns by observation.
pub struct Matrix<'a> {
    /// Column headings.
    pub columns: Vec<&'static str>,
    /// Row heading and one cell (a list of tests) per column.
    pub rows: Vec<(String, Vec<Vec<&'a TestRecord>>)>,
}

/// Builds the matrix; only rows that hold a test appear.
pub fn matrix(tests: &[TestRecord]) -> Matrix<'_> {
    let columns = vec!["Never", "Sometimes", "Always", "no data"];
    let mut rows: BTreeMap<(u8, u8), Vec<Vec<&TestRecord>>> = BTreeMap::new();
    for t in tests {
        let q = match t.verdict.quantifier {
            Quantifier::Exists => 0,
            Quantifier::NotExists => 1,
            Quantifier::Forall => 2,
        };
        let r = match t.model.result {
            CheckResult::Ok => 0,
            CheckResult::No => 1,
        };
        let col = if t.verdict.status == Status::NoData {
            3
        } else {
            match t.verdict.observation {
                Observation::Never => 0,
                Observation::Sometimes => 1,
                Observation::Always => 2,
            }
        };
        rows.entry((q, r)).or_insert_with(|| vec![Vec::new(); 4])[col].push(t);
    }
    let rows = rows
        .into_iter()
        .map(|((q, r), cells)| {
            let q = ["exists", "~exists", "forall"][q as usize];
            let r = ["Ok", "No"][r as usize];
            (format!("{q}, model {r}"), cells)
        })
        .collect();
    Matrix { columns, rows }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Parameters;

    #[test]
    fn a_cpu_run_says_its_stress_settings_are_the_gpus() {
        let label = |backend: &str| {
            let run = RunRecord::new("r", backend, vec![], Parameters::default(), "t");
            run_facts(&run)
                .into_iter()
                .find(|(k, _)| k.starts_with("preset"))
                .unwrap()
                .0
        };
        assert_eq!(label("cpu"), "preset (GPU only, unused here)");
        assert_eq!(label("cuda"), "preset");
    }
}
