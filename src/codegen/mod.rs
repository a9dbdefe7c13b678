//! From a litmus test to a PTX kernel that runs many instances of it at once.
//!
//! [`Layout`] decides where every role, location and result lives (the contract with the
//! runtime); [`Stress`] holds the incantations; the emitter ([`emit()`]) writes pure,
//! deterministic PTX for a test, a layout and a stress configuration. Nothing here touches files
//! or a GPU.
//!
//! Layers, each using only those below it: `ptx` (typed PTX), `func` (a function under
//! construction), `stress`, `stress_keys` (the incantations set one by one), `domain` (value
//! analysis), `barrier_key`, `soft_barrier` (the software barrier plan), `proxy` (what the GPU
//! can run of a test's proxies), `layout` (shape, placement, memory, the launch ABI), `lower`
//! (one role to a function), `emit` (the module and its two kernels).

mod barrier_key;
pub mod deadlock;
mod domain;
mod emit;
pub mod fragments;
mod func;
pub mod layout;
mod lower;
pub mod proxy;
pub mod ptx;
mod soft_barrier;
mod stress;
mod stress_keys;

pub use domain::static_domains;
pub use emit::{emit, Kernel};
pub use layout::{BufferKind, Counter, DeviceCounts, LaunchConfig, Layout, Param, Perms, PARAMS};
pub use lower::RoleCode;
pub use stress::{Stress, StressPattern, DEFAULT_PRESET, PRESETS};
pub use stress_keys::{
    find_key, parse_settings, split_setting, Setting, StressKey, ValueKind, STRESS_KEYS,
};

use crate::litmus::ast::Test;

/// Lays out and emits `test` in one step, with the value domains of the static analysis
/// ([`static_domains`]) when the caller has no model verdict at hand. A drawn CTA size too
/// small for the test rises to what it needs ([`Stress::for_warps`]), and the kernel says so.
pub fn build(test: &Test, stress: &Stress) -> Result<Kernel, CodegenError> {
    let domains = static_domains(test)?;
    let fitted = stress.for_warps(layout::warps_needed(test));
    let layout = Layout::new(test, &fitted, &domains)?;
    let mut kernel = emit(test, &layout, &fitted)?;
    if fitted.cta_size != stress.cta_size {
        kernel.notes.push(format!(
            "cta_size is {} rather than the {} that {} drew: a test CTA needs {} warps",
            fitted.cta_size,
            stress.cta_size,
            stress.name,
            fitted.cta_size / layout::WARP
        ));
    }
    Ok(kernel)
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
