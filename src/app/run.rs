//! `ptx-litmus run`: load tests → model::check → backend → judge → result set → summary.
//!
//! Exit codes: 1 when some test showed a forbidden or unexpected outcome (a violation, even if
//! other tests had errors: the finding matters most), else 4 when the device became unusable
//! (a test timed out or met a sticky device error) and the rest of the batch did not run, else
//! 2 when a test could not be read or a backend failed, else 3 when the run stopped early (a
//! signal), else 0. A test the model or
//! the backend cannot handle is reported, recorded in `skipped_tests`, and the batch goes on.
//! Each test's record is written as the test finishes; SIGINT, SIGTERM or SIGHUP stops the
//! running test after its current round, and the set is completed, marked `"partial": true`.

use super::bar::{style, Live};
use super::run_model::RunModel;
use super::{bounded_check, interrupt, options_map, suite, AppError, Exit};
use crate::cli::RunArgs;
use crate::harness::cpu::load as cpu_load;
use crate::harness::cuda::compiler::Compiler;
use crate::harness::{self, Backend, Budget, Control, RunError, RunParams, TestRun};
use crate::harness::{notes, BackendOptions, Options};
use crate::litmus::{self, ast::Test};
use crate::model::ModelVerdict;
use crate::report;
use crate::results::{self, Parameters, RunRecord, Shard, SkippedTest, TestRecord, RUN_FORMAT};
use crate::verdict::{Class, Status};
use indicatif::ProgressBar;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Instances per test when neither `--instances` nor `--time` is given.
pub const DEFAULT_INSTANCES: u64 = 100_000;

/// What to run, from the command line or from a recorded `run.json`.
struct Plan {
    paths: Vec<PathBuf>,
    backend: Backend,
    params: RunParams,
    /// The `-o key=value` options (or a recorded run's), parsed once the backend is known.
    options: BTreeMap<String, String>,
    shard: Option<Shard>,
    /// The model that judges: `--model`, or the recorded one on replay.
    model: RunModel,
}

/// Runs `run`.
pub fn run(args: &RunArgs) -> Result<Exit, AppError> {
    let mut plan = match &args.replay {
        Some(path) => replay_plan(path, args)?,
        None => cli_plan(args)?,
    };
    let backend = choose_backend(plan.backend)?;
    backend_options(args, &mut plan, backend)?;
    let limit = bounded_check::timeout(args.timeout)?;
    let (files, unreadable) = select_files(&plan, args.replay.is_some())?;
    let mut record = new_record(args, &plan, backend, &files)?;
    let dir = match args.run_id {
        Some(_) => results::default_dir(&args.results, &record),
        None => results::fresh_dir(&args.results, &mut record),
    };
    // The target is checked and locked before the first test runs, so that a bad --out, an
    // existing set or a concurrent run costs nothing.
    let writer = results::SetWriter::create(&dir, &record, args.force)?;
    let per_test = match plan.params.budget {
        Budget::Seconds(s) => Some(s),
        Budget::Instances(_) => None,
    };
    let mut batch = Batch::new(
        record,
        writer,
        backend,
        args.quiet,
        files.len(),
        plan.model,
        per_test,
    );
    for (path, why) in unreadable {
        batch.errors += 1;
        batch.skip(&path, why);
    }
    batch.run_params = run_params(&plan.params, &dir);
    batch.model_limit = limit;
    batch.json = args.json;
    if !args.json {
        batch.start_table(&files);
    }
    interrupt::install();
    for path in &files {
        if interrupt::requested() || batch.lost.is_some() {
            break;
        }
        batch.run_test(path)?;
        batch.lost = batch.lost.take().or_else(harness::health::lost);
    }
    batch.finish(&dir)
}

/// Parses the plan's backend options for `backend`: a tuned file's CPU options under any
/// `-o` of the same key, and a bad option (or a compiler for the CPU) is one error before
/// anything runs, not a refusal per test.
fn backend_options(args: &RunArgs, plan: &mut Plan, backend: Backend) -> Result<(), AppError> {
    if backend == Backend::Cpu && args.replay.is_none() {
        for (k, v) in super::stress::tuned_cpu_options(&args.stress)? {
            plan.options.entry(k).or_insert(v);
        }
    }
    if backend != Backend::Cuda && plan.options.contains_key("compiler") {
        return Err(format!(
            "--compiler: only the CUDA backend compiles PTX (this run uses the {} backend)",
            backend.as_str()
        )
        .into());
    }
    plan.params.options =
        Options::parse(backend, &plan.options).map_err(|e| match &args.replay {
            Some(path) => format!("{}: option {e}", path.display()),
            None => format!("-o: {e}"),
        })?;
    if let BackendOptions::Cuda(o) = &plan.params.options.backend {
        o.compiler.resolve().map_err(|e| format!("-o: {e}"))?;
    }
    Ok(())
}

