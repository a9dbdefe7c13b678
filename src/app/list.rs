//! `ptx-litmus list`: one line per test with what it uses; bad files are reported, not fatal.

use super::{AppError, Exit};
use crate::cli::ListArgs;
use crate::litmus;

/// Lists the tests under the given paths (default `litmus`).
pub fn run(args: &ListArgs) -> Result<Exit, AppError> {
    let mut rows: Vec<[String; 5]> = Vec::new();
    let mut failed = 0usize;
    for (path, result) in super::suite::load(&args.paths)? {
        match result {
            Ok(test) => {
                let scopes: Vec<&str> = litmus::scopes(&test).iter().map(|s| s.as_str()).collect();
                if args.json {
                    println!(
                        "{}",
                        serde_json::json!({
                            "path": path.display().to_string(),
                            "name": test.name,
                            "threads": test.threads.len(),
                            "scopes": scopes,
                            "features": litmus::features(&test),
                            "hash": litmus::hash(&test),
                        })
                    );
                    continue;
                }
                rows.push([
                    path.display().to_string(),
                    test.name.clone(),
                    format!(
                        "{} thread{}",
                        test.threads.len(),
                        if test.threads.len() == 1 { "" } else { "s" }
                    ),
                    or_dash(scopes.join(",")),
                    or_dash(litmus::features(&test).join(",")),
                ]);
            }
            Err(e) => {
                eprintln!("ptx-litmus: {e}");
                failed += 1;
            }
        }
    }
    let mut widths = [0usize; 5];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| crate::text::pad(cell, w))
            .collect();
        println!("{}", line.join("  ").trim_end());
    }
    let n = rows.len();
    if args.json {
        return Ok(if failed == 0 {
            Exit::Success
        } else {
            Exit::Error
        });
    }
    if failed == 0 {
        println!("{n} test{}", if n == 1 { "" } else { "s" });
        Ok(Exit::Success)
    } else {
        println!(
            "{n} test{}, {failed} failed to parse",
            if n == 1 { "" } else { "s" }
        );
        Ok(Exit::Error)
    }
}

fn or_dash(s: String) -> String {
    if s.is_empty() {
        "-".to_string()
    } else {
        s
    }
}
