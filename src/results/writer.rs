//! Writing a result set while its run goes on: the target is checked and locked before the
//! first test runs, and each test's record is on disk as soon as the test finishes, so a run
//! that is killed, interrupted or stopped by a full disk keeps everything it finished.
//!
//! `run.json` is written first with `"partial": true` and rewritten as the run goes on; only
//! [`SetWriter::finish`] may write it with the run's final state. A set whose writer died
//! therefore reads as partial, never as complete.

use super::error::ResultsError;
use super::io::{create_dir, to_json, write_text, StemAllocator, LOG_FILE, RUN_FILE, TESTS_DIR};
use super::log;
use super::record::{RunRecord, TestRecord};
use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

/// The lock file inside a result set being written.
pub const LOCK_FILE: &str = ".lock";

/// Files of an earlier run that `--force` removes from a result set, besides its records, so
/// that nothing of the old run survives beside the new one.
const OLD_ARTIFACTS: [&str; 4] = [RUN_FILE, LOG_FILE, "report.html", "report.md"];

/// A result set being written by this process; the lock is released when it is dropped.
#[derive(Debug)]
pub struct SetWriter {
    dir: PathBuf,
    stems: StemAllocator,
    tests: Vec<TestRecord>,
    lock: Option<PathBuf>,
}

impl SetWriter {
    /// Checks and locks `dir` for a new result set of `run`, then writes `run.json` marked
    /// partial. Refuses, before any test runs, a `dir` that is a file, that another live
    /// process is writing, that holds a result set (unless `force`, which removes it), or
    /// that cannot be written.
    pub fn create(dir: &Path, run: &RunRecord, force: bool) -> Result<SetWriter, ResultsError> {
        if dir.exists() && !dir.is_dir() {
            return Err(ResultsError::Io {
                path: dir.to_path_buf(),
                source: std::io::Error::other("exists and is not a directory"),
            });
        }
        create_dir(dir)?;
        let lock = take_lock(dir)?;
        let w = SetWriter {
            dir: dir.to_path_buf(),
            stems: StemAllocator::default(),
            tests: Vec::new(),
            lock: Some(lock),
        };
        let run_path = dir.join(RUN_FILE);
        if !force && run_path.exists() {
            return Err(ResultsError::Exists { path: run_path });
        }
        let tests_dir = dir.join(TESTS_DIR);
        if !force && has_json(&tests_dir)? {
            return Err(ResultsError::Exists { path: tests_dir });
        }
        if force {
            w.remove_old()?;
        }
        create_dir(&tests_dir)?;
        let mut started = run.clone();
        started.partial = true;
        w.update(&started)?;
        Ok(w)
    }

    /// Writes one test's record, under a file name no other record of the set has.
    pub fn add(&mut self, test: TestRecord) -> Result<(), ResultsError> {
        let stem = self.stems.next(&test.name, &test.hash);
        let path = self.dir.join(TESTS_DIR).join(format!("{stem}.json"));
        write_text(&path, &to_json(&test))?;
        self.tests.push(test);
        Ok(())
    }

    /// Rewrites `run.json` with what is known so far, still marked partial.
    pub fn update(&self, run: &RunRecord) -> Result<(), ResultsError> {
        let mut r = run.clone();
        r.partial = true;
        write_text(&self.dir.join(RUN_FILE), &to_json(&r))
    }

    /// Writes the final `run.json` and `run.log`, and releases the lock.
    pub fn finish(mut self, run: &RunRecord) -> Result<(), ResultsError> {
        write_text(&self.dir.join(RUN_FILE), &to_json(run))?;
        let mut sorted: Vec<&TestRecord> = self.tests.iter().collect();
        sorted.sort_by(|a, b| (&a.name, &a.path).cmp(&(&b.name, &b.path)));
        write_text(&self.dir.join(LOG_FILE), &log::render(run, &sorted))?;
        self.release();
        Ok(())
    }

    /// The records written so far, in the order they were added.
    pub fn tests(&self) -> &[TestRecord] {
        &self.tests
    }

