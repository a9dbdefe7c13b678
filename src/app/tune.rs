//! `ptx-litmus tune`: per shape family, the search of `crate::tune` measured on the backend,
//! its winner written as `FAMILY.stress` (provenance in comments) and the whole search as
//! `FAMILY.search.json`, with a table of what each family gained over its baseline.

use super::bar::{outside, Bar};
use super::bench_shapes::SHAPES;
use super::tune_measure::{stress_of, Measure};
use super::{options_map, AppError, Exit};
use crate::cli::TuneArgs;
use crate::harness::{self, Backend, Budget};
use crate::litmus::{self, ast::Test};
use crate::tune::field::{Ratio, MARGIN};
use crate::tune::{search, tuned_file, Outcome, Plan, SearchRecord, Space};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Runs `tune`.
pub fn run(args: &TuneArgs) -> Result<Exit, AppError> {
    check_args(args)?;
    let backend = super::run::choose_backend(args.backend)?;
    let families = families(args)?;
    let options = options_map(&args.options)?;
    let space = match backend {
        Backend::Cuda => Space::gpu(),
        _ => Space::cpu(),
    };
    let out = out_dir(args, backend)?;
    let provenance = harness::provenance(backend);
    let start = Instant::now();
    let mut records = Vec::new();
    let mut failed = Vec::new();
    print_header();
    let bar = Bar::new(families.len() as u64, "families");
    for (i, (family, tests)) in families.iter().enumerate() {
        bar.working_on(family);
        let share = args.budget * (i + 1) as f64 / families.len() as f64;
        let deadline = start + Duration::from_secs_f64(share);
        let ctx = Context {
            args,
            backend,
            space: &space,
            provenance: &provenance,
            tests,
        };
        match tune_family(&ctx, family, &options, deadline, &out)? {
            Some(record) => records.push(record),
            None => failed.push(family.as_str()),
        }
        bar.done();
    }
    drop(bar);
    if records.is_empty() {
        return Err(format!("tune: no family could be tuned ({})", failed.join(", ")).into());
    }
    let page = crate::report::tune_page::write(&records, &out)?;
    println!("wrote {}", page.display());
    if !failed.is_empty() {
        eprintln!(
            "ptx-litmus: tune: {} not tuned (see above)",
            failed.join(", ")
        );
        return Ok(Exit::Error);
    }
    Ok(Exit::Success)
}

/// Tunes one family until `deadline`, writes its files into `out` and prints its row; `None`
/// when its baseline cannot be measured (said, and the other families still run).
fn tune_family(
    ctx: &Context<'_>,
    family: &str,
    options: &BTreeMap<String, String>,
    deadline: Instant,
    out: &Path,
) -> Result<Option<SearchRecord>, AppError> {
    let mut measure = Measure {
        backend: ctx.backend,
        tests: ctx.tests,
        space: ctx.space,
        stress: &ctx.args.stress,
        options,
        chunk: chunk(ctx.args, ctx.backend),
        deadline: explore_deadline(deadline, ctx.args.finalists),
        final_deadline: deadline,
    };
    let outcome = match search(ctx.space, &plan(ctx.args), &mut measure) {
        Ok(o) => o,
        Err(e) => {
            outside(|| println!("{family:<8} failed: {e}"));
            return Ok(None);
        }
    };
    let file = out.join(format!("{family}.stress"));
    let record = write_family(ctx, family, &file, &outcome)?;
    outside(|| print_row(family, ctx.space, &outcome, &file));
    Ok(Some(record))
}

/// Where the tuned files go (`--out`, else `results/<machine>/tuned`), created.
fn out_dir(args: &TuneArgs, backend: Backend) -> Result<PathBuf, AppError> {
    let out = match &args.out {
        Some(d) => d.clone(),
        None => PathBuf::from(super::campaign::machine_folder(backend)?.0).join("tuned"),
    };
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: cannot create: {e}", out.display()))?;
    Ok(out)
}

/// What one measurement of a configuration runs: seconds on the GPU, instances on the CPU.
fn chunk(args: &TuneArgs, backend: Backend) -> Budget {
    match backend {
        Backend::Cuda => Budget::Seconds(args.chunk_time),
        _ => Budget::Instances(args.chunk_instances),
    }
}

/// The share of a family's time kept for the final race.
const FINAL_SHARE: f64 = 0.3;

/// When the search proper must end so that the final race keeps its share of the time left
/// before `deadline` (all of it when there is no final race).
fn explore_deadline(deadline: Instant, finalists: usize) -> Instant {
    let left = deadline.saturating_duration_since(Instant::now());
    if finalists < 2 {
        return deadline;
    }
    deadline - left.mul_f64(FINAL_SHARE)
}

fn check_args(args: &TuneArgs) -> Result<(), AppError> {
    if !(args.budget > 0.0 && args.budget.is_finite()) {
        return Err(format!(
            "--budget {}: expected a positive number of seconds",
            args.budget
        )
        .into());
    }
    if args.min_chunks == 0 || args.max_chunks < args.min_chunks {
        return Err("--min-chunks must be at least 1 and at most --max-chunks".into());
    }
    if args.chunk_time.is_nan() || args.chunk_time <= 0.0 || args.chunk_instances == 0 {
        return Err("--chunk-time and --chunk-instances must be positive".into());
    }
    Ok(())
}

