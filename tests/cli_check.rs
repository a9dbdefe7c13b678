//! `ptx-litmus check` end to end: text, JSON lines, explanations, Graphviz output, and a bad
//! test in a batch (reported, exit 2, the others still checked).

mod common;

use common::{bin, scratch};

const MP_RA: &str = "PTX MP+rel+acq
{ x=0; y=0; }
 P0@cta 0,gpu 0        | P1@cta 1,gpu 0         ;
 st.weak x, 1          | ld.acquire.gpu r0, y   ;
 st.release.gpu y, 1   | ld.weak r1, x          ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
";

const SB: &str = "PTX SB
{ x=0; y=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 st.weak x, 1   | st.weak y, 1   ;
 ld.weak r0, y  | ld.weak r1, x  ;
exists (P0:r0 == 0 /\\ P1:r1 == 0)
";

#[test]
fn text_json_explain_and_dot() {
    let d = scratch("ok");
    std::fs::write(d.join("mp.litmus"), MP_RA).unwrap();
    std::fs::write(d.join("sb.litmus"), SB).unwrap();
    let out = bin().arg("check").arg(&d).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    // The model's words: no condition kind on the first line to read as a verdict, one
    // verdict that cannot contradict it.
    assert!(text.contains("Test MP+rel+acq\nStates 3\n"), "{text}");
    assert!(
        text.contains(
            "Condition exists (P1:r0 == 1 /\\ P1:r1 == 0)\nVerdict Forbidden: 0 of 3 allowed \
             states satisfy the proposition, so the condition does not hold (No)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("Test SB\n") && text.contains("\nVerdict Allowed: 1 of 4 allowed"),
        "{text}"
    );
    for herd_only in [" Allowed\n", "Observation", "\nNo\n", "\nOk\n"] {
        assert!(!text.contains(herd_only), "{herd_only:?} in {text}");
    }
    assert!(text.contains("P0:r0=0; P1:r1=0;  (weak)"), "{text}");

    let out = bin().args(["check", "--json"]).arg(&d).output().unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 2);
    let mp = lines.iter().find(|l| l["name"] == "MP+rel+acq").unwrap();
    assert_eq!(mp["result"], "No");
    assert_eq!(mp["quantifier"], "exists");
    assert_eq!(mp["allowed"].as_array().unwrap().len(), 3);
    assert_eq!(mp["sc"].as_array().unwrap().len(), 3);
    assert_eq!(mp["hash"].as_str().unwrap().len(), 16);
    for key in ["path", "candidates", "consistent", "elapsed_us"] {
        assert!(!mp[key].is_null(), "missing {key}");
    }
    let sb = lines.iter().find(|l| l["name"] == "SB").unwrap();
    assert_eq!(sb["result"], "Ok");
    assert_eq!(sb["sc"].as_array().unwrap().len(), 3);

    let dots = d.join("dots");
    let out = bin()
        .args(["check", "--explain", "--dot"])
        .arg(&dots)
        .arg(d.join("mp.litmus"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("outcome P1:r0=1; P1:r1=0 is forbidden by causality; cycle:"),
        "{text}"
    );
    assert!(
        text.contains("--fr--> P0.0:W.weak x=1 --cause-->"),
        "{text}"
    );
    let dot = std::fs::read_to_string(dots.join("MP+rel+acq-0.dot")).expect("dot file");
    assert!(dot.starts_with("digraph execution {"));
    assert!(dot.contains("[label=\"rf\""));
    // The causality cycle is closed by a dashed `cause` edge, bold as every cycle edge.
    let id = |label: &str| {
        let line = dot
            .lines()
            .find(|l| l.contains(&format!(": {label}\"")))
            .unwrap();
        line.trim().split(' ').next().unwrap().to_string()
    };
    let (w, r) = (id("P0.0:W.weak x=1"), id("P1.1:R.weak x=0"));
    let edge = format!("{w} -> {r} [label=\"cause\", color=darkcyan, fontcolor=darkcyan, penwidth=2.5, style=dashed];");
    assert!(dot.contains(&edge), "{edge} in {dot}");
}

/// A final value that coherence forbids: `CoWW`'s `x == 1` comes only from candidates whose
/// coherence order puts the first write last, against program order, and `--explain` shows
/// one of them rather than saying that no candidate gives it.
#[test]
fn a_final_value_coherence_forbids_is_explained_by_its_candidate() {
    let out = bin()
        .args(["check", "--explain"])
        .arg(common::root().join("litmus/coww/CoWW+wk.litmus"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "outcome x=1 is forbidden by coherence; cycle:\n  P0.0:W.weak x=1 --po--> \
             P0.1:W.weak x=2 --co--> P0.0:W.weak x=1\n"
        ),
        "{text}"
    );
    assert!(text.contains("    co: e2->e1\n"), "{text}");
    assert!(!text.contains("no candidate execution"), "{text}");
}

/// `--herd`: herd7's log layout, line for line, with the condition's kind on the first line.
#[test]
fn herd_layout_under_a_flag() {
    let d = scratch("herd");
    std::fs::write(d.join("mp.litmus"), MP_RA).unwrap();
    let out = bin().args(["check", "--herd"]).arg(&d).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let want = [
        "Test MP+rel+acq Allowed",
        "States 3",
        "1:r0=0; 1:r1=0;",
        "1:r0=0; 1:r1=1;",
        "1:r0=1; 1:r1=1;",
        "No",
        "Witnesses",
        "Positive: 0 Negative: 3",
        "Condition exists (1:r0=1 /\\ 1:r1=0)",
        "Observation MP+rel+acq Never 0 3",
    ];
    assert_eq!(lines[..want.len()], want, "{text}");
    assert!(
        lines[want.len()].starts_with("Time MP+rel+acq 0."),
        "{text}"
    );
    assert!(lines[want.len() + 1].starts_with("Hash="), "{text}");
    assert!(!text.contains("Verdict"), "{text}");
    let out = bin()
        .args(["check", "--herd", "--json"])
        .arg(&d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--herd and --json conflict");
}

#[test]
fn a_bad_test_is_reported_and_the_batch_goes_on() {
    let d = scratch("bad");
    std::fs::write(
        d.join("a_bad.litmus"),
        "PTX broken\n{ x=0; }\n P0@cta 0,gpu 0 ;\n frob x ;\nexists (x == 0)\n",
    )
    .unwrap();
    std::fs::write(d.join("b_sb.litmus"), SB).unwrap();
    let out = bin().args(["check", "--json"]).arg(&d).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("\"name\":\"SB\""), "{stdout}");
    assert!(stdout.contains("\"error\""), "{stdout}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("a_bad.litmus"), "{stderr}");
}

/// `check --jobs N` checks N tests at once and prints what one at a time prints, in the same
/// order: verdicts, a file that does not parse (in JSON too), the exit code; with a cat model
/// and with `--verdict-only` as well.
#[test]
fn check_on_several_threads_prints_what_one_thread_prints() {
    let d = common::scratch("check-jobs");
    std::fs::create_dir_all(&d).unwrap();
    for e in std::fs::read_dir(common::root().join("litmus/mp")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, d.join(p.file_name().unwrap())).unwrap();
    }
    std::fs::write(
        d.join("bad.litmus"),
        "PTX bad\n{ x=0; }\n P0 ;\n foo r0 ;\n",
    )
    .unwrap();
    // Times differ from run to run; everything else must not.
    let untimed = |s: String| -> String {
        s.lines()
            .filter(|l| !l.starts_with("Time "))
            .map(|l| match l.find("\"elapsed_us\":") {
                Some(at) => &l[..at],
                None => l,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for extra in [
        &[][..],
        &["--json"],
        &["--model", "ptx-7.5"],
        &["--verdict-only"],
    ] {
        let said = |jobs: &str| {
            let out = common::bin()
                .arg("check")
                .arg(&d)
                .args(extra)
                .args(["--jobs", jobs])
                .output()
                .unwrap();
            (
                out.status.code(),
                untimed(common::text(&out.stdout)),
                common::text(&out.stderr),
            )
        };
        let one = said("1");
        assert_eq!(one.0, Some(2), "{extra:?}: the bad file makes it 2");
        assert!(one.2.contains("bad.litmus:4:"), "{extra:?}: {}", one.2);
        assert!(one.1.lines().count() > 20, "{extra:?}: {}", one.1);
        assert_eq!(said("3"), one, "{extra:?}");
    }
}

/// Each thread waits for the other's flag before it sets its own: no execution finishes.
const DEADLOCK: &str = "PTX Deadlock
{ x=0; y=0; }
 P0@cta 0,gpu 0       | P1@cta 1,gpu 0       ;
 L0:                  | L1:                  ;
 ld.relaxed.gpu r0, y | ld.relaxed.gpu r0, x ;
 beq r0, 0, L0        | beq r0, 0, L1        ;
 st.relaxed.gpu x, 1  | st.relaxed.gpu y, 1  ;
exists (P0:r0 == 1)
";

#[test]
fn a_test_no_execution_of_which_finishes_says_where_it_hangs() {
    let d = scratch("hangs");
    std::fs::write(d.join("deadlock.litmus"), DEADLOCK).unwrap();
    let barrier = common::root().join("litmus/barrier-quorum/MP+bar.q4of3-hang.litmus");
    let out = bin().arg("check").arg(&d).arg(&barrier).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "Test Deadlock\nStates 0\nHang every execution waits for ever in a spin loop"
        ),
        "{text}"
    );
    assert!(
        text.contains("States 0\nHang barrier 1 (resource 1) needs 4 threads, at most 3 arrive"),
        "{text}"
    );
    let out = bin().args(["check", "--json"]).arg(&d).output().unwrap();
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Then each thread's loop, where some execution stays for ever.
    assert_eq!(line["hangs"].as_array().map(Vec::len), Some(3), "{line}");
    for (t, l) in [(0, "L0"), (1, "L1")] {
        let want = format!("P{t} may spin for ever in the loop back to {l}: some execution reads");
        assert!(
            line["hangs"][t + 1].as_str().unwrap().starts_with(&want),
            "{line}"
        );
    }
    // A test whose executions finish hangs nowhere.
    std::fs::write(d.join("deadlock.litmus"), MP_RA).unwrap();
    let out = bin().args(["check", "--json"]).arg(&d).output().unwrap();
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["hangs"], serde_json::json!([]), "{line}");
}
