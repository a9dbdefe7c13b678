//! `diff` on two result sets that differ by a planted violation and by a weak-rate change
//! reports both and exits 1; `merge` and `report` work end to end through the command line.

mod common;

use common::results::{covering, records, repeats, run, suite, Knobs};
use common::scratch;
use ptx_litmus::report::diff;
use ptx_litmus::report::dispersion::run_scatter;
use ptx_litmus::results::{read_result_set, write_result_set, ResultSet, Shard, Unit};
use std::path::Path;

fn cli(args: &[&Path]) -> (i32, String, String) {
    let out = common::bin().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        common::text(&out.stdout),
        common::text(&out.stderr),
    )
}

/// A: the baseline. B: CoRR now shows its forbidden outcome 3 times, SB's weak rate almost
/// doubles, and MP was not run.
fn two_sets(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (a, b) = (root.join("a"), root.join("b"));
    let base = records(&suite(Knobs::default()), 2.0);
    write_result_set(&a, &run("run-a", "550.54.15", None), &base, false).unwrap();
    let changed = records(
        &suite(Knobs {
            corr_violation: 3,
            sb_weak: 9_000,
            ..Knobs::default()
        }),
        2.0,
    );
    let without_mp: Vec<_> = changed.into_iter().filter(|t| t.name != "MP").collect();
    let run_b = covering(run("run-b", "560.28.03", None), &without_mp);
    write_result_set(&b, &run_b, &without_mp, false).unwrap();
    (a, b)
}

#[test]
fn planted_violation_and_rate_change_are_reported_and_exit_1() {
    let root = scratch("diff");
    let (a, b) = two_sets(&root);
    let d = diff::diff(&read_result_set(&a).unwrap(), &read_result_set(&b).unwrap());
    assert_eq!(d.new_violations, ["CoRR"]);
    assert!(d.regressed());
    assert_eq!(d.only_a, ["MP"]);
    assert!(d.only_b.is_empty() && d.changed.is_empty());
    let sig: Vec<_> = d.significant().map(|r| r.name.as_str()).collect();
    assert_eq!(sig, ["SB"]);
    // CoRR's weak count is 0 on both sides: compared, not significant.
    let corr = d.rates.iter().find(|r| r.name == "CoRR").unwrap();
    assert!(!corr.significant);
    // Significant rows come first.
    assert_eq!(d.rates[0].name, "SB");
    assert_eq!(d.threshold, 0.05 / 2.0);
    assert!(d.verdict_changes.iter().any(|c| c.name == "CoRR"
        && c.a.starts_with("conformant")
        && c.b.starts_with("violation")));

    let html_path = root.join("diff.html");
    let (code, out, err) = cli(&[Path::new("diff"), &a, &b, Path::new("--html"), &html_path]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("New violations in B: 1\n  CoRR\n"), "{out}");
    assert!(
        out.contains("Significant weak-rate changes: 1 of 2 tests compared"),
        "{out}"
    );
    assert!(
        out.contains("  SB: 5.00e-3 -> 9.00e-3 weak/instance (×1.8)"),
        "{out}"
    );
    assert!(
        out.contains("quasi-binomial") && out.contains("phi = 1.0, 20 + 20 parts"),
        "the test used is stated: {out}"
    );
    assert!(
        out.contains("`merge` repeated runs of each and diff again to compare by run"),
        "a change between single runs says what would tell it from drift: {out}"
    );
    assert!(
        out.contains("Runs differ in: 1 settings\n  provenance.driver: 550.54.15 -> 560.28.03\n"),
        "{out}"
    );
    assert!(out.contains("Only in A: 1\n  MP\n"), "{out}");
    let (code, json, err) = cli(&[Path::new("diff"), &a, &b, Path::new("--json")]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["format"], "ptx-litmus-diff/1");
    assert_eq!(v["diff"]["new_violations"], serde_json::json!(["CoRR"]));
    let sb = &v["diff"]["rates"][0];
    assert_eq!(
        (&sb["name"], &sb["significant"], &sb["unit"]),
        (&"SB".into(), &true.into(), &"part".into())
    );
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.contains("<li class=\"violation\">CoRR</li>"));
    assert!(html.contains("<tr class=\"sig\"><td>SB</td>"));
    // The HTML is not overwritten without --force.
    let (code, _, err) = cli(&[Path::new("diff"), &a, &b, Path::new("--html"), &html_path]);
    assert_eq!(code, 2);
    assert!(
        err.contains("diff.html") && err.contains("--force"),
        "{err}"
    );

    // The other way round, the violation is resolved: not a finding.
    let (code, out, _) = cli(&[Path::new("diff"), &b, &a]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Violations in A resolved in B: 1\n  CoRR\n"),
        "{out}"
    );
    // A set against itself: nothing changes.
    let (code, out, _) = cli(&[Path::new("diff"), &a, &a]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Significant weak-rate changes: 0 of 3"),
        "{out}"
    );
}