fn plan(args: &TuneArgs) -> Plan {
    Plan {
        seed: args.seed,
        random: args.random,
        local: args.local,
        parents: args.parents,
        min_chunks: args.min_chunks,
        max_chunks: args.max_chunks,
        finalists: args.finalists,
        final_rounds: args.final_rounds,
    }
}

/// The tests grouped by family (the name before the first `+`), in order of first appearance:
/// the PATHS' tests, or the chosen bench shapes.
fn families(args: &TuneArgs) -> Result<Vec<(String, Vec<Test>)>, AppError> {
    let tests: Vec<Test> = if args.paths.is_empty() {
        shapes(&args.shapes)?
    } else {
        let mut v = Vec::new();
        for (path, t) in super::suite::load(&args.paths)? {
            v.push(t.map_err(|e| format!("{}: {e}", path.display()))?);
        }
        v
    };
    let mut out: Vec<(String, Vec<Test>)> = Vec::new();
    for t in tests {
        let family = if args.paths.is_empty() {
            t.name.clone()
        } else {
            family_of(&t.name)
        };
        match out.iter_mut().find(|(f, _)| *f == family) {
            Some((_, v)) => v.push(t),
            None => out.push((family, vec![t])),
        }
    }
    if out.is_empty() {
        return Err("no tests to tune for".into());
    }
    Ok(out)
}

/// A test's family: its name before the first `+`, or before the second when the first part
/// is a number (`2+2W+rlx` is of family `2+2W`).
fn family_of(name: &str) -> String {
    let mut parts = name.split('+');
    let first = parts.next().unwrap_or(name);
    match parts.next() {
        Some(second) if first.chars().all(|c| c.is_ascii_digit()) => format!("{first}+{second}"),
        _ => first.to_string(),
    }
}

/// The bench shapes named (each exactly).
fn shapes(names: &[String]) -> Result<Vec<Test>, AppError> {
    names
        .iter()
        .map(|n| {
            let (name, text) = SHAPES.iter().find(|(s, _)| s == n).ok_or_else(|| {
                let known: Vec<&str> = SHAPES.iter().map(|(s, _)| *s).collect();
                format!(
                    "--shapes: unknown shape `{n}` (known: {})",
                    known.join(", ")
                )
            })?;
            litmus::parse(text, Path::new(name)).map_err(|e| e.to_string().into())
        })
        .collect()
}

/// One family's tuning: its tests, and what every family's shares.
struct Context<'a> {
    args: &'a TuneArgs,
    backend: Backend,
    space: &'a Space,
    provenance: &'a BTreeMap<String, String>,
    tests: &'a [Test],
}

/// The tuned file and the search record of one family.
fn write_family(
    ctx: &Context<'_>,
    family: &str,
    file: &Path,
    outcome: &Outcome,
) -> Result<SearchRecord, AppError> {
    let text = tuned_file::render(&provenance_lines(ctx, outcome), &settings(ctx, outcome)?);
    std::fs::write(file, text).map_err(|e| format!("{}: cannot write: {e}", file.display()))?;
    let record = SearchRecord {
        family: family.to_string(),
        backend: ctx.backend.as_str().to_string(),
        seed: ctx.args.seed,
        budget_s: ctx.args.budget,
        tests: ctx.tests.iter().map(|t| t.name.clone()).collect(),
        provenance: ctx.provenance.clone(),
        params: SearchRecord::params_of(ctx.space),
        baseline: ctx.space.baseline.0.clone(),
        search: outcome.clone(),
    };
    let json_path = file.with_file_name(format!("{family}{}", crate::tune::record::SUFFIX));
    std::fs::write(&json_path, serde_json::to_string_pretty(&record)? + "\n")
        .map_err(|e| format!("{}: cannot write: {e}", json_path.display()))?;
    Ok(record)
}

/// The winner's settings as the file writes them: every searched stress key (GPU), or every
/// searched option as `cpu.KEY` (CPU).
fn settings(ctx: &Context<'_>, outcome: &Outcome) -> Result<Vec<(String, String)>, AppError> {
    let point = &outcome.trials[outcome.best].point;
    if ctx.backend == Backend::Cuda {
        let s = stress_of(ctx.space, point, &ctx.args.stress)?;
        return Ok(ctx
            .space
            .params
            .iter()
            .map(|p| (p.name.to_string(), s.get(p.name).unwrap_or_default()))
            .collect());
    }
    Ok(ctx
        .space
        .settings(point)
        .into_iter()
        .map(|(k, v)| (format!("{}{k}", tuned_file::CPU_PREFIX), v.to_string()))
        .collect())
}

