//! The compiler matrix as one self-contained HTML page (no script, no outside file): the
//! provenance, the per-column summary, the tests whose memory ops differ between versions, the
//! matrix with every cell that differs from its row's majority highlighted (and the ops it
//! has that the majority lacks in its tooltip), and each failure with its exact SASS and its
//! reduced test.

use super::matrix::{Cell, Matrix, Row, Verdict};
use super::matrix_report::{label, majority, stands_out, summary};
use crate::text::html as esc;
use std::collections::BTreeMap;
use std::fmt::Write;

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em}\
table{border-collapse:collapse;font-size:.8em}td,th{border:1px solid #ccc;padding:2px 5px;\
text-align:left;vertical-align:top}code,pre{font-size:.9em}\
td.pass{color:#1a6b2a}td.unsupported{color:#777}td.deviation{background:#f8d0d0;\
color:#8a0000;font-weight:bold}td.odd{background:#ffd479;font-weight:bold}\
td.odd::before{content:\"\\26A0 \"}tr:hover td{outline:1px solid #bbb}";

/// The class of a cell: its verdict's kind, and `odd` when its memory ops differ from the
/// row's majority.
pub fn cell_class(row: &Row, c: &Cell) -> String {
    let kind = match c.verdict {
        Verdict::Pass => "pass",
        Verdict::Deviation(_) => "deviation",
        Verdict::Unsupported => "unsupported",
        Verdict::Error => "error",
    };
    if stands_out(row, c) {
        format!("{kind} odd")
    } else {
        kind.to_string()
    }
}

/// Per role, the cell's memory ops that the row's majority does not have at that place.
fn odd_ops(row: &Row, c: &Cell) -> String {
    let Some(m) = majority(row) else {
        return String::new();
    };
    let mut out = Vec::new();
    for (i, ops) in c.memory_ops.iter().enumerate() {
        let want = m.get(i).map_or(&[][..], Vec::as_slice);
        if ops.as_slice() != want {
            out.push(format!(
                "P{i}: {} (majority: {})",
                ops.join("; "),
                want.join("; ")
            ));
        }
    }
    out.join("\n")
}

fn cell_html(row: &Row, c: &Cell) -> String {
    let hash = c.hash.as_deref().map_or("-", |h| &h[..8.min(h.len())]);
    let mut text = format!("{} {hash}", c.verdict.as_str());
    if let Some(v) = &c.isa_lowered {
        let _ = write!(text, " ↓{v}");
    }
    let title = if stands_out(row, c) {
        format!(" title=\"{}\"", esc(&odd_ops(row, c)))
    } else {
        String::new()
    };
    format!(
        "<td class=\"{}\"{title}>{}</td>",
        cell_class(row, c),
        esc(&text)
    )
}

/// The provenance Markdown (a list, then a table) as HTML.
fn provenance_html(md: &str, h: &mut String) {
    h.push_str("<ul>\n");
    for l in md.lines().filter_map(|l| l.strip_prefix("- ")) {
        let _ = writeln!(h, "<li>{}</li>", code_spans(l));
    }
    h.push_str("</ul>\n<table>\n");
    for l in md
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
    {
        let cells: Vec<String> = l
            .trim_matches('|')
            .split(" | ")
            .map(|c| format!("<td>{}</td>", code_spans(c.trim())))
            .collect();
        let _ = writeln!(h, "<tr>{}</tr>", cells.concat());
    }
    h.push_str("</table>\n");
}

/// Markdown text with `code` spans, as escaped HTML.
fn code_spans(s: &str) -> String {
    s.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", esc(part))
            } else {
                esc(part)
            }
        })
        .collect()
}

fn summary_html(m: &Matrix, h: &mut String) {
    h.push_str("<h2>Summary</h2>\n<table>\n<tr><th>column</th><th>cells</th></tr>\n");
    for (l, s) in summary(m) {
        let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", esc(&l), esc(&s));
    }
    h.push_str("</table>\n");
}

