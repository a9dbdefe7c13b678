//! The compiler matrix: every kernel assembled by every ptxas of a list (and for every
//! architecture asked), each cell the optcheck's verdict with the SASS's memory-op signature
//! and hash. A ptxas older than a kernel's PTX ISA gets the kernel with `.version` lowered to
//! what it accepts (ptxas says which); the cell records that, and a kernel that then uses
//! something too new is reported unsupported with ptxas's words.

use super::deviation::{classify, Deviation};
use super::disasm::{self, SassInstr};
use super::shrink::{shrink, Failure, Reduced};
use super::signature;
use super::tools::{self, ToolError};
use super::{batch_module, check_functions, parallel_map, BATCH};
use crate::codegen::{Kernel, Stress};
use crate::litmus::ast::Test;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Disassembled functions by name.
pub type Functions = BTreeMap<String, Vec<SassInstr>>;

/// A change made to a column's disassembled functions before the check: tests plant compiler
/// faults with it; the matrix itself uses [`untouched`].
pub type Tamper<'a> = &'a (dyn Fn(&Column, &mut Functions) + Sync);

/// The tamper that changes nothing.
pub fn untouched(_: &Column, _: &mut Functions) {}

/// One column: a ptxas and the architecture it assembles for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Column {
    /// The toolkit version (`12.4.131`).
    pub version: String,
    /// The architecture (`sm_90`).
    pub arch: String,
    /// The ptxas that assembles it.
    #[serde(skip)]
    pub ptxas: PathBuf,
}

/// A cell's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every operation survived in order with its strength and scope.
    Pass,
    /// The check failed this way.
    Deviation(Deviation),
    /// This ptxas does not accept the kernel (PTX ISA or architecture too new for it).
    Unsupported,
    /// The tools failed otherwise.
    Error,
}

impl Verdict {
    /// The word a cell shows.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Deviation(d) => d.as_str(),
            Verdict::Unsupported => "unsupported",
            Verdict::Error => "error",
        }
    }
}

/// Most SASS lines a failing cell keeps (a role's main path is far shorter).
const MAX_SASS_LINES: usize = 64;

/// One (test, column) cell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cell {
    /// The verdict.
    pub verdict: Verdict,
    /// The PTX ISA the kernel was lowered to for this ptxas, when it was.
    pub isa_lowered: Option<String>,
    /// Each role's memory events (empty when it did not assemble).
    pub memory_ops: Vec<Vec<String>>,
    /// The hash of the roles' SASS (`None` when it did not assemble).
    pub hash: Option<String>,
    /// The check's problems, or the tool's first error lines.
    pub errors: Vec<String>,
    /// The exact SASS of the first failing role's main path.
    pub sass_lines: Vec<String>,
    /// For a deviation: the smallest test failing the same way, with its SASS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reduced: Option<Reduced>,
}

/// One test's row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The test's name.
    pub test: String,
    /// Its file.
    pub path: String,
    /// One cell per column.
    pub cells: Vec<Cell>,
}

/// The whole matrix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Matrix {
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// One row per kernel, in the order given.
    pub rows: Vec<Row>,
}

