//! The versioned records of a result set: `run.json` ([`RunRecord`]) and one
//! `tests/<name>.json` per test ([`TestRecord`]).
//!
//! Both carry `format` (which record it is, so foreign JSON is recognised) and `schema_version`
//! (readers refuse versions they do not know). Maps are `BTreeMap`s and lists are sorted where
//! order carries no meaning, so serialising the same record always gives the same bytes.

use super::error::ResultsError;
use super::shard::Shard;
use crate::harness::{Budget, RunParams, TestRun};
use crate::litmus::ast::{Condition, Test};
use crate::model::{CheckResult, ModelVerdict};
use crate::outcome::{Histogram, Outcome};
use crate::verdict::{self, TestVerdict};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema version this build writes and the only one it reads.
pub const SCHEMA_VERSION: u32 = 1;
/// The `format` tag of `run.json`.
pub const RUN_FORMAT: &str = "ptx-litmus/run";
/// The `format` tag of a per-test record.
pub const TEST_FORMAT: &str = "ptx-litmus/test";

/// Everything about one run that is not per test: enough to replay it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Always [`RUN_FORMAT`].
    pub format: String,
    /// Always [`SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// The run's identifier, also the name of its directory.
    pub run_id: String,
    /// The tool's version (`CARGO_PKG_VERSION`).
    pub tool_version: String,
    /// The git revision the tool was built from.
    pub git_revision: String,
    /// The cargo profile the tool was built with.
    pub build_profile: String,
    /// The command line, argument by argument.
    pub command_line: Vec<String>,
    /// The backend that ran the tests: `cpu` or `cuda`.
    pub backend: String,
    /// Where it ran: GPU or CPU model, driver, CUDA, ptxas and PTX ISA versions, and the like.
    pub provenance: BTreeMap<String, String>,
    /// How it ran.
    pub parameters: Parameters,
    /// Which part of a split suite this run covered, when split.
    pub shard: Option<Shard>,
    /// Start time, RFC 3339 UTC.
    pub started: String,
    /// End time, RFC 3339 UTC.
    pub finished: String,
    /// Wall-clock seconds of the whole run.
    pub elapsed_s: f64,
    /// Whether the run stopped before every test ran (interrupted, time budget spent).
    pub partial: bool,
    /// The test files the run was asked to run, in order (after sharding).
    pub test_paths: Vec<String>,
    /// Tests that did not run, with the reason (a parse error, a model that cannot decide).
    pub skipped_tests: Vec<SkippedTest>,
    /// For a merged set: the run ids it was merged from, sorted; empty otherwise.
    pub merged_from: Vec<String>,
    /// For a merged set: how and where each run it combines ran (seed, budget, command line,
    /// provenance), in run id order; empty (and absent) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_parts: Vec<RunPart>,
}

/// One run that a merged set combines, as its own `run.json` described it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunPart {
    /// The run's id.
    pub run_id: String,
    /// Its command line.
    pub command_line: Vec<String>,
    /// Its parameters (the seed and budget of each repeat).
    pub parameters: Parameters,
    /// Where it ran.
    pub provenance: BTreeMap<String, String>,
    /// Its shard, when it ran one.
    pub shard: Option<Shard>,
    /// Its start time, RFC 3339 UTC.
    pub started: String,
    /// Its end time, RFC 3339 UTC.
    pub finished: String,
    /// Whether it stopped before every test ran.
    pub partial: bool,
}

impl RunPart {
    /// The part `run` is, as a merge keeps it.
    pub fn of(run: &RunRecord) -> RunPart {
        RunPart {
            run_id: run.run_id.clone(),
            command_line: run.command_line.clone(),
            parameters: run.parameters.clone(),
            provenance: run.provenance.clone(),
            shard: run.shard,
            started: run.started.clone(),
            finished: run.finished.clone(),
            partial: run.partial,
        }
    }
}

