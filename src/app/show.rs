//! `ptx-litmus show`: a test in canonical form, followed by its hash as a comment (so the output
//! is itself a test that parses to the same thing).

use super::{AppError, Exit};
use crate::cli::ShowArgs;
use crate::litmus;
use std::path::{Path, PathBuf};

/// Prints the canonical form and hash of one test, given as a path or as a test name under
/// `litmus/`.
pub fn run(args: &ShowArgs) -> Result<Exit, AppError> {
    let path = resolve(&args.test)?;
    let test = litmus::parse_file(&path)?;
    print!("{}", litmus::print(&test));
    println!("(* hash {} *)", litmus::hash(&test));
    Ok(Exit::Success)
}

/// The file for `test`: the path itself when it exists, else `litmus/**/<test>.litmus`.
fn resolve(test: &Path) -> Result<PathBuf, AppError> {
    if test.exists() {
        return Ok(test.to_path_buf());
    }
    let wanted = format!("{}.litmus", test.display());
    let dir = PathBuf::from("litmus");
    if dir.is_dir() {
        let found: Vec<PathBuf> = litmus::discover(&[dir])?
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy() == wanted))
            .collect();
        match found.as_slice() {
            [one] => return Ok(one.clone()),
            [] => {}
            many => {
                let names: Vec<String> = many.iter().map(|p| p.display().to_string()).collect();
                return Err(format!(
                    "{}: ambiguous test name, matches {}",
                    test.display(),
                    names.join(", ")
                )
                .into());
            }
        }
    }
    Err(format!(
        "{}: no such file, and no test of that name under litmus/",
        test.display()
    )
    .into())
}
