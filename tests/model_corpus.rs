//! The checker against every published verdict of the Dat3M PTX corpus (`../shared/corpus`):
//! `PTXv7_5-expected.csv` (226 tests, proxies included) and `PTXv6_0-expected.csv`. A mismatch
//! is reported per test, with the allowed outcomes, before the test fails.

use ptx_litmus::litmus::parse_file;
use ptx_litmus::model::{check, CheckResult};
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/dat3m");
    root.is_dir().then_some(root)
}

fn check_csv(name: &str) {
    let Some(root) = corpus() else {
        eprintln!("skipping: ../shared/corpus/dat3m is absent (the third-party corpus is not in this checkout)");
        return;
    };
    let csv = std::fs::read_to_string(root.join("expected").join(name)).expect("expected CSV");
    let mut checked = 0;
    let mut mismatches = Vec::new();
    for line in csv.lines().filter(|l| !l.trim().is_empty()) {
        let (path, verdict) = line.rsplit_once(',').expect("path,verdict");
        let rel = path.strip_prefix("litmus/PTX/").expect("Dat3M path");
        let file = root.join("litmus/PTX").join(rel);
        let want = match verdict.trim() {
            "1" => CheckResult::Ok,
            "0" => CheckResult::No,
            other => panic!("{name}: bad verdict {other:?} for {rel}"),
        };
        let test = match parse_file(&file) {
            Ok(t) => t,
            Err(e) => {
                mismatches.push(format!("{rel}: does not parse: {e}"));
                continue;
            }
        };
        checked += 1;
        match check(&test) {
            Ok(v) if v.result == want => {}
            Ok(v) => {
                let outs: Vec<String> = v
                    .allowed
                    .iter()
                    .map(|o| o.display(&v.observables).to_string())
                    .collect();
                mismatches.push(format!(
                    "{rel}: expected {want:?}, got {:?}; allowed: [{}]",
                    v.result,
                    outs.join(" | ")
                ));
            }
            Err(e) => mismatches.push(format!("{rel}: model error: {e}")),
        }
    }
    for m in &mismatches {
        eprintln!("MISMATCH {m}");
    }
    assert!(checked > 90, "{name}: only {checked} tests checked");
    assert!(
        mismatches.is_empty(),
        "{name}: {} of {checked} verdicts differ (listed above)",
        mismatches.len()
    );
}

#[test]
fn agrees_with_every_ptx_v7_5_verdict() {
    check_csv("PTXv7_5-expected.csv");
}

#[test]
fn agrees_with_every_ptx_v6_0_verdict() {
    check_csv("PTXv6_0-expected.csv");
}
