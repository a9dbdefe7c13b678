//! The CUDA backend: runs a generated kernel on an NVIDIA GPU through the CUDA driver API
//! (cudarc's raw `sys` bindings, loaded at run time, so the project builds and runs with no
//! CUDA installed). This is the only module that uses cudarc or `unsafe`.
//!
//! # Code map
//!
//! Pure parts (no driver calls; unit-tested without a GPU):
//! - `support`: the driver, compute-capability and PTX-ISA requirements, JIT log text;
//! - `config`: launch configuration checked against the device, cluster mode, the device's
//!   limits (an H100 SXM and an H200 as models);
//! - `args`: the kernel arguments, built from the kernel's parameter list (buffers, seed,
//!   texture and surface objects);
//! - `occupancy`: CTAs per SM from a kernel's threads, registers and shared memory, and the
//!   grid that fills the GPU in whole clusters;
//! - `seeds`: per-launch seeds from the run's seed and the test's name (replayable placement);
//! - `schedule`: how many launches to enqueue between two host synchronisations;
//! - `submit`: a batch's driver calls as data (direct launches, graph replays, the histogram
//!   read), so their count per launch is tested;
//! - `stats`: a test's launch timing (GPU and host time per launch) and driver calls;
//! - `tally`: decoding of the device histogram, the checksum and the stress self-test;
//! - `options`: the backend's `-o key=value` options;
//! - `provenance`: device facts as provenance entries;
//! - `compiler`: the driver's JIT or a toolchain store's ptxas (its cubin made offline);
//! - `textures`: the descriptors of the texture object over the memory buffer and of the
//!   CUDA array and surface object of surface-only locations, with the device's limits.
//!
//! Driver parts: `driver` (detection, the process-wide device, sticky errors), `module` (JIT
//! with logs, cubin kept), `buffers` (allocated and zeroed once, on the run's stream),
//! `objects` (the texture and surface objects, destroyed after the stream drains),
//! `launch` (`cuLaunchKernelEx`, the argument list built once, events), `graph` (k launches
//! captured once into a CUDA graph, replayed by one `cuGraphLaunch`), `submitter` (a batch's
//! plan carried out, falling back to direct launches; its logic is tested with a driver
//! double), `wait` (bounded waits on the stream), `runner` (the
//! launch loop).
//!
//! # Invariants
//!
//! - No driver call before `sys::is_culib_present()` says `libcuda` loads and the library is
//!   found to export every function the backend calls (`driver::SYMBOLS`; cudarc would panic
//!   at the first call of a missing one); every failure is a one-line message naming the
//!   CUresult (`{:?}` of `DriverError.0`), never a panic.
//! - Per launch the host does no work beyond submitting it: two kernels (`litmus_test`,
//!   `litmus_collect`) with the same arguments every time, or a share of one graph replay;
//!   buffers are zeroed once per test, the device resets its own state and derives its seeds,
//!   and the histogram is read back once per batch (about every 0.1 s). A graph that cannot be
//!   captured or instantiated falls back to direct launches, recorded, never failing the test.
//! - Launch `i` of a test gets seed `LaunchSeeds::new(run seed, test name)[i]`, so `--seed` and
//!   `--replay` reproduce every placement and stress draw. The device derives it from the seed
//!   state the kernels take and the launch index in the Sync buffer, so every launch of a test
//!   passes the same arguments; the host draws the same seeds for the stress self-test.
//! - No host wait is unbounded: the stream is polled until the test's deadline; a test that
//!   runs past it ends as timed out, a sticky error as a device error, and either loses the
//!   device for the rest of the process (nothing more is launched or freed; the rest of the
//!   batch runs in a fresh process).
//! - A test's counts are returned only if `counted + skipped == checked == instances ×
//!   launches`, no instance is incomplete, and stress that any launch drew shows in the
//!   stress counter; otherwise the test fails with the reason.

mod args;
mod buffers;
pub mod compiler;
mod config;
mod driver;
mod fit;
mod graph;
mod launch;
mod marks;
mod module;
mod objects;
pub mod occupancy;
mod options;
mod provenance;
mod runner;
pub mod sass_check;
mod schedule;
mod seeds;
mod stats;
pub mod submit;
mod submitter;
mod support;
mod tally;
mod textures;
mod views;
mod wait;

pub use args::ArgValue;
pub use config::{ClusterMode, DeviceLimits, LaunchPlan};
pub use driver::SYMBOLS as DRIVER_SYMBOLS;
pub use options::{CudaOptions, DEFAULT_WAIT_S, KEYS};
pub use provenance::DeviceInfo;
pub use runner::Program;
pub use seeds::LaunchSeeds;
pub use stats::LaunchStats;

