//! In-process runs of the CPU backend.

use ptx_litmus::harness::BackendOptions;
use ptx_litmus::harness::{cpu, Budget, Control, RunParams, TestRun};
use ptx_litmus::litmus::ast::Test;
use std::sync::atomic::AtomicBool;

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
        params.options.backend = BackendOptions::Cpu(cpu::CpuOptions {
            batch: b,
            ..Default::default()
        });
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
