//! The PTX memory consistency model (PTX ISA §8): for a test, every final outcome the model
//! allows, computed exactly. Pure and deterministic: no I/O, clocks, randomness or GPU.
//!
//! Pipeline: [`lower`] resolves locations and runs each thread along every path with every
//! read value from a finite domain (traces); [`enumerate`] combines one trace per thread;
//! [`relations`] builds the relations of one combination; [`search`] enumerates reads-from,
//! Fence-SC order and minimal coherence, deciding the six [`axioms`] and reporting to the
//! [`collect`]or; [`sc`] is the sequentially consistent reference and its axiomatic twin.
//!
//! Layers, each using only those before it: `rows`, `relation`, `event`, `verdict`, `watch`, `lower`;
//! `relations`; `axioms`; `search`; `sc`; `goal`; `collect`; `enumerate`; `candidates`.

mod axioms;
pub mod candidates;
mod collect;
pub mod dot;
mod enumerate;
pub mod event;
pub mod explain;
mod goal;
mod lower;
mod relation;
mod relations;
mod rows;
mod sc;
mod search;
mod spin;
mod verdict;
mod watch;

pub use collect::{MAX_CANDIDATES, MAX_COMBINATIONS};
pub use rows::Rows;
pub use verdict::{
    Axiom, CheckResult, Decision, Exclusion, ExecEvent, Execution, ModelError, ModelVerdict,
    Relation, Stuck,
};
pub use watch::Watch;

use crate::litmus::ast::{Quantifier, Test};
use crate::outcome::{observables, Observable, Outcome};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Computes the outcomes the PTX model allows for `test`.
pub fn check(test: &Test) -> Result<ModelVerdict, ModelError> {
    check_until(test, None)
}

/// [`check`], giving up with [`ModelError::Stopped`] soon after `watch` is stopped (the
/// caller's timeout or Ctrl-C; it is read, and told the candidates examined, every thousand or
/// so steps of the search).
pub fn check_until(test: &Test, watch: Option<Arc<Watch>>) -> Result<ModelVerdict, ModelError> {
    check_within(test, watch, collect::MAX_KEPT_BYTES)
}