use crate::codegen::{CodegenError, Kernel, Stress};
use crate::harness::{notes, BackendOptions};
use crate::harness::{Control, Counts, RunError, RunInfo, RunParams, TestRun};
use crate::litmus::ast::Test;
use occupancy::FullGrid;
use runner::Compiled;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The device `ordinal` as the backend would use it, or a one-line reason it cannot: no driver
/// library, a driver without a device, an unsupported driver or compute capability.
pub fn detect(ordinal: i32) -> Result<DeviceInfo, String> {
    driver::gpu(ordinal).map(|g| g.info.clone())
}

/// Whether the backend can run here (on device 0), and on what: `Ok` carries a one-line
/// description of the GPU, `Err` the one-line reason.
pub fn status() -> Result<String, String> {
    detect(0).map(|d| d.describe())
}

/// Provenance of device 0 and of this build, for a run's record; when no GPU is usable, the
/// reason is recorded under `cuda_error`.
pub fn provenance() -> BTreeMap<String, String> {
    let mut p = crate::harness::cpu::provenance();
    match detect(0) {
        Ok(d) => p.extend(d.provenance()),
        Err(e) => {
            p.insert("cuda_error".into(), e);
        }
    }
    p
}

/// Runs `test` on the GPU under `params`: generates its kernel for the stress preset
/// `params.stress` and runs it (see [`run_program`]).
pub fn run(test: &Test, params: &RunParams, control: Control<'_>) -> Result<TestRun, RunError> {
    run_measured(test, params, control).map(|(run, _)| run)
}

/// [`run`], also returning the launch timing (for `bench gpu`).
pub fn run_measured(
    test: &Test,
    params: &RunParams,
    control: Control<'_>,
) -> Result<(TestRun, LaunchStats), RunError> {
    if let Some(why) = crate::harness::health::lost() {
        return Err(RunError::DeviceLost(why));
    }
    // A kernel whose barriers never complete would hang the GPU: refused before launch.
    crate::codegen::deadlock::check(test).map_err(|(_, why)| RunError::Unsupported(why))?;
    let sized = sized_kernel(test, params)?;
    let prog = program(test, &sized.kernel);
    let threads = test.threads.len();
    let mut ran = run_program(&prog, threads, params, control, sized.compiled)?;
    let p = &mut ran.0.info.provenance;
    if let Some(n) = sized.compiles {
        p.insert(notes::COMPILES.into(), n.to_string());
    }
    if let Some(ms) = sized.probe_ms {
        // What sizing the grid cost on top of the run's own JIT (`kernel.jit_wall_ms`).
        p.insert("kernel.probe_ms".into(), format!("{ms:.1}"));
    }
    Ok(ran)
}

/// A kernel ready to run: generated for its grid and, when the grid was sized on the device
/// from this very kernel, already loaded.
struct Sized {
    kernel: Kernel,
    compiled: Option<Compiled>,
    /// Times the test's kernel was compiled to size the grid and run (when sized).
    compiles: Option<u32>,
    /// Milliseconds of a load that only sized the grid (compiling included).
    probe_ms: Option<f64>,
}

impl Sized {
    /// `kernel` run on the grid it was generated for, sized on no device.
    fn as_is(kernel: Kernel) -> Sized {
        Sized {
            kernel,
            compiled: None,
            compiles: None,
            probe_ms: None,
        }
    }
}

/// `test`'s kernel under `stress`; what the code generator cannot express is `Unsupported`.
fn build_kernel(test: &Test, stress: &Stress) -> Result<Kernel, RunError> {
    crate::codegen::build(test, stress).map_err(|e| match e {
        CodegenError::Unsupported { .. } => RunError::Unsupported(e.to_string()),
        other => RunError::Failed(other.to_string()),
    })
}

/// What makes kernels of one preset take the same grid: the preset, the CTA shape, the
/// cluster, the dynamic shared memory (their registers and static shared memory nearly always
/// leave the grid as it is).
type GridKey = (String, [u32; 3], Option<[u32; 3]>, u32);

/// The full grid the last kernel of each kind filled, in this process.
static GRIDS: Mutex<BTreeMap<GridKey, FullGrid>> = Mutex::new(BTreeMap::new());

