//! `check --expect FILE`: the model's verdict on each test against an expectations file
//! (`litmus/expectations.tsv`'s format: `TEST<TAB>Allowed|Forbidden<TAB>REASON`, the test's
//! path relative to the file's folder, whether some allowed outcome satisfies the condition's
//! proposition), with one line per mismatch and a pass/fail summary: the test author's loop.

use super::check::{prop_allowed, report_error, warn};
use super::{bounded_check, AppError, Exit};
use crate::cli::CheckArgs;
use crate::litmus::ast::Test;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One row of an expectations file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    /// Its line in the file (1-based).
    pub line: usize,
    /// The test as written in the file.
    pub written: String,
    /// Whether the condition's proposition is expected to be allowed.
    pub allowed: bool,
    /// Why, as written (the ISA section), possibly empty.
    pub reason: String,
}

/// The rows of an expectations file, and each bad row as `line: cause`. A first line whose
/// second column is `expected` is a header; blank lines and `#` comments are skipped.
pub fn parse(text: &str) -> (Vec<Expectation>, Vec<(usize, String)>) {
    let mut rows: Vec<Expectation> = Vec::new();
    let mut bad = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() || raw.trim_start().starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = raw.split('\t').map(str::trim).collect();
        if i == 0 && cols.get(1) == Some(&"expected") {
            continue;
        }
        let allowed = match cols.get(1).copied() {
            _ if cols.len() < 2 || cols[0].is_empty() => {
                bad.push((
                    line,
                    "expected TEST<TAB>Allowed|Forbidden<TAB>REASON".into(),
                ));
                continue;
            }
            Some("Allowed") => true,
            Some("Forbidden") => false,
            Some(other) => {
                bad.push((
                    line,
                    format!("expected Allowed or Forbidden, found `{other}`"),
                ));
                continue;
            }
            None => unreachable!("two columns at least"),
        };
        if let Some(first) = rows.iter().find(|r| r.written == cols[0]) {
            bad.push((
                line,
                format!(
                    "`{}` is listed again (first at line {})",
                    cols[0], first.line
                ),
            ));
            continue;
        }
        rows.push(Expectation {
            line,
            written: cols[0].to_string(),
            allowed,
            reason: cols.get(2).unwrap_or(&"").to_string(),
        });
    }
    (rows, bad)
}

/// What the comparison found so far.
#[derive(Default)]
struct Tally {
    pass: usize,
    fail: usize,
    unlisted: usize,
    errors: usize,
}

/// A path as compared: canonical where it exists.
fn key(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// The largest expectations file read: `litmus/expectations.tsv` is about 40 KiB.
const MAX_EXPECT_BYTES: u64 = 4 << 20;

/// Runs `check --expect FILE` on PATHS (none: every test the file lists).
pub fn run(args: &CheckArgs) -> Result<Exit, AppError> {
    let file = args.expect.as_deref().expect("dispatched on --expect");
    let shown = file.display().to_string();
    let text = crate::input::text_of(file, MAX_EXPECT_BYTES, "an expectations file")
        .map_err(|e| format!("--expect {e}"))?;
    let (rows, bad) = parse(&text);
    let mut t = Tally::default();
    for (line, why) in &bad {
        eprintln!("ptx-litmus: {shown}:{line}: {why}");
        t.errors += 1;
    }
    let base = file.parent().unwrap_or(Path::new("."));
    let by_path: BTreeMap<PathBuf, &Expectation> = rows
        .iter()
        .map(|r| (key(&base.join(&r.written)), r))
        .collect();
    let paths: Vec<PathBuf> = if args.paths.is_empty() {
        rows.iter().map(|r| base.join(&r.written)).collect()
    } else {
        args.paths.clone()
    };
    let limit = bounded_check::timeout(args.timeout)?;
    for (path, parsed) in super::suite::load(&paths)? {
        let test = match parsed {
            Ok(t) => t,
            Err(e) => {
                t.errors += 1;
                report_error(args, &path, &e);
                continue;
            }
        };
        warn(&path, &test);
        match by_path.get(&key(&path)) {
            Some(row) => judge(args, &path, &test, row, &shown, limit, &mut t),
            None => {
                t.unlisted += 1;
                println!("NONE {}: no row in {shown}", path.display());
            }
        }
    }
    summary(&shown, &t)
}

/// Checks one listed test and prints its line when it does not pass.
fn judge(
    args: &CheckArgs,
    path: &Path,
    test: &Test,
    row: &Expectation,
    file: &str,
    limit: std::time::Duration,
    t: &mut Tally,
) {
    let verdict = match bounded_check::check(test, limit) {
        Ok(v) => v,
        Err(e) => {
            t.errors += 1;
            let msg = format!("{}: {}", test.name, e.trim_start_matches("model: "));
            report_error(args, path, &msg);
            return;
        }
    };
    let word = |allowed: bool| if allowed { "Allowed" } else { "Forbidden" };
    let got = prop_allowed(test, &verdict);
    if got == row.allowed {
        t.pass += 1;
        return;
    }
    t.fail += 1;
    println!(
        "FAIL {}: expected {} ({file}:{}), the model says {}",
        row.written,
        word(row.allowed),
        row.line,
        word(got)
    );
    if !row.reason.is_empty() {
        println!("     reason given: {}", row.reason);
    }
}

/// Prints the summary and maps it to the exit code: 1 on a mismatch, else 2 on an error.
fn summary(file: &str, t: &Tally) -> Result<Exit, AppError> {
    println!(
        "expectations {file}: {} checked, {} pass, {} fail; {} without a row, {} errors",
        t.pass + t.fail,
        t.pass,
        t.fail,
        t.unlisted,
        t.errors
    );
    Ok(if t.fail > 0 {
        Exit::Finding
    } else if t.errors > 0 {
        Exit::Error
    } else {
        Exit::Success
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_header_and_bad_lines() {
        let text = "test\texpected\treason\nsb/SB.litmus\tAllowed\t§8\n\n# note\n\
                    mp/MP.litmus\tForbidden\nx.litmus\tMaybe\nlonely\nsb/SB.litmus\tForbidden\n";
        let (rows, bad) = parse(text);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].line, rows[0].allowed), (2, true));
        assert_eq!(
            (rows[1].line, rows[1].allowed, rows[1].reason.as_str()),
            (5, false, "")
        );
        let lines: Vec<usize> = bad.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [6, 7, 8]);
        assert!(bad[0].1.contains("found `Maybe`"), "{bad:?}");
        assert!(bad[2].1.contains("first at line 2"), "{bad:?}");
    }
}
