//! `ptx-litmus bench gpu`: instances/s, weak/s, the time per launch (GPU and host), the
//! occupancy achieved and the distance from the memory-bandwidth bound of the CUDA backend for
//! every shape of [`super::bench_shapes`], one table per preset. "weak" counts instances
//! satisfying the shape's `exists` condition, which for these shapes is exactly the non-SC
//! outcome. A launch is one launch of the test kernel and one of the collect kernel; host time
//! is what the host spends submitting them while the launch queue has room (the first launches
//! after each synchronisation), whether directly or as a share of a graph replay. `--dry-run` prints the launch plan instead, without a GPU
//! ([`super::bench_plan`]). Targets: ≥ 3e9 instances/s (2 threads), ≥ 1e9/s (4 threads),
//! ≤ 10 µs of host time per launch.

use super::bench_plan::{bytes_per_instance, plan, PlanRow, ASSUMED_REGISTERS};
use super::bench_shapes::{each_shape, weak};
use super::{backend_options, AppError, Exit};
use crate::cli::BenchGpuArgs;
use crate::codegen::{Stress, PRESETS};
use crate::harness::cuda::submit::{batch, calls_per_launch, LaunchMode};
use crate::harness::cuda::{DeviceLimits, LaunchStats};
use crate::harness::{cuda, Backend, Budget, RunParams, TestRun};
use crate::harness::{notes, BackendOptions};
use crate::litmus::ast::Test;
use crate::sass::usage::entry_usage;

/// The presets the tables cover: `--stress`'s, or every named one.
fn presets(args: &BenchGpuArgs) -> Vec<Stress> {
    match &args.stress {
        Some(s) => vec![s.clone()],
        None => PRESETS.iter().filter_map(|p| Stress::preset(p)).collect(),
    }
}

/// Runs every shape for `--time` seconds under each preset and prints the tables, or with
/// `--dry-run` the plan.
pub fn run(args: &BenchGpuArgs) -> Result<Exit, AppError> {
    if args.dry_run {
        return dry_run(args);
    }
    // Rates and host cost are what a bench weighs: no row waits for a disassembler.
    let mut given = vec!["sass_check=off".to_string()];
    given.extend(args.options.iter().cloned());
    let options = backend_options(Backend::Cuda, &given)?;
    let device = match &options.backend {
        BackendOptions::Cuda(o) => o.device,
        BackendOptions::Cpu(_) => 0,
    };
    let gpu = cuda::detect(device).map_err(|why| format!("bench gpu: {why}"))?;
    let bandwidth = gpu.limits.bandwidth_bytes_per_s();
    println!(
        "{}; memory bandwidth {}",
        gpu.describe(),
        bandwidth.map_or("unknown".into(), |b| format!("{:.2} TB/s", b / 1e12))
    );
    let mut failed = 0;
    for stress in presets(args) {
        println!("\nstress preset {}", stress.name);
        print_header();
        each_shape(args.only.as_deref(), |name, test, control| {
            let mut params = RunParams::new(Budget::Seconds(args.time), args.seed);
            params.stress = stress.clone();
            params.options = options.clone();
            let (run, stats) = match cuda::run_measured(test, &params, control) {
                Ok(m) => m,
                Err(e) => {
                    failed += 1;
                    println!("{name:<11} failed: {e}");
                    return Ok(());
                }
            };
            println!("{}", row(name, test, &stress, bandwidth, (&run, &stats)));
            Ok(())
        })?;
    }
    Ok(if failed > 0 {
        Exit::Error
    } else {
        Exit::Success
    })
}

/// The column heads of a preset's table.
fn print_header() {
    println!(
        "{:<11} {:>3} {:>11} {:>9} {:>11} {:>10} {:>8} {:>9} {:>9} {:>10} {:>9}",
        "shape",
        "thr",
        "inst/launch",
        "launches",
        "instances/s",
        "weak/s",
        "GPU µs",
        "host µs",
        "occupancy",
        "of bound",
        "mode"
    );
}

/// The row of shape `name` (`test`) under `stress`: what its run counted and measured, and
/// how close its instances/s came to the memory `bandwidth` bound.
fn row(
    name: &str,
    test: &Test,
    stress: &Stress,
    bandwidth: Option<f64>,
    (run, stats): (&TestRun, &LaunchStats),
) -> String {
    let per_s = run.info.instances_per_s;
    let roofline = crate::codegen::build(test, stress)
        .ok()
        .zip(bandwidth)
        .map(|(k, bw)| per_s * bytes_per_instance(&k.layout) as f64 / bw);
    let us = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    let prov = |k: &str| run.info.provenance.get(k).cloned().unwrap_or("-".into());
    format!(
        "{:<11} {:>3} {:>11} {:>9} {:>11.3e} {:>10.3e} {:>8} {:>9} {:>9} {:>10} {:>9}",
        name,
        test.threads.len(),
        prov(notes::INSTANCES_PER_LAUNCH),
        stats.launches,
        per_s,
        weak(test, &run.histogram) as f64 / run.info.elapsed_s.max(1e-9),
        us(stats.gpu_us_per_launch()),
        us(stats.host_us_per_launch()),
        prov(notes::OCCUPANCY),
        roofline.map_or("-".into(), |r| format!("{:.2} %", 100.0 * r)),
        prov(notes::LAUNCH_MODE),
    )
}