/// The run's record before any test: its id (`--run-id`, else time and seed), command,
/// parameters, provenance, model, shard and test paths.
fn new_record(
    args: &RunArgs,
    plan: &Plan,
    backend: Backend,
    files: &[PathBuf],
) -> Result<RunRecord, AppError> {
    let now = unix_secs();
    let run_id = args
        .run_id
        .clone()
        .unwrap_or_else(|| results::time::run_id(now, plan.params.seed));
    let mut record = RunRecord::new(
        run_id,
        backend.as_str(),
        std::env::args().collect(),
        parameters(&plan.params, backend)?,
        results::time::rfc3339(now),
    );
    record.provenance = harness::provenance(backend);
    plan.model.id.record(&mut record.provenance);
    if backend == Backend::Cpu {
        warn_if_loaded(&mut record);
    }
    record.shard = plan.shard;
    record.test_paths = files.iter().map(|p| p.display().to_string()).collect();
    if litmus::file_stem(&record.run_id).len() > results::MAX_STEM_BYTES {
        return Err(format!(
            "--run-id: longer than {} bytes; it names the result set's directory",
            results::MAX_STEM_BYTES
        )
        .into());
    }
    Ok(record)
}

/// The test files of the plan (none named: the built-in suite; a recorded `litmus/...` path
/// or a test name found in the suite wherever it is), and the paths that could not be found
/// or searched (each with the reason); one missing path does not stop the others.
fn select_files(plan: &Plan, replay: bool) -> Result<suite::Resolved, AppError> {
    if replay {
        let files = plan
            .paths
            .iter()
            .map(|p| suite::resolve_one(p).unwrap_or_else(|_| p.clone()));
        return Ok((files.collect(), Vec::new()));
    }
    let mut found = Vec::new();
    let (paths, mut unreadable) = suite::resolve_batch(&plan.paths)?;
    for p in &paths {
        match litmus::discover(std::slice::from_ref(p)) {
            Ok(f) => found.extend(f),
            Err(e) => unreadable.push((p.clone(), e.to_string())),
        }
    }
    let found = litmus::dedup_files(found);
    let files = match plan.shard {
        Some(s) => {
            let shown: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
            s.select(&shown).into_iter().map(PathBuf::from).collect()
        }
        None => found,
    };
    Ok((files, unreadable))
}

/// The backend parameters of every test: the GPU backend keeps each kernel's driver-compiled
/// cubin, PTX and JIT log with the result set, for `cuobjdump -sass` (the directory is not a
/// parameter of the run: replays write their own).
fn run_params(params: &RunParams, dir: &Path) -> RunParams {
    let mut p = params.clone();
    if let BackendOptions::Cuda(o) = &mut p.options.backend {
        o.sass_dir.get_or_insert_with(|| dir.join("sass"));
    }
    p
}

/// A run in progress: its record, the result set being written, and what went wrong so far.
struct Batch {
    record: RunRecord,
    writer: results::SetWriter,
    backend: Backend,
    run_params: RunParams,
    model: RunModel,
    model_limit: std::time::Duration,
    bar: ProgressBar,
    started: Instant,
    errors: usize,
    violations: u64,
    /// Why the device became unusable, when it did: the batch stops there.
    lost: Option<String>,
    /// JSON lines on stdout (each test's record, then the run's) instead of the table.
    json: bool,
    /// The summary table's layout, once its header is printed: rows follow as tests finish.
    table: Option<report::summary::Layout>,
}

impl Batch {
    fn new(
        record: RunRecord,
        writer: results::SetWriter,
        backend: Backend,
        quiet: bool,
        tests: usize,
        model: RunModel,
        per_test: Option<f64>,
    ) -> Batch {
        Batch {
            record,
            writer,
            backend,
            run_params: RunParams::new(Budget::Instances(0), 0),
            model,
            model_limit: std::time::Duration::MAX,
            bar: progress_bar(tests as u64, quiet, per_test),
            started: Instant::now(),
            errors: 0,
            violations: 0,
            lost: None,
            json: false,
            table: None,
        }
    }

