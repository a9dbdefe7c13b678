//! What the search and its final race share: the [`Evaluator`] that measures a configuration,
//! and the [`Trial`] that records one configuration tried (kept apart from both so that neither
//! imports the other).

use super::space::Point;
use super::stats::{Estimate, Sample};
use serde::{Deserialize, Serialize};

/// Why a chunk of a configuration was not measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// This configuration cannot run here (the backend refused or failed it): the search goes
    /// on without it.
    Infeasible(String),
    /// Nothing more can be measured (the device is lost): the search ends with this reason.
    Fatal(String),
}

impl From<Refusal> for String {
    fn from(r: Refusal) -> String {
        match r {
            Refusal::Infeasible(why) | Refusal::Fatal(why) => why,
        }
    }
}

/// What measures a configuration.
pub trait Evaluator {
    /// Measures one chunk of `point`, with `seed` for the backend's own draws.
    fn sample(&mut self, point: &Point, seed: u64) -> Result<Sample, Refusal>;
    /// Whether the time budget allows another chunk.
    fn time_left(&self) -> bool;
    /// The search is over and the final race begins (its time may be kept apart).
    fn final_phase(&mut self) {}
}

/// Which phase proposed a configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// The default configuration.
    Baseline,
    /// Drawn at random.
    Random,
    /// A perturbation of a good one.
    Local,
}

/// One configuration tried and what it measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// The configuration.
    pub point: Point,
    /// Who proposed it.
    pub phase: Phase,
    /// The trial it perturbs (local search).
    pub parent: Option<usize>,
    /// Its chunks.
    pub samples: Vec<Sample>,
    /// Their estimate.
    pub estimate: Estimate,
    /// Stopped before its last chunk because it could not beat the best.
    pub stopped_early: bool,
    /// Why it could not be measured, when the backend refused or failed it: it is then out of
    /// the search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}
