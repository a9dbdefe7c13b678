//! Human-readable explanations of a verdict: a witness execution for an allowed outcome, and
//! for an outcome that is not allowed the axiom that excludes it with the offending cycle.

use super::verdict::{Exclusion, Execution, ModelVerdict, Relation};
use crate::litmus::ast::{Quantifier, Test};
use std::fmt::Write;

/// What `--explain` shows for a test: the executions it describes, each with a title, so that
/// the text and the graphs (`dot`) agree.
pub struct Explanation<'a> {
    /// `(title, execution, highlighted cycle)`.
    pub items: Vec<(String, &'a Execution, Vec<usize>)>,
    /// The text.
    pub text: String,
}

/// Explains the verdict on `test`'s condition: for a condition whose proposition some allowed
/// outcome satisfies, a witness of one such outcome (for `forall`, of one that violates it, if
/// any); otherwise, for each outcome of the candidate space satisfying the proposition, the
/// excluding axiom and its cycle.
pub fn explain<'a>(test: &Test, v: &'a ModelVerdict) -> Explanation<'a> {
    let prop = &test.condition.prop;
    let obs = &v.observables;
    let mut text = String::new();
    let mut items = Vec::new();
    let want = test.condition.quantifier != Quantifier::Forall;
    // The outcomes the condition is about: satisfying it (exists, ~exists) or violating it
    // (forall).
    let relevant = |o: &crate::outcome::Outcome| o.satisfies(obs, prop) == want;
    // A barrier that never completes removes the executions reaching it (no final state).
    let lead = if v.allowed.is_empty() {
        "no execution completes"
    } else {
        "some executions do not complete"
    };
    for h in &v.hangs {
        let _ = writeln!(text, "{lead}: {h}");
    }
    for s in &v.stuck {
        let title = s.line.split(':').next().unwrap_or(&s.line).to_string();
        let _ = writeln!(
            text,
            "{title} in the execution (the reads that repeat marked *):"
        );
        text.push_str(&describe(&s.execution, &s.reads));
        items.push((title, &s.execution, vec![]));
    }
    match v.witnesses.iter().find(|w| relevant(&w.outcome)) {
        Some(w) => {
            let title = format!(
                "witness of allowed outcome {}",
                w.outcome.display(obs).to_string().trim_end_matches(';')
            );
            let _ = writeln!(text, "{title}:");
            text.push_str(&describe(w, &[]));
            items.push((title, w, vec![]));
        }
        None => {
            let ex: Vec<&Exclusion> = v.excluded.iter().filter(|e| relevant(&e.outcome)).collect();
            if ex.is_empty() {
                let _ = writeln!(
                    text,
                    "no candidate execution produces an outcome {} the condition",
                    if want { "satisfying" } else { "violating" }
                );
            }
            for e in ex {
                let title = format!(
                    "outcome {} is forbidden by {}",
                    e.outcome.display(obs).to_string().trim_end_matches(';'),
                    e.axiom
                );
                let _ = writeln!(text, "{title}; cycle:");
                let _ = writeln!(text, "  {}", cycle_text(&e.execution, &e.cycle));
                let _ = writeln!(text, "in the candidate execution:");
                text.push_str(&describe(&e.execution, &e.cycle));
                items.push((title, &e.execution, e.cycle.clone()));
            }
        }
    }
    Explanation { items, text }
}

/// `a --rf--> b --po--> c --fr--> a`: the cycle with the relations that join its events
/// (`rmw^-1` for the step back from an RMW's write half to its read half).
pub fn cycle_text(ex: &Execution, cycle: &[usize]) -> String {
    let mut s = String::new();
    for (i, &a) in cycle.iter().enumerate() {
        let b = cycle[(i + 1) % cycle.len()];
        let _ = write!(s, "{} ", event_name(ex, a));
        let rels: Vec<&str> = ex
            .edges
            .iter()
            .filter(|(_, x, y)| *x == a && *y == b)
            .map(|(r, _, _)| r.name())
            .collect();
        // An `atomicity` cycle closes from the write half of the RMW back to its read half.
        let back = |rel| ex.edges.contains(&(rel, b, a));
        let rel = if !rels.is_empty() {
            rels.join("|")
        } else if back(Relation::Rmw) {
            "rmw^-1".to_string()
        } else {
            "cause".to_string()
        };
        let _ = write!(s, "--{rel}--> ");
    }
    if let Some(&first) = cycle.first() {
        s.push_str(&event_name(ex, first));
    }
    s
}

/// `P1.2:R.acq.gpu y=1` (thread, instruction index, label) or `init:Winit x=0`.
pub fn event_name(ex: &Execution, i: usize) -> String {
    let e = &ex.events[i];
    match e.thread {
        Some(t) => format!("P{t}.{}:{}", e.instr, e.label),
        None => format!("init:{}", e.label),
    }
}

/// The events per thread and the edges of an execution, one per line; events of `mark` first
/// get a `*`.
pub fn describe(ex: &Execution, mark: &[usize]) -> String {
    let mut s = String::new();
    for (i, _) in ex.events.iter().enumerate() {
        let star = if mark.contains(&i) { "*" } else { " " };
        let _ = writeln!(s, "  {star} e{i} {}", event_name(ex, i));
    }
    let shown = [
        Relation::Rf,
        Relation::Co,
        Relation::Fr,
        Relation::Sync,
        Relation::Fsc,
        Relation::Rmw,
        Relation::Dep,
        Relation::Cause,
    ];
    for rel in shown {
        let edges: Vec<String> = ex
            .edges
            .iter()
            .filter(|(r, _, _)| *r == rel)
            .map(|(_, a, b)| format!("e{a}->e{b}"))
            .collect();
        if !edges.is_empty() {
            let _ = writeln!(s, "    {rel}: {}", edges.join(" "));
        }
    }
    s
}
