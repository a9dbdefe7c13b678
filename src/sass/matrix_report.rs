//! The compiler matrix for people: which cells differ from the rest of their row, a summary
//! per column, the Markdown page (matrix, differences, failures with their exact SASS) and the
//! tests that changed between two columns.

use super::matrix::{Cell, Matrix, Row, Verdict};
use super::shrink::Reduced;
use crate::text::{md_code, md_text, pad};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A column's label: its version, with the architecture when the matrix has several.
pub fn label(m: &Matrix, c: usize) -> String {
    let col = &m.columns[c];
    let arches: std::collections::BTreeSet<&str> =
        m.columns.iter().map(|c| c.arch.as_str()).collect();
    if arches.len() > 1 {
        format!("{} {}", col.version, col.arch)
    } else {
        col.version.clone()
    }
}

/// The memory-op signature most cells of the row share (ties: the later column's), among the
/// cells that assembled; `None` when none did.
pub fn majority(row: &Row) -> Option<&Vec<Vec<String>>> {
    let mut count: BTreeMap<&Vec<Vec<String>>, (usize, usize)> = BTreeMap::new();
    for (i, c) in row.cells.iter().enumerate() {
        if c.hash.is_some() {
            let e = count.entry(&c.memory_ops).or_default();
            e.0 += 1;
            e.1 = i;
        }
    }
    count
        .into_iter()
        .max_by_key(|(_, (n, last))| (*n, *last))
        .map(|(s, _)| s)
}

/// Whether a cell's memory ops differ from its row's majority.
pub fn stands_out(row: &Row, c: &Cell) -> bool {
    c.hash.is_some() && majority(row).is_some_and(|m| *m != c.memory_ops)
}

/// Verdict counts of one column, in a fixed order.
fn counts(m: &Matrix, c: usize) -> BTreeMap<&'static str, usize> {
    let mut out = BTreeMap::new();
    for r in &m.rows {
        *out.entry(r.cells[c].verdict.as_str()).or_default() += 1;
    }
    out
}

/// The per-column summary lines: verdict counts, kernels lowered to an older PTX ISA, cells
/// whose memory ops differ from their row's majority.
pub fn summary(m: &Matrix) -> Vec<(String, String)> {
    (0..m.columns.len())
        .map(|c| {
            let mut parts: Vec<String> = counts(m, c)
                .into_iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect();
            let lowered = m
                .rows
                .iter()
                .filter(|r| r.cells[c].isa_lowered.is_some())
                .count();
            let odd = m.rows.iter().filter(|r| stands_out(r, &r.cells[c])).count();
            parts.push(format!("{lowered} with PTX ISA lowered"));
            parts.push(format!("{odd} with memory ops unlike the row's majority"));
            (label(m, c), parts.join(", "))
        })
        .collect()
}

/// The summary as text, one line per column.
pub fn summary_text(m: &Matrix) -> String {
    let width = (0..m.columns.len())
        .map(|c| label(m, c).len())
        .max()
        .unwrap_or(0);
    summary(m)
        .into_iter()
        .map(|(l, s)| format!("  {}  {s}\n", pad(&l, width)))
        .collect()
}

/// How one test differs between two columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The test.
    pub test: String,
    /// What changed: `verdict`, `memory ops` or `code` (same memory ops, other instructions).
    pub what: &'static str,
    /// The two cells' verdicts.
    pub verdicts: (Verdict, Verdict),
}

/// The tests whose cells differ between columns `a` and `b`, most serious first.
pub fn diff(m: &Matrix, a: usize, b: usize) -> Vec<Change> {
    let mut out: Vec<Change> = m
        .rows
        .iter()
        .filter_map(|r| {
            let (x, y) = (&r.cells[a], &r.cells[b]);
            let what = if x.verdict != y.verdict {
                "verdict"
            } else if x.memory_ops != y.memory_ops {
                "memory ops"
            } else if x.hash != y.hash {
                "code"
            } else {
                return None;
            };
            Some(Change {
                test: r.test.clone(),
                what,
                verdicts: (x.verdict, y.verdict),
            })
        })
        .collect();
    let rank = |w: &str| {
        ["verdict", "memory ops", "code"]
            .iter()
            .position(|x| *x == w)
    };
    out.sort_by_key(|c| rank(c.what));
    out
}

/// The diff as text.
pub fn diff_text(m: &Matrix, a: usize, b: usize) -> String {
    let changes = diff(m, a, b);
    let mut s = format!(
        "{} → {}: {} of {} tests changed\n",
        label(m, a),
        label(m, b),
        changes.len(),
        m.rows.len()
    );
    for c in &changes {
        let _ = writeln!(
            s,
            "  {:<10} {}  ({} → {})",
            c.what,
            c.test,
            c.verdicts.0.as_str(),
            c.verdicts.1.as_str()
        );
    }
    for what in ["verdict", "memory ops", "code"] {
        let n = changes.iter().filter(|c| c.what == what).count();
        let _ = writeln!(s, "{what}: {n}");
    }
    s
}

