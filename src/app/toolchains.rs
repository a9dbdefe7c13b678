//! `ptx-litmus toolchains list|available|install|path|prebuild`: the store of ptxas versions.

use super::bar::{outside, Bar};
use super::{AppError, Exit};
use crate::cli::{ToolchainsAction, ToolchainsArgs};
use crate::codegen::Stress;
use crate::harness::cuda::compiler::{offline_cubin, OfflineError};
use crate::toolchain::index::{newest_per_minor, Index, Wanted};
use crate::toolchain::{install, store, version, Version};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Runs `toolchains`.
pub fn run(args: &ToolchainsArgs) -> Result<Exit, AppError> {
    let root = store::root();
    match &args.action {
        ToolchainsAction::List => list(&root),
        ToolchainsAction::Install { versions } => install_all(&root, versions),
        ToolchainsAction::Available => available(&root),
        ToolchainsAction::Prebuild {
            spec,
            paths,
            stress,
            arch,
            prune,
        } => {
            let stress = super::stress::resolve(stress)?;
            prebuild(&root, spec, paths, &stress, (arch, *prune))
        }
        ToolchainsAction::Path { spec } => {
            let specs = version::parse_specs(spec)?;
            for i in store::resolve(&root, &specs)? {
                println!("{}\t{}", i.version, i.ptxas().display());
            }
            Ok(Exit::Success)
        }
    }
}

fn list(root: &std::path::Path) -> Result<Exit, AppError> {
    let all = store::installed(root);
    println!("toolchain store: {}", root.display());
    for i in &all {
        let wheel = i
            .source()
            .lines()
            .find_map(|l| l.strip_prefix("wheel ").map(str::to_string))
            .unwrap_or_else(|| "(no source.txt)".into());
        println!("  {:<10} {}  {}", i.version, i.ptxas().display(), wheel);
    }
    println!("{} versions installed", all.len());
    Ok(Exit::Success)
}

/// The exact builds each request names, in order and once each; a request that cannot be
/// resolved is reported and the others go on.
fn resolve_all(requests: &[String], exit: &mut Exit) -> Vec<Version> {
    let mut index = Index::pypi();
    let mut builds: Vec<Version> = Vec::new();
    for r in requests {
        match r.parse::<Wanted>().and_then(|w| index.resolve(&w)) {
            Ok(found) => {
                for v in found {
                    if !builds.contains(&v) {
                        builds.push(v);
                    }
                }
            }
            Err(e) => {
                eprintln!("ptx-litmus: error: {r}: {e}");
                *exit = Exit::Error;
            }
        }
    }
    builds
}

/// Installs each requested build; a bad or failed one is reported and the others go on.
fn install_all(root: &std::path::Path, requests: &[String]) -> Result<Exit, AppError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let date = crate::results::time::rfc3339(now);
    let mut exit = Exit::Success;
    let builds = resolve_all(requests, &mut exit);
    if !builds.is_empty() {
        std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
    }
    for v in builds {
        match install::install(root, &v, &date) {
            Ok((dir, true)) => println!("installed {v}: {}", dir.display()),
            Ok((dir, false)) => println!("already installed {v}: {}", dir.display()),
            Err(e) => {
                eprintln!("ptx-litmus: error: {v}: {e}");
                exit = Exit::Error;
            }
        }
    }
    Ok(exit)
}

/// Prints, per minor release from 11.8, the newest build on PyPI, whether it is installed,
/// and the minor's other builds.
fn available(root: &std::path::Path) -> Result<Exit, AppError> {
    let all = Index::pypi().all_builds()?;
    let installed: Vec<Version> = store::installed(root).iter().map(|i| i.version).collect();
    let mark = |v: &Version| {
        if installed.contains(v) {
            " (installed)"
        } else {
            ""
        }
    };
    println!("minor  newest     installed  other builds on PyPI");
    for newest in newest_per_minor(&all) {
        let others: Vec<String> = all
            .iter()
            .filter(|v| (v.major, v.minor) == (newest.major, newest.minor) && **v != newest)
            .map(|v| format!("{v}{}", mark(v)))
            .collect();
        let here = if installed.contains(&newest) {
            "yes"
        } else {
            "no"
        };
        let name = format!("{}.{}", newest.major, newest.minor);
        let build = newest.to_string();
        println!("{name:<6} {build:<10} {here:<10} {}", others.join(", "));
    }
    println!("`toolchains install all` installs each minor's newest build; `install 12.6` one");
    Ok(Exit::Success)
}

