//! Aliases and proxies on the CPU backend against the model: every test of the Dat3M corpus
//! (`../shared/corpus`) and of `litmus/` with a location alias, a texture/surface/constant
//! access or a proxy fence runs as its resolved form (aliases as their target's word, proxies as
//! generic accesses, proxy fences dropped) and shows only outcomes the model allows for the
//! test as written; none is refused.

mod common;

use common::{all_files, corpus};
use ptx_litmus::harness::cpu::resolve;
use ptx_litmus::harness::Budget;
use ptx_litmus::litmus::ast::{Fence, Instr, LocationKind, Proxy, Test};
use ptx_litmus::litmus::parse_file;
use ptx_litmus::model::check;
use ptx_litmus::outcome::Outcome;
use ptx_litmus::verdict::{judge, Status};
use std::path::PathBuf;

/// How many of the tests below the CPU refuses (the inclusion check holds for all of them).
const REFUSED: usize = 0;

/// Whether the test names an alias, accesses memory through a non-generic proxy, or has a
/// proxy fence.
fn aliased(test: &Test) -> bool {
    test.locations
        .iter()
        .any(|l| matches!(l.kind, LocationKind::Alias { .. }))
        || test.threads.iter().flat_map(|t| &t.body).any(|i| match i {
            Instr::Load { proxy, .. } | Instr::Store { proxy, .. } => *proxy != Proxy::Generic,
            Instr::Fence(Fence::Proxy(_)) => true,
            _ => false,
        })
}

fn alias_tests() -> Vec<(PathBuf, Test)> {
    all_files()
        .into_iter()
        .map(|p| {
            let t = parse_file(&p).unwrap_or_else(|e| panic!("{e}"));
            (p, t)
        })
        .filter(|(_, t)| aliased(t))
        .collect()
}

#[test]
fn every_aliased_or_proxied_test_runs_and_shows_only_allowed_outcomes() {
    let tests = alias_tests();
    if corpus().is_some() {
        // 78 tests with a generic alias and 51 with texture, surface or constant ones.
        assert_eq!(tests.len(), 129);
    }
    let (mut refused, mut bad, mut counted, mut narrowed) = (Vec::new(), Vec::new(), 0, 0);
    for (path, test) in &tests {
        let model = check(test).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let resolved = resolve::resolve(test).unwrap();
        if check(&resolved).unwrap().allowed.len() < model.allowed.len() {
            narrowed += 1;
        }
        let r = match common::cpu::run(test, Budget::Instances(4_000), 7, Some(1_000)) {
            Ok(r) => r,
            Err(e) => {
                refused.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        assert_eq!(r.histogram.total() + r.info.skipped, r.info.instances);
        counted += r.histogram.total();
        let v = judge(&model, &r.histogram, &test.condition);
        let forbidden: Vec<&Outcome> = r
            .histogram
            .counts
            .keys()
            .filter(|o| !model.allowed.contains(o))
            .collect();
        if v.status == Status::Violation || !forbidden.is_empty() {
            bad.push(format!("{}: saw {forbidden:?}", path.display()));
        }
    }
    eprintln!(
        "{} aliased or proxied tests, {} refused, {counted} instances counted; resolving \
         removes allowed outcomes in {narrowed}",
        tests.len(),
        refused.len()
    );
    assert!(bad.is_empty(), "violations:\n{}", bad.join("\n"));
    assert_eq!(refused.len(), REFUSED, "refused:\n{}", refused.join("\n"));
    assert!(tests.is_empty() || counted > 0);
}

#[test]
fn the_proxy_mp_tests_run_only_as_strong_as_their_generic_form() {
    let Some(root) = corpus() else {
        common::not_checked("../shared/corpus is absent");
        return;
    };
    // Without a proxy fence on P1, the model allows P1 to read a stale texture value after
    // acquiring the flag; the CPU, having no texture cache, never shows it, and the resolved
    // test (plain MP with release/acquire) forbids it.
    let test =
        parse_file(&root.join("Nvidia/proxy/Proxy-MP-Alias+diffProxy-proxyFence1.litmus")).unwrap();
    let original = check(&test).unwrap();
    let resolved = check(&resolve::resolve(&test).unwrap()).unwrap();
    assert!(original
        .allowed
        .iter()
        .any(|o| o.satisfies(&original.observables, &test.condition.prop)));
    assert!(resolved.allowed.len() < original.allowed.len());
    assert!(resolve::resolve_soundly(&test).is_ok());
}
