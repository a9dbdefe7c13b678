//! The built-in suite (`litmus/`) wherever the binary runs, and test names resolved against it:
//! every command takes `SB`, `litmus/SB`, a file or a folder alike.

use super::AppError;
use crate::litmus;
use std::path::{Component, Path, PathBuf};

/// The environment variable naming the suite folder, ahead of every other place.
pub const SUITE_ENV: &str = "PTX_LITMUS_SUITE";

/// The suite's folder name, also the first component of the paths that name a part of it
/// (`litmus/SB`), as the README and recorded runs spell them.
pub const SUITE_DIR: &str = "litmus";

/// The built-in suite's folder: `$PTX_LITMUS_SUITE`; else `./litmus`; else `litmus/` beside
/// the executable; else the `litmus/` of the checkout the executable was built in (an
/// ancestor of its path holding `Cargo.toml`, as for `target/release/ptx-litmus`); else the
/// checkout this binary was compiled from, while it still exists.
pub fn root() -> Result<PathBuf, AppError> {
    if let Some(dir) = std::env::var_os(SUITE_ENV).filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        if !dir.is_dir() {
            return Err(format!("${SUITE_ENV}={}: not a folder", dir.display()).into());
        }
        return Ok(dir);
    }
    if Path::new(SUITE_DIR).is_dir() {
        return Ok(PathBuf::from(SUITE_DIR));
    }
    let exe = std::env::current_exe().ok();
    let beside = exe.as_deref().and_then(Path::parent).into_iter();
    let checkout = exe
        .as_deref()
        .and_then(Path::parent)
        .into_iter()
        .flat_map(Path::ancestors)
        .filter(|a| a.join("Cargo.toml").is_file());
    let built = Path::new(env!("CARGO_MANIFEST_DIR"));
    beside
        .chain(checkout)
        .chain(std::iter::once(built))
        .map(|d| d.join(SUITE_DIR))
        .find(|d| d.is_dir())
        .ok_or_else(|| {
            format!(
                "the built-in suite `{SUITE_DIR}/` is not in the current folder, beside the \
                 executable or in its checkout: set ${SUITE_ENV} to its folder, or give paths"
            )
            .into()
        })
}

/// Paths found, and paths not found each with the reason.
pub type Resolved = (Vec<PathBuf>, Vec<(PathBuf, String)>);

/// The paths a command works on: none means the built-in suite; each given path is itself
/// when it exists, else a part of the suite (`litmus/SB` → `<suite>/SB`), else the test of
/// that name in the suite (`SB` or `SB.litmus`, like `show`). A batch goes on past a bad path:
/// this gives the paths found, and each path not found with the reason (only a missing suite,
/// when no path is given, is an error).
pub fn resolve_batch(paths: &[PathBuf]) -> Result<Resolved, AppError> {
    if paths.is_empty() {
        return Ok((vec![root()?], Vec::new()));
    }
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for p in paths {
        match resolve_one(p) {
            Ok(f) => found.push(f),
            Err(e) => missing.push((p.clone(), e.to_string())),
        }
    }
    Ok((found, missing))
}

/// The tests under `paths` resolved by [`resolve_batch`], parsed as `litmus::load` does: a path
/// not found or a file that does not parse is an `Err` entry with its message, and the rest
/// still load.
pub type Loaded = Vec<(PathBuf, Result<litmus::ast::Test, String>)>;

/// Loads the tests of `paths` (none: the built-in suite) into [`Loaded`] entries.
pub fn load(paths: &[PathBuf]) -> Result<Loaded, AppError> {
    let (found, missing) = resolve_batch(paths)?;
    let mut out: Loaded = missing.into_iter().map(|(p, e)| (p, Err(e))).collect();
    out.extend(
        litmus::load(&found)
            .into_iter()
            .map(|(p, r)| (p, r.map_err(|e| e.to_string()))),
    );
    // A folder with no test in it is most likely the wrong one: say so, and go on.
    for dir in found.iter().filter(|p| p.is_dir()) {
        if !out.iter().any(|(f, _)| f.starts_with(dir)) {
            eprintln!(
                "ptx-litmus: warning: {}: no `.litmus` file in this folder",
                dir.display()
            );
        }
    }
    Ok(out)
}

/// One path, file or test name resolved as [`resolve_batch`] does.
pub fn resolve_one(path: &Path) -> Result<PathBuf, AppError> {
    if path.exists() {
        return Ok(path.to_path_buf());
    }
    let root = root().map_err(|e| {
        format!(
            "{}: cannot open: no such file or folder; {e}",
            path.display()
        )
    })?;
    if let Some(rest) = under_suite_dir(path) {
        let inside = root.join(rest);
        if inside.exists() {
            return Ok(inside);
        }
    }
    by_name(path, &root)
}

/// `rest` of a relative path `litmus/rest` (or `./litmus/rest`).
fn under_suite_dir(path: &Path) -> Option<PathBuf> {
    let mut parts = path
        .components()
        .skip_while(|c| matches!(c, Component::CurDir));
    match parts.next() {
        Some(Component::Normal(first)) if first == SUITE_DIR => Some(parts.collect()),
        _ => None,
    }
}

/// The one test of the suite whose file is `<name>.litmus`.
fn by_name(name: &Path, root: &Path) -> Result<PathBuf, AppError> {
    let shown = name.display().to_string();
    let wanted = if shown.ends_with(".litmus") {
        shown.clone()
    } else {
        format!("{shown}.litmus")
    };
    let found: Vec<PathBuf> = litmus::discover(&[root.to_path_buf()])?
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy() == wanted))
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!(
            "{shown}: cannot open: no such file or folder, and no test of that name in the suite {}",
            root.display()
        )
        .into()),
        many => {
            let names: Vec<String> = many.iter().map(|p| p.display().to_string()).collect();
            Err(format!("{shown}: ambiguous test name, matches {}", names.join(", ")).into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::under_suite_dir;
    use std::path::{Path, PathBuf};

    #[test]
    fn only_relative_paths_starting_with_the_suite_folder_name_are_parts_of_it() {
        assert_eq!(
            under_suite_dir(Path::new("litmus/SB")),
            Some(PathBuf::from("SB"))
        );
        assert_eq!(
            under_suite_dir(Path::new("./litmus/SB/SB.litmus")),
            Some(PathBuf::from("SB/SB.litmus"))
        );
        assert_eq!(under_suite_dir(Path::new("litmus")), Some(PathBuf::new()));
        assert_eq!(under_suite_dir(Path::new("/litmus/SB")), None);
        assert_eq!(under_suite_dir(Path::new("other/litmus")), None);
        assert_eq!(under_suite_dir(Path::new("SB")), None);
    }
}
