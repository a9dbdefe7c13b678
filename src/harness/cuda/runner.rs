//! The launch loop of one test: JIT and load the module, allocate the buffers, then enqueue
//! `litmus_test` + `litmus_collect` pairs, all with the same arguments (the device derives
//! each launch's seed), in batches; between batches read the device histogram once (progress,
//! Ctrl-C, budget). At the end the counts must pass the checksum and the stress self-test.

use super::args::KernelArgs;
use super::buffers::Buffers;
use super::compiler;
use super::config::{ClusterMode, LaunchPlan};
use super::driver::{self, Gpu};
use super::fit::{self, Fit};
use super::launch::{Args, Drain, Launcher, Timer};
use super::module::{function_attribute, Module};
use super::objects::Objects;
use super::options::CudaOptions;
use super::sass_check::Pending;
use super::schedule::Schedule;
use super::seeds::LaunchSeeds;
use super::stats::LaunchStats;
use super::submit;
use super::submitter::{Stream, Submitter};
use super::support;
use super::tally;
use crate::codegen::{BufferKind, DeviceCounts, Kernel};
use crate::harness::notes;
use crate::harness::parts::Parts;
use crate::harness::watchdog;
use crate::harness::{Budget, Control, Progress, RunError, RunParams};
use crate::litmus::{file_stem, fnv1a64};
use crate::outcome::Histogram;
use crate::sass::cubin::code_hash;
use cudarc::driver::sys::{CUfunction, CUfunction_attribute as FnAttr};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A generated kernel as the runner needs it.
pub struct Program<'a> {
    /// The test's name.
    pub name: &'a str,
    /// Its generated kernel: PTX, layout, incantations and roles.
    pub kernel: &'a Kernel,
}

/// A compiled, loaded module with the facts of its compilation (`kernel.compiler`, ...).
pub type Compiled = (Module, Vec<(String, String)>);

/// What a test's run produced.
pub struct Measured {
    /// Decoded, checked counts.
    pub counts: DeviceCounts,
    /// The histogram by consecutive launch batches.
    pub parts: Vec<Histogram>,
    /// Timing.
    pub stats: LaunchStats,
    /// Whether Ctrl-C stopped it early.
    pub partial: bool,
    /// Facts about the kernel: ISA, SASS hash, registers, launch shapes, JIT time.
    pub kernel: BTreeMap<String, String>,
}

/// Runs `prog` on `gpu` under `params`, with its module as `compiled` loaded it when given
/// (else compiled here). Every wait for the device ends by the test's deadline (its time
/// budget twice over plus 5 s, at least `opts.wait_s`): a test whose launches are still
/// running then ends as [`RunError::TimedOut`].
pub fn execute(
    gpu: &Gpu,
    prog: &Program<'_>,
    params: &RunParams,
    opts: &CudaOptions,
    control: Control<'_>,
    compiled: Option<Compiled>,
) -> Result<Measured, RunError> {
    let _owner = gpu.lock.lock().unwrap_or_else(|p| p.into_inner());
    let floor = Duration::from_secs_f64(opts.wait_s);
    let deadline = Instant::now() + watchdog::grace(params.budget.duration(), floor);
    let what = format!("{}'s launches", prog.name);
    gpu.bind()?;
    let layout = &prog.kernel.layout;
    let (loaded, mut kernel) = Loaded::new(gpu, prog, opts, compiled)?;
    // Made beside the launches, on the machine code that runs.
    let check = Pending::start(opts.sass_check, prog.kernel, &loaded.module.cubin);
    let buffers = Buffers::new(layout, gpu.info.ordinal, gpu.stream)?;
    // Dropped after `_drain` has waited for the launches, before `buffers`.
    let objects = Objects::new(layout, buffers.ptr(BufferKind::Memory), gpu.info.ordinal)?;
    if let Some(made) = objects.describe() {
        kernel.insert("kernel.objects".into(), made);
    }
    // Dropped before `objects`, `buffers` and `loaded`'s module: waits for queued launches on
    // every way out.
    let _drain = Drain(gpu.stream, deadline);
    let test = Launcher::new(loaded.test_fn, &loaded.test_plan, gpu.stream);
    let collect = Launcher::new(loaded.collect_fn, &loaded.collect_plan, gpu.stream);
    let mut seeds = LaunchSeeds::new(params.seed, prog.name);
    // The same arguments for every launch: each launch derives its seed on the device from the
    // seed state and the launch index, as `seeds` does here for the stress self-test.
    let args = KernelArgs::new(layout, |k| buffers.ptr(k), objects.handles(), seeds.state())?;
    let args = Args::new(args.values());
    // With every status word 0 the collect kernel counts nothing and writes the initial values;
    // it also advances the launch index to 1, the first test launch's.
    collect.launch(&args)?;
    buffers.read_histogram(gpu.stream, deadline, &what)?;
    let mut sub = Submitter::new(
        Stream::new(test, collect, &args, gpu.stream)?,
        opts.launch_mode,
        deadline,
        &what,
    );
    let run = Batches {
        gpu,
        prog,
        params,
        opts,
        loaded: &loaded,
        buffers: &buffers,
        args: &args,
        deadline,
        what: &what,
    };
    let done = run.all(&mut sub, &mut seeds, &mut kernel, control)?;
    let counts = tally::finish(layout, &done.words, done.stats.launches, done.expected)
        .map_err(|e| format!("{}: {e}", prog.name))?;
    record_launches(&mut kernel, &done, &counts, &sub);
    if let Some(verdict) = check.finish() {
        kernel.insert(notes::SASS_CHECK.into(), verdict);
    }
    Ok(Measured {
        counts,
        parts: done.parts.into_histograms(),
        stats: done.stats,
        partial: done.partial,
        kernel,
    })
}

