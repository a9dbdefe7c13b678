//! `diff` of N result sets: one table of tests × sets, rows marked where the sets saw
//! different kinds of result or significantly different weak rates; on hand-built sets with
//! planted changes and on real CPU runs.

mod common;

use common::results::{covering, records, repeats, run, suite, Knobs};
use common::{bin, scratch, text};
use ptx_litmus::report::compare::{self, Seen};
use ptx_litmus::results::{read_result_set, write_result_set};
use std::path::{Path, PathBuf};

/// A: the baseline. B: CoRR shows its forbidden outcome 3 times and SB's weak rate almost
/// doubles. C: like A, without MP.
fn three_sets(root: &Path) -> Vec<PathBuf> {
    let dirs: Vec<PathBuf> = ["a", "b", "c"].iter().map(|d| root.join(d)).collect();
    let base = records(&suite(Knobs::default()), 2.0);
    write_result_set(&dirs[0], &run("run-a", "550.54.15", None), &base, false).unwrap();
    let changed = records(
        &suite(Knobs {
            corr_violation: 3,
            sb_weak: 9_000,
            ..Knobs::default()
        }),
        2.0,
    );
    write_result_set(&dirs[1], &run("run-b", "560.28.03", None), &changed, false).unwrap();
    let without_mp: Vec<_> = base.into_iter().filter(|t| t.name != "MP").collect();
    let run_c = covering(run("run-c", "570.86.10", None), &without_mp);
    write_result_set(&dirs[2], &run_c, &without_mp, false).unwrap();
    dirs
}

/// `diff --json` of `dirs`: its exit code and the document it printed.
fn diff_json(dirs: &[PathBuf]) -> (Option<i32>, serde_json::Value) {
    let o = bin().arg("diff").args(dirs).arg("--json").output().unwrap();
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&o.stdout), text(&o.stderr)));
    (o.status.code(), v)
}

#[test]
fn planted_changes_are_marked_in_the_matrix() {
    let root = scratch("compare");
    let dirs = three_sets(&root);
    let sets: Vec<_> = dirs.iter().map(|d| read_result_set(d).unwrap()).collect();
    let c = compare::compare(&sets);
    let names: Vec<&str> = c.lines.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["CoRR", "MP", "SB"]);
    let corr = &c.lines[0];
    assert!(
        matches!(corr.cells[1], Seen::Violation(3, 1_000_000)),
        "{:?}",
        corr.cells
    );
    assert!(matches!(corr.cells[0], Seen::ScOnly(1_000_000)));
    assert_eq!(compare::Comparison::mark(corr), "!");
    let mp = &c.lines[1];
    assert!(matches!(mp.cells[0], Seen::Unseen(1_000_000, ub) if (ub - 3.0e-6).abs() < 1e-8));
    assert_eq!(mp.cells[2], Seen::Absent);
    let sb = &c.lines[2];
    assert_eq!(compare::Comparison::mark(sb), "*");
    let Seen::Weak(5_000, 1_000_000, Some((lo, hi))) = sb.cells[0] else {
        panic!("{:?}", sb.cells[0]);
    };
    // Steady parts (phi = 1) over 20 parts: Student's t at 19 degrees of freedom (2.093)
    // makes the interval wider than Wilson's on instances (1.96; 2.77e-4 wide).
    assert!(lo < 0.005 && 0.005 < hi, "{lo} {hi}");
    assert!(2.9e-4 < hi - lo && hi - lo < 3.0e-4, "{}", hi - lo);
    // SB is the only test with weak counts in several sets besides MP's zeros.
    assert!(c.regressed());

    let html = root.join("compare.html");
    let o = bin()
        .arg("diff")
        .args(&dirs)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", text(&o.stderr));
    assert!(
        out.contains("A = run-a (cuda, gpu NVIDIA H100 80GB HBM3, driver 550.54.15)"),
        "{out}"
    );
    let row = out.lines().find(|l| l.contains("CoRR")).unwrap();
    assert!(
        row.starts_with('!') && row.contains("VIOLATION 3/1,000,000"),
        "{row}"
    );
    assert!(out.contains("3 tests, 3 marked"), "{out}");
    // Sets that name no code (CPU runs) get no code column.
    assert!(!out.contains("same code"), "{out}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<td class=\"violation\">VIOLATION 3/1,000,000</td>"),
        "{page}"
    );

    // --json: the same table as one JSON document, with the same exit status.
    let (code, v) = diff_json(&dirs);
    assert_eq!(code, Some(1));
    assert_eq!(v["format"], "ptx-litmus-compare/1");
    let lines = v["comparison"]["lines"].as_array().unwrap();
    let corr = lines.iter().find(|l| l["name"] == "CoRR").unwrap();
    assert_eq!(corr["kinds_differ"], true);
    assert_eq!(
        corr["cells"][1]["violation"],
        serde_json::json!([3, 1_000_000])
    );
}

