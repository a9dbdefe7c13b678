//! `check --model` and `model-diff` end to end: a built-in transcription or a `.cat` file judges
//! a test (text and JSON name the model), a bad model file is refused with its line, and the
//! differential command reports its counts.

mod common;

use common::{bin, scratch};

const M4: &str = "PTX M4
{ x=0; }
 P0@cta 1,gpu 0                 | P1@cta 0,gpu 0                 ;
 atom.relaxed.cta.exch r0, x, 1 | atom.relaxed.gpu.exch r0, x, 2 ;
exists (P0:r0 == 2 /\\ P1:r0 == 1)
";

#[test]
fn check_with_a_named_model_and_with_a_cat_file() {
    let d = scratch("named");
    std::fs::write(d.join("m4.litmus"), M4).unwrap();
    let out = bin()
        .args(["check", "--model", "ptx-7.5"])
        .arg(&d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Model ptx-7.5 (PTX v7.5"), "{text}");
    assert!(text.contains("States 3\n"), "{text}");
    assert!(text.contains("\nNo\n"), "{text}");
    assert!(
        text.contains("Excluded P0:r0=2; P1:r0=1; by no_thin_air"),
        "{text}"
    );

    // A model file without rmw in No-Thin-Air allows the fourth state.
    let cat = d.join("weaker.cat");
    let weaker = ptx_litmus::cat::builtin::PTX_7_5.replace(
        "acyclic (rf | addr | data | ctrl | rmw)",
        "acyclic (rf | addr | data | ctrl)",
    );
    std::fs::write(&cat, weaker).unwrap();
    let out = bin()
        .args(["check", "--json", "--model"])
        .arg(&cat)
        .arg(d.join("m4.litmus"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["model"], cat.display().to_string());
    assert_eq!(line["result"], "Ok");
    assert_eq!(line["allowed"].as_array().unwrap().len(), 4);
}

#[test]
fn a_bad_model_file_is_refused_with_its_line() {
    let d = scratch("bad");
    std::fs::write(d.join("m4.litmus"), M4).unwrap();
    let cat = d.join("bad.cat");
    std::fs::write(&cat, "M\nlet a = po\nacyclic (a | W) as x\n").unwrap();
    let out = bin()
        .args(["check", "--model"])
        .arg(&cat)
        .arg(&d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("bad.cat:3:"), "{err}");
    let out = bin()
        .args(["check", "--explain", "--model", "ptx-7.5"])
        .arg(&d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn model_diff_reports_agreement_counts() {
    let out = bin()
        .args(["model-diff", "--tests", "8", "--seed", "5"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("8 tests ("), "{text}");
    assert!(
        text.contains(": 8 agree, 0 disagree, 0 undecided"),
        "{text}"
    );
}
