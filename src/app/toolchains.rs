//! `ptx-litmus toolchains list|install|path`: the store of ptxas versions.

use super::{AppError, Exit};
use crate::cli::{ToolchainsAction, ToolchainsArgs};
use crate::codegen::Stress;
use crate::harness::cuda::compiler::{offline_cubin, OfflineError};
use crate::toolchain::{install, store, version, Version};

/// Runs `toolchains`.
pub fn run(args: &ToolchainsArgs) -> Result<Exit, AppError> {
    let root = store::root();
    match &args.action {
        ToolchainsAction::List => list(&root),
        ToolchainsAction::Install { versions } => install_all(&root, versions),
        ToolchainsAction::Prebuild {
            spec,
            paths,
            stress,
            arch,
        } => prebuild(&root, spec, paths, &super::stress::resolve(stress)?, arch),
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

/// Installs each version; a bad or failed one is reported and the others go on.
fn install_all(root: &std::path::Path, versions: &[String]) -> Result<Exit, AppError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let date = crate::results::time::rfc3339(now);
    std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let mut exit = Exit::Success;
    for v in versions {
        let done = v
            .parse::<Version>()
            .and_then(|v| install::install(root, &v, &date));
        match done {
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

/// Writes `bytes` to `path`, making its folder first.
fn write_beside(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::create_dir_all(path.parent().expect("a store file has a folder"))
        .and_then(|()| std::fs::write(path, bytes))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes each kernel's cubin of each selected version into the store, and beside `cubins/`
/// the PTX each was made of.
fn prebuild(
    root: &std::path::Path,
    spec: &str,
    paths: &[std::path::PathBuf],
    stress: &Stress,
    arch: &str,
) -> Result<Exit, AppError> {
    let installed = store::resolve(root, &version::parse_specs(spec)?)?;
    let (kernels, mut exit) = super::sass::load_kernels(paths, stress)?;
    for i in installed.iter().filter(|i| i.has_ptxas()) {
        let (mut written, mut refused) = (0, 0);
        for (path, k) in &kernels {
            let made = offline_cubin(i, &k.ptx, arch).and_then(|(cubin, _)| {
                let kept = write_beside(&i.cubin_path(arch, &k.ptx), &cubin)
                    .and_then(|()| write_beside(&i.source_path(&k.ptx), k.ptx.as_bytes()));
                kept.map_err(|message| OfflineError {
                    refused: false,
                    message,
                })
            });
            let Err(e) = made else {
                written += 1;
                continue;
            };
            let first = e.message.lines().take(2).collect::<Vec<_>>().join(" ");
            eprintln!("{}: {first}", path.display());
            if e.refused {
                refused += 1;
            } else {
                exit = Exit::Error;
            }
        }
        let dir = i.dir.join("cubins");
        let (v, n) = (&i.version, kernels.len());
        print!("{v}: {written} of {n} cubins in {}", dir.display());
        if refused > 0 {
            print!(
                "; {refused} kernel(s) this ptxas does not accept (above; under `--compiler \
                 ptxas:{v}` their tests are refused with its message)"
            );
        }
        println!();
    }
    Ok(exit)
}
