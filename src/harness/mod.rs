//! Backends that run a test many times on real hardware and count its final states.
//!
//! The types here are shared by every backend (the CPU backend in [`cpu`], the CUDA backend in
//! [`cuda`]): a backend takes a [`Test`](crate::litmus::ast::Test) and [`RunParams`] and returns a
//! [`TestRun`], the observed [`Histogram`] plus [`RunInfo`] (how many instances, how fast, on
//! what). Backends never judge outcomes: the model and `verdict` do that from the histogram.
//!
//! Invariant of every [`TestRun`]: `histogram.total() + info.skipped == info.instances`.

pub mod cpu;
// The driver API is C: every call into it is `unsafe` (see the module's safety notes).
#[allow(unsafe_code)]
pub mod cuda;
pub mod fault;
pub mod health;
pub mod notes;
pub mod option_value;
pub mod options;
pub mod parts;
pub mod watchdog;

use crate::codegen::Stress;
use crate::outcome::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Which backend runs the tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The GPU when one is usable, else the CPU (saying so on stderr).
    Auto,
    /// The CPU's own threads with Rust atomics.
    Cpu,
    /// An NVIDIA GPU through the CUDA driver.
    Cuda,
}

/// How long a test runs: a number of instances, or a wall-clock budget.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Budget {
    /// Run at least this many instances (backends round up to whole rounds/launches).
    Instances(u64),
    /// Run whole rounds/launches until this many seconds have passed.
    Seconds(f64),
}

/// The options of the backend that runs a test.
#[derive(Clone, Debug, PartialEq)]
pub enum BackendOptions {
    /// The CPU backend's.
    Cpu(cpu::CpuOptions),
    /// The CUDA backend's.
    Cuda(cuda::CudaOptions),
}

impl Default for BackendOptions {
    fn default() -> BackendOptions {
        BackendOptions::Cpu(cpu::CpuOptions::default())
    }
}

/// What `-o key=value` options say: the backend's own options and a fault to inject, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// The backend's options.
    pub backend: BackendOptions,
    /// A hang or device fault to inject into one test (`inject=...`), for the tests of the
    /// recovery paths.
    pub inject: Option<fault::Injection>,
}

/// Everything that decides how a test is run; recorded in results so a run can be replayed.
#[derive(Clone, Debug, PartialEq)]
pub struct RunParams {
    /// How long to run each test.
    pub budget: Budget,
    /// Seed of every random choice a backend makes (placement, role-to-thread assignment).
    pub seed: u64,
    /// Stress preset (`basic`, `interleave`, `stress`, `random-<seed>`), recorded by name; a
    /// backend records knobs it ignores.
    pub stress: Stress,
    /// Backend options, parsed for the backend that runs (recorded as `key=value` pairs).
    pub options: Options,
}

/// How a run went: size, speed, and the machine it ran on.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    /// The backend that ran it (`cpu`, `cuda`).
    pub backend: String,
    /// Instances started, counted or skipped.
    pub instances: u64,
    /// Instances the backend could not complete faithfully (e.g. a bounded wait ran out); they
    /// are not in the histogram.
    pub skipped: u64,
    /// Wall-clock seconds spent running (setup excluded).
    pub elapsed_s: f64,
    /// `instances / elapsed_s`.
    pub instances_per_s: f64,
    /// True when the run stopped early (interrupted) and counts only what ran.
    pub partial: bool,
    /// The parameters it ran with, after the backend resolved its defaults.
    pub params: RunParams,
    /// Facts about the machine and build: CPU model, cores, OS, compiler, git revision, ...
    pub provenance: BTreeMap<String, String>,
}

/// One test's observed histogram and how it was obtained.
#[derive(Clone, Debug, PartialEq)]
pub struct TestRun {
    /// Final states seen, counted.
    pub histogram: Histogram,
    /// The same counts in consecutive parts of whole rounds or launch batches ([`parts`]);
    /// they add up to `histogram`.
    pub parts: Vec<Histogram>,
    /// Size, speed, provenance.
    pub info: RunInfo,
}

/// A snapshot a backend hands to the caller while it runs (for progress bars).
#[derive(Debug)]
pub struct Progress<'a> {
    /// Instances run so far.
    pub instances: u64,
    /// Seconds since the run started.
    pub elapsed_s: f64,
    /// Counts so far.
    pub histogram: &'a Histogram,
}

/// What a backend needs from its caller besides the test and parameters.
pub struct Control<'a> {
    /// Set (by a SIGINT handler, say) to stop after the current round; the result is partial.
    pub cancel: &'a AtomicBool,
    /// Called now and then (about every 100 ms) and once at the end.
    pub progress: &'a mut dyn FnMut(&Progress<'_>),
}