fn differences_html(m: &Matrix, h: &mut String) {
    let odd: Vec<&Row> = m
        .rows
        .iter()
        .filter(|r| r.cells.iter().any(|c| stands_out(r, c)))
        .collect();
    let _ = writeln!(
        h,
        "<h2 id=\"differences\">Memory-op differences ({})</h2>\n<p>Tests where some column's \
         SASS accesses, fences or barriers differ in order, strength, scope or location from the \
         others; each group of columns with its memory ops per role.</p>\n<ul>",
        odd.len()
    );
    for r in odd {
        let _ = writeln!(h, "<li><code>{}</code><ul>", esc(&r.test));
        let mut groups: BTreeMap<&Vec<Vec<String>>, Vec<String>> = BTreeMap::new();
        for (i, c) in r.cells.iter().enumerate().filter(|(_, c)| c.hash.is_some()) {
            groups.entry(&c.memory_ops).or_default().push(label(m, i));
        }
        for (sig, cols) in groups {
            let roles: Vec<String> = sig
                .iter()
                .enumerate()
                .map(|(i, ops)| format!("P{i}: {}", ops.join("; ")))
                .collect();
            let _ = writeln!(
                h,
                "<li>{}: <code>{}</code></li>",
                esc(&cols.join(", ")),
                esc(&roles.join(" / "))
            );
        }
        h.push_str("</ul></li>\n");
    }
    h.push_str("</ul>\n");
}

fn failures_html(m: &Matrix, h: &mut String) {
    h.push_str("<h2 id=\"failures\">Failures</h2>\n");
    let mut any = false;
    for r in &m.rows {
        for (i, c) in r.cells.iter().enumerate() {
            if !matches!(c.verdict, Verdict::Deviation(_) | Verdict::Error) {
                continue;
            }
            any = true;
            let _ = writeln!(
                h,
                "<h3>{} with {}: {}</h3>\n<ul>",
                esc(&r.test),
                esc(&label(m, i)),
                c.verdict.as_str()
            );
            for e in &c.errors {
                let _ = writeln!(h, "<li><code>{}</code></li>", esc(e));
            }
            let _ = writeln!(h, "</ul>\n<pre>{}</pre>", esc(&c.sass_lines.join("\n")));
            if let Some(red) = &c.reduced {
                let _ = writeln!(
                    h,
                    "<p>Reduced to {} threads, {} instructions ({} candidates tried), still \
                     {}:</p>\n<pre>{}</pre>\n<pre>{}</pre>",
                    red.threads,
                    red.instructions,
                    red.tries,
                    esc(&red.failure.verdict),
                    esc(&red.text),
                    esc(&red.failure.sass_lines.join("\n"))
                );
            }
        }
    }
    if !any {
        h.push_str("<p>None: every cell passed or was not assembled.</p>\n");
    }
}

fn matrix_html(m: &Matrix, h: &mut String) {
    h.push_str(
        "<h2 id=\"matrix\">Matrix</h2>\n<p>Each cell: the optcheck's verdict, the first 8 hex \
         digits of the SASS hash of the test's roles, <code>↓X.Y</code> when the PTX ISA was \
         lowered for that ptxas. Highlighted (⚠): memory ops unlike the row's majority; hover \
         for the roles that differ.</p>\n<table>\n<tr><th>test</th>",
    );
    for c in 0..m.columns.len() {
        let _ = write!(h, "<th>{}</th>", esc(&label(m, c)));
    }
    h.push_str("</tr>\n");
    for r in &m.rows {
        let cells: String = r.cells.iter().map(|c| cell_html(r, c)).collect();
        let _ = writeln!(h, "<tr><td>{}</td>{cells}</tr>", esc(&r.test));
    }
    h.push_str("</table>\n");
}

