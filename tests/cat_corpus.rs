//! The cat interpreter against every published verdict of the Dat3M PTX corpus
//! (`../shared/corpus`): the project's own transcriptions `models/ptx-v7.5.cat` (226 v7.5
//! verdicts) and `models/ptx-v6.0.cat` (97 v6.0 verdicts), and — when a copy is at hand — Dat3M's
//! own `ptx-v7.5.cat` and `ptx-v6.0.cat`, unchanged, from the folder named by
//! `PTX_LITMUS_DAT3M_CAT` (or `.cache/dat3m-cat/`, where `scripts/dat3m-cat` puts them); and
//! Dat3M's `ptx-v7.5.cat` against the built-in checker on enumerated cycles of RMWs.

mod common;

use common::{dat3m as corpus, root};
use ptx_litmus::cat::builtin::{choose, PTX_6_0, PTX_7_5};
use ptx_litmus::cat::check::check;
use ptx_litmus::cat::differential::compare;
use ptx_litmus::cat::{ast::Model, load};
use ptx_litmus::gen::Family;
use ptx_litmus::litmus::parse_file;
use ptx_litmus::model::CheckResult;
use std::path::{Path, PathBuf};

/// Checks every test of `csv` with `model`; returns (checked, mismatches).
fn run_csv(model: &Model, csv: &str) -> Option<(usize, Vec<String>)> {
    let Some(root) = corpus() else {
        common::not_checked(
            "../shared/corpus/dat3m is absent (the third-party corpus is not in this checkout)",
        );
        return None;
    };
    let text = std::fs::read_to_string(root.join("expected").join(csv)).expect("expected CSV");
    let mut checked = 0;
    let mut bad = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (path, verdict) = line.rsplit_once(',').expect("path,verdict");
        let rel = path.strip_prefix("litmus/PTX/").expect("Dat3M path");
        let want = if verdict.trim() == "1" {
            CheckResult::Ok
        } else {
            CheckResult::No
        };
        let test = parse_file(&root.join("litmus/PTX").join(rel)).expect("corpus test parses");
        checked += 1;
        match check(model, &test) {
            Ok(v) if v.result(&test) == want => {}
            Ok(v) => bad.push(format!(
                "{rel}: expected {want:?}, got {:?}",
                v.result(&test)
            )),
            Err(e) => bad.push(format!("{rel}: {e}")),
        }
    }
    for m in &bad {
        eprintln!("MISMATCH {m}");
    }
    Some((checked, bad))
}

fn agrees(model: &Model, csv: &str, at_least: usize) {
    if let Some((checked, bad)) = run_csv(model, csv) {
        assert!(checked >= at_least, "{csv}: only {checked} tests");
        assert!(bad.is_empty(), "{csv}: {} of {checked} differ", bad.len());
        eprintln!("{csv}: {checked} of {checked} verdicts reproduced");
    }
}

#[test]
fn own_v7_5_transcription_reproduces_every_published_v7_5_verdict() {
    agrees(&load(PTX_7_5).unwrap(), "PTXv7_5-expected.csv", 226);
}

#[test]
fn own_v6_0_transcription_reproduces_every_published_v6_0_verdict() {
    agrees(&load(PTX_6_0).unwrap(), "PTXv6_0-expected.csv", 97);
}

/// Where Dat3M's cat files are, if a copy is at hand.
fn dat3m_cat() -> Option<PathBuf> {
    let dir = std::env::var_os("PTX_LITMUS_DAT3M_CAT")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(".cache/dat3m-cat"));
    if dir.join("ptx-v7.5.cat").is_file() && dir.join("ptx-v6.0.cat").is_file() {
        Some(dir)
    } else {
        common::not_checked(&format!(
            "Dat3M's ptx-v7.5.cat and ptx-v6.0.cat are not in {} \
             (set PTX_LITMUS_DAT3M_CAT to a folder holding them, or run scripts/dat3m-cat)",
            dir.display()
        ));
        None
    }
}

#[test]
fn dat3m_v7_5_model_unchanged_reproduces_every_published_v7_5_verdict() {
    if let Some(dir) = dat3m_cat() {
        let m = choose(dir.join("ptx-v7.5.cat").to_str().unwrap()).unwrap();
        agrees(&m.model, "PTXv7_5-expected.csv", 226);
    }
}

#[test]
fn dat3m_v6_0_model_unchanged_reproduces_every_published_v6_0_verdict() {
    if let Some(dir) = dat3m_cat() {
        let m = choose(dir.join("ptx-v6.0.cat").to_str().unwrap()).unwrap();
        agrees(&m.model, "PTXv6_0-expected.csv", 97);
    }
}

/// Every critical cycle of up to six edges with a `cas` or an `add` RMW (`Rmw(cas)`,
/// `Rmw(add)`), exchanges allowed besides, some RMWs `.cta` in `.gpu` tests across CTAs.
const RMW_OPS: &str = "family rmw-ops\ncycles 6 4\n\
    relax Rmw(cas) Rmw(add) rlx.cta:Rmw(cas) rlx.cta:Rmw(add)\n\
    safe Rmw rlx.cta:Rmw Rfe Fre Coe\nscope gpu\nplacement diffcta\n";

/// Dat3M's `ptx-v7.5.cat` allows more than the checker on RMW cycles only where an exchange
/// is: its front end gives `cas` and `add` a dependency from read to write, but not `exch`.
/// With `rmw` added to its No-Thin-Air it agrees on every one (docs/model.md).
#[test]
fn dat3m_v7_5_differs_only_through_exchanges_in_rmw_cycles() {
    let Some(dir) = dat3m_cat() else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("ptx-v7.5.cat")).unwrap();
    let unchanged = load(&text).unwrap();
    let with_rmw = load(&format!(
        "{text}\nacyclic (rf | addr | data | ctrl | rmw) as nta\n"
    ))
    .unwrap();
    let tests = Family::parse(RMW_OPS, Path::new("rmw-ops"))
        .unwrap()
        .generate()
        .unwrap();
    let (mut differ, mut without_exch) = (0, 0);
    for g in &tests {
        let name = &g.test.name;
        let exch = g.text.contains(".exch ");
        without_exch += usize::from(!exch);
        let c = compare(&unchanged, &g.test).unwrap();
        assert!(c.only_builtin.is_empty(), "{name}: {c:?}");
        assert!(
            c.agrees() || exch,
            "{name}: differs with no exchange: {c:?}"
        );
        differ += usize::from(!c.agrees());
        let c = compare(&with_rmw, &g.test).unwrap();
        assert!(c.agrees(), "{name}: {c:?}");
    }
    assert!(differ >= 50, "only {differ} of {} differ", tests.len());
    assert!(
        without_exch >= 100,
        "only {without_exch} cycles without an exchange"
    );
}