    /// Prints the run's title and the table's header, fitted to the terminal width with room
    /// for names as long as the files' stems.
    fn start_table(&mut self, files: &[PathBuf]) {
        let longest = files
            .iter()
            .filter_map(|p| p.file_stem())
            .map(|s| s.to_string_lossy().chars().count())
            .max()
            .unwrap_or(4);
        let cpu = self.backend == Backend::Cpu;
        let layout = report::summary::Layout::fit(crate::text::width(), longest, cpu);
        let head = format!(
            "{}{}",
            report::summary::title(&self.record),
            layout.header()
        );
        self.bar.suspend(|| print!("{head}"));
        self.table = Some(layout);
    }

    /// Reports a test that did not run and records it in `skipped_tests`.
    fn skip(&mut self, path: &Path, reason: String) {
        let shown = path.display().to_string();
        // A parse error already starts with `path:line:col`.
        let line = if reason.starts_with(&shown) {
            reason.clone()
        } else {
            format!("{shown}: {reason}")
        };
        self.bar.suspend(|| eprintln!("ptx-litmus: skip {line}"));
        self.record.skipped_tests.push(SkippedTest {
            path: shown,
            reason,
        });
        self.bar.inc(1);
    }

    /// Checks, runs and judges one test, and writes its record at once. Only a failed write
    /// ends the batch: every other failure is reported and skipped.
    fn run_test(&mut self, path: &Path) -> Result<(), AppError> {
        let Some((test, verdict, compared)) = self.judge(path) else {
            return self.checkpoint();
        };
        let Some(observed) = self.observe(path, &test, &verdict) else {
            return self.checkpoint();
        };
        let mut rec = test_record(&test, &path.display().to_string(), &verdict, &observed)?;
        if let Some(c) = compared {
            rec.notes.insert("model.vs_built_in".into(), c);
        }
        if rec.verdict.status == Status::Violation {
            let label = self.model.id.label();
            let ptx = self.model.is_ptx();
            self.bar
                .suspend(|| report_violation(&rec, self.backend, &label, ptx));
            self.violations += rec.verdict.counts.forbidden + rec.verdict.counts.unexpected;
        }
        if observed.info.partial {
            self.record.partial = true;
        }
        if self.json {
            let line = serde_json::to_string(&rec)?;
            self.bar.suspend(|| println!("{line}"));
        } else if let Some(layout) = &self.table {
            let row = layout.row(&rec);
            self.bar.suspend(|| print!("{row}"));
        }
        self.writer.add(rec).map_err(|e| self.stopped_writing(e))?;
        self.bar.inc(1);
        self.checkpoint()
    }

    /// A write that failed mid-run, with what the run keeps: it stops there, since a disk
    /// that refused one file would refuse the next.
    fn stopped_writing(&self, e: results::ResultsError) -> AppError {
        let dir = self.writer.dir().display();
        let kept = self.writer.tests().len();
        let message = format!(
            "{e}\nthe run stops here: the {kept} test record(s) written before it are kept in \
             {dir}, the set marked partial"
        );
        message.into()
    }

    /// The test at `path`, parsed, linted and checked by the model, with the comparison of a
    /// cat model against the built-in checker; `None` (the test skipped, saying why) when it
    /// does not parse, the model gives no verdict or no execution of it completes.
    fn judge(&mut self, path: &Path) -> Option<(Test, ModelVerdict, Option<String>)> {
        let test = match litmus::parse_file(path) {
            Ok(t) => t,
            Err(e) => {
                self.errors += 1;
                self.skip(path, e.to_string());
                return None;
            }
        };
        for w in litmus::lint::warnings(&test) {
            self.bar
                .suspend(|| eprintln!("ptx-litmus: warning: {}: {w}", path.display()));
        }
        self.bar
            .set_message(format!("{}: the model's check", test.name));
        let (verdict, compared) = match self.model.verdict(&test, self.model_limit) {
            Ok(v) => v,
            Err(why) => {
                self.skip(path, why);
                return None;
            }
        };
        if verdict.allowed.is_empty() && !verdict.hangs.is_empty() {
            // Every execution waits for ever at a barrier: running it could only hang.
            let why = format!("no execution completes: {}", verdict.hangs.join("; "));
            self.skip(path, why);
            return None;
        }
        Some((test, verdict, compared))
    }

