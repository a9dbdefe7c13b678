//! From a litmus test to a PTX kernel that runs many instances of it at once.
//!
//! [`Layout`] decides where every role, location and result lives (the contract with the
//! runtime); [`Stress`] holds the incantations; the emitter (`emit`) writes pure, deterministic
//! PTX for a test, a layout and a stress configuration. Nothing here touches files or a GPU.

pub mod domain;
pub mod emit;
pub mod layout;
pub mod lower;
pub mod ptx;
pub mod soft_barrier;
pub mod stress;

pub use emit::{emit, Kernel};
pub use layout::{
    Buffer, BufferKind, Counter, DeviceCounts, LaunchConfig, Layout, Param, Perms, Shape, PARAMS,
};
pub use stress::{Stress, StressPattern};

use crate::litmus::ast::Test;

/// Lays out and emits `test` in one step, with the value domains of the static analysis
/// ([`domain::static_domains`]) when the caller has no model verdict at hand.
pub fn build(test: &Test, stress: &Stress) -> Result<Kernel, CodegenError> {
    let domains = domain::static_domains(test)?;
    let layout = Layout::new(test, stress, &domains)?;
    emit(test, &layout, stress)
}

use std::fmt;

/// Why a kernel cannot be generated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodegenError {
    /// The test uses something the GPU harness cannot run faithfully; never emitted wrongly.
    Unsupported {
        /// What it is.
        construct: String,
        /// Why it cannot run.
        reason: String,
    },
    /// The inputs contradict each other (a bad configuration or domain list).
    Invalid(String),
    /// Device counts that do not add up.
    Checksum(String),
}

impl fmt::Display for CodegenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodegenError::Unsupported { construct, reason } => {
                write!(f, "unsupported on the GPU: {construct}: {reason}")
            }
            CodegenError::Invalid(m) => write!(f, "invalid kernel request: {m}"),
            CodegenError::Checksum(m) => write!(f, "device counts do not add up: {m}"),
        }
    }
}

impl std::error::Error for CodegenError {}
