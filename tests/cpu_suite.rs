//! Every test of `litmus/` on the CPU backend, briefly: counts add up, and no test whose
//! condition `litmus/expectations.tsv` marks Forbidden ever satisfies it on the CPU (the
//! mapping's soundness, checked against the corpus's independent expectations).

use ptx_litmus::harness::BackendOptions;
use ptx_litmus::harness::{cpu, Budget, Control, RunError, RunParams};
use ptx_litmus::litmus;
use ptx_litmus::outcome::observables;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

fn expectations() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string("litmus/expectations.tsv").expect("litmus/expectations.tsv");
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?.to_string(), f.next()?.to_string()))
        })
        .collect()
}

#[test]
fn forbidden_conditions_never_hold_on_the_cpu() {
    let expected = expectations();
    let mut ran = 0;
    let mut refused = Vec::new();
    let mut bad = Vec::new();
    for (path, test) in litmus::load(&[PathBuf::from("litmus")]) {
        let test = test.unwrap_or_else(|e| panic!("{e}"));
        let rel = path
            .strip_prefix(Path::new("litmus"))
            .unwrap()
            .display()
            .to_string();
        let cancel = AtomicBool::new(false);
        let mut params = RunParams::new(Budget::Instances(2_000), 5);
        params.options.backend = BackendOptions::Cpu(cpu::CpuOptions {
            batch: 500,
            ..Default::default()
        });
        let run = match cpu::run(
            &test,
            &params,
            Control {
                cancel: &cancel,
                progress: &mut |_| {},
            },
        ) {
            Ok(r) => r,
            Err(RunError::Unsupported(why)) => {
                refused.push(format!("{rel}: {why}"));
                continue;
            }
            Err(e) => panic!("{rel}: {e}"),
        };
        ran += 1;
        assert_eq!(
            run.histogram.total() + run.info.skipped,
            run.info.instances,
            "{rel}"
        );
        assert_eq!(run.info.instances, 2_000, "{rel}");
        assert_eq!(run.histogram.unexpected, 0, "{rel}");
        let obs = observables(&test);
        let holds: u64 = run
            .histogram
            .counts
            .iter()
            .filter(|(o, _)| o.satisfies(&obs, &test.condition.prop))
            .map(|(_, n)| n)
            .sum();
        let exp = expected
            .get(&rel)
            .unwrap_or_else(|| panic!("{rel} has no expectation"));
        if exp == "Forbidden" && holds > 0 {
            bad.push(format!("{rel}: forbidden condition held {holds} times"));
        }
    }
    eprintln!(
        "cpu suite: {ran} tests ran, {} refused:\n  {}",
        refused.len(),
        refused.join("\n  ")
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(ran >= 150, "only {ran} tests ran on the CPU");
}
