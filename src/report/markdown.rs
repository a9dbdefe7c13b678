//! `report.md`: the same content as the HTML report in Markdown, plots linked as PNG files.

use super::kernels;
use super::replays::Replayed;
use super::summary;
use super::table::{self, stem_of, Row};
use crate::results::{ResultSet, TestRecord};
use crate::text::{md_code as code, md_text as cell};
use crate::verdict::Status;
use std::fmt::Write;

/// The whole document. `stems` gives each test's file stem (same order as `set.tests`).
pub fn render(set: &ResultSet, stems: &[String]) -> String {
    let run = &set.run;
    let mut m = String::new();
    let _ = writeln!(m, "# ptx-litmus report: run {}\n", run.run_id);
    let _ = writeln!(
        m,
        "## Summary\n\n**{}**\n",
        summary::totals_line(run, &set.tests)
    );
    let _ = writeln!(m, "| | |\n|---|---|");
    for (k, v) in table::run_facts(run) {
        let _ = writeln!(m, "| {} | {} |", cell(&k), cell(&v));
    }
    let ordered = summary::ordered(&set.tests);
    violations_section(&mut m, &ordered, &super::replays::of(set));
    matrix_section(&mut m, &set.tests);
    tests_section(&mut m, &ordered);
    kernels_section(&mut m, &ordered);
    let _ = writeln!(m, "\n## Histograms\n");
    for t in &ordered {
        let stem = stem_of(set, stems, t);
        let _ = writeln!(m, "![{}](plots/{stem}.png)\n", cell(&t.name));
    }
    if !run.skipped_tests.is_empty() {
        let _ = writeln!(m, "## Not run\n");
        for s in &run.skipped_tests {
            let (first, rest) = s.reason.split_once('\n').unwrap_or((&s.reason, ""));
            let _ = writeln!(m, "- {}: {}", code(&s.path), cell(first));
            // A tool's log (ptxas's errors) stays verbatim, inside the item.
            if !rest.trim().is_empty() {
                let _ = writeln!(m, "\n  ```");
                for line in rest.trim_end().lines() {
                    let _ = writeln!(m, "  {line}");
                }
                let _ = writeln!(m, "  ```\n");
            }
        }
        m.push('\n');
    }
    let _ = writeln!(m, "---\n\n{}", table::NOTE);
    m
}

/// Every violation: its forbidden outcomes and why, the test as run, how to replay it.
fn violations_section(m: &mut String, ordered: &[&TestRecord], replayed: &Replayed) {
    let _ = writeln!(m, "\n## Violations\n");
    let mut any = false;
    for t in ordered
        .iter()
        .filter(|t| t.verdict.status == Status::Violation)
    {
        any = true;
        let _ = writeln!(m, "### {} ({})\n", cell(&t.name), code(&t.path));
        for (text, n, class, why) in table::violating_outcomes(t) {
            let why = why.map(|w| format!(": {}", code(&w))).unwrap_or_default();
            let _ = writeln!(m, "- {} ×{n} ({}){why}", code(&text), class.as_str());
        }
        if let Some(v) = &t.violation {
            let fence = "`".repeat(longest_backticks(&v.source).max(2) + 1);
            let _ = writeln!(m, "\nThe test as run:\n\n{fence}\n{}{fence}", v.source);
        }
        let _ = writeln!(
            m,
            "\nTo run it again with the same seed and settings, in the result set's folder: {}\n",
            code(&table::replay_command())
        );
        if let Some((saw, folder)) = replayed.get(&t.path) {
            let folder = code(&format!("{folder}/"));
            let _ = writeln!(m, "{} {folder}: {}.\n", super::replays::SAID, cell(saw));
        }
    }
    if !any {
        let _ = writeln!(m, "No test observed an outcome the PTX model forbids.");
    }
}

/// The test × verdict matrix.
fn matrix_section(m: &mut String, tests: &[TestRecord]) {
    let _ = writeln!(m, "\n## Test × verdict\n");
    let mx = table::matrix(tests);
    let _ = writeln!(m, "| model \\\\ observed | {} |", mx.columns.join(" | "));
    let _ = writeln!(m, "|---|{}", "---|".repeat(mx.columns.len()));
    for (row, cells) in &mx.rows {
        let cells: Vec<String> = cells.iter().map(|c| matrix_cell(c)).collect();
        let _ = writeln!(m, "| {} | {} |", cell(row), cells.join(" | "));
    }
}

/// One cell of the matrix: how many tests, the first few by name (violations in bold).
fn matrix_cell(c: &[&TestRecord]) -> String {
    if c.is_empty() {
        return String::new();
    }
    let (shown, left) = table::cell_names(c);
    let names = shown
        .iter()
        .map(|t| {
            if t.verdict.status == Status::Violation {
                format!("**{}**", cell(&t.name))
            } else {
                cell(&t.name)
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!("**{}**: {names}{}", c.len(), table::and_more(left))
}

/// One row per test: verdict, counts, rates and time.
fn tests_section(m: &mut String, ordered: &[&TestRecord]) {
    let _ = writeln!(
        m,
        "\n## Tests\n\n| status | test | condition | observed | instances | weak outcomes seen | \
         weak / instance | weak / s | unseen allowed: rate < (95 %) | time (cpu used) |\n\
         |---|---|---|---|--:|---|--:|--:|--:|--:|"
    );
    for t in ordered {
        let r = Row::of(t);
        let _ = writeln!(
            m,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.status,
            cell(&t.name),
            code(&t.condition),
            r.observed,
            r.instances,
            cell(&r.weak_seen),
            r.weak_per_instance,
            r.weak_per_second,
            r.unseen_bound,
            r.time
        );
    }
}

/// How each test's kernel was launched, when the run launched kernels.
fn kernels_section(m: &mut String, ordered: &[&TestRecord]) {
    let rows = kernels::rows(ordered);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(m, "\n## Kernels\n\n| {} |", kernels::HEADERS.join(" | "));
    let align: Vec<&str> = kernels::NUMERIC
        .iter()
        .map(|&n| if n { "--:" } else { "---" })
        .collect();
    let _ = writeln!(m, "|{}|", align.join("|"));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
        let _ = writeln!(m, "| {} |", cells.join(" | "));
    }
    tests_list(m, kernels::SASS_FAILED, &kernels::sass_failures(ordered));
    tests_list(m, kernels::KERNEL_NOTES, &kernels::kernel_notes(ordered));
}

/// `lead` in bold, then each test with what is said of it, when there are any.
fn tests_list(m: &mut String, lead: &str, items: &[(&str, &str)]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(m, "\n**{lead}:**\n");
    for (name, said) in items {
        let _ = writeln!(m, "- {}: {}", cell(name), cell(said));
    }
}

/// The longest run of backticks in `s`, so a fence longer than it encloses `s` verbatim.
fn longest_backticks(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::{cell, code};

    #[test]
    fn names_show_as_written_and_code_keeps_backslashes() {
        assert_eq!(cell("a_b*c|d<e>"), "a\\_b\\*c\\|d\\<e\\>");
        assert_eq!(code("P1:r0 == 1 /\\ x"), "`P1:r0 == 1 /\\ x`");
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(code("x`y"), "``x`y``");
        assert_eq!(code("`x"), "`` `x ``");
    }
}
