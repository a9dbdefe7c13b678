//! Resuming a `run` step that an earlier campaign left incomplete (cut by its budget, or by
//! the end of a device call): the result set of its latest try on the same machine, with the
//! same tests and flags, and the tests that try left. The new try runs only those and merges
//! the earlier set into its own, so a GPU window never spends time on a test already counted.

use super::campaign_tests::owned;
use crate::campaign::manifest::{self, Kind, Step};
use crate::campaign::progress;
use crate::litmus;
use crate::results::ResultSet;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What an earlier try of a step leaves to run.
#[derive(Clone, Debug)]
pub struct Resume {
    /// The earlier try's result set (it holds every try before it).
    pub set: PathBuf,
    /// Every test file of the step, as `run` names them.
    pub all: BTreeSet<String>,
    /// Those the earlier try recorded, or skipped with a reason.
    pub done: BTreeSet<String>,
}

impl Resume {
    /// The tests still to run, in the order `run` takes them.
    pub fn left(&self) -> Vec<String> {
        self.all.difference(&self.done).cloned().collect()
    }

    /// The share of the step's tests still to run (1 when it has none).
    pub fn share_left(&self) -> f64 {
        if self.all.is_empty() {
            return 1.0;
        }
        self.all.difference(&self.done).count() as f64 / self.all.len() as f64
    }

    /// How many of the step's tests the earlier try recorded or skipped with a reason.
    pub fn recorded(&self) -> usize {
        self.all.intersection(&self.done).count()
    }

    /// One line for the step's record: where it resumed and what was left.
    pub fn note(&self) -> String {
        format!(
            "{} {}: {} of {} tests were recorded there, {} left",
            progress::RESUMED,
            self.set.display(),
            self.recorded(),
            self.all.len(),
            self.left().len()
        )
    }
}

/// The share of a step's tests still to run, given what [`find`] found (1 unless resumed).
pub fn share_left(found: &Option<Result<Resume, String>>) -> f64 {
    match found {
        Some(Ok(r)) => r.share_left(),
        _ => 1.0,
    }
}

/// Where `step` resumes on `machine` and `backend`, from the folders of its incomplete
/// `tries` (oldest first): the latest whose record names the same machine, backend and `run`
/// arguments and whose result set reads. `None` for a script step or a step never tried
/// here; `Some(Err(why))` when that try cannot be resumed (its tests cannot be listed, or a
/// test it counted has changed since), and the step runs whole.
pub fn find(
    step: &Step,
    tries: &[PathBuf],
    machine: &str,
    backend: &str,
) -> Option<Result<Resume, String>> {
    let Kind::Run(args) = &step.kind else {
        return None;
    };
    let (dir, set) = tries
        .iter()
        .rev()
        .filter(|dir| same_try(dir, step, machine, backend))
        .find_map(|dir| Some((dir, crate::results::read_result_set(dir).ok()?)))?;
    let (paths, _) = manifest::split_run(args);
    let all = match owned(paths, 0, 1) {
        Ok(all) => all.into_iter().collect(),
        Err(e) => return Some(Err(format!("the step's tests cannot be listed: {e}"))),
    };
    if let Some(why) = changed(&set) {
        return Some(Err(format!("{why} since {}", dir.display())));
    }
    let mut done: BTreeSet<String> = set.tests.iter().map(|t| t.path.clone()).collect();
    done.extend(set.run.skipped_tests.iter().map(|t| t.path.clone()));
    Some(Ok(Resume {
        set: dir.clone(),
        all,
        done,
    }))
}

/// The first test `set` counted whose file reads differently now (another hash): its counts
/// and a new run's could not be merged. A test gone from the tree keeps what it counted.
fn changed(set: &ResultSet) -> Option<String> {
    set.tests.iter().find_map(|t| {
        let now = litmus::parse_file(Path::new(&t.path)).ok()?;
        (litmus::hash(&now) != t.hash).then(|| format!("{} has changed", t.path))
    })
}

/// Whether the try in `dir` ran `step` as the manifest says it now, on this machine and
/// backend.
fn same_try(dir: &Path, step: &Step, machine: &str, backend: &str) -> bool {
    let Ok(rec) = progress::read(&dir.join(progress::RECORD)) else {
        return false;
    };
    let then = manifest::parse(&rec.command, Path::new(progress::RECORD));
    let same_kind = then.is_ok_and(|s| s.len() == 1 && s[0].kind == step.kind);
    same_kind && rec.machine == machine && rec.backend == backend
}
