//! `ptx-litmus check --model M`: the verdict of a cat model (a `.cat` file or a built-in
//! transcription) per test, run by the cat interpreter under `--timeout`, in `check`'s text or
//! JSON format with the model named.

use super::bar::outside;
use super::check::{condition, each_test, exit, outcome_json, quantifier};
use super::{bounded_check, check_herd, AppError, Exit};
use crate::cat::builtin::{choose, Chosen};
use crate::cat::check::CatVerdict;
use crate::cli::CheckArgs;
use crate::litmus::ast::Test;
use crate::litmus::hash;
use serde_json::json;
use std::fmt::Write;
use std::path::Path;

/// Checks every test under the given paths (default `litmus`) with the model of `--model`.
pub fn run(args: &CheckArgs) -> Result<Exit, AppError> {
    let spec = args.model.as_deref().unwrap_or("ptx-7.5");
    if args.explain || args.dot.is_some() {
        return Err(
            "--explain and --dot describe the built-in checker's executions: \
                    leave them out with --model"
                .to_string()
                .into(),
        );
    }
    let model = choose(spec)?;
    let limit = bounded_check::timeout(args.timeout)?;
    let failed = each_test(
        args,
        |test| bounded_check::check_cat(&model, test, limit),
        |path, test, v, elapsed| {
            if args.json {
                outside(|| println!("{}", json_line(path, test, &model, &v)));
            } else {
                let secs = elapsed.as_secs_f64();
                outside(|| print!("{}", text(test, &model, &v, secs, args.herd)));
            }
            Ok(())
        },
    )?;
    Ok(exit(failed))
}

fn json_line(path: &Path, test: &Test, m: &Chosen, v: &CatVerdict) -> String {
    let obs = &v.observables;
    json!({
        "path": path.display().to_string(),
        "name": test.name,
        "hash": hash(test),
        "model": m.name,
        "model_title": m.model.title,
        "quantifier": quantifier(test.condition.quantifier),
        "condition": condition(test),
        "result": check_herd::result_word(v.result(test)),
        "observables": obs.iter().map(|o| o.to_string()).collect::<Vec<_>>(),
        "allowed": v.allowed.iter().map(|o| outcome_json(obs, o)).collect::<Vec<_>>(),
        "excluded": v.excluded.iter().map(|(o, check)| json!({
            "outcome": outcome_json(obs, o),
            "check": check,
        })).collect::<Vec<_>>(),
        "candidates": v.candidates,
        "consistent": v.consistent,
    })
    .to_string()
}

/// The cat model's verdict in `check`'s words, with the model named and each excluded state
/// with its failing check; herd7's layout under `--herd`.
fn text(test: &Test, m: &Chosen, v: &CatVerdict, secs: f64, herd: bool) -> String {
    let obs = &v.observables;
    if herd {
        return check_herd::text(&check_herd::HerdLog {
            test,
            observables: obs,
            allowed: &v.allowed,
            result: v.result(test),
            secs,
        });
    }
    let mut s = String::new();
    let _ = writeln!(s, "Test {}", test.name);
    let _ = writeln!(s, "Model {} ({})", m.name, m.model.title);
    let _ = writeln!(s, "States {}", v.allowed.len());
    for o in &v.allowed {
        let _ = writeln!(s, "{}", o.display(obs));
    }
    let pos = v
        .allowed
        .iter()
        .filter(|o| o.satisfies(obs, &test.condition.prop))
        .count();
    let _ = writeln!(s, "Condition {}", condition(test));
    let counts = Some((pos, v.allowed.len()));
    let verdict = check_herd::verdict_line(test.condition.quantifier, v.result(test), counts);
    let _ = writeln!(s, "{verdict}");
    for (o, check) in &v.excluded {
        let _ = writeln!(s, "Excluded {} by {check}", o.display(obs));
    }
    let _ = writeln!(s, "Candidates {} Consistent {}", v.candidates, v.consistent);
    let _ = writeln!(s, "Time {} {secs:.6}", test.name);
    let _ = writeln!(s, "Hash={}", hash(test));
    let _ = writeln!(s);
    s
}