fn provenance_lines(ctx: &Context<'_>, outcome: &Outcome) -> Vec<(String, String)> {
    let best = &outcome.trials[outcome.best];
    let base = &outcome.trials[0];
    let mut v = vec![
        ("backend".to_string(), ctx.backend.as_str().to_string()),
        (
            "tests".into(),
            ctx.tests
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        ),
        ("seed".into(), ctx.args.seed.to_string()),
        ("budget".into(), format!("{} s", ctx.args.budget)),
        (
            "search".into(),
            format!(
                "{} configurations{}",
                outcome.trials.len(),
                if outcome.cut_short {
                    ", cut short by the budget"
                } else {
                    ", complete"
                }
            ),
        ),
        ("date".into(), now()),
        ("weak/s".into(), weak_rate_line(best)),
        ("baseline weak/s".into(), weak_rate_line(base)),
        (
            "differs from baseline".into(),
            ctx.space.describe(&best.point),
        ),
    ];
    if let Some(race) = final_race(ctx.space, outcome) {
        v.push(("final race".into(), race));
    }
    if let Some(state) = decided_in(outcome) {
        v.push(("decided in".into(), state));
    }
    v.extend(ctx.provenance.iter().map(|(k, x)| (k.clone(), x.clone())));
    v
}

/// A trial's weak/s in a tuned file's header: the rate, its 99 % interval (when it has one)
/// and the counts and seconds it comes from.
fn weak_rate_line(t: &crate::tune::Trial) -> String {
    let interval = if t.estimate.high == f64::MAX {
        format!("no 99 % interval from {} chunk(s)", t.samples.len())
    } else {
        format!(
            "99 % interval {:.3e} to {:.3e}",
            t.estimate.low, t.estimate.high
        )
    };
    format!(
        "{:.3e} ({interval}; {} weak in {} instances, {:.2} s)",
        t.estimate.rate, t.estimate.weak, t.estimate.instances, t.estimate.seconds
    )
}

/// What the final race measured, round by round: the winner's weak/s over the baseline's, or,
/// where the baseline stayed, the closest challenger's.
fn final_race(space: &Space, outcome: &Outcome) -> Option<String> {
    let d = outcome.decision.as_ref()?;
    let ratio_of = |trial: usize| outcome.vs_baseline(trial);
    let show = |r: Ratio| {
        let high = if r.high == f64::MAX {
            "unbounded".to_string()
        } else {
            format!("{:.2}", r.high)
        };
        format!(
            "{:.2} times the baseline's weak/s (median of {} rounds' ratios; 99 % interval {:.2} to {high})",
            r.median, r.rounds, r.low
        )
    };
    if outcome.best != 0 {
        return Some(show(ratio_of(outcome.best)?));
    }
    let (closest, r) = d.finalists[1..]
        .iter()
        .filter_map(|&i| Some((i, ratio_of(i)?)))
        .max_by(|a, b| a.1.median.total_cmp(&b.1.median))?;
    Some(format!(
        "the baseline stays (nothing beat it by {:.0} %); the closest, {}: {}",
        (MARGIN - 1.0) * 100.0,
        space.describe(&outcome.trials[closest].point),
        show(r)
    ))
}

/// The machine's state the final race was decided in, where its chunks measured one (the
/// CPU's round trip between two cores): the tuned file holds for that state.
fn decided_in(outcome: &Outcome) -> Option<String> {
    let s = outcome.decision.as_ref()?.state?;
    Some(format!(
        "rounds with a {:.0}-{:.0} ns round trip between two cores ({} rounds; {} in another \
         state or mixed, left out)",
        s.low_ns, s.high_ns, s.rounds, s.ignored
    ))
}

fn print_header() {
    println!(
        "{:<8} {:>7} {:>7} {:>12} {:>12} {:>12}  best",
        "family", "configs", "stopped", "baseline/s", "best weak/s", "best low"
    );
}

fn print_row(family: &str, space: &Space, outcome: &Outcome, file: &Path) {
    let best = &outcome.trials[outcome.best];
    let stopped = outcome.trials.iter().filter(|t| t.stopped_early).count();
    println!(
        "{:<8} {:>7} {:>7} {:>12.3e} {:>12.3e} {:>12.3e}  {}{}{}",
        family,
        outcome.trials.len(),
        stopped,
        outcome.trials[0].estimate.rate,
        best.estimate.rate,
        best.estimate.low,
        space.describe(&best.point),
        if outcome.cut_short {
            " (cut short by --budget)"
        } else {
            ""
        },
        outcome
            .decision
            .as_ref()
            .and_then(|d| d.state)
            .map_or(String::new(), |s| format!(
                " (decided at a {:.0}-{:.0} ns round trip)",
                s.low_ns, s.high_ns
            ))
    );
    if let Some(race) = final_race(space, outcome) {
        println!("         final race: {race}");
    }
    println!("         -> {}", file.display());
}

/// The current time as RFC 3339.
fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    crate::results::time::rfc3339(secs)
}

#[cfg(test)]
mod tests {
    use super::family_of;

    #[test]
    fn a_family_is_the_name_before_the_first_plus_or_a_numbered_shape() {
        assert_eq!(family_of("SB+rlx.gpu+rlx.gpu"), "SB");
        assert_eq!(family_of("2+2W+rlx+rlx"), "2+2W");
        assert_eq!(family_of("3.2W+x"), "3.2W");
        assert_eq!(family_of("IRIW"), "IRIW");
    }
}
