//! Deciding a test's condition without listing its outcomes: the outcomes searched for (those
//! satisfying the condition's proposition, or for `forall` those violating it), and whether an
//! outcome known only in part may still be one of them, so that the walk over trace
//! combinations skips what cannot be.

use crate::litmus::ast::{Prop, Quantifier, Term, Test, Value};
use crate::outcome::{term_observable, Observable, Outcome};

/// The outcomes the search looks for.
pub struct Goal {
    observables: Vec<Observable>,
    wanted: Prop,
}

impl Goal {
    /// The outcomes that decide `test`'s condition: one satisfying its proposition (`exists`,
    /// `~exists`) or violating it (`forall`).
    pub fn of(test: &Test, observables: &[Observable]) -> Goal {
        let prop = test.condition.prop.clone();
        let wanted = match test.condition.quantifier {
            Quantifier::Exists | Quantifier::NotExists => prop,
            Quantifier::Forall => Prop::Not(Box::new(prop)),
        };
        Goal {
            observables: observables.to_vec(),
            wanted,
        }
    }

    /// Whether `outcome` is one of the outcomes looked for.
    pub fn holds(&self, outcome: &Outcome) -> bool {
        outcome.satisfies(&self.observables, &self.wanted)
    }

    /// Whether an outcome whose observable `i` has the value `known(i)` (`None`: not known
    /// yet) may still be one looked for.
    pub fn may_hold(&self, known: &dyn Fn(usize) -> Option<Value>) -> bool {
        let value = |t: &Term| match t {
            Term::Const(v) => Some(*v),
            other => {
                let o = term_observable(other)?;
                known(self.observables.iter().position(|x| *x == o)?)
            }
        };
        eval(&self.wanted, &value) != Some(false)
    }
}

/// Three-valued evaluation: `None` when the values known do not decide `p`.
fn eval(p: &Prop, value: &dyn Fn(&Term) -> Option<Value>) -> Option<bool> {
    match p {
        Prop::True => Some(true),
        Prop::False => Some(false),
        Prop::Cmp { lhs, op, rhs } => Some(op.eval(value(lhs)?, value(rhs)?)),
        Prop::Not(q) => eval(q, value).map(|b| !b),
        Prop::And(a, b) => match (eval(a, value), eval(b, value)) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        Prop::Or(a, b) => match (eval(a, value), eval(b, value)) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
    }
}