/// Two sets of SB with `weak` of 1,000,000 weak instances over 20 parts of 50,000: the same
/// in every part, or all in every other part (as a loaded machine makes rounds swing).
fn sb_set(dir: &Path, id: &str, weak: u64, swinging: bool) -> ptx_litmus::results::ResultSet {
    let mut tests = records(
        &suite(Knobs {
            sb_weak: weak,
            ..Knobs::default()
        }),
        2.0,
    );
    tests.retain(|t| t.name == "SB");
    for (j, p) in tests[0].observed.parts.iter_mut().enumerate() {
        assert_eq!(p.instances, 50_000);
        p.weak = match (swinging, j % 2) {
            (false, _) => weak / 20,
            (true, 0) => weak / 10,
            (true, _) => 0,
        };
    }
    let r = covering(run(id, "550.54.15", None), &tests);
    write_result_set(dir, &r, &tests, false).unwrap();
    read_result_set(dir).unwrap()
}

#[test]
fn rates_are_compared_over_parts_not_instances() {
    let root = scratch("compare_parts");
    let steady = [
        sb_set(&root.join("a"), "a", 5_000, false),
        sb_set(&root.join("b"), "b", 6_000, false),
    ];
    let c = compare::compare(&steady);
    assert!(c.lines[0].significant, "{:?}", c.lines[0]);
    // The same totals from parts that swing: the change is within their scatter.
    let swinging = [
        sb_set(&root.join("c"), "c", 5_000, true),
        sb_set(&root.join("d"), "d", 6_000, true),
    ];
    let c = compare::compare(&swinging);
    let l = &c.lines[0];
    assert!(!l.significant && l.min_p.unwrap() > 0.05, "{l:?}");
    assert_eq!(compare::Comparison::mark(l), "");
    // Each set's interval widens with its scatter.
    let width = |s: &Seen| match s {
        Seen::Weak(_, _, Some((lo, hi))) => hi - lo,
        other => panic!("{other:?}"),
    };
    let steady_cell = &compare::compare(&steady).lines[0].cells[0];
    assert!(width(&l.cells[0]) > 5.0 * width(steady_cell), "{l:?}");
    // The two-way diff of the same pair agrees.
    let d = ptx_litmus::report::diff::diff(&swinging[0], &swinging[1]);
    assert_eq!(d.significant().count(), 0);
    let d = ptx_litmus::report::diff::diff(&steady[0], &steady[1]);
    assert_eq!(d.significant().count(), 1);
}

#[test]
fn a_set_against_itself_has_no_mark() {
    let dirs = three_sets(&scratch("compare_self"));
    let o = bin()
        .args(["diff", "--matrix"])
        .args([&dirs[0], &dirs[0]])
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("3 tests, 0 marked"), "{out}");
    assert!(out.contains("weak 5.00e-3 ["), "{out}");
}

