//! `ptx-litmus bench cpu`: instances/s and weak-outcome rates of the CPU backend per test
//! shape, as a table. "weak" counts instances satisfying the shape's `exists` condition, which
//! for these shapes is exactly the non-SC outcome. "cpu used" is how many cores' worth of CPU
//! time the process got during the shape (2.00 = both cores of a 2-core machine, all the time);
//! "round trip" is the cache line's round trip between two cores just before it
//! ([`cpu::link`]: on a virtual machine it tells which of the host's placements the run had).

use super::bench_shapes::{each_shape, weak};
use super::{backend_options, AppError, Exit};
use crate::cli::BenchCpuArgs;
use crate::harness::notes;
use crate::harness::{cpu, Backend, Budget, RunParams};

/// Runs every shape for `--time` seconds and prints the table.
pub fn run(args: &BenchCpuArgs) -> Result<Exit, AppError> {
    let options = backend_options(Backend::Cpu, &args.options)?;
    println!(
        "cpu: {}, {} cores, {}",
        cpu::provenance()["cpu"],
        cpu::cores(),
        crate::RUSTC_VERSION
    );
    println!(
        "{:<12}  {:>7}  {:>8}  {:>12}  {:>11}  {:>10}  {:>8}  {:>10}",
        "shape", "threads", "sync", "instances/s", "weak/s", "weak rate", "cpu used", "round trip"
    );
    each_shape(args.only.as_deref(), |name, test, control| {
        let mut params = RunParams::new(Budget::Seconds(args.time), args.seed);
        params.options = options.clone();
        let run = cpu::run(test, &params, control)?;
        let weak = weak(test, &run.histogram);
        let counted = run.histogram.total().max(1);
        // Cores' worth of CPU the shape's threads got while it ran, as `run` records it: on a
        // machine shared with other work, the rates are for this much of it.
        let note = |key: &str| run.info.provenance.get(key);
        println!(
            "{:<12}  {:>7}  {:>8}  {:>12.3e}  {:>11.3e}  {:>10.2e}  {:>8}  {:>10}",
            name,
            test.threads.len(),
            run.info.params.options.backend.record()["sync"],
            run.info.instances_per_s,
            weak as f64 / run.info.elapsed_s,
            weak as f64 / counted as f64,
            note(notes::CPU_USED).map_or("-", String::as_str),
            note(notes::ROUND_TRIP_NS).map_or("-".into(), |ns| format!("{ns} ns"))
        );
        Ok(())
    })?;
    Ok(Exit::Success)
}
