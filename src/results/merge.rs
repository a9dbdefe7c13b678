//! Combining result sets of one campaign (shards run on different machines, or repeated runs,
//! with the same seed or not) into one: histograms of the same test are summed, only when
//! their hashes agree, as herdtools7's msum7 sums litmus logs. Each run combined is kept as a
//! part of the merged `run.json`, with its own seed, budget and provenance.

use super::error::ResultsError;
use super::io::ResultSet;
use super::judge_model::JudgeModel;
use super::record::{ObservedData, Parameters, Rates, RunPart, RunRecord, TestRecord};
use crate::codegen::Stress;
use crate::harness::notes;
use crate::verdict::{self, JudgedOutcome};
use std::collections::{BTreeMap, BTreeSet};

/// The parameters that say what experiment a run is: everything but what differs between
/// repeats of it (seed and budget), which are cleared.
fn experiment(p: &Parameters) -> Parameters {
    Parameters {
        seed: 0,
        instances: None,
        iterations: None,
        time_budget_s: None,
        incantations: with_later_keys(&p.incantations),
        ..p.clone()
    }
}

/// `incantations` with every stress key added after the record was written filled in with the
/// value its serde default gives (the behaviour before the key existed), so that a set recorded
/// before a key was added merges with one that records the same behaviour under that key. A map
/// that is not a whole stress configuration is kept as it is.
fn with_later_keys(
    incantations: &BTreeMap<String, serde_json::Value>,
) -> BTreeMap<String, serde_json::Value> {
    let mut object: serde_json::Map<String, serde_json::Value> = incantations
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    object.insert("name".into(), serde_json::Value::String(String::new()));
    let filled = serde_json::from_value::<Stress>(serde_json::Value::Object(object))
        .and_then(serde_json::to_value);
    match filled {
        Ok(serde_json::Value::Object(o)) => o.into_iter().filter(|(k, _)| k != "name").collect(),
        _ => incantations.clone(),
    }
}

/// The names of the experiment parameters that differ between `a` and `b`.
fn differing(a: &Parameters, b: &Parameters) -> Vec<&'static str> {
    let mut out = Vec::new();
    if a.preset != b.preset {
        out.push("preset");
    }
    if a.incantations != b.incantations || a.stress_set != b.stress_set {
        out.push("incantations");
    }
    if a.instances_per_iteration != b.instances_per_iteration {
        out.push("instances_per_iteration");
    }
    if a.other != b.other {
        out.push("backend options");
    }
    out
}

/// Merges `sets` into one result set named `run_id`. The sets must share backend, model and
/// experiment (preset, incantations, backend options); seeds and budgets may differ, each
/// part keeping its own in `merged_parts`, and the merged `parameters` keep the first part's
/// seed and a budget only where every part had the same. Tests present in several sets must
/// have equal hashes and model data. Provenance keys whose values differ between sets keep
/// every value, sorted and joined with `; `.
pub fn merge(
    sets: &[ResultSet],
    run_id: &str,
) -> Result<(RunRecord, Vec<TestRecord>), ResultsError> {
    let first = sets.first().ok_or_else(|| ResultsError::Incompatible {
        message: "nothing to merge".into(),
    })?;
    for s in &sets[1..] {
        same_experiment(first, s)?;
    }
    refuse_repeats(sets)?;
    let run = merged_run(sets, run_id);
    let mut by_test: BTreeMap<(String, String), TestRecord> = BTreeMap::new();
    for s in sets {
        for t in &s.tests {
            let key = (t.name.clone(), t.path.clone());
            match by_test.get_mut(&key) {
                None => {
                    by_test.insert(key, t.clone());
                }
                Some(acc) => add_test(acc, t)?,
            }
        }
    }
    Ok((run, by_test.into_values().collect()))
}

