//! Hand-built result sets for the results and report tests: small model verdicts and
//! histograms of classic shapes (MP, SB, CoRR), with knobs for planting a violation or changing
//! a rate, so the tests need neither the model checker nor a backend.

use ptx_litmus::litmus::ast::{CmpOp, Condition, Prop, Quantifier, Reg, Term};
use ptx_litmus::model::{CheckResult, ModelVerdict};
use ptx_litmus::outcome::{Histogram, Observable, Outcome};
use ptx_litmus::results::{
    merge, read_result_set, write_result_set, Observed, Parameters, ResultSet, RunRecord, Shard,
    TestIdentity, TestRecord,
};
use std::collections::BTreeSet;
use std::path::Path;

/// One test's ingredients.
pub struct Fixture {
    /// The test's name.
    pub name: &'static str,
    /// Its condition.
    pub condition: Condition,
    /// The condition in canonical text.
    pub condition_text: &'static str,
    /// What the model allows.
    pub model: ModelVerdict,
    /// What was observed.
    pub histogram: Histogram,
}

fn reg(thread: usize, r: &str) -> Term {
    Term::Reg {
        thread,
        reg: Reg(r.into()),
    }
}

fn eq(lhs: Term, v: i64) -> Prop {
    Prop::Cmp {
        lhs,
        op: CmpOp::Eq,
        rhs: Term::Const(v),
    }
}

fn and(a: Prop, b: Prop) -> Prop {
    Prop::And(Box::new(a), Box::new(b))
}

fn outcomes(vs: &[&[i64]]) -> BTreeSet<Outcome> {
    vs.iter().map(|v| Outcome(v.to_vec())).collect()
}

fn histogram(entries: &[(&[i64], u64)]) -> Histogram {
    Histogram {
        counts: entries
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(v, n)| (Outcome(v.to_vec()), *n))
            .collect(),
        unexpected: 0,
    }
}

/// A two-register test over `P1:r0, P1:r1` (MP shape) or `P0:r0, P1:r0` (SB shape) whose weak
/// outcome is `weak`, allowed or not, seen `weak_count` times out of `n`.
fn two_reg(
    name: &'static str,
    obs: [(usize, &str); 2],
    weak: [i64; 2],
    weak_allowed: bool,
    weak_count: u64,
    n: u64,
    text: &'static str,
) -> Fixture {
    let all: [[i64; 2]; 4] = [[0, 0], [0, 1], [1, 0], [1, 1]];
    let sc: Vec<&[i64]> = all
        .iter()
        .filter(|o| **o != weak)
        .map(|o| o.as_slice())
        .collect();
    let mut allowed = outcomes(&sc);
    if weak_allowed {
        allowed.insert(Outcome(weak.to_vec()));
    }
    let rest = n - weak_count;
    let h = histogram(&[
        (sc[0], rest / 2),
        (sc[1], rest - rest / 2 - rest / 10),
        (sc[2], rest / 10),
        (&weak, weak_count),
    ]);
    Fixture {
        name,
        condition: Condition {
            quantifier: Quantifier::Exists,
            prop: and(
                eq(reg(obs[0].0, obs[0].1), weak[0]),
                eq(reg(obs[1].0, obs[1].1), weak[1]),
            ),
        },
        condition_text: text,
        model: ModelVerdict {
            observables: obs
                .iter()
                .map(|(t, r)| Observable::Reg {
                    thread: *t,
                    reg: Reg((*r).into()),
                })
                .collect(),
            allowed,
            sc: outcomes(&sc),
            result: if weak_allowed {
                CheckResult::Ok
            } else {
                CheckResult::No
            },
            candidates: 4,
            consistent: if weak_allowed { 4 } else { 3 },
            domains: vec![vec![0, 1]; obs.len()],
            hangs: vec![],
            stuck: vec![],
            witnesses: vec![],
            excluded: vec![],
        },
        histogram: h,
    }
}

/// Knobs for a suite: a violation planted in CoRR, and the SB weak count.
#[derive(Clone, Copy)]
pub struct Knobs {
    /// Times CoRR's forbidden outcome is seen.
    pub corr_violation: u64,
    /// Times SB's weak outcome is seen.
    pub sb_weak: u64,
    /// Instances per test.
    pub instances: u64,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            corr_violation: 0,
            sb_weak: 5_000,
            instances: 1_000_000,
        }
    }
}

