//! `ptx-litmus list`: one line per test with what it uses; bad files are reported, not fatal.

use super::{AppError, Exit};
use crate::cli::ListArgs;
use crate::litmus::{self, ast::Test};
use std::path::Path;

/// Lists the tests under the given paths (default `litmus`).
pub fn run(args: &ListArgs) -> Result<Exit, AppError> {
    let mut rows: Vec<[String; 5]> = Vec::new();
    let mut failed = 0usize;
    for (path, result) in super::suite::load(&args.paths)? {
        match result {
            Ok(test) if args.json => println!("{}", json_line(&path, &test)),
            Ok(test) => rows.push(row(&path, &test)),
            Err(e) => {
                eprintln!("ptx-litmus: {e}");
                failed += 1;
            }
        }
    }
    print_aligned(&rows);
    let n = rows.len();
    if !args.json {
        let plural = if n == 1 { "" } else { "s" };
        match failed {
            0 => println!("{n} test{plural}"),
            _ => println!("{n} test{plural}, {failed} failed to parse"),
        }
    }
    Ok(if failed == 0 {
        Exit::Success
    } else {
        Exit::Error
    })
}

/// A test's JSON line: path, name, threads, scopes, features, hash.
fn json_line(path: &Path, test: &Test) -> serde_json::Value {
    serde_json::json!({
        "path": path.display().to_string(),
        "name": test.name,
        "threads": test.threads.len(),
        "scopes": scopes(test),
        "features": litmus::features(test),
        "hash": litmus::hash(test),
    })
}

/// A test's row: path, name, threads, scopes, features.
fn row(path: &Path, test: &Test) -> [String; 5] {
    let threads = test.threads.len();
    [
        path.display().to_string(),
        test.name.clone(),
        format!("{threads} thread{}", if threads == 1 { "" } else { "s" }),
        or_dash(scopes(test).join(",")),
        or_dash(litmus::features(test).join(",")),
    ]
}

fn scopes(test: &Test) -> Vec<&'static str> {
    litmus::scopes(test).iter().map(|s| s.as_str()).collect()
}

/// Prints `rows` with each column as wide as its widest cell.
fn print_aligned(rows: &[[String; 5]]) {
    let mut widths = [0usize; 5];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| crate::text::pad(cell, w))
            .collect();
        println!("{}", line.join("  ").trim_end());
    }
}

fn or_dash(s: String) -> String {
    if s.is_empty() {
        "-".to_string()
    } else {
        s
    }
}