/// How a run was configured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Parameters {
    /// The stress preset (`basic`, `interleave`, `stress`, `random`, or `none` on the CPU).
    pub preset: String,
    /// Every incantation's value, by its name (`testing_ctas`, `mem_stress_pct`, ...).
    pub incantations: BTreeMap<String, serde_json::Value>,
    /// The incantations set apart from the preset (`--stress-set`, `--stress-file`), each
    /// with its value as those flags take it; empty (and absent) for a plain preset.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stress_set: BTreeMap<String, String>,
    /// Instances per test, when bounded by count.
    pub instances: Option<u64>,
    /// Launches (GPU) or rounds (CPU) per test, when fixed.
    pub iterations: Option<u64>,
    /// Seconds per test, when bounded by time.
    pub time_budget_s: Option<f64>,
    /// Instances per launch or round.
    pub instances_per_iteration: Option<u64>,
    /// The seed of every random choice of the run.
    pub seed: u64,
    /// Backend-specific settings not named above.
    pub other: BTreeMap<String, serde_json::Value>,
}

/// A test that did not run.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SkippedTest {
    /// The test file.
    pub path: String,
    /// Why, as shown to the user.
    pub reason: String,
}

/// What the model says about one test, as stored beside the observations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelData {
    /// The hash of the test the model checked.
    pub hash: String,
    /// herd's answer for the quantified condition.
    pub result: CheckResult,
    /// Every allowed outcome, sorted.
    pub allowed: Vec<Outcome>,
    /// The allowed outcomes SC also produces, sorted.
    pub sc: Vec<Outcome>,
    /// Candidate executions examined.
    pub candidates: u64,
    /// Candidate executions that satisfy every axiom.
    pub consistent: u64,
}

/// What a backend observed for one test, as stored beside the model data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObservedData {
    /// The hash of the test the backend ran.
    pub hash: String,
    /// Instances skipped by the harness (its checksum accounts for them).
    pub skipped: u64,
    /// Seconds spent running the test.
    pub elapsed_s: f64,
    /// Instances and weak instances of consecutive parts of the run (whole CPU rounds or GPU
    /// launch batches), in order; they add up to the verdict's counts. Empty in records
    /// written before parts were kept: such a record has no honest unit for comparing rates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartCounts>,
    /// How many of `parts` each run contributed, in order, when the record merges repeated
    /// runs of the test; empty for one run. It lets a comparison take the run as its unit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_parts: Vec<u64>,
}

/// One part of a run: instances judged (skipped ones excluded) and those ending weak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartCounts {
    /// Instances of the part in the histogram.
    pub instances: u64,
    /// Instances of the part ending in a weak outcome.
    pub weak: u64,
}

/// Derived rates, stored so that readers need not recompute them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    /// Weak instances per instance.
    pub weak_per_instance: Option<f64>,
    /// Weak instances per second.
    pub weak_per_second: Option<f64>,
    /// Forbidden and unexpected instances per instance.
    pub violations_per_instance: Option<f64>,
    /// Instances per second.
    pub instances_per_second: Option<f64>,
    /// The 95 % upper bound on the rate of each allowed outcome that was never seen.
    pub unseen_upper_bound_95: Option<f64>,
}

/// One test's record: identity, model data, the judged histogram, and timing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestRecord {
    /// Always [`TEST_FORMAT`].
    pub format: String,
    /// Always [`SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// The test's name.
    pub name: String,
    /// The test file, as given on the command line.
    pub path: String,
    /// The format-independent hash of the test.
    pub hash: String,
    /// The condition as written in canonical form, e.g. `exists (P1:r0 == 1 /\ P1:r1 == 0)`.
    pub condition: String,
    /// The observables, the order of every outcome's values (`P1:r0`, `x`).
    pub observables: Vec<String>,
    /// The model's data.
    pub model: ModelData,
    /// The backend's data.
    pub observed: ObservedData,
    /// The full histogram, each outcome classified, with the test's verdict.
    pub verdict: TestVerdict,
    /// Rates derived from the verdict and timing.
    pub rates: Rates,
    /// Per-test provenance: kernel file, SASS hash, placement, and the like.
    pub notes: BTreeMap<String, String>,
    /// For a violation: the test's source and why the model forbids each outcome seen, so the
    /// report explains the finding from the record alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub violation: Option<ViolationDetail>,
}

/// What explains a violation: the test as run and, per forbidden outcome seen, the axiom that
/// excludes it with the offending cycle of a candidate execution producing it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViolationDetail {
    /// The test in canonical form.
    pub source: String,
    /// One entry per forbidden outcome seen.
    pub outcomes: Vec<ForbiddenOutcome>,
}