/// A test's module, loaded, with its two kernels and how each is launched.
struct Loaded {
    /// Kept loaded while its functions run: the runner drops it last, after its `Drain`.
    module: Module,
    test_fn: CUfunction,
    collect_fn: CUfunction,
    test_plan: LaunchPlan,
    collect_plan: LaunchPlan,
}

impl Loaded {
    /// Compiles and loads `prog` for `gpu`, plans both launches, and records what the kernel
    /// is: its ISA, compiled size and hash, the JIT's time and log, its fit on the device.
    fn new(
        gpu: &Gpu,
        prog: &Program<'_>,
        opts: &CudaOptions,
        compiled: Option<Compiled>,
    ) -> Result<(Loaded, BTreeMap<String, String>), RunError> {
        let layout = &prog.kernel.layout;
        let (module, compiled) = match compiled {
            Some(c) => c,
            None => compiler::load(
                &prog.kernel.ptx,
                prog.name,
                gpu.info.compute,
                &opts.compiler,
            )?,
        };
        let mut kernel: BTreeMap<String, String> = compiled.into_iter().collect();
        if let Some(dir) = &opts.sass_dir {
            save_artifacts(dir, prog, &module)?;
        }
        let test_fn = module.function(&layout.test_launch.entry)?;
        let collect_fn = module.function(&layout.collect_launch.entry)?;
        let width = |f| function_attribute(f, FnAttr::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH);
        let limits = &gpu.info.limits;
        let test_plan = LaunchPlan::new(&layout.test_launch, limits, width(test_fn)? as u32)?;
        let collect_plan =
            LaunchPlan::new(&layout.collect_launch, limits, width(collect_fn)? as u32)?;
        code_facts(prog, &module, &mut kernel);
        let fit = fit::fit(test_fn, &test_plan, limits, gpu.stream)?;
        kernel.extend(fit.provenance(&test_plan, limits));
        kernel.insert(notes::TEST_LAUNCH.into(), test_plan.describe());
        kernel.insert("kernel.collect_launch".into(), collect_plan.describe());
        let instances = layout.instances.to_string();
        kernel.insert(notes::INSTANCES_PER_LAUNCH.into(), instances);
        let loaded = Loaded {
            module,
            test_fn,
            collect_fn,
            test_plan,
            collect_plan,
        };
        Ok((loaded, kernel))
    }
}

/// What `prog`'s compiled `module` is: the generator's notes, its ISA, its code's size and
/// hashes, the JIT's time and log.
fn code_facts(prog: &Program<'_>, module: &Module, kernel: &mut BTreeMap<String, String>) {
    if !prog.kernel.notes.is_empty() {
        let said = prog.kernel.notes.join(notes::KERNEL_NOTES_SEPARATOR);
        kernel.insert(notes::KERNEL_NOTES.into(), said);
    }
    let (major, minor) = prog.kernel.ptx_version;
    kernel.insert("kernel.ptx_isa".into(), format!("{major}.{minor}"));
    let sass_hash = format!("{:016x}", fnv1a64(&module.cubin));
    kernel.insert("kernel.sass_hash".into(), sass_hash);
    // The code apart from the file's metadata, so a JIT's cubin and ptxas's compare.
    if let Ok(code) = code_hash(&module.cubin) {
        kernel.insert(notes::CODE_HASH.into(), code);
    }
    kernel.insert("kernel.cubin_bytes".into(), module.cubin.len().to_string());
    let jit_ms = format!("{:.1}", module.jit_wall_ms);
    kernel.insert("kernel.jit_wall_ms".into(), jit_ms);
    if !module.info_log.is_empty() {
        let log = support::log_summary(&module.info_log, 6);
        kernel.insert("kernel.jit_log".into(), log);
    }
}

