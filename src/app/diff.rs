//! `ptx-litmus diff A B`: compares two result sets; exit 1 when B has a violation A did not.

use super::{AppError, Exit};
use crate::cli::DiffArgs;
use crate::report::diff;
use crate::results::{self, ResultsError};

/// Runs `diff`.
pub fn run(args: &DiffArgs) -> Result<Exit, AppError> {
    let a = results::read_result_set(&args.a)?;
    let b = results::read_result_set(&args.b)?;
    let d = diff::diff(&a, &b);
    print!("{}", diff::text(&d));
    if let Some(path) = &args.html {
        if path.exists() && !args.force {
            return Err(ResultsError::Exists { path: path.clone() }.into());
        }
        results::write_text(path, &diff::html(&d))?;
        println!("wrote {}", path.display());
    }
    Ok(if d.regressed() {
        Exit::Finding
    } else {
        Exit::Success
    })
}
