//! What the replays of a result set's violations saw: a campaign step replays its violations
//! before it is packed (`replay-K/` beside its records), and the report says for each
//! violation whether it came again.

use super::format::{count, one_line, REASON_CHARS};
use crate::results::{read_result_set, ResultSet};
use crate::verdict::Status;
use std::collections::BTreeMap;

/// For each test path a replay named: what it saw, and the replay's folder.
pub type Replayed = BTreeMap<String, (String, String)>;

/// How a report introduces what a replay saw.
pub const SAID: &str = "Replayed in the same campaign window, with the same seed and settings, in";

/// What a replay saw of the test at `path`: the violation again (how many of how many), not
/// again, or why it did not run; `None` when the replay did not name the test.
pub fn outcome(again: &ResultSet, path: &str) -> Option<String> {
    if let Some(t) = again.tests.iter().find(|t| t.path == path) {
        let c = &t.verdict.counts;
        let n = count(t.verdict.instances);
        return Some(match t.verdict.status {
            Status::Violation => format!(
                "the violation again, {} forbidden or unexpected in {n} instances",
                count(c.forbidden + c.unexpected)
            ),
            s => format!("not seen again in {n} instances ({})", s.as_str()),
        });
    }
    let skipped = again.run.skipped_tests.iter().find(|s| s.path == path)?;
    Some(format!(
        "not run: {}",
        one_line(&skipped.reason, REASON_CHARS)
    ))
}

/// For each test path the replays in `set`'s folder name: what they saw, and the folder.
pub fn of(set: &ResultSet) -> Replayed {
    let mut seen = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(&set.dir) else {
        return seen;
    };
    let mut folders: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    folders.sort();
    for dir in folders {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        let Some(name) = name.filter(|n| n.starts_with("replay-")) else {
            continue;
        };
        let Ok(again) = read_result_set(&dir) else {
            continue;
        };
        for path in &again.run.test_paths {
            if let Some(o) = outcome(&again, path) {
                seen.insert(path.clone(), (o, name.clone()));
            }
        }
    }
    seen
}