/// The page: `provenance` (the Markdown block of `matrix.md`) first, then summary,
/// differences, failures and the matrix.
pub fn page(m: &Matrix, provenance: &str) -> String {
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>SASS matrix</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>SASS matrix: the optcheck across ptxas versions</h1>\n"
    );
    provenance_html(provenance, &mut h);
    summary_html(m, &mut h);
    differences_html(m, &mut h);
    failures_html(m, &mut h);
    matrix_html(m, &mut h);
    h.push_str("</body>\n</html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::matrix::Column;
    use crate::sass::{disasm, signature};

    /// A writer role's SASS as nvdisasm prints it: two stores around a fence.
    const WRITER: &str = "\
$k$role0:
        /*0010*/                   STG.E desc[UR4][R2.64], R5 ;
        /*0020*/                   MEMBAR.SC.GPU ;
        /*0030*/                   STG.E.STRONG.GPU desc[UR4][R2.64+0x4], R7 ;
        /*0040*/                   RET.REL.NODEC R20 0x0 ;
";

    fn cell(sass: &str) -> Cell {
        let f = disasm::functions(sass);
        Cell {
            verdict: Verdict::Pass,
            isa_lowered: None,
            memory_ops: vec![signature::memory_events(&f["role0"])],
            hash: Some(format!("{:016x}", crate::litmus::fnv1a64(sass.as_bytes()))),
            errors: vec![],
            sass_lines: vec![],
            reduced: None,
        }
    }

    fn matrix(cells: Vec<Cell>) -> Matrix {
        let columns = (0..cells.len())
            .map(|i| Column {
                version: format!("12.{i}.0"),
                arch: "sm_90".into(),
                ptxas: Default::default(),
            })
            .collect();
        let rows = vec![Row {
            test: "MP+fence".into(),
            path: "litmus/mp/MP+fence.litmus".into(),
            cells,
        }];
        Matrix { columns, rows }
    }

    #[test]
    fn merged_and_reordered_stores_are_highlighted() {
        // Planted: one version merges the two stores into one, another swaps them across the
        // fence; a third only renames a register (other code, same memory ops).
        let merged = WRITER.replace(
            "        /*0030*/                   STG.E.STRONG.GPU desc[UR4][R2.64+0x4], R7 ;\n",
            "",
        );
        let swapped = WRITER
            .replace("STG.E desc[UR4][R2.64], R5", "@@")
            .replace(
                "STG.E.STRONG.GPU desc[UR4][R2.64+0x4], R7",
                "STG.E desc[UR4][R2.64], R5",
            )
            .replace("@@", "STG.E.STRONG.GPU desc[UR4][R2.64+0x4], R7");
        let renamed = WRITER.replace("R5", "R9");
        let m = matrix(vec![
            cell(WRITER),
            cell(&merged),
            cell(&renamed),
            cell(&swapped),
            cell(WRITER),
        ]);
        let row = &m.rows[0];
        let odd: Vec<bool> = row.cells.iter().map(|c| stands_out(row, c)).collect();
        assert_eq!(odd, [false, true, false, true, false]);
        let page = page(&m, "- command: `ptx-litmus sass`\n");
        assert_eq!(page.matches("<td class=\"pass odd\"").count(), 2, "{page}");
        assert_eq!(page.matches("<td class=\"pass\"").count(), 3, "{page}");
        // The tooltip names what the merged version has in place of the majority's ops.
        assert!(
            page.contains(
                "title=\"P0: STG.E; MEMBAR.SC.GPU (majority: STG.E; MEMBAR.SC.GPU; \
                 STG.E.STRONG.GPU [+0x4])\""
            ),
            "{page}"
        );
        assert!(page.contains("Memory-op differences (1)"), "{page}");
        assert!(
            page.contains("<li><code>ptx-litmus sass</code></li>")
                || page.contains("command: <code>ptx-litmus sass</code>"),
            "{page}"
        );
    }

    #[test]
    fn a_row_that_agrees_has_no_highlight() {
        let m = matrix(vec![cell(WRITER), cell(&WRITER.replace("R5", "R9"))]);
        let page = page(&m, "");
        assert!(!page.contains(" odd\""), "{page}");
        assert!(page.contains("Memory-op differences (0)"), "{page}");
        assert!(page.contains("None: every cell passed"), "{page}");
    }
}