/// Why the model forbids one outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForbiddenOutcome {
    /// The outcome's values, in the order of the observables.
    pub values: Outcome,
    /// The axiom (`causality`, `coherence`, ...), when the checker kept the exclusion; `None`
    /// when no candidate execution produces the outcome at all.
    pub axiom: Option<String>,
    /// The offending cycle, `e1 --rf--> e4 --po--> e5 --fr--> e1`, with the axiom.
    pub cycle: Option<String>,
}

impl ViolationDetail {
    /// The detail of a record judged a violation against `model`, for `test`.
    pub fn of(test: &Test, model: &ModelVerdict, verdict: &TestVerdict) -> ViolationDetail {
        let outcomes = verdict
            .outcomes
            .iter()
            .filter(|o| o.count > 0 && o.class == verdict::Class::Forbidden)
            .map(|o| {
                let why = model.excluded.iter().find(|e| e.outcome == o.values);
                ForbiddenOutcome {
                    values: o.values.clone(),
                    axiom: why.map(|e| e.axiom.name().to_string()),
                    cycle: why.map(|e| crate::model::explain::cycle_text(&e.execution, &e.cycle)),
                }
            })
            .collect();
        ViolationDetail {
            source: crate::litmus::print(test),
            outcomes,
        }
    }
}

/// Identity of a test, as the caller knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestIdentity {
    /// The test's name.
    pub name: String,
    /// The test file.
    pub path: String,
    /// The test's hash.
    pub hash: String,
    /// The condition in canonical text.
    pub condition: String,
}

/// A backend's observation of a test, with the hash of the test it ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed<'a> {
    /// Hash of the test that produced the histogram.
    pub hash: &'a str,
    /// The observed histogram.
    pub histogram: &'a Histogram,
    /// Instances skipped by the harness.
    pub skipped: u64,
    /// Seconds spent.
    pub elapsed_s: f64,
    /// The histogram by consecutive rounds or launch batches (may be empty).
    pub parts: &'a [Histogram],
}

impl Parameters {
    /// The parameters a backend ran with (its resolved [`RunParams`]): the stress preset, the
    /// budget, the seed, and every backend option under `other`.
    pub fn from_run_params(p: &RunParams) -> Parameters {
        let (instances, time_budget_s) = match p.budget {
            Budget::Instances(n) => (Some(n), None),
            Budget::Seconds(s) => (None, Some(s)),
        };
        Parameters {
            preset: p.stress.name.clone(),
            stress_set: p.stress.settings().into_iter().collect(),
            instances,
            time_budget_s,
            seed: p.seed,
            other: p
                .options
                .record()
                .into_iter()
                .map(|(k, v)| (k, serde_json::Value::String(v)))
                .collect(),
            ..Parameters::default()
        }
    }
}

impl RunRecord {
    /// A record for a run starting now, stamped with this build's version and revision; the
    /// caller fills in provenance, shard, timings and tests as the run goes.
    pub fn new(
        run_id: impl Into<String>,
        backend: impl Into<String>,
        command_line: Vec<String>,
        parameters: Parameters,
        started: impl Into<String>,
    ) -> RunRecord {
        let started = started.into();
        RunRecord {
            format: RUN_FORMAT.into(),
            schema_version: SCHEMA_VERSION,
            run_id: run_id.into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            git_revision: crate::GIT_REVISION.into(),
            build_profile: crate::BUILD_PROFILE.into(),
            command_line,
            backend: backend.into(),
            provenance: BTreeMap::new(),
            parameters,
            shard: None,
            finished: started.clone(),
            started,
            elapsed_s: 0.0,
            partial: false,
            test_paths: Vec::new(),
            skipped_tests: Vec::new(),
            merged_from: Vec::new(),
            merged_parts: Vec::new(),
        }
    }
}

impl TestRecord {
    /// Pairs model data with an observation of the same test and judges them; refuses when the
    /// two come from tests with different hashes.
    pub fn new(
        test: TestIdentity,
        condition: &Condition,
        model_hash: &str,
        model: &ModelVerdict,
        observed: Observed<'_>,
    ) -> Result<TestRecord, ResultsError> {
        check_pairing(&test.name, &test.hash, model_hash, observed.hash)?;
        let verdict = verdict::judge(model, observed.histogram, condition);
        Ok(TestRecord {
            format: TEST_FORMAT.into(),
            schema_version: SCHEMA_VERSION,
            observables: model.observables.iter().map(|o| o.to_string()).collect(),
            model: ModelData {
                hash: model_hash.into(),
                result: model.result,
                allowed: model.allowed.iter().cloned().collect(),
                sc: model.sc.iter().cloned().collect(),
                candidates: model.candidates,
                consistent: model.consistent,
            },
            observed: ObservedData {
                hash: observed.hash.into(),
                skipped: observed.skipped,
                elapsed_s: observed.elapsed_s,
                parts: part_counts(&verdict, observed.parts),
                run_parts: Vec::new(),
            },
            rates: Rates::of(&verdict, observed.elapsed_s),
            verdict,
            name: test.name,
            path: test.path,
            hash: test.hash,
            condition: test.condition,
            notes: BTreeMap::new(),
            violation: None,
        })
    }

