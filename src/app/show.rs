//! `ptx-litmus show`: a test in canonical form, followed by its hash as a comment (so the output
//! is itself a test that parses to the same thing).

use super::{AppError, Exit};
use crate::cli::ShowArgs;
use crate::litmus;

/// Prints the canonical form and hash of one test, given as a path or as a test name of the
/// built-in suite.
pub fn run(args: &ShowArgs) -> Result<Exit, AppError> {
    let path = super::suite::resolve_one(&args.test)?;
    let test = litmus::parse_file(&path)?;
    print!("{}", litmus::print(&test));
    println!("(* hash {} *)", litmus::hash(&test));
    Ok(Exit::Success)
}
