//! The report's Kernels section: for each test of a GPU run, how its kernel was launched and
//! what the launches cost, from the facts the CUDA backend noted in the record. A CPU run's
//! records have none, and the section is left out.

use super::format;
use crate::harness::cuda::sass_check::{FAIL, PASS};
use crate::harness::notes;
use crate::results::TestRecord;

/// The columns, in order.
pub const HEADERS: [&str; 12] = [
    "test",
    "test launch",
    "mode",
    "instances / launch",
    "launches",
    "registers",
    "CTAs / SM",
    "occupancy",
    "GPU ms",
    "host µs / launch",
    "stress ops (needed)",
    "SASS check",
];

/// Whether each column holds a number (right-aligned).
pub const NUMERIC: [bool; 12] = [
    false, false, false, true, true, true, false, true, true, true, true, false,
];

/// One row per test whose record says how its kernel was launched, in the order given.
pub fn rows(ordered: &[&TestRecord]) -> Vec<[String; 12]> {
    ordered.iter().filter_map(|t| row(t)).collect()
}

/// The row of `t`, or `None` when no kernel of it was launched.
fn row(t: &TestRecord) -> Option<[String; 12]> {
    let launches: u64 = t.notes.get(notes::LAUNCHES)?.parse().ok()?;
    let fact = |k: &str| t.notes.get(k).cloned().unwrap_or_else(|| "—".into());
    let count = |k: &str| match t.notes.get(k).and_then(|v| v.parse::<u64>().ok()) {
        Some(n) => format::short_count(n),
        None => fact(k),
    };
    let mode = match t.notes.get(notes::GRAPH_FALLBACK) {
        Some(why) => format!("{} (graphs failed: {why})", fact(notes::LAUNCH_MODE)),
        None => fact(notes::LAUNCH_MODE),
    };
    Some([
        t.name.clone(),
        fact(notes::TEST_LAUNCH),
        mode,
        count(notes::INSTANCES_PER_LAUNCH),
        format::short_count(launches),
        fact(notes::REGISTERS),
        fact(notes::CTAS_PER_SM),
        fact(notes::OCCUPANCY),
        fact(notes::GPU_MS),
        fact(notes::HOST_US_PER_LAUNCH),
        format!(
            "{} ({})",
            count(notes::STRESS_OPS),
            count(notes::STRESS_OPS_MIN)
        ),
        sass_word(t).into(),
    ])
}

/// The SASS check of the code a test ran, in a word: `pass`, `FAIL`, `not checked`, or `—`
/// when its run made none.
fn sass_word(t: &TestRecord) -> &'static str {
    match t.notes.get(notes::SASS_CHECK) {
        Some(v) if v == PASS => "pass",
        Some(v) if v.starts_with(FAIL) => "FAIL",
        Some(_) => "not checked",
        None => "—",
    }
}

/// How the SASS checks of a run's tests went (`SASS check of the code run: 40 pass, 1 FAIL`),
/// when any test recorded one.
pub fn sass_tally(tests: &[TestRecord]) -> Option<String> {
    let words: Vec<&str> = tests
        .iter()
        .filter(|t| t.notes.contains_key(notes::SASS_CHECK))
        .map(sass_word)
        .collect();
    if words.is_empty() {
        return None;
    }
    let parts: Vec<String> = ["pass", "FAIL", "not checked"]
        .into_iter()
        .map(|w| (w, words.iter().filter(|x| **x == w).count()))
        .filter(|(_, n)| *n > 0)
        .map(|(w, n)| format!("{n} {w}"))
        .collect();
    Some(format!("SASS check of the code run: {}", parts.join(", ")))
}

/// The tests whose code failed the SASS check, with what the check found.
pub fn sass_failures<'a>(ordered: &[&'a TestRecord]) -> Vec<(&'a str, &'a str)> {
    ordered
        .iter()
        .filter_map(|t| {
            let problems = t.notes.get(notes::SASS_CHECK)?.strip_prefix(FAIL)?;
            Some((t.name.as_str(), problems))
        })
        .collect()
}

/// The tests whose kernels the code generator noted something of, with what it noted.
pub fn kernel_notes<'a>(ordered: &[&'a TestRecord]) -> Vec<(&'a str, &'a str)> {
    ordered
        .iter()
        .filter_map(|t| Some((t.name.as_str(), t.notes.get(notes::KERNEL_NOTES)?.as_str())))
        .collect()
}

/// What the code generator's notes are, before the list of tests.
pub const KERNEL_NOTES: &str = "The code generator noted, of these tests' kernels";

/// The title of a list of tests whose code failed the SASS check.
pub const SASS_FAILED_TITLE: &str =
    "Code that failed the SASS check (its outcomes are another program's)";

/// Whether the code `t` ran failed the SASS check.
pub fn sass_failed(t: &TestRecord) -> bool {
    t.notes
        .get(notes::SASS_CHECK)
        .is_some_and(|v| v.starts_with(FAIL))
}

/// What a failed SASS check means, before the list of tests.
pub const SASS_FAILED: &str = "The SASS check failed for the code these tests ran: the compiler \
     dropped, reordered or weakened an access, fence or barrier of a role, so their outcomes are \
     those of another program than the test's";
