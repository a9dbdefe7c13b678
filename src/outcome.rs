//! Final states of a test: what is observed (`Observable`), one final state (`Outcome`), and
//! counts of final states (`Histogram`). Shared by the model, both backends, verdicts and results.

use crate::litmus::ast::{Prop, Reg, Term, Test, Value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Something whose final value is part of an outcome.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Observable {
    /// A register of a thread, `P1:r0`.
    Reg {
        /// Thread index.
        thread: usize,
        /// Register.
        reg: Reg,
    },
    /// A location's final value, `x`.
    Loc(String),
}

/// One final state: the values of a test's observables, in the order of [`observables`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Outcome(pub Vec<Value>);

/// How often each final state was seen, plus states outside the test's outcome space.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histogram {
    /// Count per outcome; outcomes never seen are absent.
    pub counts: BTreeMap<Outcome, u64>,
    /// Instances whose final state had a value no execution of the test can produce.
    pub unexpected: u64,
}

impl fmt::Display for Observable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observable::Reg { thread, reg } => write!(f, "P{thread}:{reg}"),
            Observable::Loc(name) => f.write_str(name),
        }
    }
}

/// The observables of a test, in canonical order: the registers and locations named by the
/// condition and by the `locations [..]` clause, registers first (by thread, then name), then
/// locations (by name), without repeats.
pub fn observables(test: &Test) -> Vec<Observable> {
    let mut out: Vec<Observable> = test
        .observed_terms()
        .into_iter()
        .filter_map(term_observable)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The observable a condition term reads (`None` for a constant).
pub fn term_observable(term: &Term) -> Option<Observable> {
    match term {
        Term::Reg { thread, reg } => Some(Observable::Reg {
            thread: *thread,
            reg: reg.clone(),
        }),
        Term::Loc(name) => Some(Observable::Loc(name.clone())),
        Term::Const(_) => None,
    }
}

impl Outcome {
    /// The value of `observable` in this outcome, given the test's observables.
    pub fn get(&self, observables: &[Observable], observable: &Observable) -> Option<Value> {
        observables
            .iter()
            .position(|o| o == observable)
            .map(|i| self.0[i])
    }

    /// Whether the proposition holds in this outcome. Every term of `prop` must be among
    /// `observables` (true of the test's own condition by construction).
    pub fn satisfies(&self, observables: &[Observable], prop: &Prop) -> bool {
        let value = |t: &Term| match t {
            Term::Const(v) => *v,
            other => {
                let o = term_observable(other).expect("a non-constant term is observable");
                self.get(observables, &o)
                    .expect("every condition term is an observable of the test")
            }
        };
        match prop {
            Prop::True => true,
            Prop::False => false,
            Prop::Cmp { lhs, op, rhs } => op.eval(value(lhs), value(rhs)),
            Prop::Not(p) => !self.satisfies(observables, p),
            Prop::And(a, b) => self.satisfies(observables, a) && self.satisfies(observables, b),
            Prop::Or(a, b) => self.satisfies(observables, a) || self.satisfies(observables, b),
        }
    }

    /// herd's way of writing a final state: `P0:r0=1; P1:r1=0; x=2;`.
    pub fn display<'a>(&'a self, observables: &'a [Observable]) -> impl fmt::Display + 'a {
        OutcomeDisplay {
            outcome: self,
            observables,
        }
    }
}

struct OutcomeDisplay<'a> {
    outcome: &'a Outcome,
    observables: &'a [Observable],
}

impl fmt::Display for OutcomeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (o, v)) in self.observables.iter().zip(&self.outcome.0).enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{o}={v};")?;
        }
        Ok(())
    }
}

impl Histogram {
    /// Total instances counted, unexpected ones included.
    pub fn total(&self) -> u64 {
        self.counts.values().sum::<u64>() + self.unexpected
    }

    /// Adds another histogram's counts into this one.
    pub fn merge(&mut self, other: &Histogram) {
        for (o, n) in &other.counts {
            *self.counts.entry(o.clone()).or_insert(0) += n;
        }
        self.unexpected += other.unexpected;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus::ast::CmpOp;

    fn reg(thread: usize, name: &str) -> Term {
        Term::Reg {
            thread,
            reg: Reg(name.into()),
        }
    }

    #[test]
    fn observables_are_sorted_and_deduplicated() {
        let prop = Prop::And(
            Box::new(Prop::Cmp {
                lhs: reg(1, "r1"),
                op: CmpOp::Eq,
                rhs: Term::Const(0),
            }),
            Box::new(Prop::Or(
                Box::new(Prop::Cmp {
                    lhs: Term::Loc("x".into()),
                    op: CmpOp::Eq,
                    rhs: Term::Const(2),
                }),
                Box::new(Prop::Cmp {
                    lhs: reg(0, "r0"),
                    op: CmpOp::Ne,
                    rhs: reg(1, "r1"),
                }),
            )),
        );
        let test = Test {
            name: "t".into(),
            doc: vec![],
            locations: vec![],
            reg_init: vec![],
            threads: vec![],
            extra_observed: vec![],
            condition: crate::litmus::ast::Condition {
                quantifier: crate::litmus::ast::Quantifier::Exists,
                prop: prop.clone(),
            },
        };
        let obs = observables(&test);
        let names: Vec<String> = obs.iter().map(|o| o.to_string()).collect();
        assert_eq!(names, ["P0:r0", "P1:r1", "x"]);
        assert!(Outcome(vec![5, 0, 2]).satisfies(&obs, &prop));
        assert!(!Outcome(vec![0, 0, 1]).satisfies(&obs, &prop));
        assert!(!Outcome(vec![5, 1, 2]).satisfies(&obs, &prop));
        assert_eq!(
            Outcome(vec![5, 0, 2]).display(&obs).to_string(),
            "P0:r0=5; P1:r1=0; x=2;"
        );
    }

    #[test]
    fn histogram_merge_adds_counts() {
        let mut a = Histogram::default();
        a.counts.insert(Outcome(vec![1]), 3);
        let mut b = Histogram::default();
        b.counts.insert(Outcome(vec![1]), 2);
        b.counts.insert(Outcome(vec![0]), 1);
        b.unexpected = 4;
        a.merge(&b);
        assert_eq!(a.counts[&Outcome(vec![1])], 5);
        assert_eq!(a.total(), 10);
    }
}