/// Refuses to merge `s` with `first` unless both ran the same experiment: backend, model and
/// parameters, seed and budget aside.
fn same_experiment(first: &ResultSet, s: &ResultSet) -> Result<(), ResultsError> {
    if s.run.backend != first.run.backend {
        return Err(incompatible(
            first,
            s,
            "backend",
            &first.run.backend,
            &s.run.backend,
        ));
    }
    let (ma, mb) = (judged_by(&first.run), judged_by(&s.run));
    if ma != mb {
        return Err(incompatible(first, s, "models", &ma, &mb));
    }
    let (a, b) = (&first.run.parameters, &s.run.parameters);
    if experiment(a) != experiment(b) {
        return Err(ResultsError::Incompatible {
            message: format!(
                "{} and {}: different {}; these are different experiments, compare them \
                 with `diff` (repeats may differ only in seed and budget)",
                first.dir.display(),
                s.dir.display(),
                differing(a, b).join(", ")
            ),
        });
    }
    Ok(())
}

/// The merged set's `run.json`: the first set's, with the times, tests, provenance and
/// parameters of all, each run kept as a part.
fn merged_run(sets: &[ResultSet], run_id: &str) -> RunRecord {
    let first = &sets[0];
    let mut run = first.run.clone();
    run.run_id = run_id.into();
    run.shard = None;
    run.command_line = without_shard(&first.run.command_line);
    run.provenance = merged_provenance(sets);
    run.started = sets
        .iter()
        .map(|s| s.run.started.clone())
        .min()
        .unwrap_or_default();
    run.finished = sets
        .iter()
        .map(|s| s.run.finished.clone())
        .max()
        .unwrap_or_default();
    run.elapsed_s = sets.iter().map(|s| s.run.elapsed_s).sum();
    run.partial = sets.iter().any(|s| s.run.partial);
    run.test_paths = sorted_union(sets.iter().flat_map(|s| s.run.test_paths.iter().cloned()));
    run.skipped_tests = sorted_union(
        sets.iter()
            .flat_map(|s| s.run.skipped_tests.iter().cloned()),
    );
    run.merged_parts = parts(sets);
    run.parameters = merged_parameters(&run.merged_parts, &first.run.parameters);
    run.merged_from = sorted_union(sets.iter().flat_map(|s| {
        if s.run.merged_from.is_empty() {
            vec![s.run.run_id.clone()]
        } else {
            s.run.merged_from.clone()
        }
    }));
    run
}

/// Every run the sets combine (a merged set's own parts, or the set itself), by run id.
fn parts(sets: &[ResultSet]) -> Vec<RunPart> {
    let mut out: Vec<RunPart> = sets
        .iter()
        .flat_map(|s| {
            if s.run.merged_parts.is_empty() {
                vec![RunPart::of(&s.run)]
            } else {
                s.run.merged_parts.clone()
            }
        })
        .collect();
    out.sort_by(|a, b| a.run_id.cmp(&b.run_id));
    out
}

/// The merged set's parameters: the experiment's, the first part's seed, and each budget
/// field only where every part has the same.
fn merged_parameters(parts: &[RunPart], first: &Parameters) -> Parameters {
    let mut p = first.clone();
    if let Some(head) = parts.first() {
        p.seed = head.parameters.seed;
    }
    if !agree(parts, |q| q.instances) {
        p.instances = None;
    }
    if !agree(parts, |q| q.iterations) {
        p.iterations = None;
    }
    if !agree(parts, |q| q.time_budget_s) {
        p.time_budget_s = None;
    }
    p
}

/// Whether every part has the same value of `f`.
fn agree<T: PartialEq>(parts: &[RunPart], f: impl Fn(&Parameters) -> T) -> bool {
    parts
        .windows(2)
        .all(|w| f(&w[0].parameters) == f(&w[1].parameters))
}

