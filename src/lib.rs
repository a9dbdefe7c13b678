//! ptx-litmus: tests NVIDIA GPUs against the PTX memory consistency model.
//!
//! Litmus tests are parsed ([`litmus`]), their allowed outcomes computed by the CPU model checker
//! ([`model`]), and observed final states ([`outcome`]) counted by a backend.
//!
//! No `unsafe` code outside two modules that say why they need it: the CUDA backend's driver
//! calls (`harness::cuda`) and the stop-signal handler (`app::interrupt`).

#![deny(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::too_many_lines)]

pub mod app;
pub mod campaign;
pub mod cat;
pub mod cli;
pub mod codegen;
pub mod fx;
pub mod gen;
pub mod harness;
pub mod input;
pub mod litmus;
pub mod model;
pub mod outcome;
pub mod report;
pub mod results;
pub mod rng;
pub mod sass;
pub mod text;
pub mod toolchain;
pub mod tune;
pub mod verdict;

/// The git revision this binary was built from (`unknown` outside a checkout).
pub const GIT_REVISION: &str = env!("PTX_LITMUS_GIT_REVISION");
/// The cargo profile this binary was built with.
pub const BUILD_PROFILE: &str = env!("PTX_LITMUS_BUILD_PROFILE");
/// The rustc that compiled this binary (`rustc -V`, or `unknown`).
pub const RUSTC_VERSION: &str = env!("PTX_LITMUS_RUSTC_VERSION");
