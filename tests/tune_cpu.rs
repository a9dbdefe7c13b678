//! `tune` end to end on the CPU backend: the same seed tries the same configurations in the
//! seeded phases and another seed tries others; each run ends with a final race of its best
//! few against the baseline, whose first finalist still in is the winner; the tuned file
//! carries its provenance; bad arguments are refused before anything runs.
//!
//! What is not asserted: that two runs pick the same winner. On a shared 2-core machine the
//! ranking itself changes with the load: while other work holds the cores most chunks see
//! nothing weak and every finalist ties (the baseline wins), and in a quiet stretch of a few
//! seconds `sync=64` is clearly better (docs/tune.md, "Reproducing the winner", has the
//! counts). The search's determinism given the same measurements is asserted by the unit
//! tests of `src/tune` on seeded synthetic landscapes, the tie rule by `src/tune/decide.rs`'s.

mod common;

use common::{bin, fresh, text};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn tune(seed: &str, out: &Path, extra: &[&str]) -> String {
    let o = bin()
        .args(["tune", "--backend", "cpu", "--shapes", "SB", "--seed", seed])
        .args([
            "--random",
            "6",
            "--local",
            "4",
            "--chunk-instances",
            "20000",
        ])
        // A budget the search fits in several times over on a quiet machine, which bounds
        // the test on a very busy one.
        .args(["--budget", "60"])
        .args(extra)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

/// The tuned file's settings (its non-comment lines).
fn settings(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("SB.stress"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

fn search(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("SB.search.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The configurations of the seeded phases (baseline and random), in order.
fn seeded_points(s: &Value) -> Vec<Value> {
    s["search"]["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["phase"] != "local")
        .map(|t| t["point"].clone())
        .collect()
}

#[test]
fn the_same_seed_tries_the_same_configurations_and_another_seed_others() {
    let (a, b, c) = (fresh("seed1-a"), fresh("seed1-b"), fresh("seed2"));
    let table = tune("1", &a, &[]);
    assert!(
        table.contains("SB") && table.contains("SB.stress"),
        "{table}"
    );
    tune("1", &b, &[]);
    assert_eq!(
        settings(&a).len(),
        3,
        "sync, batch and pack: {:?}",
        settings(&a)
    );
    assert!(settings(&a).iter().all(|l| l.starts_with("cpu.")));
    let (sa, sb) = (search(&a), search(&b));
    assert_eq!(seeded_points(&sa), seeded_points(&sb));
    for s in [&sa, &sb] {
        let (best, trials) = (
            &s["search"]["best"],
            s["search"]["trials"].as_array().unwrap(),
        );
        let measured = best.as_u64().is_some_and(|i| (i as usize) < trials.len());
        assert!(
            measured,
            "the winner {best} is one of the {} trials",
            trials.len()
        );
        let d = &s["search"]["decision"];
        assert_eq!(d["finalists"][0], 0, "the baseline is a finalist: {d}");
        assert_eq!(&d["tied"][0], best, "the winner is the first left: {d}");
    }
    let n = seeded_points(&sa).len();
    assert!(
        (2..=7).contains(&n),
        "the baseline and 6 draws, less repeats: {n}"
    );
    assert_eq!(sa["search"]["trials"][0]["phase"], "baseline");
    // Only the configurations tried matter here: no final race.
    tune("2", &c, &["--finalists", "0"]);
    assert_ne!(seeded_points(&sa), seeded_points(&search(&c)));
}

#[test]
fn the_tuned_file_says_where_and_how_it_was_tuned() {
    let dir = fresh("provenance");
    let o = bin()
        .args(["tune", "--backend", "cpu", "--shapes", "SB", "--seed", "5"])
        .args(["--random", "1", "--local", "0", "--chunk-instances", "2000"])
        .args(["--min-chunks", "2", "--max-chunks", "2", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let file = std::fs::read_to_string(dir.join("SB.stress")).unwrap();
    for want in [
        "# backend: cpu",
        "# seed: 5",
        "# date: 20",
        "# weak/s: ",
        "# baseline weak/s: ",
        "# cores: ",
        // The baseline, its 4 neighbours (tried first in the CPU's small space), 1 random.
        "# search: 6 configurations, complete",
    ] {
        assert!(file.contains(want), "{want} in\n{file}");
    }
    let s = search(&dir);
    for t in s["search"]["trials"].as_array().unwrap() {
        let n: u64 = t["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["instances"].as_u64().unwrap())
            .sum();
        assert_eq!(n, 4000, "two chunks of a fixed 2000 instances each");
    }
    // The race compared the finalists with the baseline round by round, and the file says
    // what that gave; the baseline against itself is 1 in every round.
    let d = &s["search"]["decision"];
    let ratios = d["vs_baseline"].as_array().expect("ratios recorded");
    assert_eq!(ratios.len(), d["finalists"].as_array().unwrap().len());
    for key in ["median", "low", "high"] {
        assert_eq!(ratios[0][key].as_f64(), Some(1.0), "{key}: {d}");
    }
    let race = file.lines().find(|l| l.starts_with("# final race: "));
    assert!(
        race.is_some_and(|l| l.contains("times the baseline's weak/s")),
        "{file}"
    );
    let table = text(&o.stdout);
    assert!(
        table.contains(&format!("final race: {}", &race.unwrap()[14..])),
        "{table}"
    );
}

/// `run --stress tuned:FILE` on the CPU runs with the file's options, recorded in `run.json`.
#[test]
fn run_reads_a_tuned_file_and_records_its_options() {
    let dir = fresh("for-run");
    let o = bin()
        .args(["tune", "--backend", "cpu", "--shapes", "SB", "--seed", "3"])
        .args(["--random", "2", "--local", "0", "--chunk-instances", "2000"])
        .args(["--min-chunks", "2", "--max-chunks", "2", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let file = dir.join("SB.stress");
    let want: BTreeMap<String, String> = settings(&dir)
        .iter()
        .map(|l| {
            let (k, v) = l.split_once(" = ").unwrap();
            (k.trim_start_matches("cpu.").to_string(), v.to_string())
        })
        .collect();
    let results = fresh("run-results");
    let o = bin()
        .args([
            "run",
            "litmus/sb/SB+rlx.gpu+rlx.gpu.litmus",
            "--backend",
            "cpu",
        ])
        .args(["--instances", "2000", "--seed", "1", "--results"])
        .arg(&results)
        .arg("--stress")
        .arg(format!("tuned:{}", file.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let run_json = find(&results, "run.json").expect("a run.json");
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(run_json).unwrap()).unwrap();
    let other = &rec["parameters"]["other"];
    for (k, v) in &want {
        assert_eq!(other[k].as_str(), Some(v.as_str()), "{k} in {other}");
    }
    // The same file as a --stress-file: its CPU lines are not incantations.
    let o = bin()
        .args(["emit", "SB+rlx.gpu+rlx.gpu", "--stress-file"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--stress tuned:"),
        "{}",
        text(&o.stderr)
    );
}

/// A GPU tuned file's stress keys go on top of the `stress` preset.
#[test]
fn a_tuned_stress_file_sets_the_kernels_incantations() {
    let dir = common::scratch("gpu-file");
    let file = dir.join("MP.stress");
    std::fs::write(
        &file,
        "# weak/s: 1e6\nmem_stress_pct = 25\nbarrier_pct = 100\n",
    )
    .unwrap();
    let o = bin()
        .args(["emit", "SB+rlx.gpu+rlx.gpu", "--stress"])
        .arg(format!("tuned:{}", file.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("// stress: stress with mem_stress_pct=25\n"),
        "{}",
        text(&o.stdout)
            .lines()
            .take(5)
            .collect::<Vec<_>>()
            .join("\n")
    );
    let o = bin()
        .args(["emit", "SB+rlx.gpu+rlx.gpu", "--stress", "tuned:"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("needs a file"));
}

/// The first file named `name` under `dir`.
fn find(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(f) = find(&p, name) {
                return Some(f);
            }
        } else if p.file_name().is_some_and(|n| n == name) {
            return Some(p);
        }
    }
    None
}

#[test]
fn bad_arguments_are_refused_before_anything_runs() {
    for (args, want) in [
        (&["--budget", "0"][..], "--budget"),
        (&["--min-chunks", "4", "--max-chunks", "2"], "--min-chunks"),
        (&["--shapes", "XYZ"], "unknown shape `XYZ`"),
    ] {
        let o = bin()
            .args(["tune", "--backend", "cpu"])
            .args(args)
            .arg("--out")
            .arg(fresh("refused"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(text(&o.stderr).contains(want), "{}", text(&o.stderr));
    }
}
