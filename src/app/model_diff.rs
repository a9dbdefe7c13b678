//! `ptx-litmus model-diff`: the built-in checker against a cat model on seeded random tests,
//! with agreements and disagreements by class.

use super::{AppError, Exit};
use crate::cat::builtin::choose;
use crate::cat::differential::run as diff;
use crate::cli::ModelDiffArgs;
use std::time::Instant;

/// Runs the comparison and prints the summary; exit 1 when some test disagrees.
pub fn run(args: &ModelDiffArgs) -> Result<Exit, AppError> {
    let model = choose(&args.model)?;
    let start = Instant::now();
    let s = diff(&model.model, args.seed, args.tests);
    println!(
        "built-in checker vs {} ({}), seed {}, in {:.1} s",
        model.name,
        model.model.title,
        args.seed,
        start.elapsed().as_secs_f64()
    );
    print!("{}", s.report(args.examples));
    Ok(if s.agree == s.tests {
        Exit::Success
    } else {
        Exit::Finding
    })
}
