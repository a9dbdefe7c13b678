//! `ptx-litmus sass PATHS --ptxas VERSIONS [--out DIR]` and `sass PATHS --diff A B`: the
//! optcheck over several ptxas versions of the toolchain store, as a matrix of verdicts.

use super::bar::{outside, Bar};
use super::sass::load_kernels;
use super::{AppError, Exit};
use crate::cli::SassArgs;
use crate::results::{self, ResultsError};
use crate::sass::matrix::{self, Column, Matrix, Verdict};
use crate::sass::matrix_html;
use crate::sass::matrix_report as report;
use crate::sass::{tools, Tool};
use crate::toolchain::{store, version, Installed, Spec};
use std::fmt::Write;

/// The store versions asked for, oldest first, and for `--diff` the order A, B.
fn versions(args: &SassArgs) -> Result<Vec<Installed>, AppError> {
    let root = store::root();
    if let Some(ab) = &args.diff {
        let mut out = Vec::new();
        for s in ab {
            let spec: Spec = s.parse()?;
            out.extend(store::resolve(&root, std::slice::from_ref(&spec))?);
        }
        if out[0].version == out[1].version {
            return Err(format!("--diff {} {}: both name {}", ab[0], ab[1], out[0].version).into());
        }
        return Ok(out);
    }
    let specs = version::parse_specs(args.ptxas.as_deref().unwrap_or("all"))?;
    let found = store::resolve(&root, &specs)?;
    if let Some(i) = found.iter().find(|i| !i.has_ptxas()) {
        return Err(format!(
            "{} has only prebuilt cubins in the store, no ptxas",
            i.version
        )
        .into());
    }
    Ok(found)
}

/// One column per (architecture, version).
fn columns(args: &SassArgs, installed: &[Installed]) -> Vec<Column> {
    args.arch
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .flat_map(|arch| {
            installed.iter().map(move |i| Column {
                version: i.version.to_string(),
                arch: arch.to_string(),
                ptxas: i.ptxas(),
            })
        })
        .collect()
}

/// Runs the matrix or the two-version diff.
pub fn run(args: &SassArgs) -> Result<Exit, AppError> {
    let installed = versions(args)?;
    tools::find(Tool::Nvdisasm)?;
    let stress = super::stress::resolve(&args.stress)?;
    let (kernels, exit) = load_kernels(&args.paths, &stress)?;
    let named: Vec<(String, &crate::codegen::Kernel)> = kernels
        .iter()
        .map(|(p, k)| (p.display().to_string(), k))
        .collect();
    let cols = columns(args, &installed);
    if cols.is_empty() {
        return Err("--arch names no architecture".into());
    }
    let label = |c: &Column| format!("ptxas {} {}", c.version, c.arch);
    let names: Vec<String> = cols.iter().map(label).collect();
    let bar = Bar::new(cols.len() as u64, "columns");
    bar.working_on(&names[0]);
    let mut done = 0;
    let mut m = matrix::build(&named, cols, &matrix::untouched, |c, cells| {
        let failed = cells.iter().filter(|c| c.verdict != Verdict::Pass).count();
        let n = cells.len();
        outside(|| eprintln!("{}: {n} kernels, {failed} not passing", label(c)));
        done += 1;
        bar.done();
        if let Some(next) = names.get(done) {
            bar.working_on(next);
        }
    });
    drop(bar);
    if args.diff.is_some() {
        return diff(&m, exit);
    }
    let reduced = matrix::reduce_failures(&mut m, &stress, &matrix::untouched);
    if reduced > 0 {
        eprintln!("{reduced} failing cells reduced to their smallest failing test");
    }
    println!("{} kernels × {} columns", m.rows.len(), m.columns.len());
    print!("{}", report::summary_text(&m));
    if let Some(dir) = &args.out {
        write(&m, dir, args, &installed)?;
    }
    let deviates = m
        .rows
        .iter()
        .flat_map(|r| &r.cells)
        .any(|c| matches!(c.verdict, Verdict::Deviation(_)));
    Ok(if exit == Exit::Success && deviates {
        Exit::Finding
    } else {
        exit
    })
}

/// Prints what changed from A to B; exit 1 when a verdict or the memory ops changed.
fn diff(m: &Matrix, exit: Exit) -> Result<Exit, AppError> {
    let arches = m.columns.len() / 2;
    let mut finding = false;
    for k in 0..arches {
        // Columns are grouped by architecture, A then B in each group.
        let (a, b) = (2 * k, 2 * k + 1);
        print!("{}", report::diff_text(m, a, b));
        finding |= report::diff(m, a, b).iter().any(|c| c.what != "code");
    }
    Ok(if exit == Exit::Success && finding {
        Exit::Finding
    } else {
        exit
    })
}

/// The provenance block of the Markdown page.
fn provenance(args: &SassArgs, stress: &str, installed: &[Installed], tests: usize) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let command: Vec<String> = std::iter::once("ptx-litmus".to_string())
        .chain(std::env::args().skip(1))
        .collect();
    let mut s = String::new();
    let _ = writeln!(s, "- command: `{}`", command.join(" "));
    let _ = writeln!(s, "- date: {}", results::time::rfc3339(now));
    let _ = writeln!(s, "- ptx-litmus revision: `{}`", crate::GIT_REVISION);
    let _ = writeln!(
        s,
        "- architectures: {}; stress preset: {}",
        args.arch, stress
    );
    let nvdisasm = tools::version(Tool::Nvdisasm).unwrap_or_else(|e| e.to_string());
    let _ = writeln!(s, "- disassembler for every column: nvdisasm, {nvdisasm}");
    let _ = writeln!(s, "- kernels: {tests}\n");
    let _ = writeln!(
        s,
        "| version | ptxas --version | wheel | sha256 |\n|---|---|---|---|"
    );
    for i in installed {
        let said = tools::version_at(Tool::Ptxas, &i.ptxas()).unwrap_or_else(|e| e.to_string());
        let src = i.source();
        let field = |k: &str| {
            src.lines()
                .find_map(|l| l.strip_prefix(k).map(|v| v.trim().to_string()))
                .unwrap_or_default()
        };
        let _ = writeln!(
            s,
            "| {} | {said} | {} | `{}` |",
            i.version,
            field("wheel "),
            field("sha256 ")
        );
    }
    s
}

/// Writes matrix.md, matrix.html and matrix.json into `dir`.
fn write(
    m: &Matrix,
    dir: &std::path::Path,
    args: &SassArgs,
    installed: &[Installed],
) -> Result<(), AppError> {
    let md = dir.join("matrix.md");
    let html = dir.join("matrix.html");
    let json = dir.join("matrix.json");
    for p in [&md, &html, &json] {
        if p.exists() && !args.force {
            return Err(ResultsError::Exists { path: p.clone() }.into());
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let stress = super::stress::resolve(&args.stress)?.describe();
    let prov = provenance(args, &stress, installed, m.rows.len());
    results::write_text(&md, &report::markdown(m, &prov))?;
    results::write_text(&html, &matrix_html::page(m, &prov))?;
    results::write_text(&json, &results::to_json(m))?;
    println!(
        "wrote {}, {} and {}",
        md.display(),
        html.display(),
        json.display()
    );
    Ok(())
}