    /// The result set's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn remove_old(&self) -> Result<(), ResultsError> {
        let tests_dir = self.dir.join(TESTS_DIR);
        if tests_dir.is_dir() {
            for p in json_files(&tests_dir)? {
                remove(&p)?;
            }
        }
        for name in OLD_ARTIFACTS {
            let p = self.dir.join(name);
            if p.is_file() {
                remove(&p)?;
            }
        }
        let plots = self.dir.join("plots");
        if plots.is_dir() {
            fs::remove_dir_all(&plots).map_err(|source| ResultsError::Io {
                path: plots.clone(),
                source,
            })?;
        }
        Ok(())
    }

    fn release(&mut self) {
        if let Some(lock) = self.lock.take() {
            let _ = fs::remove_file(lock);
        }
    }
}

impl Drop for SetWriter {
    fn drop(&mut self) {
        self.release();
    }
}

/// Creates `dir/.lock` holding `pid@host`; a lock left by a process of this host that no
/// longer exists is taken over, any other is refused with its owner named.
fn take_lock(dir: &Path) -> Result<PathBuf, ResultsError> {
    let path = dir.join(LOCK_FILE);
    let me = format!("{}@{}", std::process::id(), host());
    for _ in 0..2 {
        match create_with(&path, &me) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                let owner = fs::read_to_string(&path).unwrap_or_default();
                if !is_stale(&owner) {
                    return Err(ResultsError::Locked {
                        path: path.clone(),
                        owner,
                    });
                }
                let _ = fs::remove_file(&path);
            }
            Err(source) => return Err(ResultsError::Io { path, source }),
        }
    }
    Err(ResultsError::Locked {
        path,
        owner: "a process that keeps re-creating it".into(),
    })
}

/// Creates `path` holding `text`, failing with `AlreadyExists` if it exists. The text is
/// written to a private file first and hard-linked into place, so that a rival never reads
/// the lock empty; where hard links are unsupported it falls back to create-new-then-write.
fn create_with(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("lock.{}", std::process::id()));
    fs::write(&tmp, text)?;
    let linked = fs::hard_link(&tmp, path);
    let _ = fs::remove_file(&tmp);
    match linked {
        Err(e) if e.kind() == ErrorKind::Unsupported => {
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)?;
            f.write_all(text.as_bytes())
        }
        other => other,
    }
}

/// Whether a lock's owner (`pid@host`) is a process of this host that has ended. Only Linux's
/// `/proc` is consulted; elsewhere, and for other hosts, no lock is ever stale.
fn is_stale(owner: &str) -> bool {
    let Some((pid, h)) = owner.trim().split_once('@') else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    h == host() && Path::new("/proc/self").exists() && !Path::new(&format!("/proc/{pid}")).exists()
}

fn host() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

fn has_json(dir: &Path) -> Result<bool, ResultsError> {
    Ok(dir.is_dir() && !json_files(dir)?.is_empty())
}

fn json_files(dir: &Path) -> Result<Vec<PathBuf>, ResultsError> {
    let io = |source| ResultsError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(io)? {
        let p = entry.map_err(io)?.path();
        if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
    Ok(out)
}

fn remove(p: &Path) -> Result<(), ResultsError> {
    fs::remove_file(p).map_err(|source| ResultsError::Io {
        path: p.to_path_buf(),
        source,
    })
}

/// Writes `run`, one file per test and the litmus7-style log into `dir`, creating and
/// locking it (see [`SetWriter`]). Refuses to overwrite an existing result set unless `force`;
/// with `force` the old set (records, log, report, plots) is removed first so that none of it
/// survives into the new one.
pub fn write_result_set(
    dir: &Path,
    run: &RunRecord,
    tests: &[TestRecord],
    force: bool,
) -> Result<(), ResultsError> {
    let mut w = SetWriter::create(dir, run, force)?;
    let mut sorted: Vec<&TestRecord> = tests.iter().collect();
    sorted.sort_by(|a, b| (&a.name, &a.path).cmp(&(&b.name, &b.path)));
    for t in sorted {
        w.add(t.clone())?;
    }
    w.finish(run)
}
