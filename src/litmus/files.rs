//! Finding test files and reading them: a bad file is reported with the others still loaded.

use super::ast::Test;
use super::error::ParseError;
use crate::input::Unread;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The largest test file read, in bytes: the biggest published test is a few KiB, and a bound
/// keeps a mistaken path (a device, a huge log) from filling memory.
pub const MAX_TEST_BYTES: u64 = 4 << 20;

/// Reads and parses one test file; an unreadable, oversized or non-UTF-8 file is an error
/// naming it (and, for bad UTF-8, the line, column and byte offset of the first bad byte).
pub fn parse_file(path: &Path) -> Result<Test, ParseError> {
    let source = crate::input::text(path, MAX_TEST_BYTES).map_err(|e| match e {
        Unread::Utf8 { line, column, .. } => {
            ParseError::semantic(path, super::Pos { line, column }, e.to_string())
        }
        Unread::TooLarge(_) => ParseError::io(path, format!("{e}; not a litmus test")),
        Unread::Io(_) => ParseError::io(path, e.to_string()),
    })?;
    super::parse(&source, path)
}

/// A file-system-safe stem for a test name: letters, digits, `.`, `_`, `+` and `-` kept,
/// anything else `_`, never empty or hidden.
pub fn file_stem(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    }
}

/// The name of folders holding generated suites: a search enters one only when it is named
/// (or lies under a path named), so `litmus/` stays the hand-written suite and
/// `litmus/generated/pldi26-iriw` is a suite of its own.
pub const GENERATED_DIR: &str = "generated";

/// The test files under `paths`: files as given, directories searched recursively for
/// `*.litmus` (each directory once, so symbolic-link loops end; folders named
/// [`GENERATED_DIR`] only when named); sorted and without repeats, also none reached under two
/// spellings (see [`dedup_files`]). A missing path is an error naming it.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ParseError> {
    let mut out = Vec::new();
    let mut seen_dirs = BTreeSet::new();
    for p in paths {
        discover_one(p, &mut out, &mut seen_dirs)?;
    }
    Ok(dedup_files(out))
}

/// `files` sorted, keeping the first spelling of each file: `a/t.litmus`, `./a/t.litmus` and
/// a symbolic link to it are one test, so it runs once and writes one record.
pub fn dedup_files(mut files: Vec<PathBuf>) -> Vec<PathBuf> {
    files.sort();
    let mut seen = BTreeSet::new();
    files.retain(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())));
    files
}

fn discover_one(
    path: &Path,
    out: &mut Vec<PathBuf>,
    seen_dirs: &mut BTreeSet<PathBuf>,
) -> Result<(), ParseError> {
    let meta =
        std::fs::metadata(path).map_err(|e| ParseError::io(path, format!("cannot open: {e}")))?;
    if !meta.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if !seen_dirs.insert(canonical) {
        return Ok(());
    }
    let entries =
        std::fs::read_dir(path).map_err(|e| ParseError::io(path, format!("cannot list: {e}")))?;
    for entry in entries {
        let entry = entry.map_err(|e| ParseError::io(path, format!("cannot list: {e}")))?;
        let p = entry.path();
        if p.is_dir() {
            if entry.file_name() == GENERATED_DIR {
                continue;
            }
            discover_one(&p, out, seen_dirs)?;
        } else if p.extension().is_some_and(|e| e == "litmus") {
            out.push(p);
        }
    }
    Ok(())
}

/// Discovers and parses every test under `paths`, in order; a path that cannot be searched or
/// a file that does not parse gives an `Err` entry and the rest still load.
pub fn load(paths: &[PathBuf]) -> Vec<(PathBuf, Result<Test, ParseError>)> {
    let mut files = Vec::new();
    let mut out = Vec::new();
    for p in paths {
        match discover(std::slice::from_ref(p)) {
            Ok(found) => files.extend(found),
            Err(e) => out.push((p.clone(), Err(e))),
        }
    }
    let files = dedup_files(files);
    out.extend(files.into_iter().map(|f| {
        let r = parse_file(&f);
        (f, r)
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::file_stem;

    #[test]
    fn test_names_become_safe_file_names() {
        assert_eq!(file_stem("MP+fence.sc"), "MP+fence.sc");
        assert_eq!(file_stem("a/b c"), "a_b_c");
        assert_eq!(file_stem(".."), "_..");
        assert_eq!(file_stem(""), "_");
    }
}
