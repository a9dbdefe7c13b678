//! The hang and fault paths of a run, without a GPU: the `inject` option puts a test double of
//! the device under one test (launches that never finish, or a sticky device error) through
//! the real bounded wait. The test must end as `timed out` / `device error` within its
//! deadline, the tests before it keep their records, the device counts as lost, and the run
//! stops with exit code 4 and the rest unrun, for a fresh process to take over.

mod common;

use common::{bin, fresh, text};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const FAMILY: &str = "litmus/sb";

/// The family's test files, in the order a run takes them.
fn family() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(common::root().join(FAMILY))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "litmus"))
        .collect();
    v.sort();
    v
}

/// The `run.json` of the one result set under `out`, with the number of test records.
fn run_json(out: &Path) -> (serde_json::Value, usize) {
    let group = std::fs::read_dir(out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let set = std::fs::read_dir(group)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(set.join("run.json")).unwrap();
    let records = std::fs::read_dir(set.join("tests")).unwrap().count();
    (serde_json::from_str(&text).unwrap(), records)
}

/// How a run ended: exit code, stderr, run.json, test records written, wall time.
type Ended = (Option<i32>, String, serde_json::Value, usize, Duration);

/// Runs the family with `inject` on the CPU backend.
fn run_with(name: &str, inject: &str) -> Ended {
    let out = fresh(name);
    let t0 = Instant::now();
    let o = bin()
        .args([
            "run",
            FAMILY,
            "--backend",
            "cpu",
            "--iterations",
            "2000",
            "--seed",
            "1",
        ])
        .args(["--quiet", "--run-id", "r", "-o", inject, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let took = t0.elapsed();
    let (run, records) = run_json(&out);
    let _ = std::fs::remove_dir_all(&out);
    (o.status.code(), text(&o.stderr), run, records, took)
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

/// Checks what a run that lost its device at test `k` of the family left behind.
fn check_lost_at(k: usize, ended: &Ended, prefix: &str) {
    let (code, err, run, records, _) = ended;
    let files = family();
    // The tests before it ran and kept their records; none after it ran.
    assert_eq!(*records, k);
    assert_eq!(*code, Some(4), "{err}");
    assert!(err.contains("fresh process"), "{err}");
    assert_eq!(run["partial"], true);
    let skipped = run["skipped_tests"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    let reason = skipped[0]["reason"].as_str().unwrap();
    assert!(reason.starts_with(prefix), "{reason}");
    assert!(reason.contains(&stem(&files[k])), "{reason}");
    let path = skipped[0]["path"].as_str().unwrap();
    assert!(
        path.ends_with(&format!("{}.litmus", stem(&files[k]))),
        "{path}"
    );
    assert_eq!(run["test_paths"].as_array().unwrap().len(), files.len());
}

#[test]
fn a_test_whose_launches_never_finish_ends_as_timed_out_and_stops_the_process() {
    let files = family();
    let k = 2;
    let inject = format!("inject=hang:{}:0.4", stem(&files[k]));
    let ended = run_with("hang", &inject);
    check_lost_at(k, &ended, "timed out: ");
    // The hang cost its own deadline, not the run: the whole family takes seconds at most.
    assert!(ended.4 < Duration::from_secs(60), "{:?}", ended.4);
}

#[test]
fn a_sticky_device_error_ends_the_test_as_a_device_error_and_stops_the_process() {
    let files = family();
    let k = 5;
    let inject = format!("inject=fault:{}", stem(&files[k]));
    let ended = run_with("fault", &inject);
    check_lost_at(k, &ended, "device error: ");
    assert!(ended.1.contains("ILLEGAL_ADDRESS"), "{}", ended.1);
}

#[test]
fn a_bad_injection_is_refused_before_anything_runs() {
    let out = fresh("bad");
    let o = bin()
        .args([
            "run",
            FAMILY,
            "--backend",
            "cpu",
            "-o",
            "inject=hang:x",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("inject=hang:x"),
        "{}",
        text(&o.stderr)
    );
    assert!(!out.exists());
}
