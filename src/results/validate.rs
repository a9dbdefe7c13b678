//! What a reader checks before trusting a record: the counts a verdict states are the counts
//! its outcomes add up to, the classes agree with the model data stored beside them, and the
//! histogram accounts for every instance run. A crafted or damaged record is refused with the
//! field named, so a reader never turns it into a different verdict.

use super::record::{PartCounts, RunRecord, TestRecord};
use crate::harness::notes;
use crate::verdict::{self, Class};
use std::collections::BTreeSet;

/// The first invariant `t` breaks, as `field: what is wrong`.
pub fn test_record(t: &TestRecord) -> Result<(), String> {
    let v = &t.verdict;
    let mut total: u64 = 0;
    for o in &v.outcomes {
        total = total
            .checked_add(o.count)
            .ok_or("verdict.outcomes: counts overflow 64 bits")?;
    }
    let bucket = v
        .counts
        .unexpected
        .checked_sub(v.listed_unexpected())
        .ok_or("verdict.counts.unexpected: less than the unexpected outcomes listed")?;
    total
        .checked_add(bucket)
        .ok_or("verdict.counts: total overflows 64 bits")?;
    let again = verdict::summarize(v.outcomes.clone(), bucket, v.quantifier);
    if again != *v {
        return Err(format!(
            "verdict: counts, status or observation disagree with the outcomes listed \
             (they give {} instances, {:?}, {:?})",
            again.instances, again.status, again.observation
        ));
    }
    classes_match_model(t)?;
    instances_accounted(t)?;
    parts_add_up(t)
}

/// The parts, when kept, add up to the verdict's instances and weak instances.
fn parts_add_up(t: &TestRecord) -> Result<(), String> {
    let parts = &t.observed.parts;
    if parts.is_empty() {
        if !t.observed.run_parts.is_empty() {
            return Err("observed.run_parts: runs given but no parts".into());
        }
        return Ok(());
    }
    let sum = |f: fn(&PartCounts) -> u64| {
        parts
            .iter()
            .try_fold(0u64, |acc, p| acc.checked_add(f(p)))
            .ok_or("observed.parts: counts overflow 64 bits")
    };
    let (instances, weak) = (sum(|p| p.instances)?, sum(|p| p.weak)?);
    if parts.iter().any(|p| p.weak > p.instances) {
        return Err("observed.parts: a part has more weak instances than instances".into());
    }
    if (instances, weak) != (t.verdict.instances, t.verdict.counts.weak) {
        return Err(format!(
            "observed.parts: {instances} instances and {weak} weak, but the verdict has {} and {}",
            t.verdict.instances, t.verdict.counts.weak
        ));
    }
    runs_cover_parts(t)
}

/// Each merged run, when the boundaries are kept, has at least one part, and together the
/// runs hold every part.
fn runs_cover_parts(t: &TestRecord) -> Result<(), String> {
    let o = &t.observed;
    if o.run_parts.is_empty() {
        return Ok(());
    }
    let sum = o.run_parts.iter().try_fold(0u64, |a, &n| a.checked_add(n));
    if o.run_parts.contains(&0) || sum != Some(o.parts.len() as u64) {
        return Err(format!(
            "observed.run_parts: {:?} do not divide the {} parts into runs of at least one",
            o.run_parts,
            o.parts.len()
        ));
    }
    Ok(())
}

/// Each outcome's class is the one the stored model data gives it.
fn classes_match_model(t: &TestRecord) -> Result<(), String> {
    let allowed: BTreeSet<_> = t.model.allowed.iter().collect();
    let sc: BTreeSet<_> = t.model.sc.iter().collect();
    let width = t.observables.len();
    for o in &t.verdict.outcomes {
        let expected = if o.values.0.len() != width {
            Class::Unexpected
        } else if sc.contains(&o.values) {
            Class::Sc
        } else if allowed.contains(&o.values) {
            Class::Weak
        } else {
            Class::Forbidden
        };
        if o.class != expected {
            return Err(format!(
                "verdict.outcomes: an outcome is marked {:?} but the model data make it {:?}",
                o.class, expected
            ));
        }
    }
    Ok(())
}

/// The histogram's total is the instances run minus the instances skipped.
fn instances_accounted(t: &TestRecord) -> Result<(), String> {
    let Some(run) = t.notes.get(notes::INSTANCES_RUN) else {
        return Ok(());
    };
    let run: u64 = run
        .parse()
        .map_err(|_| format!("notes.instances_run: `{run}` is not a count"))?;
    match run.checked_sub(t.observed.skipped) {
        Some(n) if n == t.verdict.instances => Ok(()),
        _ => Err(format!(
            "verdict.instances: {} observed, but {run} instances ran and {} were skipped",
            t.verdict.instances, t.observed.skipped
        )),
    }
}

/// The first test a complete run names but neither recorded nor skipped.
pub fn run_complete(run: &RunRecord, tests: &[TestRecord]) -> Result<(), String> {
    if run.partial {
        return Ok(());
    }
    let have: BTreeSet<&str> = tests
        .iter()
        .map(|t| t.path.as_str())
        .chain(run.skipped_tests.iter().map(|s| s.path.as_str()))
        .collect();
    match run.test_paths.iter().find(|p| !have.contains(p.as_str())) {
        Some(p) => Err(format!(
            "test_paths: {p} has no record and is not skipped, though the run is not partial"
        )),
        None => Ok(()),
    }
}