/// What the launch loop of one test works with.
struct Batches<'a> {
    gpu: &'a Gpu,
    prog: &'a Program<'a>,
    params: &'a RunParams,
    opts: &'a CudaOptions,
    loaded: &'a Loaded,
    buffers: &'a Buffers,
    args: &'a Args,
    deadline: Instant,
    what: &'a str,
}

/// What the launch loop measured.
struct Done {
    stats: LaunchStats,
    /// Whether any launch drew memory stress, and the stress operations it must have made.
    expected: (bool, u64),
    partial: bool,
    parts: Parts,
    /// The histogram buffer after the last launch.
    words: Vec<u64>,
}

impl Batches<'_> {
    /// Enqueues batches until the budget is spent (or Ctrl-C), reading the histogram between
    /// batches for progress, then reads it once more after the timing event.
    fn all(
        &self,
        sub: &mut Submitter<Stream<'_>>,
        seeds: &mut LaunchSeeds,
        kernel: &mut BTreeMap<String, String>,
        control: Control<'_>,
    ) -> Result<Done, RunError> {
        let (layout, stream) = (&self.prog.kernel.layout, self.gpu.stream);
        let schedule = Schedule::new(self.params.budget, layout.instances, self.opts.batch);
        let mut done = Done {
            stats: LaunchStats::default(),
            expected: (false, 0),
            partial: false,
            parts: Parts::default(),
            words: Vec::new(),
        };
        let mut batch_seeds = Vec::new();
        let mut before = Histogram::default();
        let timer = Timer::start(stream)?;
        let started = Instant::now();
        loop {
            let n = self.batch_size(&schedule, &done.stats, sub, started);
            if n == 0 {
                break;
            }
            if control.cancel.load(std::sync::atomic::Ordering::Relaxed) {
                done.partial = true;
                break;
            }
            batch_seeds.clear();
            batch_seeds.extend(seeds.by_ref().take(n as usize));
            self.batch(n, sub, &mut done.stats, kernel)?;
            let (any, at_least) =
                tally::expected_stress(layout, &self.prog.kernel.stress, &batch_seeds);
            done.expected = (done.expected.0 || any, done.expected.1 + at_least);
            let words = self
                .buffers
                .read_histogram(stream, self.deadline, self.what)?;
            let snap = tally::snapshot(layout, &words)?;
            done.parts.push(&tally::since(&snap.histogram, &before));
            before = snap.histogram.clone();
            (control.progress)(&Progress {
                instances: snap.checked,
                elapsed_s: started.elapsed().as_secs_f64(),
                histogram: &snap.histogram,
            });
        }
        done.stats.gpu_ms = f64::from(timer.stop(stream, self.deadline)?);
        done.words = self
            .buffers
            .read_histogram(stream, self.deadline, self.what)?;
        done.stats.wall_s = started.elapsed().as_secs_f64();
        Ok(done)
    }

    /// Launches in the next batch: the schedule's; after the first (timed) batch of a time
    /// budget, in whole graphs.
    fn batch_size(
        &self,
        schedule: &Schedule,
        stats: &LaunchStats,
        sub: &Submitter<Stream<'_>>,
        started: Instant,
    ) -> u64 {
        let n = schedule.next_batch(stats.launches, started.elapsed().as_secs_f64());
        let timed = matches!(self.params.budget, Budget::Seconds(_));
        if stats.launches > 0 && self.opts.batch.is_none() && timed {
            return sub.mode.round_up(n);
        }
        n
    }

    /// Enqueues one batch of `n` launches. The very first launch settles how the cluster
    /// dimension is given (see [`first_launch`]), before a graph is captured with that
    /// launcher.
    fn batch(
        &self,
        n: u64,
        sub: &mut Submitter<Stream<'_>>,
        stats: &mut LaunchStats,
        kernel: &mut BTreeMap<String, String>,
    ) -> Result<(), RunError> {
        let mut left = n;
        if stats.launches == 0 {
            let d = &mut sub.device;
            let (loaded, gpu) = (self.loaded, self.gpu);
            first_launch(&mut d.test, loaded, gpu, self.args, kernel)?;
            d.collect.launch(self.args)?;
            stats.launch_calls += 2;
            stats.launches += 1;
            left -= 1;
        }
        let submitted = sub.submit(&submit::batch(left, sub.mode), stats);
        if let Err(RunError::TimedOut(why)) = &submitted {
            // The launches may still be running, as after any wait that gave up.
            driver::lose_device(why);
        }
        submitted
    }
}

