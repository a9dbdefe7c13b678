//! A campaign step split into shards as a Slurm job array runs it, without Slurm: the batch
//! script `campaign submit --dry-run` writes, `campaign task` per shard (a missing shard, a
//! preempted one that resumes, a rerun that does nothing), and `campaign collect`'s advice and
//! merge, whose counts and verdicts must equal one process running the same tests and seed.

mod common;

use common::{bin, scratch, text};
use ptx_litmus::results::{read_result_set, ResultSet};
use std::path::Path;
use std::process::Output;

fn campaign(args: &[&str], dir: &Path, manifest: &Path) -> Output {
    bin()
        .arg("campaign")
        .args(args)
        .args([
            "--step",
            "sb",
            "--tasks",
            "4",
            "--backend",
            "cpu",
            "--manifest",
        ])
        .arg(manifest)
        .arg("--dir")
        .arg(dir)
        .output()
        .unwrap()
}

/// Per test path: instances run and the verdict's status.
fn totals(set: &ResultSet) -> Vec<(String, u64, String)> {
    let mut v: Vec<(String, u64, String)> = set
        .tests
        .iter()
        .map(|t| {
            let n = t.notes.get("instances_run").cloned().unwrap_or_default();
            (
                t.path.clone(),
                n.parse().unwrap(),
                format!("{:?}", t.verdict.status),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn shards_run_resume_and_merge_to_what_one_process_counts() {
    let root = scratch("shards");
    let mut family = common::file_names(&common::root().join("litmus/sb"));
    family.retain(|n| n.ends_with(".litmus"));
    // Shard 2 of 4 owns tests 2, 6, 10, ...: the second of them hangs, once.
    let hung = family[6].trim_end_matches(".litmus").to_string();
    let flags = format!("--iterations 2000 -o inject=hang:{hung}:0.2");
    let manifest = root.join("m.txt");
    std::fs::write(&manifest, format!("sb 30 run litmus/sb {flags}\n")).unwrap();
    let dir = root.join("c");

    let o = campaign(&["submit", "--dry-run"], &dir, &manifest);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let script = std::fs::read_to_string(dir.join("sb.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-3\n"), "{script}");
    assert!(!script.contains("--gres"), "{script}");
    assert!(script.contains("'campaign' 'task'"), "{script}");
    assert!(
        script.contains("--index \"$SLURM_ARRAY_TASK_ID\""),
        "{script}"
    );

    for i in ["0", "1", "3"] {
        let o = campaign(&["task", "--index", i], &dir, &manifest);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    }
    // Shard 2 is preempted: its device is lost at its second test.
    let o = campaign(&["task", "--index", "2"], &dir, &manifest);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stdout));
    let o = campaign(&["collect"], &dir, &manifest);
    let said = text(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{said}");
    assert!(
        said.contains("shard 2: incomplete (2 of 5 tests)"),
        "{said}"
    );
    assert!(said.contains("rerun: sbatch --array=2 /"), "{said}");
    assert!(said.trim_end().ends_with("sb.sbatch"), "{said}");
    // The rerun resumes with the 3 tests left; a rerun of a complete shard does nothing.
    let o = campaign(&["task", "--index", "2"], &dir, &manifest);
    assert!(
        text(&o.stdout).contains("3 of 5 tests left; part 2"),
        "{}",
        text(&o.stdout)
    );
    let o = campaign(&["task", "--index", "0"], &dir, &manifest);
    assert!(text(&o.stdout).contains("complete (5 tests), nothing to do"));

    let o = campaign(&["collect"], &dir, &manifest);
    let said = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}{}", text(&o.stderr));
    assert!(said.contains("merged 4 shard(s), 5 part(s)"), "{said}");
    let merged = read_result_set(&dir.join("merged/sb")).unwrap();
    assert!(!merged.run.partial);
    assert!(dir.join("merged/sb/report.html").is_file());
    assert_eq!(merged.run.skipped_tests.len(), 1);
    assert!(merged.run.skipped_tests[0]
        .reason
        .starts_with("timed out: "));

    // One process, same tests and seed, nothing injected: the same counts and verdicts for
    // every test but the one that hung in the shard.
    let single = root.join("single");
    let mut one = bin();
    one.args([
        "run",
        "litmus/sb",
        "--backend",
        "cpu",
        "--seed",
        "1",
        "--quiet",
    ])
    .args(["--iterations", "2000", "--run-id", "one", "--out"])
    .arg(&single);
    assert_eq!(one.output().unwrap().status.code(), Some(0));
    let group = std::fs::read_dir(&single)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let single = read_result_set(&group.join("one")).unwrap();
    assert_eq!(merged.run.test_paths, single.run.test_paths);
    let mut expected = totals(&single);
    expected.retain(|(p, _, _)| !p.ends_with(&format!("/{hung}.litmus")));
    assert_eq!(expected.len(), 19);
    assert_eq!(totals(&merged), expected);

    // A shard rerun by another build is not merged silently.
    let part = std::fs::read_dir(dir.join("shards/1/p1"))
        .unwrap()
        .flatten()
        .find(|e| e.path().is_dir())
        .unwrap()
        .path();
    let run_json = std::fs::read_dir(&part)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("run.json");
    let text_before = std::fs::read_to_string(&run_json).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text_before).unwrap();
    v["git_revision"] = "0000000".into();
    std::fs::write(&run_json, serde_json::to_string(&v).unwrap()).unwrap();
    let o = campaign(&["collect"], &dir, &manifest);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("built from different versions"),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&root);
}
