//! Reading and writing a result set directory:
//! `run.json`, `tests/<name>.json`, and the litmus7-style `run.log`.

use super::error::ResultsError;
use super::record::{RunRecord, TestRecord, RUN_FORMAT, SCHEMA_VERSION, TEST_FORMAT};
use super::validate;
use crate::input::Unread;
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

impl ResultSet {
    /// Why the run did not run the test called `name` (a kernel that would not build, a test
    /// its backend cannot run), matched by its file's name; `None` when it skipped no such file.
    pub fn not_run_reason(&self, name: &str) -> Option<&str> {
        let stem = |path: &str| {
            let file = path.rsplit('/').next().unwrap_or(path);
            file.strip_suffix(".litmus").unwrap_or(file).to_string()
        };
        self.run
            .skipped_tests
            .iter()
            .find(|s| stem(&s.path) == name)
            .map(|s| s.reason.as_str())
    }
}

/// The name of the run record inside a result set.
pub const RUN_FILE: &str = "run.json";
/// The directory of per-test records inside a result set.
pub const TESTS_DIR: &str = "tests";
/// The litmus7-style log inside a result set.
pub const LOG_FILE: &str = "run.log";

/// Reads a result set written by `write_result_set` (or merged), checking every record's
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
        validate::test_record(&t).map_err(|message| ResultsError::Invalid {
            path: p.clone(),
            message,
        })?;
        tests.push(t);
    }
    validate::run_complete(&run, &tests).map_err(|message| ResultsError::Invalid {
        path: dir.join(RUN_FILE),
        message,
    })?;
    tests.sort_by(|a, b| (&a.name, &a.path).cmp(&(&b.name, &b.path)));
    Ok(ResultSet {
        dir: dir.to_path_buf(),
        run,
        tests,
    })
}

/// The largest record read: a test's record holds its histogram, which few runs take past a
/// few MiB; the bound keeps a mistaken folder (logs, a disk image) from filling memory.
pub const MAX_RECORD_BYTES: u64 = 256 << 20;

/// Reads one record, checking its `format` tag and `schema_version` before its shape, so that
/// foreign JSON and newer schemas get their own messages rather than a missing-field error.
pub fn read_record<T: DeserializeOwned>(path: &Path, format: &str) -> Result<T, ResultsError> {
    let text = crate::input::text(path, MAX_RECORD_BYTES).map_err(|e| match e {
        Unread::Io(source) => ResultsError::Io {
            path: path.to_path_buf(),
            source,
        },
        Unread::TooLarge(_) => ResultsError::Foreign {
            path: path.to_path_buf(),
            message: e.to_string(),
        },
        Unread::Utf8 { line, column, .. } => ResultsError::Json {
            path: path.to_path_buf(),
            message: format!("{e} (line {line}, column {column})"),
        },
    })?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| ResultsError::Json {
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
                expected: SCHEMA_VERSION,
            })
        }
        None => {
            return Err(ResultsError::UnknownSchema {
                path: path.to_path_buf(),
                found: "(missing)".into(),
                expected: SCHEMA_VERSION,
            })
        }
    }
    serde_json::from_value(value).map_err(|e| ResultsError::Json {
        path: path.to_path_buf(),
        message: format!("does not match schema_version {SCHEMA_VERSION}: {e}"),
    })
}

/// The longest file stem given to a test's files, in bytes: far below the 255-byte limit of
/// common file systems, leaving room for the hash, a counter and the extension.
pub const MAX_STEM_BYTES: usize = 120;

/// The file stem of each test's files (record, plot), same order as `tests`; see
/// [`StemAllocator`].
pub fn record_stems(tests: &[&TestRecord]) -> Vec<String> {
    let mut stems = StemAllocator::default();
    tests.iter().map(|t| stems.next(&t.name, &t.hash)).collect()
}

/// Gives each test of a set a distinct, bounded file stem as it arrives: the name with
/// characters outside `[A-Za-z0-9._+-]` replaced and cut to [`MAX_STEM_BYTES`], then the hash
/// appended when that stem is taken (two tests of one name), then a counter when that is taken
/// too (one test reached through two paths).
#[derive(Clone, Debug, Default)]
pub struct StemAllocator {
    used: BTreeSet<String>,
}

impl StemAllocator {
    /// The stem for a test of this name and hash, never one given before.
    pub fn next(&mut self, name: &str, hash: &str) -> String {
        let mut base = file_stem(name);
        if base.len() > MAX_STEM_BYTES {
            let mut cut = MAX_STEM_BYTES;
            while !base.is_char_boundary(cut) {
                cut -= 1;
            }
            base.truncate(cut);
        }
        let short: String = file_stem(hash).chars().take(12).collect();
        let mut stem = base.clone();
        let mut n = 1u64;
        while self.used.contains(&stem) {
            stem = if n == 1 {
                format!("{base}-{short}")
            } else {
                format!("{base}-{short}-{n}")
            };
            n += 1;
        }
        self.used.insert(stem.clone());
        stem
    }
}

/// Serialises a record as pretty JSON with a final newline.
pub fn to_json<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("records always serialise");
    s.push('\n');
    s
}

/// Writes a file, naming it in the error.
pub fn write_text(path: &Path, text: &str) -> Result<(), ResultsError> {
    write_bytes(path, text.as_bytes())
}

/// Writes a file atomically, naming it in the error: the bytes go to a temporary file beside
/// it, which is renamed over `path` only once complete, so a full disk or a killed process
/// leaves the old file (or none), never a truncated one.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    let io = |source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    };
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    // No fsync: the rename protects against a killed process and a full disk, which is what
    // a run meets; a power cut is not worth an fsync per record.
    match fs::write(&tmp, bytes).and_then(|()| fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(io(e))
        }
    }
}

/// Creates a directory and its parents, naming it in the error.
pub fn create_dir(path: &Path) -> Result<(), ResultsError> {
    fs::create_dir_all(path).map_err(|source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    })
}
