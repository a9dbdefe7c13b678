//! The tests of a campaign `run` step: which files it names, which of them result sets have
//! covered, and the `ptx-litmus run` process that runs a part of them (what a shard, a
//! resumed step and a step that lost its device share).

use super::AppError;
use crate::litmus;
use crate::results::{self, Shard};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The test files shard `index` owns, as `run` names them.
pub fn owned(paths: &[String], index: u32, count: u32) -> Result<Vec<String>, AppError> {
    let roots: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    let found = litmus::dedup_files(litmus::discover(&roots)?);
    let shown: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
    Ok(Shard { index, count }.select(&shown))
}

/// The tests the readable parts recorded or skipped with a reason.
pub fn covered(parts: &[PathBuf]) -> BTreeSet<String> {
    let mut done = BTreeSet::new();
    for p in parts {
        if let Ok(s) = results::read_result_set(p) {
            done.extend(s.tests.iter().map(|t| t.path.clone()));
            done.extend(s.run.skipped_tests.iter().map(|t| t.path.clone()));
        }
    }
    done
}

/// Why a step whose parts ran no test at all, every one skipped (a compiler whose cubins
/// are not the kernels', a device that refused them all), is not done: the note saying so,
/// with the first reason; `None` when a test ran or none was skipped.
pub fn none_ran(parts: &[PathBuf]) -> Option<String> {
    let sets: Vec<_> = parts
        .iter()
        .filter_map(|p| results::read_result_set(p).ok())
        .collect();
    if sets.iter().any(|s| !s.tests.is_empty()) {
        return None;
    }
    let skipped: Vec<_> = sets.iter().flat_map(|s| &s.run.skipped_tests).collect();
    let first = skipped.first()?;
    Some(format!(
        "no test ran: all {} were skipped (the first, {}: {}), so the step is not done",
        skipped.len(),
        first.path,
        first.reason
    ))
}

/// The `ptx-litmus run` process of a step's part: `tests` with the step's `flags` (seed 1
/// unless they give one) on `backend`, quiet, as run `id`, its result set under `out`.
pub fn run_command(
    exe: &Path,
    tests: &[String],
    flags: &[String],
    backend: &str,
    id: &str,
    out: &Path,
) -> Command {
    let mut cmd = Command::new(exe);
    cmd.arg("run").args(tests).args(flags);
    if !flags.iter().any(|f| f == "--seed") {
        cmd.args(["--seed", "1"]);
    }
    cmd.args(["--backend", backend, "--quiet", "--run-id", id, "--results"])
        .arg(out);
    cmd
}
