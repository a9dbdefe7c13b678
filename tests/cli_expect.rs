//! The test author's loop: `check --expect FILE` compares each test's verdict with an
//! expectations file and prints a pass/fail summary (exit 1 on a mismatch, 2 on a bad row or
//! test, the batch going on); a condition on a register nothing writes draws a warning from
//! `check` and `run`.

mod common;

use common::{bin, fresh, scratch, text, MP};
use std::path::Path;

const SB: &str = "PTX SB
{ x=0; y=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 st.weak x, 1   | st.weak y, 1   ;
 ld.weak r0, y  | ld.weak r1, x  ;
exists (P0:r0 == 0 /\\ P1:r1 == 0)
";

fn check(args: &[&str], dir: &Path) -> (Option<i32>, String, String) {
    let o = bin()
        .arg("check")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

/// A folder with SB (weak outcome allowed) and MP (forbidden) under `t/`.
fn suite(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("t")).unwrap();
    std::fs::write(dir.join("t/SB.litmus"), SB).unwrap();
    std::fs::write(dir.join("t/MP.litmus"), MP).unwrap();
    dir
}

#[test]
fn the_own_expectations_all_pass() {
    let rows = std::fs::read_to_string("litmus/expectations.tsv")
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count();
    let o = bin()
        .args(["check", "--expect", "litmus/expectations.tsv"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(
        out.trim(),
        format!(
            "expectations litmus/expectations.tsv: {rows} checked, {rows} pass, 0 fail; 0 \
             without a row, 0 errors"
        )
    );
}

#[test]
fn a_mismatch_is_named_with_its_row_and_fails() {
    let dir = suite("mismatch");
    std::fs::write(
        dir.join("exp.tsv"),
        "test\texpected\treason\nt/SB.litmus\tAllowed\tno fence\nt/MP.litmus\tAllowed\twrong on purpose\n",
    )
    .unwrap();
    let (code, out, err) = check(&["--expect", "exp.tsv"], &dir);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains("FAIL t/MP.litmus: expected Allowed (exp.tsv:3), the model says Forbidden"),
        "{out}"
    );
    assert!(out.contains("reason given: wrong on purpose"), "{out}");
    assert!(
        !out.contains("t/SB.litmus"),
        "a pass is only counted: {out}"
    );
    assert!(
        out.contains("exp.tsv: 2 checked, 1 pass, 1 fail; 0 without a row, 0 errors"),
        "{out}"
    );
}

#[test]
fn bad_rows_and_tests_are_reported_and_the_batch_goes_on() {
    let dir = suite("bad-rows");
    std::fs::write(dir.join("t/Broken.litmus"), "PTX Broken\n{ x=0; }\n P0 ;\n").unwrap();
    std::fs::write(
        dir.join("exp.tsv"),
        "t/SB.litmus\tAllowed\nt/MP.litmus\tMaybe\nt/Broken.litmus\tAllowed\nt/Absent.litmus\tForbidden\n",
    )
    .unwrap();
    let (code, out, err) = check(&["--expect", "exp.tsv"], &dir);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.contains("exp.tsv:2: expected Allowed or Forbidden, found `Maybe`"),
        "{err}"
    );
    assert!(err.contains("Broken.litmus:"), "{err}");
    assert!(err.contains("Absent.litmus"), "{err}");
    assert!(
        out.contains("1 checked, 1 pass, 0 fail; 0 without a row, 3 errors"),
        "{out}"
    );
}

#[test]
fn given_paths_are_checked_and_a_test_without_a_row_is_said() {
    let dir = suite("paths");
    std::fs::write(dir.join("exp.tsv"), "t/MP.litmus\tForbidden\n").unwrap();
    let (code, out, err) = check(&["--expect", "exp.tsv", "t"], &dir);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("NONE t/SB.litmus: no row in exp.tsv"), "{out}");
    assert!(
        out.contains("1 checked, 1 pass, 0 fail; 1 without a row"),
        "{out}"
    );
    let (code, _, err) = check(&["--expect", "exp.tsv", "--json"], &dir);
    assert_eq!(code, Some(2));
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn a_condition_on_an_unwritten_register_is_warned_about() {
    let dir = scratch("unwritten");
    let typo = SB.replace("P1:r1 == 0", "P1:r2 == 0");
    std::fs::write(dir.join("Typo.litmus"), &typo).unwrap();
    let (code, _, err) = check(&["Typo.litmus"], &dir);
    assert_eq!(code, Some(0), "a warning is not an error: {err}");
    assert!(
        err.contains(
            "warning: Typo.litmus: the final state observes P1:r2, which no instruction of P1 \
             writes: it always holds its initial value 0"
        ),
        "{err}"
    );
    let (_, _, clean) = check(&["litmus/sb"], Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(!clean.contains("warning"), "{clean}");
    let out = fresh("unwritten-run");
    let o = bin()
        .args([
            "run",
            "--backend",
            "cpu",
            "--iterations",
            "512",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .arg(dir.join("Typo.litmus"))
        .output()
        .unwrap();
    assert!(
        text(&o.stderr).contains("observes P1:r2"),
        "{}",
        text(&o.stderr)
    );
}
