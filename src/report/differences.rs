//! How two runs were set up differently: every field of `run.json` that says how or where a run
//! ran (backend, parameters, stress, seed, budget, options, tool and build, machine), compared
//! leaf by leaf, so no difference between two runs goes unsaid in their diff.

use crate::harness::notes;
use crate::results::{RunRecord, TestRecord};
use crate::tune::state::JUMP;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Fields of `run.json` that identify or time a run, or list its tests, rather than say how it
/// ran; they differ between any two runs and are left out.
const NOT_SETUP: [&str; 11] = [
    "format",
    "schema_version",
    "run_id",
    "started",
    "finished",
    "elapsed_s",
    "command_line",
    "test_paths",
    "skipped_tests",
    "merged_from",
    "merged_parts",
];

/// One setting that differs: its dotted path in `run.json` and its value in A and in B
/// (`-` where absent).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The field, e.g. `parameters.seed` or `provenance.driver`.
    pub field: String,
    /// Its value in A.
    pub a: String,
    /// Its value in B.
    pub b: String,
}

/// Every setting that differs between the runs `a` and `b`, by field.
pub fn differences(a: &RunRecord, b: &RunRecord) -> Vec<Difference> {
    let (fa, fb) = (leaves(a), leaves(b));
    let mut fields: Vec<&String> = fa.keys().chain(fb.keys()).collect();
    fields.sort();
    fields.dedup();
    let show = |m: &BTreeMap<String, String>, f: &str| m.get(f).cloned().unwrap_or("-".into());
    fields
        .into_iter()
        .filter(|f| fa.get(*f) != fb.get(*f))
        .map(|f| Difference {
            field: f.clone(),
            a: show(&fa, f),
            b: show(&fb, f),
        })
        .collect()
}

/// The cores' placement, when it differs between two CPU runs: the median of each run's
/// tests' round trips between two cores ([`notes::ROUND_TRIP_NS`]), shown when one is
/// [`JUMP`] times the other or more. A virtual machine's host moves its cores, and the CPU
/// backend's weak rates move with them as much as with any setting (`docs/cpu-backend.md`).
pub fn placement(a: &[TestRecord], b: &[TestRecord]) -> Option<Difference> {
    let median = |tests: &[TestRecord]| median_round_trip(tests.iter().map(|t| &t.notes));
    between(median(a)?, median(b)?)
}

/// The placement difference between median round trips `ma` and `mb`, if they are apart.
fn between(ma: f64, mb: f64) -> Option<Difference> {
    (ma.max(mb) >= JUMP * ma.min(mb)).then(|| Difference {
        field: format!(
            "tests' median {} (the cores' placement)",
            notes::ROUND_TRIP_NS
        ),
        a: format!("{ma:.0}"),
        b: format!("{mb:.0}"),
    })
}

/// The median round trip of the tests (by their notes) that measured one.
fn median_round_trip<'a>(tests: impl Iterator<Item = &'a BTreeMap<String, String>>) -> Option<f64> {
    let mut ns: Vec<f64> = tests
        .filter_map(|n| n.get(notes::ROUND_TRIP_NS)?.parse().ok())
        .filter(|ns: &f64| *ns > 0.0)
        .collect();
    ns.sort_by(f64::total_cmp);
    ns.get(ns.len() / 2).copied()
}

/// The run's setup as `dotted.path → value`, nulls left out.
fn leaves(run: &RunRecord) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Ok(Value::Object(top)) = serde_json::to_value(run) {
        for (k, v) in top {
            if !NOT_SETUP.contains(&k.as_str()) {
                flatten(&k, &v, &mut out);
            }
        }
    }
    out
}

fn flatten(path: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Null => {}
        Value::Object(m) => {
            for (k, v) in m {
                flatten(&format!("{path}.{k}"), v, out);
            }
        }
        Value::String(s) => {
            out.insert(path.into(), s.clone());
        }
        other => {
            out.insert(path.into(), other.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Parameters;

    fn run(id: &str, seed: u64, time: Option<f64>) -> RunRecord {
        let p = Parameters {
            preset: "basic".into(),
            seed,
            time_budget_s: time,
            instances: time.is_none().then_some(100_000),
            ..Parameters::default()
        };
        let mut r = RunRecord::new(
            id,
            "cpu",
            vec!["ptx-litmus".into()],
            p,
            "2026-01-01T00:00:00Z",
        );
        r.provenance.insert("cpu".into(), "Xeon".into());
        r
    }

    #[test]
    fn every_setup_difference_and_nothing_else() {
        let a = run("a", 1, None);
        let mut b = run("b", 7, Some(0.3));
        b.finished = "2026-01-02T00:00:00Z".into();
        b.provenance.insert("load".into(), "1.5".into());
        let d = differences(&a, &b);
        let fields: Vec<&str> = d.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "parameters.instances",
                "parameters.seed",
                "parameters.time_budget_s",
                "provenance.load"
            ]
        );
        assert_eq!((d[0].a.as_str(), d[0].b.as_str()), ("100000", "-"));
        assert_eq!((d[1].a.as_str(), d[1].b.as_str()), ("1", "7"));
        assert!(differences(&a, &a).is_empty());
    }

    fn notes(round_trips: &[&str]) -> Vec<BTreeMap<String, String>> {
        let note = |ns: &&str| BTreeMap::from([(notes::ROUND_TRIP_NS.to_string(), ns.to_string())]);
        round_trips.iter().map(note).collect()
    }

    #[test]
    fn another_placement_of_the_cores_is_told_by_the_median_round_trip() {
        let median = |ns: &[&str]| median_round_trip(notes(ns).iter());
        assert_eq!(median(&["98", "103", "-", "101", "0"]), Some(101.0));
        assert_eq!(median(&["390", "413", "400"]), Some(400.0));
        assert_eq!(median(&["-"]), None);
        let d = between(101.0, 400.0).unwrap();
        assert_eq!((d.a.as_str(), d.b.as_str()), ("101", "400"));
        assert!(d.field.contains("round_trip_ns"), "{}", d.field);
        assert_eq!(between(101.0, 160.0), None, "one placement");
        assert!(between(400.0, 101.0).is_some());
    }
}
