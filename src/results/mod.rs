//! Result sets: what a run leaves behind, versioned and self-describing, in
//! `results/<backend-or-gpu>-<driver>/<run-id>/`: `run.json`, `tests/<name>.json`, `run.log`.
//!
//! This module only stores and combines; verdicts come from [`crate::verdict`] and rendering
//! from [`crate::report`], which reads nothing but these types so that old runs re-render.

mod error;
mod io;
pub mod judge_model;
pub mod log;
mod merge;
mod record;
pub mod schema;
pub mod schema_check;
mod shard;
pub mod time;
mod units;
mod validate;
mod writer;

pub use error::ResultsError;
pub use io::{
    create_dir, read_record, read_result_set, record_stems, to_json, write_bytes, write_text,
    ResultSet, StemAllocator, LOG_FILE, MAX_STEM_BYTES, RUN_FILE, TESTS_DIR,
};
pub use judge_model::JudgeModel;
pub use merge::merge;
pub use record::{
    ForbiddenOutcome, ModelData, Observed, ObservedData, Parameters, PartCounts, Rates, RunPart,
    RunRecord, SkippedTest, TestIdentity, TestRecord, ViolationDetail, RUN_FORMAT, SCHEMA_VERSION,
    TEST_FORMAT,
};
pub use shard::Shard;
pub use units::Unit;
pub use writer::{write_result_set, SetWriter, LOCK_FILE};

use std::path::{Path, PathBuf};

/// The conventional directory of a run under `root` (usually `results/`):
/// `<root>/<gpu or backend>-<driver>/<run-id>`, from provenance keys `gpu` (or `cpu`) and
/// `driver` when present.
pub fn default_dir(root: &Path, run: &RunRecord) -> PathBuf {
    let mut group = model(run);
    if let Some(driver) = run.provenance.get("driver") {
        group.push('-');
        group.push_str(&slug(driver));
    }
    root.join(group).join(crate::litmus::file_stem(&run.run_id))
}

/// The hardware a run ran on, as its machine folder's name starts: the slug of the GPU's name
/// (or the CPU's, or else the backend's), without the driver.
pub fn model(run: &RunRecord) -> String {
    let name = run
        .provenance
        .get("gpu")
        .or_else(|| run.provenance.get("cpu"))
        .unwrap_or(&run.backend);
    slug(name)
}

/// The directory of a new result set under `root` whose id the run made itself (from the
/// time and seed): while a set of that name exists, as when two runs start in one second,
/// the id gains `-2`, `-3`, ... so neither run is refused.
pub fn fresh_dir(root: &Path, run: &mut RunRecord) -> PathBuf {
    let base = run.run_id.clone();
    let mut k = 1;
    loop {
        let dir = default_dir(root, run);
        if !dir.exists() {
            return dir;
        }
        k += 1;
        run.run_id = format!("{base}-{k}");
    }
}

/// Lower-case letters, digits and dots, runs of anything else collapsed to one `-`.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let t = out.trim_matches('-');
    if t.is_empty() {
        "unknown".into()
    } else {
        t.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_made_run_id_that_is_taken_gains_a_number() {
        let root = std::env::temp_dir().join(format!("ptx-litmus-fresh-{}", std::process::id()));
        let mut run = RunRecord::new("t1-s1", "cpu", vec![], Parameters::default(), "t");
        assert_eq!(fresh_dir(&root, &mut run), root.join("cpu/t1-s1"));
        std::fs::create_dir_all(root.join("cpu/t1-s1")).unwrap();
        std::fs::create_dir_all(root.join("cpu/t1-s1-2")).unwrap();
        assert_eq!(fresh_dir(&root, &mut run), root.join("cpu/t1-s1-3"));
        assert_eq!(run.run_id, "t1-s1-3");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn default_dir_names_machine_and_driver() {
        let mut run = RunRecord::new("r1", "cuda", vec![], Parameters::default(), "t");
        run.provenance
            .insert("gpu".into(), "NVIDIA H100 80GB HBM3".into());
        run.provenance.insert("driver".into(), "550.54.15".into());
        assert_eq!(
            default_dir(Path::new("results"), &run),
            Path::new("results/nvidia-h100-80gb-hbm3-550.54.15/r1")
        );
        let cpu = RunRecord::new("r2", "cpu", vec![], Parameters::default(), "t");
        assert_eq!(
            default_dir(Path::new("results"), &cpu),
            Path::new("results/cpu/r2")
        );
    }
}