#[test]
fn records_without_parts_are_not_tested_however_large_the_change() {
    let root = scratch("diff-no-parts");
    let (a, b) = two_sets(&root);
    let strip = |dir: &Path| {
        let mut set = read_result_set(dir).unwrap();
        set.tests.iter_mut().for_each(|t| t.observed.parts.clear());
        set
    };
    let d = diff::diff(&strip(&a), &strip(&b));
    assert_eq!(d.significant().count(), 0);
    assert_eq!(d.tested(), 0);
    let sb = d.rates.iter().find(|r| r.name == "SB").unwrap();
    assert_eq!((sb.units, sb.test), ((0, 0), None));
    let text = diff::text(&d);
    assert!(
        text.contains("Significant weak-rate changes: 0 of 0 tests compared (2 not tested"),
        "{text}"
    );
}

#[test]
fn changed_tests_are_not_compared() {
    let root = scratch("diff-hash");
    let (a, b) = two_sets(&root);
    let mut set = read_result_set(&b).unwrap();
    for t in &mut set.tests {
        t.hash = format!("{}-v2", t.hash);
        t.model.hash = t.hash.clone();
        t.observed.hash = t.hash.clone();
    }
    let d = diff::diff(&read_result_set(&a).unwrap(), &set);
    assert_eq!(d.changed, ["CoRR", "SB"]);
    assert!(d.rates.is_empty() && d.verdict_changes.is_empty());
    // CoRR's violation is new: A never ran this version of the test.
    assert_eq!(d.new_violations, ["CoRR"]);
}

#[test]
fn corrupt_input_is_an_error_naming_the_file() {
    let root = scratch("diff-corrupt");
    let (a, b) = two_sets(&root);
    std::fs::write(b.join("run.json"), "{\"format\": \"ptx-litmus/run\", \"sch").unwrap();
    let (code, _, err) = cli(&[Path::new("diff"), &a, &b]);
    assert_eq!(code, 2);
    assert!(
        err.contains("b/run.json") && err.contains("truncated"),
        "{err}"
    );
}

#[test]
fn merge_and_report_through_the_command_line() {
    let root = scratch("merge-cli");
    let all = records(&suite(Knobs::default()), 1.0);
    let mut dirs = Vec::new();
    for i in 0..2u32 {
        let shard = Shard { index: i, count: 2 };
        let paths: Vec<String> = all.iter().map(|t| t.path.clone()).collect();
        let mine = shard.select(&paths);
        let tests: Vec<_> = all
            .iter()
            .filter(|t| mine.contains(&t.path))
            .cloned()
            .collect();
        let dir = root.join(format!("shard{i}"));
        let mut r = run(&format!("r{i}"), "550", Some(shard));
        r.test_paths = mine;
        write_result_set(&dir, &r, &tests, false).unwrap();
        dirs.push(dir);
    }
    let out = root.join("campaign");
    let (code, stdout, err) = cli(&[
        Path::new("merge"),
        &dirs[0],
        &dirs[1],
        Path::new("--out"),
        &out,
    ]);
    assert_eq!(code, 0, "{stdout}{err}");
    let merged = read_result_set(&out).unwrap();
    assert_eq!(merged.tests, {
        let mut t = all.clone();
        t.sort_by(|a, b| a.name.cmp(&b.name));
        t
    });
    assert_eq!(merged.run.merged_from, ["r0", "r1"]);
    assert_eq!(merged.run.run_id, "campaign");
    // Merging again into the same place needs --force.
    let (code, _, err) = cli(&[Path::new("merge"), &dirs[0], Path::new("--out"), &out]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("run.json") && err.contains("--force"), "{err}");

    let (code, stdout, err) = cli(&[Path::new("report"), &out]);
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains("3 tests: 0 violations, 3 conformant"),
        "{stdout}"
    );
    assert!(out.join("report.html").exists() && out.join("plots/MP.png").exists());
}

fn sb_change(a: &ResultSet, b: &ResultSet) -> diff::RateChange {
    let d = diff::diff(a, b);
    d.rates.into_iter().find(|r| r.name == "SB").unwrap()
}

