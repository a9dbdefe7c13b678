//! `check --herd`: the verdict in herd7's own layout, for tools that read herd logs, and the
//! model's verdict in its own words, which `check` prints otherwise.
//!
//! herd7's first line, `Test NAME Allowed`, names the *kind* of the condition (`exists` is
//! Allowed, `~exists` Forbidden, `forall` Required), not a verdict: printed beside a verdict it
//! reads as a contradiction, so only `--herd` prints it.

use crate::litmus::ast::{CmpOp, Prop, Quantifier, Term, Test};
use crate::litmus::hash;
use crate::model::CheckResult;
use crate::outcome::{Observable, Outcome};
use std::collections::BTreeSet;
use std::fmt::Write;

/// What a herd log says of one test.
pub(super) struct HerdLog<'a> {
    /// The test.
    pub test: &'a Test,
    /// Its observables, the order of each outcome's values.
    pub observables: &'a [Observable],
    /// The allowed outcomes.
    pub allowed: &'a BTreeSet<Outcome>,
    /// Whether the condition holds.
    pub result: CheckResult,
    /// The check's duration.
    pub secs: f64,
}

/// herd7's log of one test: `Test NAME KIND`, the states, `Ok`/`No`, the witnesses (counted in
/// states, not in executions as herd7 does), the condition, `Observation NAME
/// Never|Sometimes|Always P N`, the time and the hash (ptx-litmus's, not herd7's digest).
pub(super) fn text(h: &HerdLog) -> String {
    let test = h.test;
    let mut s = String::new();
    let _ = writeln!(s, "Test {} {}", test.name, kind(test.condition.quantifier));
    let _ = writeln!(s, "States {}", h.allowed.len());
    for o in h.allowed {
        let _ = writeln!(s, "{}", state(h.observables, o));
    }
    let _ = writeln!(s, "{}", result_word(h.result));
    let pos = h
        .allowed
        .iter()
        .filter(|o| o.satisfies(h.observables, &test.condition.prop))
        .count();
    let neg = h.allowed.len() - pos;
    let _ = writeln!(s, "Witnesses");
    let _ = writeln!(s, "Positive: {pos} Negative: {neg}");
    let _ = writeln!(s, "Condition {}", condition(test));
    let _ = writeln!(
        s,
        "Observation {} {} {pos} {neg}",
        test.name,
        observation(pos, neg)
    );
    let _ = writeln!(s, "Time {} {:.2}", test.name, h.secs);
    let _ = writeln!(s, "Hash={}", hash(test));
    let _ = writeln!(s);
    s
}

/// herd's word for whether a condition holds.
pub(super) fn result_word(r: CheckResult) -> &'static str {
    match r {
        CheckResult::Ok => "Ok",
        CheckResult::No => "No",
    }
}

/// The model's verdict in its own words, one line: `Allowed` or `Forbidden` (some allowed
/// state satisfies the condition's proposition, or none), `Required` or `Not required` for
/// `forall`, the count when the states are known (`counts`: satisfying, all), then whether
/// the quantified condition holds with herd's `Ok`/`No`.
pub(super) fn verdict_line(
    q: Quantifier,
    r: CheckResult,
    counts: Option<(usize, usize)>,
) -> String {
    let holds = r == CheckResult::Ok;
    let some_satisfy = match q {
        Quantifier::Exists => holds,
        Quantifier::NotExists => !holds,
        Quantifier::Forall => counts.is_some_and(|(pos, _)| pos > 0),
    };
    let word = match q {
        Quantifier::Forall if holds => "Required",
        Quantifier::Forall => "Not required",
        _ if some_satisfy => "Allowed",
        _ => "Forbidden",
    };
    let states = match (counts, q) {
        (Some((pos, all)), _) => format!("{pos} of {all} allowed states satisfy the proposition"),
        (None, Quantifier::Forall) if holds => {
            "every allowed state satisfies the proposition".into()
        }
        (None, Quantifier::Forall) => "an allowed state violates the proposition".into(),
        (None, _) if some_satisfy => "an allowed state satisfies the proposition".into(),
        (None, _) => "no allowed state satisfies the proposition".into(),
    };
    let cond = if holds { "holds" } else { "does not hold" };
    format!(
        "Verdict {word}: {states}, so the condition {cond} ({})",
        result_word(r)
    )
}

/// A quantifier as written in a test: `exists`, `~exists`, `forall`.
pub(super) fn quantifier(q: Quantifier) -> &'static str {
    match q {
        Quantifier::Exists => "exists",
        Quantifier::NotExists => "~exists",
        Quantifier::Forall => "forall",
    }
}

/// herd's name of a condition's kind.
fn kind(q: Quantifier) -> &'static str {
    match q {
        Quantifier::Exists => "Allowed",
        Quantifier::NotExists => "Forbidden",
        Quantifier::Forall => "Required",
    }
}

fn observation(pos: usize, neg: usize) -> &'static str {
    if pos == 0 {
        "Never"
    } else if neg == 0 {
        "Always"
    } else {
        "Sometimes"
    }
}

/// A state as herd prints it: `1:r0=1; x=2;`.
fn state(obs: &[Observable], o: &Outcome) -> String {
    let parts: Vec<String> = obs
        .iter()
        .zip(&o.0)
        .map(|(k, v)| match k {
            Observable::Reg { thread, reg } => format!("{thread}:{reg}={v};"),
            Observable::Loc(name) => format!("{name}={v};"),
        })
        .collect();
    parts.join(" ")
}

/// The condition as herd prints it: `exists (1:r0=1 /\ 1:r1=0)`.
fn condition(test: &Test) -> String {
    let p = prop(&test.condition.prop);
    let p = if p.starts_with('(') {
        p
    } else {
        format!("({p})")
    };
    format!("{} {p}", quantifier(test.condition.quantifier))
}

fn term(t: &Term) -> String {
    match t {
        Term::Reg { thread, reg } => format!("{thread}:{reg}"),
        Term::Loc(l) => l.clone(),
        Term::Const(c) => c.to_string(),
    }
}

fn prop(p: &Prop) -> String {
    match p {
        Prop::True => "true".into(),
        Prop::False => "false".into(),
        Prop::Cmp { lhs, op, rhs } => {
            let op = if *op == CmpOp::Eq { "=" } else { op.symbol() };
            format!("{}{op}{}", term(lhs), term(rhs))
        }
        Prop::Not(q) => format!("~({})", prop(q)),
        Prop::And(a, b) => format!("({} /\\ {})", prop(a), prop(b)),
        Prop::Or(a, b) => format!("({} \\/ {})", prop(a), prop(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_line_names_the_verdict_and_the_condition_apart() {
        use CheckResult::{No, Ok};
        use Quantifier::{Exists, Forall, NotExists};
        let line = |q, r, c| verdict_line(q, r, c);
        assert_eq!(
            line(Exists, No, Some((0, 3))),
            "Verdict Forbidden: 0 of 3 allowed states satisfy the proposition, \
             so the condition does not hold (No)"
        );
        assert!(line(NotExists, No, Some((1, 4))).starts_with("Verdict Allowed: 1 of 4"));
        assert!(line(NotExists, Ok, None).starts_with("Verdict Forbidden: no allowed state"));
        assert!(line(Forall, Ok, Some((2, 2))).starts_with("Verdict Required: 2 of 2"));
        assert!(
            line(Forall, No, None).starts_with("Verdict Not required: an allowed state violates")
        );
        assert!(line(Exists, Ok, None).ends_with("so the condition holds (Ok)"));
    }
}