/// Records how the launches went: their number, the stress operations counted and expected,
/// the GPU time, the host's cost per launch, the launch mode (and why graphs were given up).
fn record_launches(
    kernel: &mut BTreeMap<String, String>,
    done: &Done,
    counts: &DeviceCounts,
    sub: &Submitter<Stream<'_>>,
) {
    let stats = &done.stats;
    kernel.insert(notes::LAUNCHES.into(), stats.launches.to_string());
    kernel.insert(notes::STRESS_OPS.into(), counts.stress_ops.to_string());
    kernel.insert(notes::STRESS_OPS_MIN.into(), done.expected.1.to_string());
    kernel.insert(notes::GPU_MS.into(), format!("{:.3}", stats.gpu_ms));
    if let Some(us) = stats.host_us_per_launch() {
        kernel.insert(notes::HOST_US_PER_LAUNCH.into(), format!("{us:.2}"));
    }
    kernel.insert(notes::LAUNCH_MODE.into(), sub.mode_name());
    if let Some(why) = &sub.fallback {
        kernel.insert(notes::GRAPH_FALLBACK.into(), support::log_summary(why, 2));
    }
    let per_launch = stats.launch_calls as f64 / stats.launches.max(1) as f64;
    kernel.insert(
        "kernel.launch_calls_per_launch".into(),
        format!("{per_launch:.4}"),
    );
}

/// How `prog`'s test kernel sits on `gpu`: compiled and loaded as for a run, nothing launched
/// (the run then sizes its grid from it, see [`super::occupancy::fill_stress`]); with the
/// module, which [`execute`] takes when `prog` is the kernel that runs.
pub fn probe(
    gpu: &Gpu,
    prog: &Program<'_>,
    opts: &CudaOptions,
) -> Result<(Fit, Compiled), RunError> {
    let _owner = gpu.lock.lock().unwrap_or_else(|p| p.into_inner());
    gpu.bind()?;
    let compiled = compiler::load(
        &prog.kernel.ptx,
        prog.name,
        gpu.info.compute,
        &opts.compiler,
    )?;
    let func = compiled.0.function(&prog.kernel.layout.test_launch.entry)?;
    let width = function_attribute(func, FnAttr::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH)?;
    let plan = LaunchPlan::new(
        &prog.kernel.layout.test_launch,
        &gpu.info.limits,
        width as u32,
    )?;
    let fit = fit::fit(func, &plan, &gpu.info.limits, gpu.stream)?;
    Ok((fit, compiled))
}

/// Makes the first launch of the test kernel. A kernel that states its cluster size is launched
/// without the cluster attribute, as CUDA launches `__cluster_dims__` kernels; should a driver
/// insist on the attribute, the launch is repeated once with it (the same dimensions), and that
/// launcher replaces `test`.
fn first_launch(
    test: &mut Launcher,
    loaded: &Loaded,
    gpu: &Gpu,
    args: &Args,
    kernel: &mut BTreeMap<String, String>,
) -> Result<(), String> {
    let Err(first) = test.launch(args) else {
        return Ok(());
    };
    let ClusterMode::CompileTime(dim) = loaded.test_plan.cluster else {
        return Err(first);
    };
    let retry = LaunchPlan {
        cluster: ClusterMode::Attribute(dim),
        ..loaded.test_plan.clone()
    };
    let again = Launcher::new(loaded.test_fn, &retry, gpu.stream);
    again
        .launch(args)
        .map_err(|e| format!("{first}; again with the cluster attribute: {e}"))?;
    kernel.insert(notes::TEST_LAUNCH.into(), retry.describe());
    *test = again;
    Ok(())
}

/// Saves the cubin the driver JIT'd, its JIT log and the PTX under `dir`, named after the test
/// and the PTX's hash (same-named tests of different folders, or one test under several
/// presets, keep apart).
fn save_artifacts(
    dir: &std::path::Path,
    prog: &Program<'_>,
    module: &Module,
) -> Result<(), String> {
    let stem = format!(
        "{}-{:08x}",
        file_stem(prog.name),
        fnv1a64(prog.kernel.ptx.as_bytes()) as u32
    );
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let write = |ext: &str, bytes: &[u8]| {
        let p = dir.join(format!("{stem}.{ext}"));
        std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))
    };
    write("cubin", &module.cubin)?;
    write("ptx", prog.kernel.ptx.as_bytes())?;
    write("jit.log", module.info_log.as_bytes())
}
