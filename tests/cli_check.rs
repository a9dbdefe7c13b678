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
    assert!(
        text.contains("Test MP+rel+acq Allowed\nStates 3\n"),
        "{text}"
    );
    assert!(text.contains("Condition exists (P1:r0 == 1 /\\ P1:r1 == 0) is Forbidden"));
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