/// The PTX with its `.version` replaced by the one ptxas says it accepts (`current version is
/// '7.8'`), and that version; `None` when the log says nothing of the kind.
pub fn lower_isa(ptx: &str, log: &str) -> Option<(String, String)> {
    let at = log.find("current version is '")? + "current version is '".len();
    let v = log[at..].split('\'').next()?;
    let ok = v.split('.').count() == 2 && v.split('.').all(|p| p.parse::<u32>().is_ok());
    if !ok {
        return None;
    }
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.lines() {
        if line.trim_start().starts_with(".version") {
            out.push_str(&format!(".version {v}"));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    Some((out, v.to_string()))
}

/// Assembles, lowering the PTX ISA once when ptxas asks for it, and disassembles.
fn assemble(ptx: &str, col: &Column) -> Result<(String, Option<String>), ToolError> {
    let first = tools::assemble_with(&col.ptxas, ptx, &col.arch);
    let (cubin, lowered) = match first {
        Err(ToolError::Failed { log, .. }) if lower_isa(ptx, &log).is_some() => {
            let (ptx, v) = lower_isa(ptx, &log).expect("checked above");
            (tools::assemble_with(&col.ptxas, &ptx, &col.arch)?, Some(v))
        }
        other => (other?, None),
    };
    Ok((tools::disassemble(&cubin)?, lowered))
}

/// The cell of a kernel found among disassembled functions named with `prefix`.
fn cell(
    kernel: &Kernel,
    funcs: &BTreeMap<String, Vec<SassInstr>>,
    prefix: &str,
    isa: Option<String>,
) -> Cell {
    let check = check_functions(kernel, funcs, prefix);
    let sig = signature::of(kernel, funcs, prefix);
    let failing = kernel
        .roles
        .iter()
        .zip(&check.roles)
        .find(|(_, c)| c.error.is_some())
        .map(|(r, _)| (r, funcs.get(&format!("{prefix}{}", r.func))));
    let (verdict, sass_lines) = match failing {
        Some((role, f)) => (
            Verdict::Deviation(classify(role, f.map(Vec::as_slice))),
            f.map_or_else(Vec::new, |f| main_path_lines(f)),
        ),
        None if !check.fragment_errors.is_empty() => {
            (Verdict::Deviation(Deviation::Dropped), Vec::new())
        }
        None => (Verdict::Pass, Vec::new()),
    };
    Cell {
        verdict,
        isa_lowered: isa,
        memory_ops: sig.memory_ops,
        hash: Some(sig.hash),
        errors: check.errors(),
        sass_lines,
        reduced: None,
    }
}

/// A function's main path as `nvdisasm` printed it (without addresses), bounded.
fn main_path_lines(f: &[SassInstr]) -> Vec<String> {
    let end = f
        .iter()
        .position(|i| i.base() == "RET")
        .map_or(f.len(), |p| p + 1);
    f[..end]
        .iter()
        .take(MAX_SASS_LINES)
        .map(|i| match &i.pred {
            Some(p) => format!("@{p} {} {}", i.opcode, i.operands),
            None => format!("{} {}", i.opcode, i.operands),
        })
        .map(|s| s.trim_end().to_string())
        .collect()
}

/// A tool's first error lines without the scratch file's path (`ptxas /tmp/…/kernel.ptx,
/// line 9; error : …` becomes `line 9; error : …`), so that a page is the same from run to run.
pub fn tool_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| !l.trim().is_empty() && !l.ends_with("failed:"))
        .map(|l| match l.find("kernel.ptx, ") {
            Some(at) => l[at + "kernel.ptx, ".len()..].to_string(),
            None => l.to_string(),
        })
        .take(4)
        .collect()
}

/// The cell of a kernel assembled alone.
fn alone(kernel: &Kernel, col: &Column, tamper: Tamper) -> Cell {
    match assemble(&kernel.ptx, col) {
        Ok((sass, isa)) => {
            let mut funcs = disasm::functions(&sass);
            tamper(col, &mut funcs);
            cell(kernel, &funcs, "", isa)
        }
        Err(e) => {
            let verdict = match e {
                ToolError::Failed {
                    tool: tools::Tool::Ptxas,
                    ..
                } => Verdict::Unsupported,
                _ => Verdict::Error,
            };
            let errors = tool_lines(&e.to_string());
            Cell {
                verdict,
                isa_lowered: None,
                memory_ops: Vec::new(),
                hash: None,
                errors,
                sass_lines: Vec::new(),
                reduced: None,
            }
        }
    }
}

/// The cells of one batch; a batch that does not assemble is redone kernel by kernel.
fn batch_cells(batch: &[&Kernel], col: &Column, tamper: Tamper) -> Vec<Cell> {
    match assemble(&batch_module(batch), col) {
        Ok((sass, isa)) => {
            let mut funcs = disasm::functions(&sass);
            tamper(col, &mut funcs);
            batch
                .iter()
                .enumerate()
                .map(|(i, k)| cell(k, &funcs, &format!("b{i}_"), isa.clone()))
                .collect()
        }
        Err(_) => batch.iter().map(|k| alone(k, col, tamper)).collect(),
    }
}