    /// Runs `test` on the backend; `None` (the test skipped with the backend's reason, or the
    /// device marked lost) when it did not complete.
    fn observe(&mut self, path: &Path, test: &Test, verdict: &ModelVerdict) -> Option<TestRun> {
        let b = self.backend.as_str();
        let failed = match run_one(
            self.backend,
            test,
            verdict,
            &self.run_params,
            self.violations,
            &self.bar,
        ) {
            Ok(r) => return Some(r),
            Err(RunError::Unsupported(why)) => {
                self.skip(path, format!("{b} backend: {why}"));
                return None;
            }
            Err(RunError::DeviceLost(why)) => {
                self.lost = Some(why);
                return None;
            }
            Err(RunError::Failed(why)) => format!("{b} backend: {why}"),
            // The reason starts with `timed out:` or `device error:`, as `campaign` reads it.
            Err(e @ (RunError::TimedOut(_) | RunError::DeviceError(_))) => e.to_string(),
        };
        self.errors += 1;
        self.skip(path, failed);
        None
    }

    /// Rewrites `run.json` with the skipped tests and time so far.
    fn checkpoint(&mut self) -> Result<(), AppError> {
        self.record.elapsed_s = self.started.elapsed().as_secs_f64();
        let written = self.writer.update(&self.record);
        written.map_err(|e| self.stopped_writing(e))
    }

    /// Completes the result set, prints the summary, and maps the outcome to the exit code.
    fn finish(mut self, dir: &Path) -> Result<Exit, AppError> {
        self.bar.finish_and_clear();
        let done = self.writer.tests().len() + self.record.skipped_tests.len();
        if interrupt::requested() || done < self.record.test_paths.len() {
            self.record.partial = true;
        }
        if let Some(why) = &self.lost {
            let left = self.record.test_paths.len().saturating_sub(done);
            eprintln!(
                "ptx-litmus: the device is unusable in this process ({why}); {left} test(s) \
                 not run: run them in a fresh process (`campaign run` does)"
            );
        }
        if let Some(sig) = interrupt::signal_name() {
            eprintln!(
                "ptx-litmus: {sig}: stopped; the result set keeps what was counted, marked partial"
            );
        }
        self.record.elapsed_s = self.started.elapsed().as_secs_f64();
        self.record.finished = results::time::rfc3339(unix_secs());
        let tests = self.writer.tests().to_vec();
        let partial = self.record.partial;
        self.writer.finish(&self.record)?;
        if self.json {
            println!("{}", serde_json::to_string(&self.record)?);
            eprintln!("result set: {}", dir.display());
        } else {
            // The rows were printed as the tests finished.
            if partial {
                println!("run {}: PARTIAL", self.record.run_id);
            }
            println!("{}", report::summary::totals_line(&self.record, &tests));
            println!("result set: {}", dir.display());
        }
        if self.backend == Backend::Cpu {
            warn_if_starved(&tests);
        }
        Ok(if self.violations > 0 {
            Exit::Finding
        } else if self.lost.is_some() {
            Exit::DeviceLost
        } else if self.errors > 0 {
            Exit::Error
        } else if partial {
            Exit::Partial
        } else {
            Exit::Success
        })
    }
}

fn cli_plan(args: &RunArgs) -> Result<Plan, AppError> {
    let budget = match (args.instances, args.time) {
        (Some(n), _) => Budget::Instances(n),
        (None, Some(s)) if s > 0.0 => Budget::Seconds(s),
        (None, Some(s)) => return Err(format!("--time {s}: expected a positive number").into()),
        (None, None) => Budget::Instances(DEFAULT_INSTANCES),
    };
    let seed = args.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64 % 1_000_000_007)
    });
    let mut params = RunParams::new(budget, seed);
    params.stress = super::stress::resolve(&args.stress)?;
    let mut options = options_map(&args.options)?;
    if let Some(c) = &args.compiler {
        let c: Compiler = c.parse().map_err(|e| format!("--compiler: {e}"))?;
        options.insert("compiler".into(), c.to_string());
    }
    let shard = args.shard.as_deref().map(str::parse::<Shard>).transpose()?;
    Ok(Plan {
        paths: args.paths.clone(),
        backend: args.backend.unwrap_or(Backend::Auto),
        params,
        options,
        shard,
        model: RunModel::choose(args.model.as_deref())?,
    })
}

