//! `ptx-litmus emit TEST`: the generated kernel, printed or written to a file.

use super::{AppError, Exit};
use crate::cli::EmitArgs;
use crate::codegen;

/// Runs `emit`.
pub fn run(args: &EmitArgs) -> Result<Exit, AppError> {
    let stress = super::stress::resolve(&args.stress)?;
    let path = super::suite::resolve_one(&args.test)?;
    let test = crate::litmus::parse_file(&path)?;
    let kernel = codegen::build(&test, &stress).map_err(|e| format!("{}: {e}", path.display()))?;
    for n in &kernel.notes {
        eprintln!("note: {n}");
    }
    // The kernel is printed for reading; `run --backend cuda` would not launch it.
    if let Err((_, why)) = codegen::deadlock::check(&test) {
        eprintln!("warning: run --backend cuda refuses this test: {why}");
    }
    match &args.out {
        Some(path) => std::fs::write(path, &kernel.ptx)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => print!("{}", kernel.ptx),
    }
    Ok(Exit::Success)
}