#[test]
fn cpu_result_sets_compare() {
    let root = scratch("compare_cpu");
    let tests = [
        "litmus/sb/SB+rel.gpu+acq.gpu.litmus",
        "litmus/mp/MP+rel.gpu+acq.gpu.litmus",
    ];
    let mut dirs = Vec::new();
    for seed in ["1", "2", "3"] {
        let o = bin()
            .current_dir(common::root())
            .args([
                "run",
                "--backend",
                "cpu",
                "--iterations",
                "20000",
                "--seed",
                seed,
                "-q",
            ])
            .args(tests)
            .arg("--out")
            .arg(&root)
            .args(["--run-id", &format!("cpu-{seed}"), "--force"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        // Sets are written under <out>/<machine>/<run id>.
        let machine = std::fs::read_dir(&root)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        dirs.push(machine.join(format!("cpu-{seed}")));
    }
    let o = bin().arg("diff").args(&dirs).output().unwrap();
    let out = text(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "no violation on the CPU: {out}{}",
        text(&o.stderr)
    );
    assert!(out.contains("C = cpu-3 (cpu"), "{out}");
    for name in ["SB+rel.gpu+acq.gpu", "MP+rel.gpu+acq.gpu"] {
        let row = out.lines().find(|l| l.contains(name)).expect(name);
        let cells = row.matches("weak ").count()
            + row.matches("unseen <").count()
            + row.matches("conformant (").count();
        assert_eq!(cells, 3, "{row}");
    }
}

#[test]
fn sets_that_merge_repeats_are_compared_by_run() {
    let root = scratch("compare-runs");
    let weak_cell = |c: &compare::Comparison| {
        let sb = c.lines.iter().find(|l| l.name == "SB").unwrap();
        (sb.significant, sb.cells.clone())
    };
    // One run a side: 5,000 -> 6,000 weak is beyond the parts' scatter.
    let single = [repeats(&root, "a", &[5_000]), repeats(&root, "b", &[6_000])];
    assert!(weak_cell(&compare::compare(&single)).0);
    // Runs that drift by 2,000 a side: the same step is within the drift, and each set's
    // interval is over its two runs (wide), not its parts.
    let merged = [
        repeats(&root, "c", &[5_000, 7_000]),
        repeats(&root, "d", &[6_000, 8_000]),
    ];
    let (significant, cells) = weak_cell(&compare::compare(&merged));
    assert!(!significant);
    let Seen::Weak(_, _, Some((lo, hi))) = cells[0] else {
        panic!("{cells:?}");
    };
    assert!(lo < 3e-3 && hi > 9e-3, "{lo} {hi}");
}

/// Why a set refused MP in `a_test_one_set_refused_is_shown_as_not_run_with_its_reason`.
const REFUSED: &str = "cuda backend: ptxas 12.4.131 for sm_90: ptxas failed:\nptxas kernel.ptx, \
                       line 113; error   : Illegal modifier '.acquire' for instruction 'fence'";

#[test]
fn a_test_one_set_refused_is_shown_as_not_run_with_its_reason() {
    use ptx_litmus::results::SkippedTest;
    let root = scratch("compare_not_run");
    let dirs: Vec<PathBuf> = ["a", "b", "c"].iter().map(|d| root.join(d)).collect();
    let base = records(&suite(Knobs::default()), 2.0);
    write_result_set(&dirs[0], &run("run-a", "550.54.15", None), &base, false).unwrap();
    // B refused MP (its compiler could not build the kernel); C simply did not name SB.
    let without_mp: Vec<_> = base.iter().filter(|t| t.name != "MP").cloned().collect();
    let mut run_b = run("run-b", "550.54.15", None);
    run_b.skipped_tests.push(SkippedTest {
        path: "litmus/mp/MP.litmus".into(),
        reason: REFUSED.into(),
    });
    write_result_set(&dirs[1], &run_b, &without_mp, false).unwrap();
    let without_sb: Vec<_> = base.iter().filter(|t| t.name != "SB").cloned().collect();
    let run_c = covering(run("run-c", "550.54.15", None), &without_sb);
    write_result_set(&dirs[2], &run_c, &without_sb, false).unwrap();

    let sets: Vec<_> = dirs.iter().map(|d| read_result_set(d).unwrap()).collect();
    let c = compare::compare(&sets);
    let mp = c.lines.iter().find(|l| l.name == "MP").unwrap();
    assert_eq!(mp.cells[1], Seen::NotRun(REFUSED.into()));
    assert_eq!(compare::Comparison::mark(mp), "!");
    let sb = c.lines.iter().find(|l| l.name == "SB").unwrap();
    assert_eq!(sb.cells[2], Seen::Absent);

    let o = bin().arg("diff").args(&dirs).output().unwrap();
    let out = text(&o.stdout);
    let why = "  B  MP: cuda backend: ptxas 12.4.131 for sm_90: ptxas failed: ptxas kernel.ptx, \
               line 113; error : Illegal modifier '.acquire' for instruction 'fence'\n";
    assert!(out.contains(&format!("Not run, and why:\n{why}")), "{out}");
    let row = out.lines().find(|l| l.contains(" MP ")).unwrap();
    assert!(row.contains("not run"), "{row}");
    let (_, v) = diff_json(&dirs);
    let lines = v["comparison"]["lines"].as_array().unwrap();
    let mp = lines.iter().find(|l| l["name"] == "MP").unwrap();
    assert_eq!(mp["cells"][1]["not_run"], REFUSED);

    // Two sets: MP is only in A, with why B did not run it; SB only in A without a reason.
    let o = bin().args(["diff"]).args(&dirs[..2]).output().unwrap();
    let out = text(&o.stdout);
    assert!(
        out.contains("Only in A: 1\n  MP (B did not run it: cuda backend: ptxas 12.4.131"),
        "{out}"
    );
    let o = bin()
        .args(["diff"])
        .arg(&dirs[0])
        .arg(&dirs[2])
        .output()
        .unwrap();
    assert!(
        text(&o.stdout).contains("Only in A: 1\n  SB\n"),
        "{}",
        text(&o.stdout)
    );
    let (_, v) = diff_json(&dirs[..2]);
    let not_run = &v["diff"]["not_run"][0];
    assert_eq!(
        (&not_run["name"], &not_run["set"]),
        (&"MP".into(), &"B".into())
    );
    assert_eq!(not_run["reason"], REFUSED);
}

#[test]
fn the_table_groups_the_sets_that_ran_the_same_code() {
    let root = scratch("compare_codes");
    let dirs: Vec<PathBuf> = ["a", "b", "c"].iter().map(|d| root.join(d)).collect();
    // SB's kernel: the same code in A and C (from cubin files that differ), other code in B;
    // MP's names none anywhere; CoRR's only in B.
    for (dir, sb, corr) in [
        (&dirs[0], "5b01", None),
        (&dirs[1], "5b02", Some("c0c0")),
        (&dirs[2], "5b01", None),
    ] {
        let mut tests = records(&suite(Knobs::default()), 2.0);
        for t in &mut tests {
            let hash = match t.name.as_str() {
                "SB" => Some(sb),
                "CoRR" => corr,
                _ => None,
            };
            if let Some(h) = hash {
                t.notes.insert("kernel.code_hash".into(), h.into());
                let file = format!("{h}-{}", dir.display());
                t.notes.insert("kernel.sass_hash".into(), file);
            }
            // C's SB code failed the SASS check (its twin in A passed it).
            if t.name == "SB" {
                let check = if *dir == dirs[2] {
                    "FAIL: role P0: lost"
                } else {
                    "pass"
                };
                t.notes.insert("kernel.sass_check".into(), check.into());
            }
        }
        write_result_set(dir, &run("r", "550.54.15", None), &tests, false).unwrap();
    }
    let sets: Vec<_> = dirs.iter().map(|d| read_result_set(d).unwrap()).collect();
    let c = compare::compare(&sets);
    let codes = |name: &str| {
        let line = c.lines.iter().find(|l| l.name == name).unwrap();
        line.codes.clone()
    };
    assert_eq!(codes("SB").as_deref(), Some("A=C! B"));
    assert_eq!((codes("MP"), codes("CoRR")), (None, None));
    let o = bin().arg("diff").args(&dirs).output().unwrap();
    let out = text(&o.stdout);
    let header = out.lines().find(|l| l.contains("test")).unwrap();
    assert!(header.trim_end().ends_with("same code"), "{header}");
    let sb = out.lines().find(|l| l.contains(" SB ")).unwrap();
    assert!(sb.ends_with("A=C! B"), "{sb}");
    let (_, v) = diff_json(&dirs);
    let lines = v["comparison"]["lines"].as_array().unwrap();
    assert_eq!(
        lines.iter().find(|l| l["name"] == "SB").unwrap()["codes"],
        "A=C! B"
    );
}