#[test]
fn drift_between_runs_is_not_a_change_once_the_sets_merge_repeats() {
    let root = scratch("diff-runs");
    // One run a side: parts of one run scatter little, so 5,000 -> 6,000 is significant.
    let single = sb_change(
        &repeats(&root, "a", &[5_000]),
        &repeats(&root, "b", &[6_000]),
    );
    assert_eq!((single.unit, single.units), (Unit::Part, (20, 20)));
    assert!(single.significant, "{single:?}");
    // Two runs a side that drift by 2,000: the same kind of step is within that drift.
    let drift = sb_change(
        &repeats(&root, "c", &[5_000, 7_000]),
        &repeats(&root, "d", &[6_000, 8_000]),
    );
    assert_eq!((drift.unit, drift.units), (Unit::Run, (2, 2)));
    let t = drift.test.unwrap();
    assert!(
        t.phi > 100.0 && t.p > 0.5 && !drift.significant,
        "{drift:?}"
    );
    // merge says how far such runs scatter against their parts (evenly spread: phi 1).
    let scatter = run_scatter(&repeats(&root, "k", &[5_000, 7_000]).tests).unwrap();
    assert_eq!((scatter.tests, scatter.within_runs), (1, 1.0));
    assert!(scatter.between_runs > 100.0, "{scatter:?}");
    let steady = run_scatter(&repeats(&root, "l", &[5_000, 5_000]).tests).unwrap();
    assert_eq!(steady.between_runs, 1.0);
    assert_eq!(run_scatter(&repeats(&root, "m", &[5_000]).tests), None);
    // Runs that agree within 200 and step by 4,000: a change beyond the drift.
    let real = sb_change(
        &repeats(&root, "e", &[5_000, 5_200]),
        &repeats(&root, "f", &[9_000, 9_200]),
    );
    assert_eq!(real.unit, Unit::Run);
    assert!(real.significant, "{real:?}");
    let text = diff::text(&diff::diff(
        &repeats(&root, "e2", &[5_000, 5_200]),
        &repeats(&root, "f2", &[9_000, 9_200]),
    ));
    assert!(
        text.contains("2 + 2 runs") && !text.contains("`merge` repeated runs"),
        "{text}"
    );
    // One merged side is enough to count both by run: a single run is then one unit.
    let mixed = sb_change(
        &repeats(&root, "g", &[5_000]),
        &repeats(&root, "h", &[6_000, 8_000]),
    );
    assert_eq!((mixed.unit, mixed.units), (Unit::Run, (1, 2)));
    let text = diff::method_note(&diff::diff(
        &repeats(&root, "i", &[5_000, 7_000]),
        &repeats(&root, "j", &[6_000, 8_000]),
    ));
    assert!(
        text.contains("3 of the 3 tests compared were compared by run"),
        "{text}"
    );
}

#[test]
fn a_change_is_told_whether_both_sets_ran_the_same_code() {
    let root = scratch("diff_codes");
    let (a, b) = (root.join("a"), root.join("b"));
    // SB ran the same code in both, from two cubin files (a JIT's and ptxas's), and its weak
    // rate almost doubled; CoRR ran other code; MP names no code in B (as a CPU run would
    // not).
    let hashes = |sets: &[(&str, &str)], knobs: Knobs| {
        let mut tests = records(&suite(knobs), 2.0);
        for (i, t) in tests.iter_mut().enumerate() {
            if let Some((_, h)) = sets.iter().find(|(n, _)| *n == t.name) {
                t.notes.insert("kernel.code_hash".into(), h.to_string());
                let file = format!("{h}{i}{}", knobs.sb_weak);
                t.notes.insert("kernel.sass_hash".into(), file);
            }
        }
        tests
    };
    let in_a = hashes(
        &[("SB", "5b5b"), ("CoRR", "c0c0"), ("MP", "aaaa")],
        Knobs::default(),
    );
    let more_sb = Knobs {
        sb_weak: 9_000,
        ..Knobs::default()
    };
    let mut in_b = hashes(&[("SB", "5b5b"), ("CoRR", "c0c1")], more_sb);
    // B's CoRR ran code that failed the SASS check.
    let corr = in_b.iter_mut().find(|t| t.name == "CoRR").unwrap();
    let failed = "FAIL: role P1: LDG.E.STRONG.SM where ld.relaxed.gpu asks for GPU scope";
    corr.notes.insert("kernel.sass_check".into(), failed.into());
    write_result_set(&a, &run("run-a", "550.54.15", None), &in_a, false).unwrap();
    write_result_set(&b, &run("run-b", "550.54.15", None), &in_b, false).unwrap();
    let d = diff::diff(&read_result_set(&a).unwrap(), &read_result_set(&b).unwrap());
    let same = |name: &str| d.rates.iter().find(|r| r.name == name).unwrap().same_code;
    assert_eq!(
        (same("SB"), same("CoRR"), same("MP")),
        (Some(true), Some(false), None)
    );
    assert_eq!(d.codes(), Some((1, 2)));
    let (_, out, _) = cli(&[Path::new("diff"), &a, &b]);
    assert!(
        out.contains("(1 of 2 tests ran the same machine code in A and B (kernel.code_hash)"),
        "{out}"
    );
    assert_eq!(
        d.sass_failed,
        ["CoRR in B: role P1: LDG.E.STRONG.SM where ld.relaxed.gpu asks for GPU scope"]
    );
    assert!(
        out.contains("Code that failed the SASS check (its outcomes are another program's): 1\n  CoRR in B: role P1:"),
        "{out}"
    );
    let sb = out.lines().find(|l| l.starts_with("  SB: ")).unwrap();
    assert!(sb.ends_with(", same code"), "{sb}");
    // Against a set that names no code (a CPU run), nothing is said of code.
    let c = root.join("c");
    let plain = hashes(&[], Knobs::default());
    write_result_set(&c, &run("run-c", "550.54.15", None), &plain, false).unwrap();
    let (_, out, _) = cli(&[Path::new("diff"), &a, &c]);
    assert!(
        !out.contains("same code") && !out.contains("other code"),
        "{out}"
    );
}
