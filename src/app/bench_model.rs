//! `ptx-litmus bench model`: times the checker (or the cat interpreter running a model), one
//! test at a time on one core, on the project's corpus and the third-party one, and prints a
//! table.

use super::bar::{outside, Bar};
use super::{AppError, Exit};
use crate::cat::builtin::{choose, Chosen};
use crate::cli::BenchModelArgs;
use crate::litmus;
use std::path::PathBuf;
use std::time::{Duration, Instant};

struct Row {
    suite: String,
    tests: usize,
    errors: usize,
    total: Duration,
    median: Duration,
    mean: Duration,
    worst: (Duration, String),
}

/// Times the checker and prints the table.
pub fn run(args: &BenchModelArgs) -> Result<Exit, AppError> {
    let suites = suites(args)?;
    let limit = super::bounded_check::timeout(args.timeout)?;
    let cat = args.model.as_deref().map(choose).transpose()?;
    let how = How {
        limit,
        runs: args.runs.max(1),
        verdict_only: args.verdict_only,
        cat: cat.as_ref(),
    };
    let loaded: Vec<_> = suites
        .iter()
        .map(|s| (s, litmus::load(std::slice::from_ref(s))))
        .collect();
    let bar = Bar::new(loaded.iter().map(|(_, t)| t.len() as u64).sum(), "tests")
        .live(super::bounded_check::progress);
    let mut rows = Vec::new();
    let mut all: Vec<(Duration, String)> = Vec::new();
    for (suite, tests) in loaded {
        let (mut times, errors) = time_suite(&how, tests, &bar);
        all.extend(times.iter().cloned());
        rows.push(row(suite.display().to_string(), &mut times, errors));
    }
    drop(bar);
    let errors = rows.iter().map(|r| r.errors).sum();
    rows.push(row("all".into(), &mut all, errors));
    print_table(&how, &rows);
    Ok(if errors == 0 {
        Exit::Success
    } else {
        Exit::Error
    })
}

/// The suites named, or by default the project's and the third-party corpus, where present.
fn suites(args: &BenchModelArgs) -> Result<Vec<PathBuf>, AppError> {
    let suites: Vec<PathBuf> = if args.paths.is_empty() {
        let own = super::suite::root().ok().into_iter();
        own.chain(std::iter::once(PathBuf::from("../shared/corpus")))
            .filter(|p| p.exists())
            .collect()
    } else {
        args.paths.clone()
    };
    if suites.is_empty() {
        return Err("no suite found: give paths, or run from the project root".into());
    }
    Ok(suites)
}

/// What is timed, and how.
struct How<'m> {
    limit: Duration,
    runs: usize,
    verdict_only: bool,
    /// The cat model the interpreter runs instead of the built-in checker.
    cat: Option<&'m Chosen>,
}

/// Each test of a suite with the median time of its checks, and how many tests failed to
/// parse or to check (said on stderr).
fn time_suite(
    how: &How,
    tests: Vec<(PathBuf, Result<litmus::ast::Test, litmus::ParseError>)>,
    bar: &Bar,
) -> (Vec<(Duration, String)>, usize) {
    let mut times = Vec::new();
    let mut errors = 0;
    for (path, parsed) in tests {
        let Ok(test) = parsed else {
            bar.done();
            errors += 1;
            continue;
        };
        bar.working_on(&test.name);
        match median_time(how, &test) {
            Ok(t) => times.push((t, path.display().to_string())),
            Err(e) => {
                errors += 1;
                outside(|| eprintln!("ptx-litmus: {}: {e}", path.display()));
            }
        }
        bar.done();
    }
    (times, errors)
}

/// The median time of `--runs` checks of `test` (the first failure ends them).
fn median_time(how: &How, test: &litmus::ast::Test) -> Result<Duration, AppError> {
    let mut samples = Vec::with_capacity(how.runs);
    for _ in 0..how.runs {
        let start = Instant::now();
        match how.cat {
            Some(m) => super::bounded_check::check_cat(m, test, how.limit).map(drop)?,
            None if how.verdict_only => {
                super::bounded_check::decide(test, how.limit).map(drop)?;
            }
            None => super::bounded_check::check(test, how.limit).map(drop)?,
        }
        samples.push(start.elapsed());
    }
    samples.sort();
    Ok(samples[samples.len() / 2])
}

fn print_table(how: &How, rows: &[Row]) {
    println!(
        "{:<22} {:>6} {:>6} {:>10} {:>10} {:>10} {:>10}  worst test",
        "suite", "tests", "errors", "total ms", "tests/s", "mean ms", "median ms"
    );
    for r in rows {
        let tps = if r.total.is_zero() {
            0.0
        } else {
            r.tests as f64 / r.total.as_secs_f64()
        };
        println!(
            "{:<22} {:>6} {:>6} {:>10.2} {:>10.0} {:>10.4} {:>10.4}  {} ({:.2} ms)",
            r.suite,
            r.tests,
            r.errors,
            ms(r.total),
            tps,
            ms(r.mean),
            ms(r.median),
            r.worst.1,
            ms(r.worst.0)
        );
    }
    let what = match how.cat {
        Some(m) => format!(", the cat interpreter running {}", m.name),
        None if how.verdict_only => ", condition only".into(),
        None => String::new(),
    };
    println!(
        "(median of {} runs per test, one core, {} build{what})",
        how.runs,
        crate::BUILD_PROFILE,
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn row(suite: String, times: &mut [(Duration, String)], errors: usize) -> Row {
    times.sort();
    let total: Duration = times.iter().map(|t| t.0).sum();
    let n = times.len();
    Row {
        suite,
        tests: n,
        errors,
        total,
        median: if n == 0 {
            Duration::ZERO
        } else {
            times[n / 2].0
        },
        mean: if n == 0 {
            Duration::ZERO
        } else {
            total / n as u32
        },
        worst: times
            .last()
            .cloned()
            .unwrap_or((Duration::ZERO, "-".into())),
    }
}
