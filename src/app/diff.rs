//! `ptx-litmus diff A B [C ...]`: compares result sets, two side by side or N as one matrix;
//! exit 1 when a later set has a violation the first did not.

use super::{AppError, Exit};
use crate::cli::DiffArgs;
use crate::report::{compare, diff};
use crate::results::{self, ResultsError};
use std::path::Path;

/// The format tag of `diff --json` for two sets.
pub const DIFF_FORMAT: &str = "ptx-litmus-diff/1";
/// The format tag of `diff --json` for the table of N sets.
pub const COMPARE_FORMAT: &str = "ptx-litmus-compare/1";

/// Runs `diff`.
pub fn run(args: &DiffArgs) -> Result<Exit, AppError> {
    let sets = args
        .sets
        .iter()
        .map(|p| results::read_result_set(p))
        .collect::<Result<Vec<_>, _>>()?;
    let (text, json, page, regressed) = if sets.len() == 2 && !args.matrix {
        let d = diff::diff(&sets[0], &sets[1]);
        let json = serde_json::json!({ "format": DIFF_FORMAT, "diff": d });
        (diff::text(&d), json, diff::html(&d), d.regressed())
    } else {
        let c = compare::compare(&sets);
        let json = serde_json::json!({ "format": COMPARE_FORMAT, "comparison": c });
        (compare::text(&c), json, compare::html(&c), c.regressed())
    };
    if args.json {
        println!("{json}");
    } else {
        print!("{text}");
    }
    if let Some(path) = &args.html {
        write_page(path, &page, args.force)?;
        // Stdout holds only the JSON document when asked for.
        let wrote = format!("wrote {}", path.display());
        if args.json {
            eprintln!("{wrote}");
        } else {
            println!("{wrote}");
        }
    }
    Ok(if regressed {
        Exit::Finding
    } else {
        Exit::Success
    })
}

/// Writes `page` to `path`, refusing to overwrite without `force`.
fn write_page(path: &Path, page: &str, force: bool) -> Result<(), AppError> {
    if path.exists() && !force {
        return Err(ResultsError::Exists {
            path: path.to_path_buf(),
        }
        .into());
    }
    results::write_text(path, page)?;
    Ok(())
}
