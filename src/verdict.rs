//! Judging observations against the model: each observed outcome is SC-allowed, weak-allowed,
//! forbidden or unexpected; a test is conformant or a violation; its condition was observed
//! Never, Sometimes or Always. Pure: no I/O, no clocks.
//!
//! Absence is bounded, never claimed: an allowed outcome not seen in `N` instances has a 95 %
//! upper bound of `1 - 0.05^(1/N)` (about `3/N`) on its rate, and is never called forbidden.

use crate::litmus::ast::{Condition, Quantifier};
use crate::model::ModelVerdict;
use crate::outcome::{Histogram, Outcome};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// What the model says about one outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Allowed, and produced by some sequentially consistent interleaving.
    Sc,
    /// Allowed by the PTX model but not by SC: a weak behaviour.
    Weak,
    /// Not allowed by the PTX model.
    Forbidden,
    /// Outside the test's outcome space (a value no write of the test produces).
    Unexpected,
}

/// The judgement of a whole test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every observed outcome is allowed by the model.
    Conformant,
    /// A forbidden or unexpected outcome was observed: the headline finding.
    Violation,
    /// Nothing was observed (zero instances), so nothing can be said.
    NoData,
}

/// How often the condition held among observed instances, in herd's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Observation {
    /// No observed instance satisfied the condition.
    Never,
    /// Some did and some did not.
    Sometimes,
    /// Every observed instance satisfied it.
    Always,
}

/// One outcome with its classification and count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgedOutcome {
    /// The outcome's values, in the order of the model's observables.
    pub values: Outcome,
    /// What the model says about it.
    pub class: Class,
    /// How many instances ended in it.
    pub count: u64,
    /// Whether it satisfies the test's condition proposition (the `*` of a litmus7 histogram).
    pub satisfies: bool,
}

/// Instances per class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassCounts {
    /// Instances ending in an SC outcome.
    pub sc: u64,
    /// Instances ending in a weak (allowed, non-SC) outcome.
    pub weak: u64,
    /// Instances ending in a forbidden outcome.
    pub forbidden: u64,
    /// Instances ending outside the outcome space.
    pub unexpected: u64,
}

/// The verdict on one test: the model's allowed set against an observed histogram.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestVerdict {
    /// Every allowed outcome (seen or not) and every observed outcome, sorted by values.
    pub outcomes: Vec<JudgedOutcome>,
    /// Instances per class.
    pub counts: ClassCounts,
    /// Instances observed in all (the histogram's total).
    pub instances: u64,
    /// Conformant or violation.
    pub status: Status,
    /// The test's quantifier, for herd's `Ok`/`No` and `Allowed`/`Forbidden`/`Required`.
    pub quantifier: Quantifier,
    /// Observed instances satisfying the condition proposition.
    pub positive: u64,
    /// Observed instances not satisfying it (unexpected ones included).
    pub negative: u64,
    /// Never, Sometimes or Always.
    pub observation: Observation,
    /// Whether the quantified condition is validated by the observations (litmus7's `Ok`).
    pub validated: bool,
}

/// Classifies every observed outcome of `histogram` against `model` and evaluates `condition`.
pub fn judge(model: &ModelVerdict, histogram: &Histogram, condition: &Condition) -> TestVerdict {
    let width = model.observables.len();
    let keys: BTreeSet<&Outcome> = model
        .allowed
        .iter()
        .chain(histogram.counts.keys())
        .collect();
    let outcomes = keys
        .into_iter()
        .map(|o| {
            let class = if o.0.len() != width {
                Class::Unexpected
            } else if model.sc.contains(o) {
                Class::Sc
            } else if model.allowed.contains(o) {
                Class::Weak
            } else {
                Class::Forbidden
            };
            let satisfies =
                class != Class::Unexpected && o.satisfies(&model.observables, &condition.prop);
            JudgedOutcome {
                values: o.clone(),
                class,
                count: histogram.counts.get(o).copied().unwrap_or(0),
                satisfies,
            }
        })
        .collect();
    summarize(outcomes, histogram.unexpected, condition.quantifier)
}

