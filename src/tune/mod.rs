//! `tune`: a seeded search over the stress space (GPU) or the CPU backend's options for the
//! configuration that shows the most weak outcomes per second, with early stopping from
//! confidence intervals. Pure: measuring is the caller's [`Evaluator`]; files and commands are
//! `app::tune`'s.

pub mod decide;
pub mod field;
pub mod record;
pub mod rng;
pub mod search;
pub mod space;
pub mod state;
pub mod stats;
pub mod trial;
pub mod tuned_file;

pub use decide::{Decision, FinalPlan};
pub use record::{ParamRecord, SearchRecord};
pub use search::{search, Outcome, Plan};
pub use space::{Param, Point, Space};
pub use stats::{estimate, median_estimate, Estimate, Sample};
pub use trial::{Evaluator, Phase, Refusal, Trial};
