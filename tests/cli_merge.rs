//! `merge` sums repeated runs whatever their seeds and budgets (as herdtools7's msum7 sums
//! logs), keeps each run's seed, budget and provenance as a part of the merged set, and says
//! what it summed; a different experiment (preset, incantations, options) is still refused.

mod common;

use common::results::{records, run, suite, Knobs, PARTS};
use common::{bin, fresh, scratch, text};
use ptx_litmus::results::{read_result_set, write_result_set, RunRecord};
use std::path::{Path, PathBuf};

fn merge(dirs: &[&Path], out: &Path) -> (Option<i32>, String, String) {
    let o = bin()
        .arg("merge")
        .args(dirs)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

/// A hand-built set of the three fixture tests with `seed` and `driver`, written to `dir`.
fn set(dir: &Path, id: &str, seed: u64, driver: &str, edit: impl Fn(&mut RunRecord)) -> PathBuf {
    let tests = records(&suite(Knobs::default()), 1.0);
    let mut r = run(id, driver, None);
    r.parameters.seed = seed;
    edit(&mut r);
    let d = dir.join(id);
    write_result_set(&d, &r, &tests, false).unwrap();
    d
}

#[test]
fn repeats_with_different_seeds_are_summed_and_each_part_kept() {
    let root = scratch("seeds");
    let a = set(&root, "a", 1, "550", |_| {});
    let b = set(&root, "b", 7, "560", |r| {
        r.parameters.iterations = Some(300)
    });
    let out = root.join("ab");
    let (code, stdout, err) = merge(&[&a, &b], &out);
    assert_eq!(code, Some(0), "{stdout}{err}");
    assert!(
        stdout.contains("merged 2 runs with 2 seeds (1, 7): counts summed test by test"),
        "{stdout}"
    );
    assert!(!stdout.contains("share seed"), "{stdout}");
    // Only SB has weak outcomes; its two runs agree exactly.
    assert!(
        stdout.contains(
            "scatter of the 1 repeated tests with weak outcomes: median phi 1.0 between runs, \
             1.0 within a run"
        ),
        "{stdout}"
    );
    let one = read_result_set(&a).unwrap();
    let m = read_result_set(&out).unwrap();
    for (t, single) in m.tests.iter().zip(&one.tests) {
        assert_eq!(
            t.verdict.instances,
            2 * single.verdict.instances,
            "{}",
            t.name
        );
        assert_eq!(t.verdict.counts.weak, 2 * single.verdict.counts.weak);
        // Each run's parts stay apart, so a comparison can take the run as its unit.
        let per_run = single.observed.parts.len() as u64;
        assert_eq!(t.observed.run_parts, [per_run, per_run], "{}", t.name);
    }
    let parts = &m.run.merged_parts;
    let seen: Vec<(&str, u64, Option<u64>, &str)> = parts
        .iter()
        .map(|p| {
            (
                p.run_id.as_str(),
                p.parameters.seed,
                p.parameters.iterations,
                p.provenance["driver"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [("a", 1, Some(100), "550"), ("b", 7, Some(300), "560")]
    );
    assert_eq!(m.run.parameters.seed, 1, "the first part's");
    assert_eq!(
        m.run.parameters.iterations, None,
        "the parts' budgets differ"
    );
    assert_eq!(m.run.provenance["driver"], "550; 560");
    let o = bin()
        .args(["schema", "--validate"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );

    // A merged set merges again part by part; a run already inside is refused.
    let c = set(&root, "c", 1, "550", |_| {});
    let out2 = root.join("abc");
    let (code, stdout, err) = merge(&[&out, &c], &out2);
    assert_eq!(code, Some(0), "{stdout}{err}");
    let m2 = read_result_set(&out2).unwrap();
    let ids: Vec<&str> = m2
        .run
        .merged_parts
        .iter()
        .map(|p| p.run_id.as_str())
        .collect();
    assert_eq!(ids, ["a", "b", "c"]);
    for t in &m2.tests {
        assert_eq!(t.observed.run_parts, [PARTS; 3], "{}", t.name);
    }
    assert!(
        stdout.contains("note: runs a, c share seed 1: on the GPU they re-run the same placements"),
        "{stdout}"
    );
    let (code, _, err) = merge(&[&out, &a], &root.join("twice"));
    assert_eq!(code, Some(2));
    assert!(err.contains("both contain run a"), "{err}");

    // Run boundaries that do not divide the parts are refused on reading, naming the file.
    let file = out.join("tests/SB.json");
    let json = std::fs::read_to_string(&file).unwrap();
    let (good, bad) = (
        format!("{PARTS},\n      {PARTS}"),
        format!("{PARTS},\n      1"),
    );
    assert!(json.contains(&good), "{json}");
    std::fs::write(&file, json.replace(&good, &bad)).unwrap();
    let err = read_result_set(&out).unwrap_err().to_string();
    assert!(
        err.contains("SB.json") && err.contains("observed.run_parts"),
        "{err}"
    );
}

#[test]
fn a_different_experiment_is_refused_naming_what_differs() {
    let root = scratch("experiment");
    let a = set(&root, "a", 1, "550", |_| {});
    let b = set(&root, "b", 2, "550", |r| {
        r.parameters.preset = "basic".into()
    });
    let c = set(&root, "c", 3, "550", |r| {
        r.parameters
            .incantations
            .insert("mem_stress_pct".into(), serde_json::json!(10));
    });
    for (other, what) in [(&b, "different preset;"), (&c, "different incantations;")] {
        let (code, _, err) = merge(&[&a, other], &root.join("m"));
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains(what) && err.contains("compare them with `diff`"),
            "{err}"
        );
    }
}

#[test]
fn two_cpu_runs_with_different_seeds_merge() {
    let root = fresh("cpu");
    let mut dirs = Vec::new();
    for seed in ["3", "4"] {
        let o = bin()
            .args(["run", "--backend", "cpu", "--iterations", "2048", "--quiet"])
            .args(["--seed", seed, "--run-id", seed, "--out"])
            .arg(&root)
            .arg("litmus/sb/SB+rlx.gpu+rlx.gpu.litmus")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let machine = std::fs::read_dir(&root)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        dirs.push(machine.join(seed));
    }
    let out = root.join("merged");
    let (code, stdout, err) = merge(&[&dirs[0], &dirs[1]], &out);
    assert_eq!(code, Some(0), "{stdout}{err}");
    assert!(
        stdout.contains("merged 2 runs with 2 seeds (3, 4)"),
        "{stdout}"
    );
    let m = read_result_set(&out).unwrap();
    assert_eq!(m.tests[0].instances(), 4096);
    assert_eq!(m.run.merged_parts.len(), 2);
}

#[test]
fn the_notes_that_count_add_up_and_the_others_are_listed() {
    use ptx_litmus::harness::notes;
    let root = scratch("notes");
    let with = |id: &str, seed: u64, host_us: &str| {
        let mut tests = records(&suite(Knobs::default()), 1.0);
        for t in &mut tests {
            let n = t.verdict.instances.to_string();
            for (k, v) in [
                (notes::INSTANCES_RUN, n.as_str()),
                (notes::LAUNCHES, "2500"),
                (notes::STRESS_OPS, "7000"),
                (notes::GPU_MS, "100.996"),
                (notes::HOST_US_PER_LAUNCH, host_us),
                (notes::LAUNCH_MODE, "graph:64"),
            ] {
                t.notes.insert(k.into(), v.into());
            }
        }
        let mut r = run(id, "580", None);
        r.parameters.seed = seed;
        let d = root.join(id);
        write_result_set(&d, &r, &tests, false).unwrap();
        d
    };
    let (a, b) = (with("a", 1, "0.05"), with("b", 2, "0.08"));
    let out = root.join("ab");
    let (code, stdout, err) = merge(&[&a, &b], &out);
    assert_eq!(code, Some(0), "{stdout}{err}");
    for t in &read_result_set(&out).unwrap().tests {
        let note = |k: &str| t.notes[k].as_str();
        // Every instance and launch accounted for, as in each part.
        assert_eq!(note(notes::INSTANCES_RUN), t.verdict.instances.to_string());
        assert_eq!(note(notes::LAUNCHES), "5000");
        assert_eq!(note(notes::STRESS_OPS), "14000");
        assert_eq!(note(notes::GPU_MS), "201.992");
        // Properties: listed when they differ, kept once when they agree.
        assert_eq!(note(notes::HOST_US_PER_LAUNCH), "0.05; 0.08");
        assert_eq!(note(notes::LAUNCH_MODE), "graph:64");
    }
}
