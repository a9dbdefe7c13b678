//! `ptx-litmus sass TEST|DIR`: assemble each test's kernel with ptxas, disassemble it, check
//! that every role's operations survived, and print the PTX → SASS mapping.

use super::bar::Bar;
use super::{AppError, Exit};
use crate::cli::SassArgs;
use crate::codegen::{self, CodegenError, Kernel, Stress};
use crate::sass::{self, KernelCheck, Tool};
use std::path::PathBuf;

/// Runs `sass`.
pub fn run(args: &SassArgs) -> Result<Exit, AppError> {
    if args.arch.contains(',') {
        return Err("several architectures need --ptxas (a matrix of versions)".into());
    }
    // Fail early, with the install hint, when a tool is missing.
    sass::tools::find(Tool::Ptxas)?;
    sass::tools::find(Tool::Nvdisasm)?;
    let stress = super::stress::resolve(&args.stress)?;
    let (kernels, mut exit) = load_kernels(&args.paths, &stress)?;
    let refs: Vec<&codegen::Kernel> = kernels.iter().map(|(_, k)| k).collect();
    let bar = Bar::new(refs.len() as u64, "kernels");
    bar.working_on(&format!("ptxas for {}", args.arch));
    let counter = bar.counter();
    let results = sass::check_many_counted(&refs, &args.arch, |k| counter.inc(k));
    drop(bar);
    let mut checks: Vec<KernelCheck> = Vec::new();
    let mut failed = 0;
    for ((path, _), r) in kernels.iter().zip(results) {
        match r {
            Ok(c) if c.ok() => {
                println!("pass {}", path.display());
                if args.verbose {
                    print_roles(&c);
                }
                checks.push(c);
            }
            Ok(c) => {
                failed += 1;
                println!("FAIL {}", path.display());
                for e in c.errors() {
                    println!("     {e}");
                }
                checks.push(c);
            }
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                exit = Exit::Error;
            }
        }
    }
    println!(
        "\nPTX → SASS ({}, {}):",
        args.arch,
        sass::tools::version(Tool::Ptxas)?
    );
    for (ptx, sass) in sass::mapping_table(&checks) {
        let seqs: Vec<String> = sass.into_iter().collect();
        println!("  {ptx:<46} {}", seqs.join("  |  "));
    }
    println!("\n{} kernels checked, {} failed", checks.len(), failed);
    if failed > 0 && exit == Exit::Success {
        exit = Exit::Finding;
    }
    Ok(exit)
}

/// The kernels of the tests under `paths`; a test that does not parse or generate is
/// reported (exit 2), one whose construct codegen refuses is skipped with the reason.
pub fn load_kernels(
    paths: &[PathBuf],
    stress: &Stress,
) -> Result<(Vec<(PathBuf, Kernel)>, Exit), AppError> {
    let mut exit = Exit::Success;
    let mut kernels = Vec::new();
    for (path, parsed) in super::suite::load(paths)? {
        match parsed {
            Err(e) => {
                eprintln!("{e}");
                exit = Exit::Error;
            }
            Ok(test) => match codegen::build(&test, stress) {
                Ok(k) => kernels.push((path, k)),
                Err(e @ CodegenError::Unsupported { .. }) => {
                    println!("skip {}: {e}", path.display());
                }
                Err(e) => {
                    eprintln!("{}: {e}", path.display());
                    exit = Exit::Error;
                }
            },
        }
    }
    Ok((kernels, exit))
}

fn print_roles(c: &KernelCheck) {
    for r in &c.roles {
        println!("     P{} ({}):", r.role, r.func);
        for m in &r.mappings {
            println!("       {:<50} {}", m.ptx, m.sass.join(" + "));
        }
    }
}
