//! `ptx-litmus schema`: the JSON Schema of result-set files, printed, or result sets validated
//! against it.

use super::{AppError, Exit};
use crate::cli::SchemaArgs;
use crate::results::{self, schema, schema_check};
use std::path::{Path, PathBuf};

/// Prints the schema, or validates every record of the given sets and files.
pub fn run(args: &SchemaArgs) -> Result<Exit, AppError> {
    let root = schema::result_set_schema();
    if args.validate.is_empty() {
        println!("{}", serde_json::to_string_pretty(&root)?);
        return Ok(Exit::Success);
    }
    let mut bad = 0usize;
    let mut checked = 0usize;
    for file in args
        .validate
        .iter()
        .map(|p| records(p))
        .collect::<Result<Vec<_>, _>>()?
        .concat()
    {
        checked += 1;
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let doc: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not JSON: {e}", file.display()))?;
        if let Err(e) = schema_check::validate(&root, &doc) {
            bad += 1;
            println!("{}: {e}", file.display());
        }
    }
    println!("{checked} records checked, {bad} not conforming");
    Ok(if bad == 0 {
        Exit::Success
    } else {
        Exit::Finding
    })
}

/// A record file as itself, or a result set's `run.json` and `tests/*.json`.
fn records(path: &Path) -> Result<Vec<PathBuf>, AppError> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = vec![path.join(results::RUN_FILE)];
    let tests = path.join(results::TESTS_DIR);
    let entries =
        std::fs::read_dir(&tests).map_err(|e| format!("cannot list {}: {e}", tests.display()))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    found.sort();
    out.extend(found);
    Ok(out)
}