/// Three tests: MP (weak allowed, never seen), SB (weak allowed and seen), CoRR (the weak
/// outcome forbidden; seen `corr_violation` times).
pub fn suite(k: Knobs) -> Vec<Fixture> {
    vec![
        two_reg(
            "MP",
            [(1, "r0"), (1, "r1")],
            [1, 0],
            true,
            0,
            k.instances,
            "exists (P1:r0 == 1 /\\ P1:r1 == 0)",
        ),
        two_reg(
            "SB",
            [(0, "r0"), (1, "r0")],
            [0, 0],
            true,
            k.sb_weak,
            k.instances,
            "exists (P0:r0 == 0 /\\ P1:r0 == 0)",
        ),
        two_reg(
            "CoRR",
            [(1, "r0"), (1, "r1")],
            [1, 0],
            false,
            k.corr_violation,
            k.instances,
            "exists (P1:r0 == 1 /\\ P1:r1 == 0)",
        ),
    ]
}

/// Rounds each fixture's histogram is spread over.
pub const PARTS: u64 = 20;

/// `h` spread as evenly as counts allow over `k` consecutive parts (as rounds of one steady
/// rate would be, minus the noise).
pub fn even_parts(h: &Histogram, k: u64) -> Vec<Histogram> {
    let share = |n: u64, j: u64| n * (j + 1) / k - n * j / k;
    (0..k)
        .map(|j| Histogram {
            counts: h
                .counts
                .iter()
                .map(|(o, &n)| (o.clone(), share(n, j)))
                .filter(|(_, n)| *n > 0)
                .collect(),
            unexpected: share(h.unexpected, j),
        })
        .collect()
}

/// The records of a suite, every test taking `elapsed_s` seconds.
pub fn records(fixtures: &[Fixture], elapsed_s: f64) -> Vec<TestRecord> {
    fixtures
        .iter()
        .map(|f| {
            let hash = format!("h-{}", f.name.to_lowercase());
            TestRecord::new(
                TestIdentity {
                    name: f.name.into(),
                    path: format!("litmus/{}/{}.litmus", f.name.to_lowercase(), f.name),
                    hash: hash.clone(),
                    condition: f.condition_text.into(),
                },
                &f.condition,
                &hash,
                &f.model,
                Observed {
                    hash: &hash,
                    histogram: &f.histogram,
                    skipped: 0,
                    elapsed_s,
                    parts: &even_parts(&f.histogram, PARTS),
                },
            )
            .expect("hashes agree")
        })
        .collect()
}

/// A run record as a backend would write it.
pub fn run(run_id: &str, driver: &str, shard: Option<Shard>) -> RunRecord {
    let mut params = Parameters {
        preset: "stress".into(),
        iterations: Some(100),
        instances_per_iteration: Some(10_000),
        seed: 42,
        ..Parameters::default()
    };
    params
        .incantations
        .insert("mem_stress_pct".into(), serde_json::json!(50));
    params
        .incantations
        .insert("mem_stress_pattern".into(), serde_json::json!("st;ld"));
    let mut r = RunRecord::new(
        run_id,
        "cuda",
        vec!["ptx-litmus".into(), "run".into(), "litmus".into()],
        params,
        "2026-01-02T03:04:05Z",
    );
    r.finished = "2026-01-02T03:05:05Z".into();
    r.elapsed_s = 60.0;
    r.shard = shard;
    r.provenance
        .insert("gpu".into(), "NVIDIA H100 80GB HBM3".into());
    r.provenance.insert("driver".into(), driver.into());
    r.provenance.insert("cuda".into(), "12.8".into());
    r.test_paths = [
        "litmus/corr/CoRR.litmus",
        "litmus/mp/MP.litmus",
        "litmus/sb/SB.litmus",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    r
}

/// `run` narrowed to name exactly `tests`, as a run of only those tests would.
pub fn covering(mut run: RunRecord, tests: &[TestRecord]) -> RunRecord {
    run.test_paths = tests.iter().map(|t| t.path.clone()).collect();
    run
}

/// A set merging one run per entry of `sb`, SB weak that many times in each; each run's parts
/// agree with each other as closely as counts allow, so only the runs differ.
pub fn repeats(root: &Path, name: &str, sb: &[u64]) -> ResultSet {
    let sets: Vec<ResultSet> = sb
        .iter()
        .enumerate()
        .map(|(i, &sb_weak)| {
            let id = format!("{name}{i}");
            let mut r = run(&id, "550.54.15", None);
            r.parameters.seed = i as u64 + 1;
            let knobs = Knobs {
                sb_weak,
                ..Knobs::default()
            };
            let d = root.join(&id);
            write_result_set(&d, &r, &records(&suite(knobs), 2.0), false).unwrap();
            read_result_set(&d).unwrap()
        })
        .collect();
    let (run, tests) = merge(&sets, name).unwrap();
    ResultSet {
        dir: root.join(name),
        run,
        tests,
    }
}