/// Derives counts, status and the condition's observation from judged outcomes; shared by
/// [`judge`] and by merging, which sums already-judged histograms.
pub fn summarize(
    outcomes: Vec<JudgedOutcome>,
    unexpected_bucket: u64,
    quantifier: Quantifier,
) -> TestVerdict {
    let mut counts = ClassCounts {
        unexpected: unexpected_bucket,
        ..ClassCounts::default()
    };
    let mut positive = 0;
    for o in &outcomes {
        match o.class {
            Class::Sc => counts.sc += o.count,
            Class::Weak => counts.weak += o.count,
            Class::Forbidden => counts.forbidden += o.count,
            Class::Unexpected => counts.unexpected += o.count,
        }
        if o.satisfies {
            positive += o.count;
        }
    }
    let instances = counts.sc + counts.weak + counts.forbidden + counts.unexpected;
    let negative = instances - positive;
    let status = if instances == 0 {
        Status::NoData
    } else if counts.forbidden > 0 || counts.unexpected > 0 {
        Status::Violation
    } else {
        Status::Conformant
    };
    let observation = if positive == 0 {
        Observation::Never
    } else if negative == 0 {
        Observation::Always
    } else {
        Observation::Sometimes
    };
    let validated = match quantifier {
        Quantifier::Exists => positive > 0,
        Quantifier::NotExists => positive == 0,
        Quantifier::Forall => negative == 0,
    };
    TestVerdict {
        outcomes,
        counts,
        instances,
        status,
        quantifier,
        positive,
        negative,
        observation,
        validated,
    }
}

/// The exact one-sided 95 % upper bound on the rate of an event seen 0 times in `n` trials:
/// `1 - 0.05^(1/n)` (the "rule of three", about `3/n`). `None` for `n == 0`.
pub fn unseen_upper_bound_95(n: u64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    // -expm1(ln(0.05)/n) keeps precision when n is in the billions.
    Some(-((0.05f64).ln() / n as f64).exp_m1())
}

/// `count / instances`, or `None` with no instances.
pub fn rate_per_instance(count: u64, instances: u64) -> Option<f64> {
    (instances > 0).then(|| count as f64 / instances as f64)
}

/// `count / seconds`, or `None` when no time was measured.
pub fn rate_per_second(count: u64, seconds: f64) -> Option<f64> {
    (seconds > 0.0).then(|| count as f64 / seconds)
}

impl TestVerdict {
    /// The allowed outcomes never observed.
    pub fn unseen_allowed(&self) -> impl Iterator<Item = &JudgedOutcome> {
        self.outcomes
            .iter()
            .filter(|o| o.count == 0 && matches!(o.class, Class::Sc | Class::Weak))
    }

    /// The weak outcomes observed at least once.
    pub fn weak_seen(&self) -> impl Iterator<Item = &JudgedOutcome> {
        self.outcomes
            .iter()
            .filter(|o| o.count > 0 && o.class == Class::Weak)
    }

    /// The instances of the listed outcomes classed unexpected (read values no write made);
    /// `counts.unexpected` less these is the bucket of values outside the outcome space.
    pub fn listed_unexpected(&self) -> u64 {
        self.outcomes
            .iter()
            .filter(|o| o.class == Class::Unexpected)
            .map(|o| o.count)
            .fold(0, u64::saturating_add)
    }

    /// The instances whose values lie outside the outcome space (the unexpected bucket).
    pub fn outside_the_space(&self) -> u64 {
        self.counts
            .unexpected
            .saturating_sub(self.listed_unexpected())
    }
}

impl Class {
    /// The lower-case name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Sc => "sc",
            Class::Weak => "weak",
            Class::Forbidden => "forbidden",
            Class::Unexpected => "unexpected",
        }
    }
}

impl Status {
    /// The lower-case name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Conformant => "conformant",
            Status::Violation => "violation",
            Status::NoData => "no data",
        }
    }
}