/// [`check_until`] with the outcomes and witnesses kept bounded by `kept_limit` bytes.
fn check_within(
    test: &Test,
    watch: Option<Arc<Watch>>,
    kept_limit: u64,
) -> Result<ModelVerdict, ModelError> {
    let prog = lower::Program::new(test)?;
    let obs = observables(test);
    let (_, traces, spins) = prog.domains_and_spins()?;
    let mut col = collect::Collector::new(&prog, &obs)?;
    col.watch = watch.clone();
    col.kept_limit = kept_limit;
    enumerate::combine(&prog, &traces, &mut col, search::run)?;
    if let Some(f) = col.fault {
        return Err(f);
    }
    let sc_all = sc_labels(test, &prog, &obs, &traces, watch.clone())?;
    let allowed: BTreeSet<_> = col.allowed.keys().cloned().collect();
    let sc = allowed.intersection(&sc_all).cloned().collect();
    let ok = condition_ok(test, &obs, &allowed);
    // Each register's values, in order (a `BTreeSet`'s iteration already is).
    let domains: Vec<Vec<_>> = col
        .domains
        .iter()
        .map(|d| d.iter().copied().collect())
        .collect();
    let excluded = col
        .excluded
        .into_iter()
        .filter(|(o, _)| !allowed.contains(o))
        .map(|(_, e)| e)
        .collect();
    let mut hangs: Vec<String> = col
        .hangs
        .iter()
        .map(|(h, most)| format!("{h}, at most {most} arrive"))
        .collect();
    let looping = test.threads.iter().any(|t| crate::litmus::loops(&t.body));
    if allowed.is_empty() && hangs.is_empty() && looping {
        // Without barriers that hang, an execution only fails to finish in a loop: the model
        // cuts the paths that spin for ever, and here no other path is left to combine.
        hangs.push("every execution waits for ever in a spin loop that no write ends".into());
    }
    let stuck = match spin::spinning(&prog, &traces, &spins, watch) {
        Ok(stuck) => stuck,
        // The outcomes stand without it: say the question is open rather than fail the check.
        Err(ModelError::TooLarge { what }) => {
            hangs.push(format!(
                "undecided whether a spin loop runs for ever: {what}"
            ));
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    hangs.extend(stuck.iter().map(|s| s.line.clone()));
    Ok(ModelVerdict {
        hangs,
        stuck,
        observables: obs,
        sc,
        result: if ok { CheckResult::Ok } else { CheckResult::No },
        candidates: col.candidates,
        consistent: col.consistent,
        domains,
        witnesses: col.allowed.into_values().collect(),
        excluded,
        allowed,
    })
}

/// The outcomes some SC execution of `test` gives: from the interleaving enumerator; past its
/// state budget, and for tests without cluster barriers, from the axiomatic SC check over the
/// same candidates (the two agree: see the property tests).
fn sc_labels(
    test: &Test,
    prog: &lower::Program,
    obs: &[Observable],
    traces: &[Vec<lower::Trace>],
    watch: Option<Arc<Watch>>,
) -> Result<BTreeSet<Outcome>, ModelError> {
    match sc::outcomes(prog, obs) {
        Ok(s) => Ok(s),
        Err(ModelError::TooLarge { .. }) if !has_cluster_barriers(test) => {
            axiomatic_sc(prog, obs, traces, watch)
        }
        Err(e) => Err(e),
    }
}

/// Whether `test`'s quantified condition is `Ok` (herd's word) over the `allowed` outcomes.
fn condition_ok(test: &Test, obs: &[Observable], allowed: &BTreeSet<Outcome>) -> bool {
    let holds = |o: &Outcome| o.satisfies(obs, &test.condition.prop);
    match test.condition.quantifier {
        Quantifier::Exists => allowed.iter().any(holds),
        Quantifier::NotExists => !allowed.iter().any(holds),
        Quantifier::Forall => allowed.iter().all(holds),
    }
}

/// Decides `test`'s condition alone, unbounded: [`decide_until`] without a watch.
pub fn decide(test: &Test) -> Result<Decision, ModelError> {
    decide_until(test, None)
}

/// Decides `test`'s condition alone: [`check_until`]'s `result`, found by searching only for
/// an allowed outcome that satisfies the proposition (`exists`, `~exists`) or violates it
/// (`forall`), stopping at the first, skipping trace combinations whose registers rule it out,
/// and labelling nothing SC. Where [`check_until`] fails on an undecidable execution this may
/// still answer, when a witness is found first.
pub fn decide_until(test: &Test, watch: Option<Arc<Watch>>) -> Result<Decision, ModelError> {
    let prog = lower::Program::new(test)?;
    let obs = observables(test);
    let (_, traces) = prog.domains()?;
    let mut col = collect::Collector::new(&prog, &obs)?;
    col.watch = watch;
    col.goal = Some(goal::Goal::of(test, &obs));
    enumerate::combine(&prog, &traces, &mut col, search::run)?;
    if !col.found {
        if let Some(f) = col.fault {
            return Err(f);
        }
    }
    let ok = match test.condition.quantifier {
        Quantifier::Exists => col.found,
        Quantifier::NotExists | Quantifier::Forall => !col.found,
    };
    Ok(Decision {
        result: if ok { CheckResult::Ok } else { CheckResult::No },
        witness: col.allowed.into_values().next(),
        candidates: col.candidates,
    })
}

fn has_cluster_barriers(test: &Test) -> bool {
    use crate::litmus::ast::{Barrier, Instr};
    test.threads.iter().any(|t| {
        t.body.iter().any(|i| {
            matches!(
                i,
                Instr::Barrier(Barrier::ClusterArrive { .. } | Barrier::ClusterWait)
            )
        })
    })
}

fn axiomatic_sc(
    prog: &lower::Program,
    obs: &[Observable],
    traces: &[Vec<lower::Trace>],
    watch: Option<Arc<Watch>>,
) -> Result<BTreeSet<Outcome>, ModelError> {
    let mut c = collect::Collector::new(prog, obs)?;
    c.sc_mode = true;
    c.watch = watch;
    enumerate::combine(prog, traces, &mut c, sc::axiomatic::run)?;
    Ok(c.sc_found)
}

/// Every outcome of a sequentially consistent execution of `test` found axiomatically (a total
/// coherence order with `po ∪ rf ∪ co ∪ fr` and the order of CTA barriers acyclic); cluster
/// barriers are not supported. A second oracle, compared with [`sc_outcomes`] in tests.
pub fn sc_outcomes_axiomatic(test: &Test) -> Result<BTreeSet<Outcome>, ModelError> {
    if has_cluster_barriers(test) {
        return Err(ModelError::Unsupported {
            construct: "cluster barriers".into(),
            reason: "the axiomatic SC check does not model cluster barriers".into(),
        });
    }
    let prog = lower::Program::new(test)?;
    let (_, traces) = prog.domains()?;
    axiomatic_sc(&prog, &observables(test), &traces, None)
}

/// Every outcome a sequentially consistent interleaving of `test` produces (the reference
/// enumerator; an oracle for tests).
pub fn sc_outcomes(test: &Test) -> Result<BTreeSet<Outcome>, ModelError> {
    let prog = lower::Program::new(test)?;
    sc::outcomes(&prog, &observables(test))
}

/// Whether some fair sequentially consistent interleaving of `test` never ends (the reference
/// for the spin loops the checker says may run for ever; an oracle for tests).
pub fn sc_spins_for_ever(test: &Test) -> Result<bool, ModelError> {
    sc::spins_for_ever(&lower::Program::new(test)?)
}

#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
