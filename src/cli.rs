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
    ///
    /// One line per test: path, name, thread count, the scopes its operations synchronise at,
    /// and the features it uses (fence.sc, atom, bar, proxy, alias, cluster, shared, branch,
    /// dep, ...), then a count line. A file that does not parse is reported on stderr as
    /// `path:line:col: found X, expected Y` and the listing goes on; the exit code is then 2.
    List(ListArgs),
    /// Print a test in canonical form, followed by its hash.
    ///
    /// The canonical form spells every instruction in full (`atom.add` as `atom.relaxed.add`,
    /// `bar.sync` as `bar.cta.sync`), declares every location and aligns the thread columns; it
    /// parses back to the same test. The last line, `(* hash H *)`, is a comment holding the
    /// test hash: 16 hex digits that ignore formatting, comments, name and doc strings.
    Show(ShowArgs),
    /// Render report.html, report.md and plots/*.png for a result set.
    Report(ReportArgs),
    /// Compare two result sets; exit 1 when B has a violation that A did not.
    Diff(DiffArgs),
    /// Combine result sets of one campaign (shards, repeated runs) into one.
    Merge(MergeArgs),
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
    /// The test file, or the name of a test under `litmus/` (its file name without `.litmus`).
    pub test: PathBuf,
}

/// Arguments of `report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The result set (a directory holding run.json).
    pub results: PathBuf,
    /// Where to write the report (default: the result set itself).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Overwrite an existing report.
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The baseline result set.
    pub a: PathBuf,
    /// The result set compared with it.
    pub b: PathBuf,
    /// Also write the comparison as a self-contained HTML page here.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Overwrite the HTML file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The result sets to combine.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The merged result set's directory; its last component becomes the run id.
    #[arg(long, short)]
    pub out: PathBuf,
    /// Overwrite an existing result set there.
    #[arg(long)]
    pub force: bool,
}
