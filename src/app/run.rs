//! `ptx-litmus run`: load tests → model::check → backend → judge → result set → summary.
//!
//! Exit codes: 1 when some test showed a forbidden or unexpected outcome (a violation, even if
//! other tests had errors: the finding matters most), else 2 when a test could not be read or
//! a backend failed, else 0. A test the model or the backend cannot handle is reported,
//! recorded in `skipped_tests`, and the batch goes on. Ctrl-C stops the running test after its
//! current round; what was counted is written, marked `"partial": true`.

use super::{interrupt, options_map, AppError, Exit};
use crate::cli::RunArgs;
use crate::codegen::Stress;
use crate::harness::{self, cpu, Backend, Budget, Control, RunError, RunParams, TestRun};
use crate::litmus::{self, ast::Test};
use crate::model::{self, ModelVerdict};
use crate::report;
use crate::results::{self, Parameters, RunRecord, Shard, SkippedTest, TestRecord, RUN_FORMAT};
use crate::verdict::{Class, Status};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Instances per test when neither `--iterations` nor `--time` is given.
pub const DEFAULT_INSTANCES: u64 = 100_000;

/// What to run, from the command line or from a recorded `run.json`.
struct Plan {
    paths: Vec<PathBuf>,
    backend: Backend,
    params: RunParams,
    shard: Option<Shard>,
}

/// Runs `run`.
pub fn run(args: &RunArgs) -> Result<Exit, AppError> {
    let plan = match &args.replay {
        Some(path) => replay_plan(path, args)?,
        None => cli_plan(args)?,
    };
    let stress = Stress::preset(&plan.params.stress).ok_or_else(|| {
        format!(
            "unknown stress preset `{}` (expected basic, interleave, stress or random-<seed>)",
            plan.params.stress
        )
    })?;
    let backend = choose_backend(plan.backend)?;
    if args.replay.is_none() {
        // A bad -o is one error before anything runs, not a refusal per test.
        match backend {
            Backend::Cuda => harness::cuda::CudaOptions::parse(&plan.params.options).map(drop),
            _ => cpu::CpuOptions::parse(&plan.params.options).map(drop),
        }
        .map_err(|e| format!("-o: {e}"))?;
    }

    let files = if args.replay.is_some() {
        plan.paths.clone()
    } else {
        let found = litmus::discover(&plan.paths)?;
        match plan.shard {
            Some(s) => s
                .select(
                    &found
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>(),
                )
                .into_iter()
                .map(PathBuf::from)
                .collect(),
            None => found,
        }
    };

    let now = unix_secs();
    let run_id = args
        .run_id
        .clone()
        .unwrap_or_else(|| results::time::run_id(now, plan.params.seed));
    let mut record = RunRecord::new(
        run_id,
        backend.as_str(),
        std::env::args().collect(),
        parameters(&plan.params, &stress, backend)?,
        results::time::rfc3339(now),
    );
    record.provenance = harness::provenance(backend);
    record.shard = plan.shard;
    record.test_paths = files.iter().map(|p| p.display().to_string()).collect();

    interrupt::install();
    let started = Instant::now();
    let bar = progress_bar(files.len() as u64, args.quiet);
    // The GPU backend keeps each kernel's driver-compiled cubin, PTX and JIT log with the result
    // set, for `cuobjdump -sass`; the directory is not a parameter of the run (replays write
    // their own).
    let dir = results::default_dir(&args.out, &record);
    let mut run_params = plan.params.clone();
    if backend == Backend::Cuda {
        run_params
            .options
            .entry("sass_dir".into())
            .or_insert_with(|| dir.join("sass").display().to_string());
    }
    let mut tests: Vec<TestRecord> = Vec::new();
    let mut errors = 0usize;
    let mut violations = 0u64;
    for path in &files {
        if interrupt::requested() {
            record.partial = true;
            break;
        }
        let shown = path.display().to_string();
        let skip = |record: &mut RunRecord, bar: &ProgressBar, reason: String| {
            // A parse error already starts with `path:line:col`.
            if reason.starts_with(&shown) {
                bar.suspend(|| eprintln!("ptx-litmus: skip {reason}"));
            } else {
                bar.suspend(|| eprintln!("ptx-litmus: skip {shown}: {reason}"));
            }
            record.skipped_tests.push(SkippedTest {
                path: shown.clone(),
                reason,
            });
            bar.inc(1);
        };
        let test = match litmus::parse_file(path) {
            Ok(t) => t,
            Err(e) => {
                errors += 1;
                skip(&mut record, &bar, e.to_string());
                continue;
            }
        };
        let verdict = match model::check(&test) {
            Ok(v) => v,
            Err(e) => {
                skip(&mut record, &bar, format!("model: {e}"));
                continue;
            }
        };
        let observed = match run_one(backend, &test, &verdict, &run_params, violations, &bar) {
            Ok(r) => r,
            Err(RunError::Unsupported(why)) => {
                skip(
                    &mut record,
                    &bar,
                    format!("{} backend: {why}", backend.as_str()),
                );
                continue;
            }
            Err(RunError::Failed(why)) => {
                errors += 1;
                skip(
                    &mut record,
                    &bar,
                    format!("{} backend: {why}", backend.as_str()),
                );
                continue;
            }
        };
        let rec = test_record(&test, &shown, &verdict, &observed)?;
        if rec.verdict.status == Status::Violation {
            bar.suspend(|| report_violation(&rec, backend));
            violations += rec.verdict.counts.forbidden + rec.verdict.counts.unexpected;
        }
        if observed.info.partial {
            record.partial = true;
        }
        tests.push(rec);
        bar.inc(1);
    }
    bar.finish_and_clear();
    if interrupt::requested() {
        record.partial = true;
        eprintln!("ptx-litmus: interrupted; writing what was counted, marked partial");
    }
    record.elapsed_s = started.elapsed().as_secs_f64();
    record.finished = results::time::rfc3339(unix_secs());

    results::write_result_set(&dir, &record, &tests, args.force)?;
    print!("{}", report::summary::render(&record, &tests));
    println!("result set: {}", dir.display());
    Ok(if violations > 0 {
        Exit::Finding
    } else if errors > 0 {
        Exit::Error
    } else {
        Exit::Success
    })
}