/// Writes `bytes` to `path`, making its folder first.
fn write_beside(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::create_dir_all(path.parent().expect("a store file has a folder"))
        .and_then(|()| std::fs::write(path, bytes))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes each kernel's cubin of each selected version into the store, and beside `cubins/`
/// the PTX each was made of; with `prune`, removes the version's other cubins for `arch`.
fn prebuild(
    root: &std::path::Path,
    spec: &str,
    paths: &[std::path::PathBuf],
    stress: &Stress,
    (arch, prune): (&str, bool),
) -> Result<Exit, AppError> {
    let installed = store::resolve(root, &version::parse_specs(spec)?)?;
    let (kernels, mut exit) = super::sass::load_kernels(paths, stress)?;
    let with_ptxas: Vec<_> = installed.iter().filter(|i| i.has_ptxas()).collect();
    let bar = Bar::new((with_ptxas.len() * kernels.len()) as u64, "cubins");
    for i in with_ptxas {
        let (mut written, mut refused) = (0, 0);
        let ours: BTreeSet<PathBuf> = kernels
            .iter()
            .map(|(_, k)| i.cubin_path(arch, &k.ptx))
            .collect();
        for (path, k) in &kernels {
            bar.working_on(&format!("{} {}", i.version, path.display()));
            let made = offline_cubin(i, &k.ptx, arch).and_then(|(cubin, _)| {
                let kept = write_beside(&i.cubin_path(arch, &k.ptx), &cubin)
                    .and_then(|()| write_beside(&i.source_path(&k.ptx), k.ptx.as_bytes()));
                kept.map_err(|message| OfflineError {
                    refused: false,
                    message,
                })
            });
            bar.done();
            let Err(e) = made else {
                written += 1;
                continue;
            };
            let first = e.message.lines().take(2).collect::<Vec<_>>().join(" ");
            outside(|| eprintln!("{}: {first}", path.display()));
            if e.refused {
                refused += 1;
            } else {
                exit = Exit::Error;
            }
        }
        let dir = i.dir.join("cubins");
        let (v, n) = (&i.version, kernels.len());
        let mut line = format!("{v}: {written} of {n} cubins in {}", dir.display());
        if refused > 0 {
            line += &format!(
                "; {refused} kernel(s) this ptxas does not accept (above; under `--compiler \
                 ptxas:{v}` their tests are refused with its message)"
            );
        }
        outside(|| println!("{line}"));
        if let Some(more) = others(&dir, arch, &ours, prune)? {
            outside(|| println!("{v}: {more}"));
        }
    }
    Ok(exit)
}

/// The cubins for `arch` in `dir` that are not `ours` (made for other kernels, such as those
/// of an older code generator, which would only add to what travels): removed when `prune`
/// (the PTX kept beside, which does not travel, stays); the line that says what was found
/// or done.
fn others(
    dir: &Path,
    arch: &str,
    ours: &BTreeSet<PathBuf>,
    prune: bool,
) -> Result<Option<String>, AppError> {
    let listed = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let prefix = format!("{arch}-");
    let other: Vec<PathBuf> = listed
        .flatten()
        .map(|e| e.path())
        .filter(|p| !ours.contains(p))
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with(&prefix) && name.ends_with(".cubin")
        })
        .collect();
    if other.is_empty() {
        return Ok(None);
    }
    let bytes: u64 = other
        .iter()
        .filter_map(|p| p.metadata().ok())
        .map(|m| m.len())
        .sum();
    let what = format!(
        "{} other {arch} cubin(s) in {} ({:.1} MB), not of these kernels",
        other.len(),
        dir.display(),
        bytes as f64 / 1e6
    );
    if !prune {
        return Ok(Some(format!("{what}: `--prune` removes them")));
    }
    for p in &other {
        std::fs::remove_file(p).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(Some(format!("{what}: removed")))
}
