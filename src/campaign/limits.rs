//! What comes back from a GPU machine: only files under `$OUT`, at most 8 of them, each at most
//! 16 MiB and 64 MiB together, no deeper than `$OUT/a/b/file`, each name of letters, digits,
//! `.`, `_` and `-` alone. A campaign writes one archive per step plus a summary, and checks
//! them against these numbers before it ends, so that nothing is silently left behind.

use std::path::Path;

/// Files that come back at most.
pub const MAX_FILES: usize = 8;
/// Bytes of one file at most.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// Bytes of all files together at most.
pub const MAX_TOTAL_BYTES: u64 = 64 << 20;
/// Folders between `$OUT` and a file at most.
pub const MAX_DEPTH: usize = 2;

/// Whether a file or folder name comes back: letters, digits, `.`, `_`, `-`.
pub fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// `name` with every other character replaced by `-`.
pub fn plain(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() || s == "." || s == ".." {
        "-".into()
    } else {
        s
    }
}

/// The files under `out` (relative paths with their sizes), and what would not come back.
pub fn check(out: &Path) -> Result<Vec<(String, u64)>, Vec<String>> {
    check_within(out, MAX_FILES)
}

/// [`check`] for an `out` that may hold `max_files` of the files that come back (others
/// share the call's `$OUT`).
pub fn check_within(out: &Path, max_files: usize) -> Result<Vec<(String, u64)>, Vec<String>> {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    walk(out, "", 0, &mut files, &mut problems);
    files.sort();
    if files.len() > max_files {
        problems.push(format!(
            "{} files, more than the {max_files} that come back",
            files.len()
        ));
    }
    for (name, size) in &files {
        if *size > MAX_FILE_BYTES {
            problems.push(format!("{name}: {size} bytes, more than {MAX_FILE_BYTES}"));
        }
    }
    let total: u64 = files.iter().map(|(_, s)| s).sum();
    if total > MAX_TOTAL_BYTES {
        problems.push(format!("{total} bytes in all, more than {MAX_TOTAL_BYTES}"));
    }
    if problems.is_empty() {
        Ok(files)
    } else {
        Err(problems)
    }
}

/// Bytes kept back for the summary a campaign writes after its last archive.
pub const SUMMARY_ROOM: u64 = 64 << 10;

/// How large one more file under `out` may be for everything to come back: at most
/// [`MAX_FILE_BYTES`], and no more than the files already there leave of
/// [`MAX_TOTAL_BYTES`] once [`SUMMARY_ROOM`] is kept back.
pub fn room(out: &Path) -> u64 {
    let (mut files, mut bad) = (Vec::new(), Vec::new());
    walk(out, "", 0, &mut files, &mut bad);
    let used: u64 = files.iter().map(|(_, size)| size).sum();
    MAX_TOTAL_BYTES
        .saturating_sub(used + SUMMARY_ROOM)
        .min(MAX_FILE_BYTES)
}

/// How many files are under `out`: each takes one of the [`MAX_FILES`] that come back.
pub fn count(out: &Path) -> usize {
    let (mut files, mut bad) = (Vec::new(), Vec::new());
    walk(out, "", 0, &mut files, &mut bad);
    files.len() + bad.len()
}

fn walk(
    dir: &Path,
    rel: &str,
    depth: usize,
    files: &mut Vec<(String, u64)>,
    bad: &mut Vec<String>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        bad.push(format!("{}: cannot be listed", dir.display()));
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let shown = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if !plain_name(&name) {
            bad.push(format!(
                "{shown}: a name of other than letters, digits, '.', '_', '-'"
            ));
        }
        match e.file_type() {
            Ok(t) if t.is_dir() && depth < MAX_DEPTH => {
                walk(&e.path(), &shown, depth + 1, files, bad)
            }
            Ok(t) if t.is_dir() => bad.push(format!("{shown}: a folder deeper than {MAX_DEPTH}")),
            Ok(t) if t.is_file() => files.push((shown, e.metadata().map_or(0, |m| m.len()))),
            _ => bad.push(format!("{shown}: not a plain file")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("limits-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn names_are_plain_or_made_plain() {
        assert!(plain_name("litmus-basic.tar.gz"));
        assert!(!plain_name("MP+rel.json"));
        assert!(!plain_name(".."));
        assert_eq!(plain("MP+rel gpu"), "MP-rel-gpu");
        assert_eq!(plain(""), "-");
    }

    #[test]
    fn the_room_left_for_one_more_file_keeps_the_total_and_the_summary_in() {
        let d = scratch("room");
        assert_eq!(room(&d), MAX_FILE_BYTES);
        for i in 0..3 {
            let f = std::fs::File::create(d.join(format!("s{i}.tar"))).unwrap();
            f.set_len(MAX_FILE_BYTES).unwrap();
        }
        assert_eq!(room(&d), MAX_FILE_BYTES - SUMMARY_ROOM);
        let f = std::fs::File::create(d.join("s3.tar")).unwrap();
        f.set_len(MAX_FILE_BYTES - SUMMARY_ROOM - 10).unwrap();
        assert_eq!(room(&d), 10);
        f.set_len(MAX_FILE_BYTES).unwrap();
        assert_eq!(room(&d), 0);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_exact_limits_pass_and_one_more_fails() {
        let d = scratch("exact");
        // Eight files: four of exactly 16 MiB (64 MiB in all) and four empty ones.
        for i in 0..4 {
            let f = std::fs::File::create(d.join(format!("s{i}.tar"))).unwrap();
            f.set_len(MAX_FILE_BYTES).unwrap();
        }
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        for n in ["x", "a/y", "a/b/z", "summary.txt"] {
            std::fs::write(d.join(n), b"").unwrap();
        }
        let ok = check(&d).unwrap();
        assert_eq!(ok.len(), MAX_FILES);
        // A ninth file, a byte more, a folder deeper and a bad name each fail, by name.
        std::fs::write(d.join("ninth"), b"").unwrap();
        assert!(check(&d).unwrap_err()[0].contains("9 files"));
        std::fs::remove_file(d.join("ninth")).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(d.join("s0.tar"))
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let e = check(&d).unwrap_err();
        assert!(e.iter().any(|p| p.starts_with("s0.tar")), "{e:?}");
        assert!(e.iter().any(|p| p.contains("in all")), "{e:?}");
        std::fs::OpenOptions::new()
            .write(true)
            .open(d.join("s0.tar"))
            .unwrap()
            .set_len(1)
            .unwrap();
        std::fs::create_dir_all(d.join("a/b/c")).unwrap();
        assert!(check(&d).unwrap_err()[0].contains("a/b/c: a folder deeper"));
        std::fs::remove_dir(d.join("a/b/c")).unwrap();
        std::fs::rename(d.join("x"), d.join("x+y")).unwrap();
        assert!(check(&d).unwrap_err()[0].starts_with("x+y: a name"));
        let _ = std::fs::remove_dir_all(&d);
    }
}