fn short(hash: &Option<String>) -> String {
    hash.as_deref()
        .map_or("-".into(), |h| h[..8.min(h.len())].to_string())
}

/// A cell of the Markdown matrix: verdict and short hash, bold with a marker when its memory
/// ops differ from the row's majority, `↓ISA` when its PTX ISA was lowered.
fn md_cell(row: &Row, c: &Cell) -> String {
    let mut s = format!("{} {}", c.verdict.as_str(), short(&c.hash));
    if let Some(v) = &c.isa_lowered {
        s.push_str(&format!(" ↓{v}"));
    }
    if stands_out(row, c) {
        format!("**⚠ {s}**")
    } else {
        s
    }
}

fn md_summary(m: &Matrix, out: &mut String) {
    let _ = writeln!(out, "## Summary\n\n| column | cells |\n|---|---|");
    for (l, s) in summary(m) {
        let _ = writeln!(out, "| {} | {} |", md_text(&l), md_text(&s));
    }
}

fn md_signature(ops: &[Vec<String>]) -> String {
    ops.iter()
        .enumerate()
        .map(|(i, r)| format!("P{i}: {}", r.join("; ")))
        .collect::<Vec<_>>()
        .join(" / ")
}

fn md_differences(m: &Matrix, out: &mut String) {
    let odd: Vec<&Row> = m
        .rows
        .iter()
        .filter(|r| r.cells.iter().any(|c| stands_out(r, c)))
        .collect();
    let _ = writeln!(
        out,
        "\n## Memory-op differences\n\nTests where some column's SASS accesses, fences or \
         barriers differ in order, strength, scope or location from the others: {}.\n",
        odd.len()
    );
    for r in odd {
        let _ = writeln!(out, "- {}", md_code(&r.test));
        let mut groups: BTreeMap<&Vec<Vec<String>>, Vec<String>> = BTreeMap::new();
        for (i, c) in r.cells.iter().enumerate().filter(|(_, c)| c.hash.is_some()) {
            groups.entry(&c.memory_ops).or_default().push(label(m, i));
        }
        for (sig, cols) in groups {
            let _ = writeln!(
                out,
                "  - {}: {}",
                md_text(&cols.join(", ")),
                md_code(&md_signature(sig))
            );
        }
    }
}

fn md_failures(m: &Matrix, out: &mut String) {
    let _ = writeln!(out, "\n## Failures\n");
    let mut any = false;
    for r in &m.rows {
        for (i, c) in r.cells.iter().enumerate() {
            if matches!(c.verdict, Verdict::Pass) {
                continue;
            }
            any = true;
            let _ = writeln!(
                out,
                "### {} with {}: {}\n",
                md_text(&r.test),
                md_text(&label(m, i)),
                c.verdict.as_str()
            );
            for e in &c.errors {
                let _ = writeln!(out, "- {}", md_code(e));
            }
            if !c.sass_lines.is_empty() {
                let _ = writeln!(out, "\n```\n{}\n```", c.sass_lines.join("\n"));
            }
            if let Some(r) = &c.reduced {
                md_reduced(r, out);
            }
            out.push('\n');
        }
    }
    if !any {
        let _ = writeln!(out, "None: every cell passed or was not assembled.");
    }
}

/// The smallest test that fails the same way, and its SASS.
fn md_reduced(r: &Reduced, out: &mut String) {
    let _ = writeln!(
        out,
        "\nReduced to {} threads, {} instructions ({} candidates tried), still {}:\n\n\
         ```\n{}```\n\n```\n{}\n```",
        r.threads,
        r.instructions,
        r.tries,
        r.failure.verdict,
        r.text,
        r.failure.sass_lines.join("\n")
    );
}

fn md_matrix(m: &Matrix, out: &mut String) {
    let labels: Vec<String> = (0..m.columns.len())
        .map(|c| md_text(&label(m, c)))
        .collect();
    let _ = writeln!(
        out,
        "\n## Matrix\n\nEach cell: the optcheck's verdict, the first 8 hex digits of the SASS \
         hash of the test's roles, `↓X.Y` when the PTX ISA was lowered for that ptxas; **⚠** \
         marks memory ops unlike the row's majority.\n\n| test | {} |\n|---|{}",
        labels.join(" | "),
        "---|".repeat(labels.len())
    );
    for r in &m.rows {
        let cells: Vec<String> = r.cells.iter().map(|c| md_cell(r, c)).collect();
        let _ = writeln!(out, "| {} | {} |", md_text(&r.test), cells.join(" | "));
    }
}

/// The Markdown page: `provenance` (already Markdown) first, then summary, differences,
/// failures and the matrix.
pub fn markdown(m: &Matrix, provenance: &str) -> String {
    let mut out = String::from("# SASS matrix: the optcheck across ptxas versions\n\n");
    out.push_str(provenance);
    out.push('\n');
    md_summary(m, &mut out);
    md_differences(m, &mut out);
    md_failures(m, &mut out);
    md_matrix(m, &mut out);
    out
}
