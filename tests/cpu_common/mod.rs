//! Helpers shared by the tests that run the CPU backend in-process over many test files.

#![allow(dead_code)]

use ptx_litmus::harness::{cpu, Budget, Control, RunParams, TestRun};
use ptx_litmus::litmus::ast::Test;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// The Dat3M PTX corpus, when this checkout has it beside it.
pub fn corpus() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/dat3m/litmus/PTX");
    root.is_dir().then_some(root)
}

/// Every `*.litmus` file under `dir`, appended to `out`.
pub fn litmus_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            litmus_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "litmus") {
            out.push(p);
        }
    }
}

/// The test files of `litmus/` and of the corpus (when present, else saying so), sorted.
pub fn all_files() -> Vec<PathBuf> {
    let mut all = Vec::new();
    litmus_files(Path::new("litmus"), &mut all);
    match corpus() {
        Some(root) => litmus_files(&root, &mut all),
        None => eprintln!("../shared/corpus is absent: only litmus/ is run"),
    }
    all.sort();
    all
}

/// Runs `test` on the CPU backend with `seed` and, when given, instances per round `batch`.
pub fn run(
    test: &Test,
    budget: Budget,
    seed: u64,
    batch: Option<usize>,
) -> Result<TestRun, String> {
    let cancel = AtomicBool::new(false);
    let mut params = RunParams::new(budget, seed);
    if let Some(b) = batch {
        params.options.insert("batch".into(), b.to_string());
    }
    cpu::run(
        test,
        &params,
        Control {
            cancel: &cancel,
            progress: &mut |_| {},
        },
    )
    .map_err(|e| e.to_string())
}
