//! The checker against every published verdict of the Dat3M PTX corpus (`../shared/corpus`):
//! `PTXv7_5-expected.csv` (226 tests, proxies included) and `PTXv6_0-expected.csv`. A mismatch
//! is reported per test, with the allowed outcomes, before the test fails.

mod common;

use common::dat3m as corpus;
use ptx_litmus::litmus::parse_file;
use ptx_litmus::model::{check, CheckResult};

fn check_csv(name: &str) {
    let Some(root) = corpus() else {
        common::not_checked(
            "../shared/corpus/dat3m is absent (the third-party corpus is not in this checkout)",
        );
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

/// The SC reference gives every barrier test of the corpus its SC outcomes: a barrier that no
/// partner takes with the same key does not block (the model's reading), so a test whose
/// barriers differ in id or count still has SC interleavings, and its SC outcomes are not
/// labelled weak. Crossed barriers, which the model allows no execution of, have none.
#[test]
fn barrier_tests_have_sc_outcomes_whenever_the_model_allows_one() {
    let Some(root) = corpus() else {
        common::not_checked("../shared/corpus/dat3m is absent");
        return;
    };
    let dir = root.join("litmus/PTX/Manual");
    let mut checked = 0;
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("Manual folder") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.contains("bar") || !name.ends_with(".litmus") {
            continue;
        }
        let v = check(&parse_file(&path).expect("parses")).expect("checks");
        checked += 1;
        if v.allowed.is_empty() != v.sc.is_empty() || !v.sc.is_subset(&v.allowed) {
            wrong.push(format!(
                "{name}: {} allowed, {} SC",
                v.allowed.len(),
                v.sc.len()
            ));
        }
    }
    assert!(checked >= 20, "only {checked} barrier tests");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // SB with barriers of different counts: the three SC outcomes are SC, only (0, 0) is weak.
    let v = check(&parse_file(&dir.join("SB+named-bar-reg-diff.litmus")).unwrap()).unwrap();
    assert_eq!((v.allowed.len(), v.sc.len()), (4, 3));
}

/// Dat3M's liveness verdicts (`dartagnan/src/test/resources/PTXv7_5-Liveness-expected.csv`,
/// commit 30640123) on the corpus's tests: whether some fair execution waits for ever.
const DAT3M_LIVENESS: [(&str, bool); 9] = [
    ("XF-Barrier-relacq", false),
    ("XF-Barrier-rlx", false),
    ("XF-Barrier-weak", true),
    ("SB+twice-bars", false),
    ("SB+twice-bars-diff", false),
    ("barrier-instance-id-exists", false),
    ("barrier-instance-id-forall", false),
    ("barrier-logical-id-exists", false),
    ("barrier-logical-id-forall", false),
];

#[test]
fn says_which_tests_may_wait_for_ever_as_dat3m_does() {
    let Some(root) = corpus() else {
        common::not_checked("../shared/corpus/dat3m is absent: liveness verdicts not compared");
        return;
    };
    for (name, hangs) in DAT3M_LIVENESS {
        let file = root.join(format!("litmus/PTX/Manual/{name}.litmus"));
        let v = check(&parse_file(&file).expect("parses")).expect("checks");
        assert_eq!(!v.hangs.is_empty(), hangs, "{name}: {:?}", v.hangs);
    }
}