impl fmt::Display for Observation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Observation::Never => "Never",
            Observation::Sometimes => "Sometimes",
            Observation::Always => "Always",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus::ast::{CmpOp, Prop, Reg, Term};
    use crate::model::CheckResult;
    use crate::outcome::Observable;

    fn obs(thread: usize, r: &str) -> Observable {
        Observable::Reg {
            thread,
            reg: Reg(r.into()),
        }
    }

    /// MP: P1 reads flag then data; (1, 0) is the weak outcome, (0, 1)... all four allowed but
    /// only three are SC. Here (1, 0) is made forbidden to exercise violations.
    fn mp(weak_allowed: bool) -> (ModelVerdict, Condition) {
        let sc: BTreeSet<Outcome> = [vec![0, 0], vec![0, 1], vec![1, 1]]
            .into_iter()
            .map(Outcome)
            .collect();
        let mut allowed = sc.clone();
        if weak_allowed {
            allowed.insert(Outcome(vec![1, 0]));
        }
        let cond = Condition {
            quantifier: Quantifier::Exists,
            prop: Prop::And(
                Box::new(Prop::Cmp {
                    lhs: Term::Reg {
                        thread: 1,
                        reg: Reg("r0".into()),
                    },
                    op: CmpOp::Eq,
                    rhs: Term::Const(1),
                }),
                Box::new(Prop::Cmp {
                    lhs: Term::Reg {
                        thread: 1,
                        reg: Reg("r1".into()),
                    },
                    op: CmpOp::Eq,
                    rhs: Term::Const(0),
                }),
            ),
        };
        let mv = ModelVerdict {
            observables: vec![obs(1, "r0"), obs(1, "r1")],
            allowed,
            sc,
            result: CheckResult::Ok,
            candidates: 4,
            consistent: 4,
            domains: vec![vec![0, 1], vec![0, 1]],
            hangs: vec![],
            stuck: vec![],
            witnesses: vec![],
            excluded: vec![],
        };
        (mv, cond)
    }

    fn hist(entries: &[(&[i64], u64)], unexpected: u64) -> Histogram {
        Histogram {
            counts: entries
                .iter()
                .map(|(v, n)| (Outcome(v.to_vec()), *n))
                .collect(),
            unexpected,
        }
    }

    #[test]
    fn weak_outcome_is_allowed_and_validates_exists() {
        let (mv, cond) = mp(true);
        let v = judge(&mv, &hist(&[(&[0, 0], 10), (&[1, 0], 2)], 0), &cond);
        assert_eq!(v.status, Status::Conformant);
        assert_eq!(v.counts.weak, 2);
        assert_eq!(v.counts.sc, 10);
        assert_eq!((v.positive, v.negative), (2, 10));
        assert_eq!(v.observation, Observation::Sometimes);
        assert!(v.validated);
        // Every allowed outcome is listed, seen or not.
        assert_eq!(v.outcomes.len(), 4);
        assert_eq!(v.unseen_allowed().count(), 2);
    }

    #[test]
    fn forbidden_outcome_is_a_violation() {
        let (mv, cond) = mp(false);
        let v = judge(&mv, &hist(&[(&[1, 0], 1), (&[1, 1], 5)], 0), &cond);
        assert_eq!(v.status, Status::Violation);
        assert_eq!(v.counts.forbidden, 1);
        let weak = v.outcomes.iter().find(|o| o.values.0 == [1, 0]).unwrap();
        assert_eq!(weak.class, Class::Forbidden);
        assert!(weak.satisfies);
    }

    #[test]
    fn unexpected_values_are_a_violation_and_never_satisfy() {
        let (mv, cond) = mp(true);
        let v = judge(&mv, &hist(&[(&[0, 0], 3), (&[1], 1)], 4), &cond);
        assert_eq!(v.counts.unexpected, 5);
        assert_eq!(v.status, Status::Violation);
        assert_eq!(v.observation, Observation::Never);
        assert!(!v.validated);
        assert_eq!(v.instances, 8);
    }

    #[test]
    fn never_seen_is_no_data_not_forbidden() {
        let (mv, cond) = mp(true);
        let v = judge(&mv, &Histogram::default(), &cond);
        assert_eq!(v.status, Status::NoData);
        assert!(v.outcomes.iter().all(|o| o.class != Class::Forbidden));
    }

    #[test]
    fn not_exists_and_forall_quantifiers() {
        let (mv, mut cond) = mp(true);
        let h = hist(&[(&[0, 0], 3)], 0);
        cond.quantifier = Quantifier::NotExists;
        assert!(judge(&mv, &h, &cond).validated);
        cond.quantifier = Quantifier::Forall;
        assert!(!judge(&mv, &h, &cond).validated);
        let always = hist(&[(&[1, 0], 3)], 0);
        let v = judge(&mv, &always, &cond);
        assert!(v.validated);
        assert_eq!(v.observation, Observation::Always);
    }

    #[test]
    fn upper_bound_matches_rule_of_three() {
        assert_eq!(unseen_upper_bound_95(0), None);
        // One trial: the bound is 95 %.
        assert!((unseen_upper_bound_95(1).unwrap() - 0.95).abs() < 1e-12);
        let n = 1_000_000_000u64;
        let b = unseen_upper_bound_95(n).unwrap();
        assert!((b * n as f64 - 2.9957).abs() < 1e-3, "{b}");
        // The bound is the rate p with (1-p)^n = 0.05.
        let p = unseen_upper_bound_95(20).unwrap();
        assert!(((1.0 - p).powi(20) - 0.05).abs() < 1e-12);
    }

    #[test]
    fn the_unexpected_count_splits_into_listed_outcomes_and_the_bucket() {
        let judged = |values: Vec<i64>, class, count| JudgedOutcome {
            values: Outcome(values),
            class,
            count,
            satisfies: false,
        };
        let outcomes = vec![
            judged(vec![0, 0], Class::Sc, 10),
            judged(vec![7, 0], Class::Unexpected, 3),
            judged(vec![0, 7], Class::Unexpected, 1),
        ];
        let v = summarize(outcomes, 2, Quantifier::Exists);
        assert_eq!(v.counts.unexpected, 6);
        assert_eq!((v.listed_unexpected(), v.outside_the_space()), (4, 2));
    }
}
