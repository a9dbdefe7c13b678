//! `ptx-litmus merge DIR... --out OUT`: combines the result sets of one campaign.

use super::{AppError, Exit};
use crate::cli::MergeArgs;
use crate::report::summary;
use crate::results;

/// Runs `merge`.
pub fn run(args: &MergeArgs) -> Result<Exit, AppError> {
    let sets = args
        .dirs
        .iter()
        .map(|d| results::read_result_set(d))
        .collect::<Result<Vec<_>, _>>()?;
    let run_id = args
        .out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "merged".into());
    let (run, tests) = results::merge(&sets, &run_id)?;
    results::write_result_set(&args.out, &run, &tests, args.force)?;
    print!("{}", summary::render(&run, &tests));
    println!("wrote {}", args.out.display());
    Ok(Exit::Success)
}