/// The plan recorded in a `run.json`: same tests, seed, budget, preset and options.
fn replay_plan(path: &Path, args: &RunArgs) -> Result<Plan, AppError> {
    let rec: RunRecord = results::read_record(path, RUN_FORMAT)?;
    let p = &rec.parameters;
    let budget = match (p.instances, p.time_budget_s) {
        (Some(n), _) => Budget::Instances(n),
        (None, Some(s)) => Budget::Seconds(s),
        (None, None) => match (p.iterations, p.instances_per_iteration) {
            (Some(i), Some(n)) => Budget::Instances(i * n),
            _ => {
                return Err(format!("{}: no instance count or time budget", path.display()).into())
            }
        },
    };
    let mut params = RunParams::new(budget, p.seed);
    params.stress = super::stress::replayed(&p.preset, &p.stress_set, path)?;
    let options = p
        .other
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect();
    let backend = match args.backend {
        Some(b) => b,
        None => rec.backend.parse()?,
    };
    if !args.paths.is_empty() {
        return Err("--replay runs the tests recorded in run.json; give no PATHS".into());
    }
    Ok(Plan {
        paths: rec.test_paths.iter().map(PathBuf::from).collect(),
        backend,
        params,
        options,
        shard: rec.shard,
        model: RunModel::replayed(&rec, path, args.model.as_deref())?,
    })
}

/// Resolves `auto` (the GPU when one is usable, saying which); `cuda` without a usable GPU is
/// refused with the one-line reason.
pub fn choose_backend(b: Backend) -> Result<Backend, AppError> {
    if b == Backend::Cpu {
        return Ok(Backend::Cpu);
    }
    match (b, harness::cuda::status()) {
        (Backend::Cpu, _) => Ok(Backend::Cpu),
        (Backend::Cuda, Ok(_)) => Ok(Backend::Cuda),
        (Backend::Auto, Ok(gpu)) => {
            eprintln!("ptx-litmus: running on {gpu} (CUDA backend)");
            Ok(Backend::Cuda)
        }
        (Backend::Cuda, Err(why)) => Err(format!("--backend cuda: {why}").into()),
        (Backend::Auto, Err(why)) => {
            eprintln!("ptx-litmus: no usable GPU ({why}); running on the CPU backend");
            Ok(Backend::Cpu)
        }
    }
}

fn parameters(p: &RunParams, backend: Backend) -> Result<Parameters, AppError> {
    let mut out = Parameters::from_run_params(p);
    if let serde_json::Value::Object(o) = serde_json::to_value(&p.stress)? {
        for (k, v) in o {
            if k != "name" {
                out.incantations.insert(k, v);
            }
        }
    }
    if backend == Backend::Cuda {
        // Instances per launch depend on each test's layout; every test records its own
        // (`kernel.instances_per_launch`, `kernel.launches`).
        return Ok(out);
    }
    let batch = match &p.options.backend {
        BackendOptions::Cpu(o) => o.batch as u64,
        BackendOptions::Cuda(_) => 0,
    };
    out.instances_per_iteration = Some(batch);
    out.iterations = out.instances.map(|n| n.div_ceil(batch.max(1)));
    Ok(out)
}

/// Runs one test with a live progress message.
fn run_one(
    backend: Backend,
    test: &Test,
    verdict: &ModelVerdict,
    params: &RunParams,
    violations_before: u64,
    bar: &ProgressBar,
) -> Result<TestRun, RunError> {
    let name = test.name.clone();
    let mut progress = |p: &harness::Progress<'_>| {
        let (weak, bad) = classify(verdict, p.histogram);
        let secs = p.elapsed_s.max(1e-9);
        bar.set_message(format!(
            "{name}: {:.3e} inst/s, {:.3e} weak/s, {} violations ({} before)",
            p.instances as f64 / secs,
            weak as f64 / secs,
            bad,
            violations_before
        ));
    };
    harness::run(
        backend,
        test,
        params,
        Control {
            cancel: &interrupt::INTERRUPTED,
            progress: &mut progress,
        },
    )
}

/// Weak (allowed, non-SC) and violating (forbidden or unexpected) instances of a histogram.
fn classify(v: &ModelVerdict, h: &crate::outcome::Histogram) -> (u64, u64) {
    let mut weak = 0;
    let mut bad = h.unexpected;
    for (o, n) in &h.counts {
        if !v.allowed.contains(o) {
            bad += n;
        } else if !v.sc.contains(o) {
            weak += n;
        }
    }
    (weak, bad)
}

