//! `ptx-litmus check --verdict-only`: each test's condition decided without listing its final
//! states, as text in the model's words or JSON lines. Bad tests are reported and the batch goes on.

use super::bar::outside;
use super::check::{condition, each_test, exit, outcome_json, quantifier};
use super::{bounded_check, check_herd, AppError, Exit};
use crate::cli::CheckArgs;
use crate::litmus::ast::Test;
use crate::litmus::hash;
use crate::model::Decision;
use crate::outcome::observables;
use serde_json::json;
use std::path::Path;
use std::time::Duration;

/// Decides every test under the given paths (default: the built-in suite).
pub fn run(args: &CheckArgs) -> Result<Exit, AppError> {
    let limit = bounded_check::timeout(args.timeout)?;
    let failed = each_test(
        args,
        |test| bounded_check::decide(test, limit),
        |path, test, d, elapsed| {
            if args.json {
                outside(|| println!("{}", json_line(path, test, &d, elapsed)));
            } else {
                outside(|| print!("{}", text(test, &d, elapsed)));
            }
            Ok(())
        },
    )?;
    Ok(exit(failed))
}

fn text(test: &Test, d: &Decision, elapsed: Duration) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "Test {}", test.name);
    let verdict = check_herd::verdict_line(test.condition.quantifier, d.result, None);
    let _ = writeln!(s, "Condition {}", condition(test));
    let _ = writeln!(s, "{verdict}");
    if let Some(w) = &d.witness {
        let obs = observables(test);
        let _ = writeln!(s, "Deciding state {}", w.outcome.display(&obs));
    }
    let _ = writeln!(s, "Candidates {}", d.candidates);
    let secs = elapsed.as_secs_f64();
    let _ = writeln!(s, "Time {} {secs:.6}", test.name);
    let _ = writeln!(s, "Hash={}", hash(test));
    let _ = writeln!(s);
    s
}

fn json_line(path: &Path, test: &Test, d: &Decision, elapsed: Duration) -> String {
    let obs = observables(test);
    json!({
        "path": path.display().to_string(),
        "name": test.name,
        "hash": hash(test),
        "quantifier": quantifier(test.condition.quantifier),
        "condition": condition(test),
        "result": check_herd::result_word(d.result),
        "deciding": d.witness.as_ref().map(|w| outcome_json(&obs, &w.outcome)),
        "candidates": d.candidates,
        "elapsed_us": elapsed.as_micros() as u64,
    })
    .to_string()
}