/// One column's cells, kernels batched with others of the same PTX ISA so that one kernel
/// too new for an old ptxas does not hold back the rest.
fn column_cells(kernels: &[&Kernel], col: &Column, tamper: Tamper) -> Vec<Cell> {
    let mut by_isa: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
    for (i, k) in kernels.iter().enumerate() {
        by_isa.entry(k.ptx_version).or_default().push(i);
    }
    let batches: Vec<Vec<usize>> = by_isa
        .values()
        .flat_map(|ix| ix.chunks(BATCH).map(<[usize]>::to_vec))
        .collect();
    let done = parallel_map(&batches, |b| {
        let refs: Vec<&Kernel> = b.iter().map(|&i| kernels[i]).collect();
        batch_cells(&refs, col, tamper)
    });
    let mut out: Vec<Option<Cell>> = vec![None; kernels.len()];
    for (b, cells) in batches.iter().zip(done) {
        for (&i, c) in b.iter().zip(cells) {
            out[i] = Some(c);
        }
    }
    out.into_iter()
        .map(|c| c.expect("every kernel is in one batch"))
        .collect()
}

/// Builds the matrix of `kernels` (with their files) over `columns`, each column's SASS passed
/// through `tamper` before the check; `progress` is told each column as it is done.
pub fn build(
    kernels: &[(String, &Kernel)],
    columns: Vec<Column>,
    tamper: Tamper,
    mut progress: impl FnMut(&Column, &[Cell]),
) -> Matrix {
    let refs: Vec<&Kernel> = kernels.iter().map(|(_, k)| *k).collect();
    let mut rows: Vec<Row> = kernels
        .iter()
        .map(|(path, k)| Row {
            test: k.layout.test.clone(),
            path: path.clone(),
            cells: Vec::new(),
        })
        .collect();
    for col in &columns {
        let cells = column_cells(&refs, col, tamper);
        progress(col, &cells);
        for (row, c) in rows.iter_mut().zip(cells) {
            row.cells.push(c);
        }
    }
    Matrix { columns, rows }
}

/// How `test`'s kernel fails the check under `col` (its SASS passed through `tamper`); `None`
/// when it passes, or cannot be generated or assembled.
pub fn failure_of(test: &Test, stress: &Stress, col: &Column, tamper: Tamper) -> Option<Failure> {
    let kernel = crate::codegen::build(test, stress).ok()?;
    let (sass, isa) = assemble(&kernel.ptx, col).ok()?;
    let mut funcs = disasm::functions(&sass);
    tamper(col, &mut funcs);
    let c = cell(&kernel, &funcs, "", isa);
    matches!(c.verdict, Verdict::Deviation(_)).then(|| Failure {
        verdict: c.verdict.as_str().into(),
        sass_lines: c.sass_lines,
    })
}

/// Reduces the test of every cell that deviates to the smallest test its column fails the
/// same way ([`shrink`]), recorded in the cell; returns how many cells were reduced.
pub fn reduce_failures(m: &mut Matrix, stress: &Stress, tamper: Tamper) -> usize {
    let mut reduced = 0;
    for row in &mut m.rows {
        let Ok(test) = crate::litmus::parse_file(Path::new(&row.path)) else {
            continue;
        };
        for (c, col) in row.cells.iter_mut().zip(&m.columns) {
            if !matches!(c.verdict, Verdict::Deviation(_)) {
                continue;
            }
            let f = Failure {
                verdict: c.verdict.as_str().into(),
                sass_lines: c.sass_lines.clone(),
            };
            c.reduced = Some(shrink(&test, f, |t| failure_of(t, stress, col, tamper)));
            reduced += 1;
        }
    }
    reduced
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_isa_is_lowered_to_what_ptxas_names() {
        let ptx = "//\n.version 8.0\n.target sm_90\n";
        let log = "ptxas k.ptx, line 2; fatal   : Unsupported .version 8.0; current version is \
                   '7.8'\nptxas fatal   : Ptx assembly aborted due to errors";
        let (out, v) = lower_isa(ptx, log).unwrap();
        assert_eq!(v, "7.8");
        assert_eq!(out, "//\n.version 7.8\n.target sm_90\n");
        assert_eq!(lower_isa(ptx, "ptxas fatal: Unknown option"), None);
        assert_eq!(lower_isa(ptx, "current version is 'x.y'"), None);
    }

    #[test]
    fn tool_messages_lose_the_scratch_path() {
        let log = "ptxas failed:\nptxas /tmp/ptx-litmus-1-2/kernel.ptx, line 109; error   : \
                   Illegal modifier\n\nptxas fatal   : aborted";
        assert_eq!(
            tool_lines(log),
            [
                "line 109; error   : Illegal modifier",
                "ptxas fatal   : aborted"
            ]
        );
    }
}