/// The device model `--device-model` names.
fn device_model(name: &str) -> Result<(DeviceLimits, &'static str), AppError> {
    match name {
        "h100" => Ok((DeviceLimits::h100_sxm(), "H100 SXM")),
        "h200" => Ok((DeviceLimits::h200(), "H200")),
        other => {
            Err(format!("bench gpu: unknown --device-model {other} (expected h100 or h200)").into())
        }
    }
}

/// Prints the launch plan of every shape under every preset on the device model.
fn dry_run(args: &BenchGpuArgs) -> Result<Exit, AppError> {
    let (limits, model) = device_model(&args.device_model)?;
    let (steady, mode) = calls_batch(&args.options)?;
    let calls = calls_per_launch(&batch(steady, mode));
    let ptxas_usage =
        |k: &crate::codegen::Kernel| entry_usage(&k.ptx, "sm_90", &k.layout.test_launch.entry).ok();
    println!(
        "bench gpu --dry-run: the launches on an {model} model ({} SMs, {} threads, {} CTAs, \
         {} registers and {} KiB shared memory per SM; {:.2} TB/s), nothing submitted to a GPU",
        limits.sms,
        limits.max_threads_per_sm,
        limits.max_ctas_per_sm,
        limits.registers_per_sm,
        limits.shared_per_sm / 1024,
        limits.bandwidth_bytes_per_s().unwrap_or(0.0) / 1e12
    );
    let mut assumed = false;
    for stress in presets(args) {
        println!("\nstress preset {}", stress.name);
        println!("{}", plan_header());
        each_shape(args.only.as_deref(), |name, test, _| {
            match plan(test, &stress, &limits, &ptxas_usage) {
                Ok(row) => {
                    assumed |= !row.measured;
                    println!(
                        "{} {calls:>12.4}",
                        plan_line(name, test.threads.len(), &row)
                    );
                }
                Err(e) => println!("{name:<11} cannot be planned: {e}"),
            }
            Ok(())
        })?;
    }
    println!(
        "\ncalls/launch: driver calls that submit kernels per launch (test + collect kernel) in \
         a batch of {}: {}; the histogram is read once per batch",
        steady,
        calls_note(mode)
    );
    if assumed {
        println!(
            "\n* registers assumed ({ASSUMED_REGISTERS} per thread): no ptxas found (see \
             docs/gpu-runs.md); a run reads them from the loaded kernel"
        );
    }
    Ok(Exit::Success)
}

/// The batch a run with `options` submits in steady state (a time budget's batches come in
/// whole graphs; `batch=N` fixes it) and its launch mode.
fn calls_batch(options: &[String]) -> Result<(u64, LaunchMode), AppError> {
    let o = match backend_options(Backend::Cuda, options)?.backend {
        BackendOptions::Cuda(o) => o,
        BackendOptions::Cpu(_) => cuda::CudaOptions::default(),
    };
    let n = o.batch.unwrap_or_else(|| o.launch_mode.round_up(1));
    Ok((n, o.launch_mode))
}

/// What the mode submits, in words.
fn calls_note(mode: LaunchMode) -> String {
    match mode {
        LaunchMode::Graph(k) => format!(
            "graph:{k}, one cuGraphLaunch per {k} launches (-o graph=off: two cuLaunchKernelEx)"
        ),
        LaunchMode::Direct => "direct, two cuLaunchKernelEx per launch".into(),
    }
}

/// The header of the plan's table.
fn plan_header() -> String {
    format!(
        "{:<11} {:>3} {:>5} {:>6} {:<19} {:>11} {:>4} {:>3} {:>11} {:>9} {:>6} {:>12} {:>12}",
        "shape",
        "thr",
        "regs",
        "smem",
        "CTAs/SM (limit)",
        "grid",
        "cta",
        "cl",
        "inst/launch",
        "occupancy",
        "B/inst",
        "bound inst/s",
        "calls/launch"
    )
}

/// One shape's row of the plan.
fn plan_line(name: &str, threads: usize, row: &PlanRow) -> String {
    let regs = format!(
        "{}{}",
        row.usage.registers,
        if row.measured { "" } else { "*" }
    );
    format!(
        "{:<11} {:>3} {:>5} {:>6} {:<19} {:>11} {:>4} {:>3} {:>11} {:>9.3} {:>6} {:>12}",
        name,
        threads,
        regs,
        row.usage.shared_bytes,
        format!("{} ({})", row.occupancy.ctas_per_sm, row.occupancy.limiter),
        format!("{}/{}", row.ctas.0, row.ctas.1),
        row.cta_size,
        row.cluster_width,
        row.instances,
        row.achieved,
        row.bytes_per_instance,
        row.bound_per_s.map_or("-".into(), |b| format!("{b:.3e}")),
    )
}
