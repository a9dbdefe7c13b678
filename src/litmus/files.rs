//! Finding test files and reading them: a bad file is reported with the others still loaded.

use super::ast::Test;
use super::error::ParseError;
use std::path::{Path, PathBuf};

/// Reads and parses one test file; an unreadable file is an error naming it.
pub fn parse_file(path: &Path) -> Result<Test, ParseError> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| ParseError::io(path, format!("cannot read: {e}")))?;
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

/// The test files under `paths`: files as given, directories searched recursively for
/// `*.litmus`; sorted and without repeats. A missing path is an error naming it.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ParseError> {
    let mut out = Vec::new();
    for p in paths {
        discover_one(p, &mut out)?;
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn discover_one(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), ParseError> {
    let meta =
        std::fs::metadata(path).map_err(|e| ParseError::io(path, format!("cannot open: {e}")))?;
    if !meta.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let entries =
        std::fs::read_dir(path).map_err(|e| ParseError::io(path, format!("cannot list: {e}")))?;
    for entry in entries {
        let entry = entry.map_err(|e| ParseError::io(path, format!("cannot list: {e}")))?;
        let p = entry.path();
        if p.is_dir() {
            discover_one(&p, out)?;
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
    files.sort();
    files.dedup();
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
