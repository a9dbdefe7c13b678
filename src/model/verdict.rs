//! What the model says about a test.

use crate::outcome::{Observable, Outcome};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// The model's answer for one test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Candidate executions that satisfy every axiom.
    pub consistent: u64,
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
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Unsupported { construct, reason } => {
                write!(f, "unsupported: {construct}: {reason}")
            }
            ModelError::TooLarge { what } => write!(f, "too large to check: {what}"),
        }
    }
}

impl std::error::Error for ModelError {}
