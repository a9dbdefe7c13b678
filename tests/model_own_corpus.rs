//! The checker against every expectation of the project's own corpus (`litmus/expectations.tsv`:
//! test path, `Allowed`/`Forbidden` — whether some allowed outcome satisfies the condition's
//! proposition — and the ISA reason). Mismatches are listed per test before the test fails.

use ptx_litmus::litmus::parse_file;
use ptx_litmus::model::check;
use std::path::Path;

#[test]
fn every_expectation_of_the_own_corpus_holds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus");
    let tsv =
        std::fs::read_to_string(root.join("expectations.tsv")).expect("litmus/expectations.tsv");
    let mut checked = 0;
    let mut mismatches = Vec::new();
    for line in tsv.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert!(cols.len() >= 2, "bad line {line:?}");
        let (rel, want) = (cols[0], cols[1]);
        let want_allowed = match want {
            "Allowed" => true,
            "Forbidden" => false,
            other => panic!("bad expectation {other:?} for {rel}"),
        };
        let test = match parse_file(&root.join(rel)) {
            Ok(t) => t,
            Err(e) => {
                mismatches.push(format!("{rel}: does not parse: {e}"));
                continue;
            }
        };
        checked += 1;
        match check(&test) {
            Ok(v) => {
                let sat = v
                    .allowed
                    .iter()
                    .any(|o| o.satisfies(&v.observables, &test.condition.prop));
                if sat != want_allowed {
                    let outs: Vec<String> = v
                        .allowed
                        .iter()
                        .map(|o| o.display(&v.observables).to_string())
                        .collect();
                    mismatches.push(format!(
                        "{rel}: expected {want}, the model says {}; allowed: [{}]",
                        if sat { "Allowed" } else { "Forbidden" },
                        outs.join(" | ")
                    ));
                }
            }
            Err(e) => mismatches.push(format!("{rel}: model error: {e}")),
        }
    }
    for m in &mismatches {
        eprintln!("MISMATCH {m}");
    }
    assert!(checked > 0, "no expectations checked");
    assert!(
        mismatches.is_empty(),
        "{} of {checked} expectations differ (listed above)",
        mismatches.len()
    );
}