fn cli_plan(args: &RunArgs) -> Result<Plan, AppError> {
    let budget = match (args.iterations, args.time) {
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
    params.stress = args.stress.clone();
    params.options = options_map(&args.options)?;
    let shard = args.shard.as_deref().map(str::parse::<Shard>).transpose()?;
    Ok(Plan {
        paths: if args.paths.is_empty() {
            vec![PathBuf::from("litmus")]
        } else {
            args.paths.clone()
        },
        backend: args.backend.unwrap_or(Backend::Auto),
        params,
        shard,
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
    params.stress = p.preset.clone();
    for (k, v) in &p.other {
        if let Some(v) = v.as_str() {
            params.options.insert(k.clone(), v.to_string());
        }
    }
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
        shard: rec.shard,
    })
}

/// Resolves `auto` (the GPU when one is usable, saying which); `cuda` without a usable GPU is
/// refused with the one-line reason.
fn choose_backend(b: Backend) -> Result<Backend, AppError> {
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

fn parameters(p: &RunParams, stress: &Stress, backend: Backend) -> Result<Parameters, AppError> {
    let mut out = Parameters::from_run_params(p);
    if let serde_json::Value::Object(o) = serde_json::to_value(stress)? {
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
    let batch = cpu::CpuOptions::parse(&p.options)
        .map(|o| o.batch as u64)
        .unwrap_or(0);
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
            "{name}: {:.3e} inst/s, {:.3e} weak/s, {} violations in this test, {} before",
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
        .insert("instances_run".into(), info.instances.to_string());
    for (k, v) in &info.params.options {
        rec.notes.insert(format!("{}.{k}", info.backend), v.clone());
    }
    if let Some(t) = info.provenance.get("threads") {
        rec.notes.insert("threads".into(), t.clone());
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

/// Names the test and every forbidden outcome seen, and what a violation on this backend means.
fn report_violation(rec: &TestRecord, backend: Backend) {
    for o in &rec.verdict.outcomes {
        if o.count > 0 && matches!(o.class, Class::Forbidden | Class::Unexpected) {
            let shown: Vec<String> = rec
                .observables
                .iter()
                .zip(&o.values.0)
                .map(|(n, v)| format!("{n}={v};"))
                .collect();
            eprintln!(
                "ptx-litmus: VIOLATION in {} ({}): outcome {} seen {} times, forbidden by the PTX model",
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
    if backend == Backend::Cpu {
        eprintln!(
            "ptx-litmus: on the CPU backend every observable behaviour is PTX-allowed \
             (docs/cpu-backend.md), so this is a bug in the CPU mapping, the model checker or \
             the harness"
        );
    }
}

fn progress_bar(tests: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(tests);
    bar.set_style(
        ProgressStyle::with_template("[{elapsed_precise}] {pos}/{len} tests  {wide_msg}")
            .expect("the template is valid"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

fn unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
