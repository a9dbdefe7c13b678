//! `ptx-litmus check`: the model's verdict per test, as text in the model's words (herd7's
//! layout with `--herd`) or JSON lines, with optional explanations and execution graphs. Bad
//! tests are reported and the batch goes on.

use super::bar::{outside, Bar};
pub(super) use super::check_herd::quantifier;
use super::{bounded_check, check_herd, AppError, Exit};
use crate::cli::CheckArgs;
use crate::litmus::ast::{Prop, Term, Test};
use crate::litmus::{self, hash};
use crate::model::{dot, explain, CheckResult, ModelVerdict};
use crate::outcome::{Observable, Outcome};
use crate::text::pad;
use serde_json::{json, Map, Value as Json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Checks every test under the given paths (default `litmus`).
pub fn run(args: &CheckArgs) -> Result<Exit, AppError> {
    if let Some(dir) = &args.dot {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let limit = bounded_check::timeout(args.timeout)?;
    let failed = each_test(
        args,
        |test| bounded_check::check(test, limit),
        |path, test, v, elapsed| outside(|| answer(args, path, test, &v, elapsed)),
    )?;
    Ok(exit(failed))
}

/// What one file of a batch gave: its test with the judgement and the time it took, or why it
/// did not parse.
type Judged<R> = (PathBuf, Result<(Test, Result<R, String>, Duration), String>);

/// Judges every test under `args.paths` with `judge`, `--jobs` at once, and hands each
/// judgement to `say` in the files' order after the test's lint warnings; a file that does not
/// parse, or a test `judge` gives up on, is reported there instead. Returns how many were.
pub(super) fn each_test<R: Send>(
    args: &CheckArgs,
    judge: impl Fn(&Test) -> Result<R, String> + Sync,
    mut say: impl FnMut(&Path, &Test, R, Duration) -> Result<(), AppError>,
) -> Result<usize, AppError> {
    let loaded = super::suite::load(&args.paths)?;
    let bar = Bar::new(loaded.len() as u64, "tests").live(bounded_check::progress);
    let work = |(path, parsed): (PathBuf, Result<Test, String>)| -> Judged<R> {
        let judged = parsed.map(|test| {
            bar.working_on(&test.name);
            let start = Instant::now();
            let r = judge(&test);
            (test, r, start.elapsed())
        });
        (path, judged)
    };
    let mut failed = 0;
    super::ordered::in_order(
        loaded.into_iter(),
        usize::from(args.jobs),
        work,
        |(path, j)| {
            match j {
                Err(e) => {
                    failed += 1;
                    report_error(args, &path, &e);
                }
                Ok((test, r, elapsed)) => {
                    warn(&path, &test);
                    match r {
                        Ok(v) => say(&path, &test, v, elapsed)?,
                        Err(e) => {
                            failed += 1;
                            model_error(args, &path, &test, &e);
                        }
                    }
                }
            }
            bar.done();
            Ok(())
        },
    )?;
    Ok(failed)
}

/// Prints the verdict of `test`, and its explanation and graphs when asked.
fn answer(
    args: &CheckArgs,
    path: &Path,
    test: &Test,
    v: &ModelVerdict,
    elapsed: Duration,
) -> Result<(), AppError> {
    if args.json {
        println!("{}", json_line(path, test, v, elapsed.as_micros()));
    } else {
        print!("{}", text(test, v, elapsed.as_secs_f64(), args.herd));
    }
    if !args.explain && args.dot.is_none() {
        return Ok(());
    }
    let ex = explain::explain(test, v);
    if args.explain && !args.json {
        print!("{}", ex.text);
        println!();
    }
    if let Some(dir) = &args.dot {
        for (i, (title, exec, cycle)) in ex.items.iter().enumerate() {
            let file = dir.join(format!("{}-{i}.dot", litmus::file_stem(&test.name)));
            let title = format!("{}: {title}", test.name);
            std::fs::write(&file, dot::to_dot(exec, &title, cycle))
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        }
    }
    Ok(())
}

/// Reports that the model could not check `test` (too large, stopped, a model error).
pub(super) fn model_error(args: &CheckArgs, path: &Path, test: &Test, e: &str) {
    let why = e.trim_start_matches("model: ");
    report_error(args, path, &format!("{}: {why}", test.name));
}

/// Exit 2 when some test failed to parse or check, else 0.
pub(super) fn exit(failed: usize) -> Exit {
    if failed == 0 {
        Exit::Success
    } else {
        Exit::Error
    }
}

/// Prints the test's lint warnings on stderr (they do not change the exit code).
pub(super) fn warn(path: &Path, test: &Test) {
    for w in litmus::lint::warnings(test) {
        outside(|| eprintln!("ptx-litmus: warning: {}: {w}", path.display()));
    }
}

/// Reports a test that could not be read or checked, on stderr (and stdout with `--json`).
pub(super) fn report_error(args: &CheckArgs, path: &Path, msg: &str) {
    outside(|| report_error_now(args, path, msg));
}

fn report_error_now(args: &CheckArgs, path: &Path, msg: &str) {
    if args.json {
        println!(
            "{}",
            json!({"path": path.display().to_string(), "error": msg})
        );
    }
    // Parse errors already start with `path:line:col`; model errors need the path.
    let shown = path.display().to_string();
    if msg.starts_with(&shown) {
        eprintln!("ptx-litmus: {msg}");
    } else {
        eprintln!("ptx-litmus: {shown}: {msg}");
    }
}

pub(super) fn outcome_json(obs: &[Observable], o: &Outcome) -> Json {
    let mut m = Map::new();
    for (k, v) in obs.iter().zip(&o.0) {
        m.insert(k.to_string(), json!(v));
    }
    Json::Object(m)
}

/// Whether some allowed outcome satisfies the condition's proposition.
pub(super) fn prop_allowed(test: &Test, v: &ModelVerdict) -> bool {
    v.allowed
        .iter()
        .any(|o| o.satisfies(&v.observables, &test.condition.prop))
}

fn json_line(path: &Path, test: &Test, v: &ModelVerdict, us: u128) -> String {
    let obs = &v.observables;
    json!({
        "path": path.display().to_string(),
        "name": test.name,
        "hash": hash(test),
        "quantifier": quantifier(test.condition.quantifier),
        "condition": condition(test),
        "result": match v.result { CheckResult::Ok => "Ok", CheckResult::No => "No" },
        "condition_allowed": prop_allowed(test, v),
        "observables": obs.iter().map(|o| o.to_string()).collect::<Vec<_>>(),
        "allowed": v.allowed.iter().map(|o| outcome_json(obs, o)).collect::<Vec<_>>(),
        "sc": v.sc.iter().map(|o| outcome_json(obs, o)).collect::<Vec<_>>(),
        "excluded": v.excluded.iter().map(|e| json!({
            "outcome": outcome_json(obs, &e.outcome),
            "axiom": e.axiom.name(),
        })).collect::<Vec<_>>(),
        "domains": v.domains,
        "hangs": v.hangs,
        "candidates": v.candidates,
        "consistent": v.consistent,
        "elapsed_us": us as u64,
        "warnings": litmus::lint::warnings(test),
    })
    .to_string()
}

/// The verdict in the model's words: the allowed states (each SC or weak), the condition and
/// one `Verdict` line; `--herd` prints herd7's layout instead.
fn text(test: &Test, v: &ModelVerdict, secs: f64, herd: bool) -> String {
    use std::fmt::Write;
    let obs = &v.observables;
    if herd {
        return check_herd::text(&check_herd::HerdLog {
            test,
            observables: obs,
            allowed: &v.allowed,
            result: v.result,
            secs,
        });
    }
    let mut s = String::new();
    let _ = writeln!(s, "Test {}", test.name);
    let _ = writeln!(s, "States {}", v.allowed.len());
    let width = v
        .allowed
        .iter()
        .map(|o| o.display(obs).to_string().len())
        .max()
        .unwrap_or(0);
    for o in &v.allowed {
        let tag = if v.sc.contains(o) { "sc" } else { "weak" };
        let _ = writeln!(s, "{}  ({tag})", pad(&o.display(obs).to_string(), width));
    }
    for h in &v.hangs {
        let _ = writeln!(s, "Hang {h}");
    }
    let pos = v
        .allowed
        .iter()
        .filter(|o| o.satisfies(obs, &test.condition.prop))
        .count();
    let _ = writeln!(s, "Condition {}", condition(test));
    let counts = Some((pos, v.allowed.len()));
    let _ = writeln!(
        s,
        "{}",
        check_herd::verdict_line(test.condition.quantifier, v.result, counts)
    );
    let _ = writeln!(s, "Candidates {} Consistent {}", v.candidates, v.consistent);
    let _ = writeln!(s, "Time {} {secs:.6}", test.name);
    let _ = writeln!(s, "Hash={}", hash(test));
    let _ = writeln!(s);
    s
}

pub(super) fn condition(test: &Test) -> String {
    let p = prop_text(&test.condition.prop);
    let p = if p.starts_with('(') {
        p
    } else {
        format!("({p})")
    };
    format!("{} {p}", quantifier(test.condition.quantifier))
}

fn term_text(t: &Term) -> String {
    match t {
        Term::Reg { thread, reg } => format!("P{thread}:{reg}"),
        Term::Loc(l) => l.clone(),
        Term::Const(c) => c.to_string(),
    }
}

fn prop_text(p: &Prop) -> String {
    match p {
        Prop::True => "true".into(),
        Prop::False => "false".into(),
        Prop::Cmp { lhs, op, rhs } => {
            format!("{} {} {}", term_text(lhs), op.symbol(), term_text(rhs))
        }
        Prop::Not(q) => format!("~({})", prop_text(q)),
        Prop::And(a, b) => format!("({} /\\ {})", prop_text(a), prop_text(b)),
        Prop::Or(a, b) => format!("({} \\/ {})", prop_text(a), prop_text(b)),
    }
}
