//! Reading and writing a result set directory:
//! `run.json`, `tests/<name>.json`, and the litmus7-style `run.log`.

use super::error::ResultsError;
use super::log;
use super::record::{RunRecord, TestRecord, RUN_FORMAT, SCHEMA_VERSION, TEST_FORMAT};
use crate::litmus::file_stem;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// A result set in memory: the run and its tests, sorted by name then path.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultSet {
    /// Where it was read from (empty when built in memory).
    pub dir: PathBuf,
    /// `run.json`.
    pub run: RunRecord,
    /// The per-test records.
    pub tests: Vec<TestRecord>,
}

/// The name of the run record inside a result set.
pub const RUN_FILE: &str = "run.json";
/// The directory of per-test records inside a result set.
pub const TESTS_DIR: &str = "tests";
/// The litmus7-style log inside a result set.
pub const LOG_FILE: &str = "run.log";

/// Writes `run`, one file per test and the litmus7-style log into `dir`, creating it. Refuses
/// to overwrite an existing result set unless `force`; with `force` the old per-test records
/// are removed first so that none survives into the new set.
pub fn write_result_set(
    dir: &Path,
    run: &RunRecord,
    tests: &[TestRecord],
    force: bool,
) -> Result<(), ResultsError> {
    let run_path = dir.join(RUN_FILE);
    let tests_dir = dir.join(TESTS_DIR);
    let log_path = dir.join(LOG_FILE);
    if !force {
        for p in [&run_path, &log_path] {
            if p.exists() {
                return Err(ResultsError::Exists { path: p.clone() });
            }
        }
    }
    let mut sorted: Vec<&TestRecord> = tests.iter().collect();
    sorted.sort_by(|a, b| (&a.name, &a.path).cmp(&(&b.name, &b.path)));
    let files: Vec<String> = record_stems(&sorted)
        .into_iter()
        .map(|s| format!("{s}.json"))
        .collect();
    if !force {
        for f in &files {
            let p = tests_dir.join(f);
            if p.exists() {
                return Err(ResultsError::Exists { path: p });
            }
        }
    }
    create_dir(&tests_dir)?;
    if force {
        remove_json_files(&tests_dir)?;
    }
    for (t, f) in sorted.iter().zip(&files) {
        write_json(&tests_dir.join(f), *t)?;
    }
    write_json(&run_path, run)?;
    write_text(&log_path, &log::render(run, &sorted))
}

/// Reads a result set written by [`write_result_set`] (or merged), checking every record's
/// format, schema version and hash pairing.
pub fn read_result_set(dir: &Path) -> Result<ResultSet, ResultsError> {
    let run: RunRecord = read_record(&dir.join(RUN_FILE), RUN_FORMAT)?;
    let tests_dir = dir.join(TESTS_DIR);
    let mut tests = Vec::new();
    let entries = fs::read_dir(&tests_dir).map_err(|source| ResultsError::Io {
        path: tests_dir.clone(),
        source,
    })?;
    let mut paths = BTreeSet::new();
    for entry in entries {
        let entry = entry.map_err(|source| ResultsError::Io {
            path: tests_dir.clone(),
            source,
        })?;
        let p = entry.path();
        if p.extension().is_some_and(|e| e == "json") {
            paths.insert(p);
        }
    }
    for p in paths {
        let t: TestRecord = read_record(&p, TEST_FORMAT)?;
        t.check_pairing().map_err(|e| match e {
            ResultsError::HashMismatch { test, what, .. } => ResultsError::HashMismatch {
                path: Some(p.clone()),
                test,
                what,
            },
            other => other,
        })?;
        tests.push(t);
    }
    tests.sort_by(|a, b| (&a.name, &a.path).cmp(&(&b.name, &b.path)));
    Ok(ResultSet {
        dir: dir.to_path_buf(),
        run,
        tests,
    })
}

/// Reads one record, checking its `format` tag and `schema_version` before its shape, so that
/// foreign JSON and newer schemas get their own messages rather than a missing-field error.
pub fn read_record<T: DeserializeOwned>(path: &Path, format: &str) -> Result<T, ResultsError> {
    let bytes = fs::read(path).map_err(|source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| ResultsError::Json {
            path: path.to_path_buf(),
            message: if e.is_eof() {
                format!("truncated: {e}")
            } else {
                e.to_string()
            },
        })?;
    let found = value.get("format").and_then(|f| f.as_str());
    if found != Some(format) {
        return Err(ResultsError::Foreign {
            path: path.to_path_buf(),
            message: match found {
                Some(f) => format!("expected \"format\": \"{format}\", found \"{f}\""),
                None => format!("no \"format\": \"{format}\" field"),
            },
        });
    }
    match value.get("schema_version") {
        Some(v) if v.as_u64() == Some(SCHEMA_VERSION as u64) => {}
        Some(v) => {
            return Err(ResultsError::UnknownSchema {
                path: path.to_path_buf(),
                found: v.to_string(),
            })
        }
        None => {
            return Err(ResultsError::UnknownSchema {
                path: path.to_path_buf(),
                found: "(missing)".into(),
            })
        }
    }
    serde_json::from_value(value).map_err(|e| ResultsError::Json {
        path: path.to_path_buf(),
        message: format!("does not match schema_version {SCHEMA_VERSION}: {e}"),
    })
}

/// The file stem of each test's files (record, plot), same order as `tests`: the name with
/// characters outside `[A-Za-z0-9._+-]` replaced, and the hash appended where two tests share
/// a stem.
pub fn record_stems(tests: &[&TestRecord]) -> Vec<String> {
    let stems: Vec<String> = tests.iter().map(|t| file_stem(&t.name)).collect();
    stems
        .iter()
        .zip(tests)
        .map(|(s, t)| {
            if stems.iter().filter(|o| *o == s).count() > 1 {
                let h: String = t.hash.chars().take(12).collect();
                format!("{s}-{}", file_stem(&h))
            } else {
                s.clone()
            }
        })
        .collect()
}

/// Serialises a record as pretty JSON with a final newline.
pub fn to_json<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("records always serialise");
    s.push('\n');
    s
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), ResultsError> {
    write_text(path, &to_json(value))
}

/// Writes a file, naming it in the error.
pub fn write_text(path: &Path, text: &str) -> Result<(), ResultsError> {
    write_bytes(path, text.as_bytes())
}

/// Writes a file, naming it in the error.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    fs::write(path, bytes).map_err(|source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Creates a directory and its parents, naming it in the error.
pub fn create_dir(path: &Path) -> Result<(), ResultsError> {
    fs::create_dir_all(path).map_err(|source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn remove_json_files(dir: &Path) -> Result<(), ResultsError> {
    let io = |source| ResultsError::Io {
        path: dir.to_path_buf(),
        source,
    };
    for entry in fs::read_dir(dir).map_err(io)? {
        let p = entry.map_err(io)?.path();
        if p.extension().is_some_and(|e| e == "json") {
            fs::remove_file(&p).map_err(|source| ResultsError::Io { path: p, source })?;
        }
    }
    Ok(())
}
