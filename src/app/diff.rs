//! `ptx-litmus diff A B [C ...]`: compares result sets, two side by side or N as one matrix;
//! exit 1 when a later set has a violation the first did not.

use super::{AppError, Exit};
use crate::cli::DiffArgs;
use crate::report::{compare, diff};
use crate::results::{self, ResultsError};
use std::path::Path;

/// Runs `diff`.
pub fn run(args: &DiffArgs) -> Result<Exit, AppError> {
    let sets = args
        .sets
        .iter()
        .map(|p| results::read_result_set(p))
        .collect::<Result<Vec<_>, _>>()?;
    let (page, regressed) = if sets.len() == 2 && !args.matrix {
        let d = diff::diff(&sets[0], &sets[1]);
        print!("{}", diff::text(&d));
        (diff::html(&d), d.regressed())
    } else {
        let c = compare::compare(&sets);
        print!("{}", compare::text(&c));
        (compare::html(&c), c.regressed())
    };
    if let Some(path) = &args.html {
        write_page(path, &page, args.force)?;
    }
    Ok(if regressed {
        Exit::Finding
    } else {
        Exit::Success
    })
}

fn write_page(path: &Path, page: &str, force: bool) -> Result<(), AppError> {
    if path.exists() && !force {
        return Err(ResultsError::Exists {
            path: path.to_path_buf(),
        }
        .into());
    }
    results::write_text(path, page)?;
    println!("wrote {}", path.display());
    Ok(())
}
