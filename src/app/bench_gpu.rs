//! `ptx-litmus bench gpu`: instances/s, weak/s and the time per launch (GPU and host) of the
//! CUDA backend for 2-, 3- and 4-thread tests, as a table. "weak" counts instances satisfying
//! the shape's `exists` condition, which for these shapes is exactly the non-SC outcome. A
//! launch is one launch of the test kernel and one of the collect kernel; host time is what the
//! host spends enqueueing them while the launch queue has room (the first launches after each
//! synchronisation). Targets: ≥ 1e9 instances/s (2 threads), ≥ 3e8/s (4 threads), ≤ 20 µs of
//! host time per launch.

use super::bench_shapes::{each_shape, weak};
use super::{backend_options, AppError, Exit};
use crate::cli::BenchGpuArgs;
use crate::harness::BackendOptions;
use crate::harness::{cuda, Backend, Budget, RunParams};

/// Runs every shape for `--time` seconds and prints the table.
pub fn run(args: &BenchGpuArgs) -> Result<Exit, AppError> {
    let options = backend_options(Backend::Cuda, &args.options)?;
    let device = match &options.backend {
        BackendOptions::Cuda(o) => o.device,
        BackendOptions::Cpu(_) => 0,
    };
    let gpu = cuda::detect(device).map_err(|why| format!("bench gpu: {why}"))?;
    println!("{}; stress preset {}", gpu.describe(), args.stress.name);
    println!(
        "{:<6} {:>7} {:>11} {:>9} {:>12} {:>11} {:>13} {:>14}",
        "shape",
        "threads",
        "inst/launch",
        "launches",
        "instances/s",
        "weak/s",
        "GPU µs/launch",
        "host µs/launch"
    );
    let mut failed = 0;
    each_shape(args.only.as_deref(), |name, test, control| {
        let mut params = RunParams::new(Budget::Seconds(args.time), args.seed);
        params.stress = args.stress.clone();
        params.options = options.clone();
        let (run, stats) = match cuda::run_measured(test, &params, control) {
            Ok(m) => m,
            Err(e) => {
                failed += 1;
                println!("{name:<6} failed: {e}");
                return Ok(());
            }
        };
        let weak = weak(test, &run.histogram);
        let us = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        println!(
            "{:<6} {:>7} {:>11} {:>9} {:>12.3e} {:>11.3e} {:>13} {:>14}",
            name,
            test.threads.len(),
            run.info.provenance["kernel.instances_per_launch"],
            stats.launches,
            run.info.instances_per_s,
            weak as f64 / run.info.elapsed_s.max(1e-9),
            us(stats.gpu_us_per_launch()),
            us(stats.host_us_per_launch())
        );
        Ok(())
    })?;
    Ok(if failed > 0 {
        Exit::Error
    } else {
        Exit::Success
    })
}