fn test_record(
    test: &Test,
    path: &str,
    verdict: &ModelVerdict,
    run: &TestRun,
) -> Result<TestRecord, AppError> {
    let mut rec = TestRecord::from_run(path, test, verdict, run)?;
    let info = &run.info;
    rec.notes.insert("backend".into(), info.backend.clone());
    rec.notes
        .insert(notes::INSTANCES_RUN.into(), info.instances.to_string());
    for (k, v) in info.params.options.backend.record() {
        rec.notes.insert(format!("{}.{k}", info.backend), v);
    }
    for key in [notes::THREADS, notes::CPU_USED, notes::ROUND_TRIP_NS] {
        if let Some(v) = info.provenance.get(key) {
            rec.notes.insert(key.into(), v.clone());
        }
    }
    // Per-kernel facts of the GPU backend: PTX ISA, SASS hash, launch shapes, timing.
    for (k, v) in &info.provenance {
        if k.starts_with("kernel.") {
            rec.notes.insert(k.clone(), v.clone());
        }
    }
    if info.partial {
        rec.notes.insert("partial".into(), "true".into());
    }
    Ok(rec)
}

/// Records the load average in the provenance of a CPU run and warns when the machine is too
/// busy for a two-thread test to have its cores.
fn warn_if_loaded(record: &mut RunRecord) {
    let Some(load) = cpu_load::load_average() else {
        return;
    };
    record
        .provenance
        .insert("load_average".into(), format!("{load:.2}"));
    if let Some(w) = cpu_load::warning(load, harness::cpu::cores(), 2) {
        eprintln!("ptx-litmus: warning: {w}");
    }
}

/// Warns when some tests of a CPU run got less CPU than their threads needed.
fn warn_if_starved(tests: &[TestRecord]) {
    let cores = harness::cpu::cores();
    let starved = tests
        .iter()
        .filter(|t| {
            let note = |k: &str| t.notes.get(k).and_then(|v| v.parse::<f64>().ok());
            matches!((note(notes::CPU_USED), note(notes::THREADS)),
                (Some(used), Some(threads)) if cpu_load::starved(used, cores, threads as usize))
        })
        .count();
    if starved > 0 {
        eprintln!(
            "ptx-litmus: warning: {starved} of {} tests got less CPU than their threads needed \
             (the `cpu` column): other work shared the cores, so weak behaviour may have been \
             missed there",
            tests.len()
        );
    }
}

/// Names the test and every forbidden outcome seen, the model that forbids it, and what a
/// violation on this backend means (`ptx`: whether PTX's model judged).
fn report_violation(rec: &TestRecord, backend: Backend, model: &str, ptx: bool) {
    for o in &rec.verdict.outcomes {
        if o.count > 0 && matches!(o.class, Class::Forbidden | Class::Unexpected) {
            let shown: Vec<String> = rec
                .observables
                .iter()
                .zip(&o.values.0)
                .map(|(n, v)| format!("{n}={v};"))
                .collect();
            eprintln!(
                "ptx-litmus: VIOLATION in {} ({}): outcome {} seen {} times, forbidden by the model {model}",
                rec.name,
                rec.path,
                shown.join(" "),
                o.count
            );
        }
    }
    if rec.verdict.counts.unexpected > 0 {
        eprintln!(
            "ptx-litmus: VIOLATION in {} ({}): {} instances ended outside the outcome space",
            rec.name, rec.path, rec.verdict.counts.unexpected
        );
    }
    if backend == Backend::Cpu && ptx {
        eprintln!(
            "ptx-litmus: on the CPU backend every observable behaviour is PTX-allowed \
             (docs/cpu-backend.md), so this is a bug in the CPU mapping, the model checker or \
             the harness"
        );
    } else if !ptx {
        eprintln!(
            "ptx-litmus: {model} is not PTX's model: an outcome it forbids that the machine \
             shows is where that model is stronger than the machine"
        );
    }
}

/// The bar on stderr (drawn only on a terminal): tests done, tests/s, time left, the running
/// test's message, and the candidates of a long model check. `per_test` is `--time`, when the
/// budget is a time.
fn progress_bar(tests: u64, quiet: bool, per_test: Option<f64>) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(tests);
    let live: Live = Arc::new(bounded_check::progress);
    bar.set_style(style("tests, {per_sec}", per_test, Some(live)));
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

fn unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