/// The kernel of `test` under `params.stress`, generated for a grid that fills the device
/// when the backend's `grid=fill` and the preset's own grid allow it
/// ([`occupancy::fills`]). A kernel is loaded to read its registers and shared memory, and
/// the grid follows from them. The first of its kind is the preset's kernel, loaded only for
/// that, then generated again for one full wave of CTAs (two compiles); later ones are
/// generated for the grid the last of their kind filled and loaded once, and run as loaded
/// when their own fit gives that grid again (else they too are generated again).
fn sized_kernel(test: &Test, params: &RunParams) -> Result<Sized, RunError> {
    let build = |stress: &Stress| build_kernel(test, stress);
    let kernel = build(&params.stress)?;
    let BackendOptions::Cuda(opts) = &params.options.backend else {
        return Ok(Sized::as_is(kernel));
    };
    if !opts.fill || !occupancy::fills(&params.stress) {
        return Ok(Sized::as_is(kernel));
    }
    let gpu = driver::gpu(opts.device).map_err(RunError::Failed)?;
    support::check_ptx_isa(kernel.ptx_version, gpu.info.driver_api)
        .map_err(RunError::Unsupported)?;
    let l = &kernel.layout.test_launch;
    let key = (
        params.stress.name.clone(),
        l.block,
        l.cluster,
        l.dynamic_shared_bytes,
    );
    let grids = || GRIDS.lock().unwrap_or_else(|p| p.into_inner());
    let guess = grids().get(&key).copied();
    let candidate = match guess {
        Some(g) => build(&occupancy::fill_stress(&params.stress, &g))?,
        None => kernel,
    };
    let started = std::time::Instant::now();
    let (fit, compiled) = runner::probe(gpu, &program(test, &candidate), opts)?;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    grids().insert(key, fit.grid);
    let sized = occupancy::fill_stress(&params.stress, &fit.grid);
    let grid = |s: &Stress| (s.testing_ctas, s.max_ctas);
    if grid(&sized) == grid(&candidate.stress) {
        return Ok(Sized {
            kernel: candidate,
            compiled: Some(compiled),
            compiles: Some(1),
            probe_ms: None,
        });
    }
    drop(compiled);
    Ok(Sized {
        kernel: build(&sized)?,
        compiled: None,
        compiles: Some(2),
        probe_ms: Some(ms),
    })
}

/// The runner's view of `test`'s generated `kernel`.
fn program<'a>(test: &'a Test, kernel: &'a Kernel) -> Program<'a> {
    Program {
        name: &test.name,
        kernel,
    }
}

/// Runs a generated kernel under `params` (options: see [`CudaOptions`]), loaded as
/// `compiled` when given, and returns its histogram with provenance, plus the launch timing.
///
/// The result satisfies `histogram.total() + info.skipped == info.instances`.
pub fn run_program(
    prog: &Program<'_>,
    roles: usize,
    params: &RunParams,
    control: Control<'_>,
    compiled: Option<Compiled>,
) -> Result<(TestRun, LaunchStats), RunError> {
    let BackendOptions::Cuda(opts) = &params.options.backend else {
        return Err(RunError::Failed(
            "the CUDA backend was given the CPU backend's options".into(),
        ));
    };
    let gpu = driver::gpu(opts.device).map_err(RunError::Failed)?;
    // A kernel newer than the driver's JIT cannot run on this machine: the test is skipped with
    // the reason, as any other construct the backend cannot run.
    support::check_ptx_isa(prog.kernel.ptx_version, gpu.info.driver_api)
        .map_err(RunError::Unsupported)?;
    let m = runner::execute(gpu, prog, params, opts, control, compiled).map_err(|e| match e {
        // A failure that came with a sticky error: the context is broken.
        RunError::Failed(why) if !driver::usable() => RunError::DeviceError(why),
        other => other,
    })?;
    let mut provenance = crate::harness::cpu::provenance();
    provenance.extend(gpu.info.provenance());
    provenance.extend(m.kernel);
    provenance.insert(notes::THREADS.into(), roles.to_string());
    let instances = m.counts.checked;
    let elapsed_s = m.stats.wall_s;
    Ok((
        TestRun {
            histogram: m.counts.histogram,
            parts: m.parts,
            info: RunInfo::new(
                "cuda",
                Counts {
                    instances,
                    skipped: m.counts.skipped,
                    elapsed_s,
                    partial: m.partial,
                },
                params.clone(),
                provenance,
            ),
        },
        m.stats,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_gives_a_one_line_reason_or_a_usable_gpu() {
        match detect(0) {
            Err(why) => {
                eprintln!("no usable GPU here, checking the reason: {why}");
                assert!(!why.is_empty());
                assert!(!why.contains('\n'), "reason spans lines: {why:?}");
                // The same reason every time: detection is cached, never retried into a panic.
                assert_eq!(detect(0).unwrap_err(), why);
                assert_eq!(status().unwrap_err(), why);
                assert_eq!(provenance().get("cuda_error"), Some(&why));
            }
            Ok(d) => {
                eprintln!("a GPU is present, checking the detected device instead: {d:?}");
                assert!(d.compute >= support::MIN_COMPUTE);
                assert!(d.sms > 0);
                assert!(status().unwrap().starts_with("GPU 0: "));
                assert_eq!(provenance()["gpu"], d.name);
            }
        }
        // A device number the machine cannot have is refused the same way, not with a panic.
        let e = detect(4096).unwrap_err();
        assert!(!e.contains('\n'), "{e:?}");
    }
}