    /// The record of `test` (read from `path`) as run by a backend, judged against the model's
    /// verdict on the same test. The hash and condition text come from the test itself.
    pub fn from_run(
        path: &str,
        test: &Test,
        model: &ModelVerdict,
        run: &TestRun,
    ) -> Result<TestRecord, ResultsError> {
        let mut rec = TestRecord::from_run_unexplained(path, test, model, run)?;
        if rec.verdict.status == verdict::Status::Violation {
            rec.violation = Some(ViolationDetail::of(test, model, &rec.verdict));
        }
        Ok(rec)
    }

    fn from_run_unexplained(
        path: &str,
        test: &Test,
        model: &ModelVerdict,
        run: &TestRun,
    ) -> Result<TestRecord, ResultsError> {
        let hash = crate::litmus::hash(test);
        // The canonical print ends with the condition, on one line.
        let printed = crate::litmus::print(test);
        let condition = printed.lines().last().unwrap_or_default().to_string();
        TestRecord::new(
            TestIdentity {
                name: test.name.clone(),
                path: path.into(),
                hash: hash.clone(),
                condition,
            },
            &test.condition,
            &hash,
            model,
            Observed {
                hash: &hash,
                histogram: &run.histogram,
                skipped: run.info.skipped,
                elapsed_s: run.info.elapsed_s,
                parts: &run.parts,
            },
        )
    }

    /// Checks that the model data and the observation belong to this record's test.
    pub fn check_pairing(&self) -> Result<(), ResultsError> {
        check_pairing(
            &self.name,
            &self.hash,
            &self.model.hash,
            &self.observed.hash,
        )
    }

    /// Observed instances.
    pub fn instances(&self) -> u64 {
        self.verdict.instances
    }
}

/// Each part's instances and weak instances, weak as `verdict` classes the outcomes; none when
/// the parts do not add up to the verdict's instances (they would not describe this run).
fn part_counts(verdict: &TestVerdict, parts: &[Histogram]) -> Vec<PartCounts> {
    if parts.iter().map(Histogram::total).sum::<u64>() != verdict.instances {
        return Vec::new();
    }
    let weak: std::collections::BTreeSet<&Outcome> = verdict
        .outcomes
        .iter()
        .filter(|o| o.class == verdict::Class::Weak)
        .map(|o| &o.values)
        .collect();
    parts
        .iter()
        .map(|h| PartCounts {
            instances: h.total(),
            weak: h
                .counts
                .iter()
                .filter(|(o, _)| weak.contains(o))
                .map(|(_, n)| n)
                .sum(),
        })
        .collect()
}

fn check_pairing(name: &str, test: &str, model: &str, observed: &str) -> Result<(), ResultsError> {
    if test == model && test == observed {
        Ok(())
    } else {
        Err(ResultsError::HashMismatch {
            path: None,
            test: name.into(),
            what: format!("test hash {test}, model data for {model}, observations for {observed}"),
        })
    }
}

impl Rates {
    /// The rates of a verdict observed over `elapsed_s` seconds.
    pub fn of(v: &TestVerdict, elapsed_s: f64) -> Rates {
        let violations = v.counts.forbidden + v.counts.unexpected;
        Rates {
            weak_per_instance: verdict::rate_per_instance(v.counts.weak, v.instances),
            weak_per_second: verdict::rate_per_second(v.counts.weak, elapsed_s),
            violations_per_instance: verdict::rate_per_instance(violations, v.instances),
            instances_per_second: verdict::rate_per_second(v.instances, elapsed_s),
            unseen_upper_bound_95: if v.unseen_allowed().next().is_some() {
                verdict::unseen_upper_bound_95(v.instances)
            } else {
                None
            },
        }
    }
}
