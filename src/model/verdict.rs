//! What the model says about a test.

use crate::litmus::ast::Value;
use crate::outcome::{Observable, Outcome};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

/// The model's answer for one test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelVerdict {
    /// The test's observables, the order of every outcome's values.
    pub observables: Vec<Observable>,
    /// Every outcome some consistent execution produces.
    pub allowed: BTreeSet<Outcome>,
    /// The allowed outcomes that some sequentially consistent interleaving also produces.
    pub sc: BTreeSet<Outcome>,
    /// Whether the test's quantified condition holds, in herd's terms.
    pub result: CheckResult,
    /// Candidate executions examined.
    pub candidates: u64,
    /// Candidate executions examined that satisfy every axiom (the enumeration of one
    /// combination of thread paths stops once its outcome has a witness, so this counts
    /// consistent executions examined, not all of them).
    pub consistent: u64,
    /// For each observable, the sorted values it takes in any candidate execution (consistent
    /// or not): the finite outcome space.
    pub domains: Vec<Vec<Value>>,
    /// One consistent execution per allowed outcome, in outcome order.
    pub witnesses: Vec<Execution>,
    /// For each outcome some candidate produces but no consistent execution does: the axiom
    /// that excludes it, with an offending cycle, in outcome order.
    pub excluded: Vec<Exclusion>,
    /// The barriers at which some combination of thread paths never completes (it gives no
    /// final state), each as `barrier 1 needs 3 threads, at most 2 arrive`; when no
    /// execution completes and the test loops, that every one waits for ever in a spin loop;
    /// and each spin loop some consistent execution stays in for ever (`P1 may spin for ever
    /// in the loop back to L: ...`, see `spin.rs`).
    pub hangs: Vec<String>,
    /// Each spin loop of `hangs` with an execution that stays in it.
    pub stuck: Vec<Stuck>,
}

/// A spin loop some consistent execution stays in for ever, with that execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// What `hangs` says of it.
    pub line: String,
    /// The execution, up to the first pass of the iteration that repeats.
    pub execution: Execution,
    /// The reads of that iteration, indices into `execution.events`.
    pub reads: Vec<usize>,
}

/// The model's answer to a test's condition alone, found without listing every outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Whether the test's quantified condition holds, as [`ModelVerdict::result`].
    pub result: CheckResult,
    /// The allowed execution that decided it: one whose outcome satisfies the proposition
    /// (`exists`, `~exists`) or violates it (`forall`); `None` when there is none.
    pub witness: Option<Execution>,
    /// Candidate executions examined.
    pub candidates: u64,
}

/// One execution, as a graph: events and named edges between them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    /// The final state it produces.
    pub outcome: Outcome,
    /// Its events.
    pub events: Vec<ExecEvent>,
    /// Its edges: `(relation, from, to)`, indices into `events`.
    pub edges: Vec<(Relation, usize, usize)>,
}

/// The relation an edge of an [`Execution`] belongs to, named as in the ISA and `ptx.als`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Relation {
    /// Program order (its immediate edges).
    Po,
    /// Reads-from.
    Rf,
    /// Coherence order (its immediate edges).
    Co,
    /// From-reads (those `fr;co` does not imply).
    Fr,
    /// The read and write of one atomic read-modify-write.
    Rmw,
    /// Address, data and control dependencies.
    Dep,
    /// Synchronisation not already shown as `po` or `fsc`.
    Sync,
    /// Fence-SC order.
    Fsc,
    /// Causality order: its immediate edges no other edge shows.
    Cause,
}

impl Relation {
    /// Its formal name (`po`, `rf`, …).
    pub fn name(self) -> &'static str {
        match self {
            Relation::Po => "po",
            Relation::Rf => "rf",
            Relation::Co => "co",
            Relation::Fr => "fr",
            Relation::Rmw => "rmw",
            Relation::Dep => "dep",
            Relation::Sync => "sync",
            Relation::Fsc => "fsc",
            Relation::Cause => "cause",
        }
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An event of an [`Execution`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecEvent {
    /// The thread, `None` for an initial write.
    pub thread: Option<usize>,
    /// The index of the instruction in the thread's body.
    pub instr: usize,
    /// A herd-like label such as `W.rel.gpu y=1`.
    pub label: String,
}

/// Why an outcome is not allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exclusion {
    /// The outcome.
    pub outcome: Outcome,
    /// The axiom a candidate execution producing it violates.
    pub axiom: Axiom,
    /// The offending cycle, as indices into `execution.events`, each related to the next and
    /// the last to the first.
    pub cycle: Vec<usize>,
    /// That candidate execution. A candidate excluded before its coherence order is chosen
    /// gives every final value its writes allow (the initial one only where nothing else
    /// writes), and its outcomes share one execution (whose own `outcome` is the first of
    /// them): one graph, not one per outcome.
    pub execution: Arc<Execution>,
}

/// herd's answer for a quantified condition: `Ok` when it holds (the corpus CSVs' `1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CheckResult {
    /// The condition holds.
    Ok,
    /// The condition does not hold.
    No,
}

/// The axioms of PTX ISA §8.10, by their names in the ISA and NVIDIA's `ptx.als`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Axiom {
    /// Coherence.
    Coherence,
    /// Fence-SC.
    FenceSc,
    /// Atomicity.
    Atomicity,
    /// No-Thin-Air.
    NoThinAir,
    /// Sequential consistency per location.
    ScPerLocation,
    /// Causality.
    Causality,
}

impl Axiom {
    /// The axiom's name as used in reports: `coherence`, `fence_sc`, `atomicity`,
    /// `no_thin_air`, `sc_per_location`, `causality`.
    pub fn name(self) -> &'static str {
        match self {
            Axiom::Coherence => "coherence",
            Axiom::FenceSc => "fence_sc",
            Axiom::Atomicity => "atomicity",
            Axiom::NoThinAir => "no_thin_air",
            Axiom::ScPerLocation => "sc_per_location",
            Axiom::Causality => "causality",
        }
    }
}

impl fmt::Display for Axiom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why the model could not decide a test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// The test uses something the model does not decide; never guessed.
    Unsupported {
        /// What it is.
        construct: String,
        /// Why it is not decided.
        reason: String,
    },
    /// The test is too large to enumerate within the limit.
    TooLarge {
        /// What exceeded the limit.
        what: String,
    },
    /// The caller asked the search to stop (a timeout, Ctrl-C) before it finished.
    Stopped,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Unsupported { construct, reason } => {
                write!(f, "unsupported: {construct}: {reason}")
            }
            ModelError::TooLarge { what } => write!(f, "too large to check: {what}"),
            ModelError::Stopped => f.write_str("stopped before the check finished"),
        }
    }
}

impl std::error::Error for ModelError {}
