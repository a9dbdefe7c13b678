//! Command-line types (clap). Only declarations live here; `app` does the work.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Tests NVIDIA GPUs against the PTX memory consistency model.
///
/// Litmus tests (the Dat3M PTX dialect, see litmus/README.md) are checked against the PTX model
/// on the CPU, compiled to PTX kernels, and run on the GPU (or on the CPU's own threads); the
/// observed outcomes are judged against what the model allows.
///
/// Exit codes: 0 success, 1 a finding (such as a model violation observed), 2 an error.
#[derive(Debug, Parser)]
#[command(name = "ptx-litmus", version, about, long_about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the litmus tests found under PATHS, with thread count, scopes and features.
    List(ListArgs),
    /// Print a test in canonical form.
    Show(ShowArgs),
}

/// Arguments of `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Files or directories (searched recursively for `*.litmus`); default `litmus`.
    pub paths: Vec<PathBuf>,
}

/// Arguments of `show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The test file.
    pub test: PathBuf,
}