/// Why a backend did not run a test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The backend cannot run this test faithfully; the reason names the construct.
    Unsupported(String),
    /// Bad parameters or a failure of the machine.
    Failed(String),
    /// A wait on the device ran past its deadline; the device is lost for this process.
    TimedOut(String),
    /// The device reported a sticky error; the device is lost for this process.
    DeviceError(String),
    /// The device was already lost by an earlier test; this test did not start and must run
    /// in a fresh process.
    DeviceLost(String),
}

impl From<String> for RunError {
    /// A failure message, as most backend steps phrase their errors.
    fn from(why: String) -> RunError {
        RunError::Failed(why)
    }
}

impl From<watchdog::Stall> for RunError {
    fn from(s: watchdog::Stall) -> RunError {
        match s {
            watchdog::Stall::TimedOut(m) => RunError::TimedOut(m),
            watchdog::Stall::Fault(m) => RunError::DeviceError(m),
        }
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Unsupported(why) => write!(f, "not runnable on this backend: {why}"),
            RunError::Failed(why) => f.write_str(why),
            RunError::TimedOut(why) => write!(f, "timed out: {why}"),
            RunError::DeviceError(why) => write!(f, "device error: {why}"),
            RunError::DeviceLost(why) => write!(f, "device unusable in this process: {why}"),
        }
    }
}

impl std::error::Error for RunError {}

impl Backend {
    /// The lowercase name used on the command line and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
        }
    }
}

impl FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "cuda" => Ok(Backend::Cuda),
            other => Err(format!(
                "unknown backend `{other}` (expected auto, cpu or cuda)"
            )),
        }
    }
}

impl Budget {
    /// The wall-clock limit, when the budget is one.
    pub fn duration(&self) -> Option<Duration> {
        match *self {
            Budget::Seconds(s) => Some(Duration::from_secs_f64(s.max(0.0))),
            Budget::Instances(_) => None,
        }
    }
}

/// What a backend counted in one run of a test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Counts {
    /// Instances started, counted or skipped.
    pub instances: u64,
    /// Instances that could not complete faithfully.
    pub skipped: u64,
    /// Wall-clock seconds spent running.
    pub elapsed_s: f64,
    /// Whether the run stopped early.
    pub partial: bool,
}

impl RunInfo {
    /// How a run on `backend` went, its rate derived from its counts.
    pub fn new(
        backend: &str,
        counts: Counts,
        params: RunParams,
        provenance: BTreeMap<String, String>,
    ) -> RunInfo {
        let instances_per_s = if counts.elapsed_s > 0.0 {
            counts.instances as f64 / counts.elapsed_s
        } else {
            0.0
        };
        RunInfo {
            backend: backend.into(),
            instances: counts.instances,
            skipped: counts.skipped,
            elapsed_s: counts.elapsed_s,
            instances_per_s,
            partial: counts.partial,
            params,
            provenance,
        }
    }
}

impl RunParams {
    /// Parameters with default preset and no options.
    pub fn new(budget: Budget, seed: u64) -> RunParams {
        RunParams {
            budget,
            seed,
            stress: Stress::basic(),
            options: Options {
                backend: BackendOptions::default(),
                inject: None,
            },
        }
    }
}

/// Whether the CUDA backend can run here; `Err` says why not (one line).
pub fn cuda_status() -> Result<(), String> {
    cuda::status().map(|_| ())
}

/// Runs `test` on `backend` (which must be resolved: not `Auto`). A test that times out or
/// meets a device error loses the device for the rest of the process ([`health`]); later tests
/// are then refused with [`RunError::DeviceLost`] without touching it.
pub fn run(
    backend: Backend,
    test: &crate::litmus::ast::Test,
    params: &RunParams,
    control: Control<'_>,
) -> Result<TestRun, RunError> {
    if let Some(why) = health::lost() {
        return Err(RunError::DeviceLost(why));
    }
    let injected = params.options.inject.as_ref();
    let r = match injected.and_then(|i| fault::apply(i, &test.name)) {
        Some(e) => Err(e),
        None => match backend {
            Backend::Cpu => cpu::run(test, params, control),
            Backend::Cuda => cuda::run(test, params, control),
            Backend::Auto => Err(RunError::Failed(
                "the backend must be resolved before running".into(),
            )),
        },
    };
    if let Err(RunError::TimedOut(why) | RunError::DeviceError(why)) = &r {
        health::lose(&format!("{}: {why}", test.name));
    }
    r
}

/// Provenance of the machine `backend` runs on (before any test runs).
pub fn provenance(backend: Backend) -> BTreeMap<String, String> {
    match backend {
        Backend::Cpu | Backend::Auto => cpu::provenance(),
        Backend::Cuda => cuda::provenance(),
    }
}