/// Refuses a run that two of `sets` contain (`merge A A`, or a shard merged twice): its
/// instances would be counted twice.
fn refuse_repeats(sets: &[ResultSet]) -> Result<(), ResultsError> {
    let mut seen: BTreeMap<&str, &ResultSet> = BTreeMap::new();
    for s in sets {
        let ids: Vec<&str> = if s.run.merged_from.is_empty() {
            vec![s.run.run_id.as_str()]
        } else {
            s.run.merged_from.iter().map(String::as_str).collect()
        };
        for id in ids {
            if let Some(other) = seen.insert(id, s) {
                return Err(ResultsError::Incompatible {
                    message: format!(
                        "{} and {}: both contain run {id}; merging it twice would count its \
                         instances twice",
                        other.dir.display(),
                        s.dir.display()
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The model that judged a set, as merge compares it: name, checker and hash of its text (an
/// unrecorded model and the recorded default are the same).
fn judged_by(run: &RunRecord) -> String {
    let m = JudgeModel::of_run(run);
    format!(
        "{}, {}, {}",
        m.name,
        m.checker,
        m.hash.as_deref().unwrap_or("-")
    )
}

fn incompatible(a: &ResultSet, b: &ResultSet, what: &str, x: &str, y: &str) -> ResultsError {
    ResultsError::Incompatible {
        message: format!(
            "{} and {}: different {what} ({x} vs {y})",
            a.dir.display(),
            b.dir.display()
        ),
    }
}

/// Keeps the explanation of every forbidden outcome either part saw (same test, same model:
/// the same explanation for the same outcome).
fn merge_violation(acc: &mut TestRecord, t: &TestRecord) {
    let Some(theirs) = &t.violation else {
        return;
    };
    let mine = acc.violation.get_or_insert_with(|| theirs.clone());
    for o in &theirs.outcomes {
        if !mine.outcomes.iter().any(|m| m.values == o.values) {
            mine.outcomes.push(o.clone());
        }
    }
    mine.outcomes.sort_by(|a, b| a.values.cmp(&b.values));
}

/// Adds `t`'s observations into `acc`, the same test from another set.
fn add_test(acc: &mut TestRecord, t: &TestRecord) -> Result<(), ResultsError> {
    same_test(acc, t)?;
    let overflow = || ResultsError::Incompatible {
        message: format!(
            "test {} ({}): merged counts overflow 64 bits",
            t.name, t.path
        ),
    };
    add_outcomes(acc, t).ok_or_else(overflow)?;
    merge_violation(acc, t);
    acc.observed.skipped = acc
        .observed
        .skipped
        .checked_add(t.observed.skipped)
        .ok_or_else(overflow)?;
    acc.observed.elapsed_s += t.observed.elapsed_s;
    add_parts(&mut acc.observed, &t.observed);
    add_notes(acc, t).ok_or_else(overflow)?;
    acc.rates = Rates::of(&acc.verdict, acc.observed.elapsed_s);
    Ok(())
}

/// Appends a repeat's parts, and where each run's parts begin, so that a comparison can take
/// the run as its unit; one record without parts leaves the whole without.
fn add_parts(acc: &mut ObservedData, t: &ObservedData) {
    if acc.parts.is_empty() || t.parts.is_empty() {
        acc.parts.clear();
        acc.run_parts.clear();
        return;
    }
    let boundaries = |o: &ObservedData| {
        if o.run_parts.is_empty() {
            vec![o.parts.len() as u64]
        } else {
            o.run_parts.clone()
        }
    };
    acc.run_parts = [boundaries(acc), boundaries(t)].concat();
    acc.parts.extend_from_slice(&t.parts);
}

/// Refuses to add `t` to `acc` unless both are the same test judged by the same model.
fn same_test(acc: &TestRecord, t: &TestRecord) -> Result<(), ResultsError> {
    if acc.hash != t.hash {
        return Err(ResultsError::HashMismatch {
            path: None,
            test: t.name.clone(),
            what: format!(
                "{} has hash {} in one set and {} in another",
                t.path, acc.hash, t.hash
            ),
        });
    }
    if acc.model != t.model || acc.observables != t.observables {
        return Err(ResultsError::Incompatible {
            message: format!(
                "test {} ({}): same hash but different model data; the sets were checked by \
                 different model versions",
                t.name, t.path
            ),
        });
    }
    Ok(())
}

/// Adds `t`'s outcome counts and unexpected bucket to `acc`'s and judges the sum; `None` when
/// a count overflows.
fn add_outcomes(acc: &mut TestRecord, t: &TestRecord) -> Option<()> {
    let mut outcomes: BTreeMap<_, JudgedOutcome> = acc
        .verdict
        .outcomes
        .drain(..)
        .map(|o| (o.values.clone(), o))
        .collect();
    for o in &t.verdict.outcomes {
        match outcomes.get_mut(&o.values) {
            Some(a) => a.count = a.count.checked_add(o.count)?,
            None => {
                outcomes.insert(o.values.clone(), o.clone());
            }
        }
    }
    let unexpected = acc
        .verdict
        .outside_the_space()
        .checked_add(t.verdict.outside_the_space())?;
    outcomes
        .values()
        .try_fold(unexpected, |sum, o| sum.checked_add(o.count))?;
    acc.verdict = verdict::summarize(
        outcomes.into_values().collect(),
        unexpected,
        acc.verdict.quantifier,
    );
    Some(())
}

/// Merges `t`'s notes into `acc`'s: the notes that count what a run did add up, so that the
/// merged record still accounts for every instance and launch; differing values of any other
/// are listed. `None` when a count overflows.
fn add_notes(acc: &mut TestRecord, t: &TestRecord) -> Option<()> {
    for (k, v) in &t.notes {
        match acc.notes.get_mut(k) {
            Some(old) if notes::COUNTED.contains(&k.as_str()) => match notes::sum(k, old, v) {
                Some(sum) => *old = sum,
                // Overflowing instances would lose some; any other odd value is listed.
                None if k == notes::INSTANCES_RUN => return None,
                None => *old = join_sorted([old.as_str(), v.as_str()]),
            },
            Some(old) if old != v => *old = join_sorted([old.as_str(), v.as_str()]),
            Some(_) => {}
            None => {
                acc.notes.insert(k.clone(), v.clone());
            }
        }
    }
    Some(())
}

fn merged_provenance(sets: &[ResultSet]) -> BTreeMap<String, String> {
    let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for s in sets {
        for (k, v) in &s.run.provenance {
            values.entry(k).or_default().insert(v);
        }
    }
    values
        .into_iter()
        .map(|(k, vs)| (k.to_string(), join_sorted(vs)))
        .collect()
}

fn join_sorted<'a>(values: impl IntoIterator<Item = &'a str>) -> String {
    let set: BTreeSet<&str> = values.into_iter().flat_map(|v| v.split("; ")).collect();
    set.into_iter().collect::<Vec<_>>().join("; ")
}

fn sorted_union<T: Ord>(items: impl Iterator<Item = T>) -> Vec<T> {
    items.collect::<BTreeSet<T>>().into_iter().collect()
}

/// The command line with `--shard i/n` (or `--shard=i/n`) removed: the command that runs the
/// whole campaign at once.
fn without_shard(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
        } else if a == "--shard" {
            skip = true;
        } else if !a.starts_with("--shard=") {
            out.push(a.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_flags_are_removed() {
        let args: Vec<String> = [
            "run",
            "--shard",
            "1/4",
            "--seed",
            "3",
            "--shard=2/4",
            "litmus",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(without_shard(&args), ["run", "--seed", "3", "litmus"]);
    }

    /// The incantations a run of `stress` records.
    fn recorded(stress: &Stress) -> BTreeMap<String, serde_json::Value> {
        let serde_json::Value::Object(o) = serde_json::to_value(stress).unwrap() else {
            panic!("a stress configuration is an object");
        };
        o.into_iter().filter(|(k, _)| k != "name").collect()
    }

    #[test]
    fn a_record_older_than_a_stress_key_is_the_same_experiment_at_its_default() {
        let new = recorded(&Stress::full_stress());
        let mut old = new.clone();
        assert!(old.remove("partner_distances").is_some());
        assert!(old.remove("spin_group").is_some());
        assert_ne!(old, new);
        assert_eq!(with_later_keys(&old), new);
        // A later run that sets the new key differently is another experiment.
        let mut other = Stress::full_stress();
        other.partner_distances += 1;
        assert_ne!(with_later_keys(&old), recorded(&other));
        // What is no stress configuration is compared as it is.
        let odd = BTreeMap::from([("x".to_string(), serde_json::json!(1))]);
        assert_eq!(with_later_keys(&odd), odd);
    }

    #[test]
    fn differing_values_are_joined_once() {
        assert_eq!(join_sorted(["b; a", "a", "c"]), "a; b; c");
    }
}
