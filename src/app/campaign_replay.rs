//! The replay of a `run` step's violations in the window that saw them: a forbidden outcome
//! observed on hardware counts as a violation only once `run --replay` has shown it again, and
//! the next window may be sessions away. So each test a part of the step judged a violation
//! (at most [`MAX_REPLAYED`]) runs again with that part's recorded seed, stress and options,
//! its result set kept in the step's folder (`replay-1/`, … one per part replayed, packed with
//! it) and what it saw in the step's notes.

use super::campaign_child::supervise;
use crate::report::replays::outcome;
use crate::results::{self, ResultSet, RunRecord, RUN_FILE, RUN_FORMAT};
use crate::verdict::Status;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The most violations of one step replayed: a step where many tests fail points at the
/// harness more than the hardware, and its budget belongs to the steps after it.
pub const MAX_REPLAYED: usize = 3;

/// What a replay needs: the binary, the backend, the step's folder and log, and its deadline.
pub struct Replay<'a> {
    /// The `ptx-litmus` binary.
    pub exe: &'a Path,
    /// The backend the step ran on.
    pub backend: &'a str,
    /// The step's result folder: each replay's set is moved into it as `replay-K/`.
    pub dir: &'a Path,
    /// Where the replays are written first (not packed).
    pub scratch: &'a Path,
    /// The step's log, which the replay processes append to.
    pub log: &'a Path,
    /// When the step must end.
    pub deadline: Instant,
}

impl Replay<'_> {
    /// Replays the violations of `parts` (each a part's result set); the notes for the step.
    pub fn violations(&self, parts: &[PathBuf]) -> Vec<String> {
        let mut notes = Vec::new();
        let (mut left, mut not_replayed, mut replays) = (MAX_REPLAYED, 0, 0);
        for part in parts {
            let Ok(set) = results::read_result_set(part) else {
                continue;
            };
            let seen = violating(&set);
            let chosen: Vec<String> = seen.iter().take(left).cloned().collect();
            not_replayed += seen.len() - chosen.len();
            left -= chosen.len();
            if !chosen.is_empty() {
                replays += 1;
                let into = self.dir.join(format!("replay-{replays}"));
                notes.extend(self.replay(&set, &chosen, &into));
            }
        }
        if not_replayed > 0 {
            notes.push(format!(
                "{not_replayed} more violation(s) not replayed (at most {MAX_REPLAYED} a step)"
            ));
        }
        notes
    }

    /// Runs `tests` of `set` again with its recorded settings, its result set moved to
    /// `into`; a note per test.
    fn replay(&self, set: &ResultSet, tests: &[String], into: &Path) -> Vec<String> {
        let id = format!("{}-replay", set.run.run_id);
        let failed = |why: String| vec![format!("replay of {}: {why}", tests.join(", "))];
        let narrowed = match narrowed_record(&set.run, tests, self.scratch, &id) {
            Ok(p) => p,
            Err(e) => return failed(e),
        };
        let mut cmd = Command::new(self.exe);
        cmd.arg("run")
            .arg("--replay")
            .arg(&narrowed)
            .args(["--backend", self.backend, "--quiet", "--run-id", &id])
            .arg("--results")
            .arg(self.scratch);
        match supervise(cmd, self.deadline, self.log) {
            Err(e) => failed(e),
            Ok(end) if end.stopped => failed("stopped at the end of the step's budget".into()),
            Ok(_) => match replayed_set(self.scratch, &id, into) {
                Ok(again) => tests.iter().map(|t| said(&again, t, &set.run)).collect(),
                Err(why) => failed(why),
            },
        }
    }
}

/// The paths of the tests `set` judged violations, in its order.
fn violating(set: &ResultSet) -> Vec<String> {
    let bad = set
        .tests
        .iter()
        .filter(|t| t.verdict.status == Status::Violation);
    bad.map(|t| t.path.clone()).collect()
}

/// Writes `run` narrowed to `tests` as `<root>/<id>.json`, for `run --replay`; its path.
fn narrowed_record(
    run: &RunRecord,
    tests: &[String],
    root: &Path,
    id: &str,
) -> Result<PathBuf, String> {
    let mut r = run.clone();
    r.test_paths = tests.to_vec();
    r.shard = None;
    r.skipped_tests.clear();
    std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let path = root.join(format!("{id}.{RUN_FILE}"));
    results::write_text(&path, &results::to_json(&r)).map_err(|e| e.to_string())?;
    results::read_record::<RunRecord>(&path, RUN_FORMAT).map_err(|e| e.to_string())?;
    Ok(path)
}

/// The replay's result set, `<root>/<machine>/<id>`, moved to `into` (short paths: every name
/// in an archive must fit ustar's) and read.
fn replayed_set(root: &Path, id: &str, into: &Path) -> Result<ResultSet, String> {
    let machines = std::fs::read_dir(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let found = machines
        .flatten()
        .map(|m| m.path().join(id))
        .find(|d| d.is_dir());
    let dir = found.ok_or("it wrote no result set")?;
    std::fs::rename(&dir, into).map_err(|e| format!("{}: {e}", into.display()))?;
    results::read_result_set(into).map_err(|e| e.to_string())
}

/// What the replay of the test at `path` saw, as a note naming the run it replayed.
fn said(again: &ResultSet, path: &str, of: &RunRecord) -> String {
    let seed = of.parameters.seed;
    let saw = outcome(again, path).unwrap_or_else(|| "no record".into());
    format!("replayed {path} (seed {seed}, as in {}): {saw}", of.run_id)
}
