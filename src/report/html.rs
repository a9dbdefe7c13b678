//! `report.html`: one self-contained page (inline CSS and SVG, no script, no network) with the
//! summary, violations first, a test × verdict matrix, per-test rows, the kernels of a GPU
//! run and histograms.

use super::format;
use super::kernels;
use super::plot;
use super::replays::{self, Replayed};
use super::summary;
use super::table::{self, stem_of, Row};
use crate::results::{ResultSet, RunRecord, TestRecord};
use crate::verdict::{Class, Status};
use std::fmt::Write;

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;color:#222}\
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}\
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:3px 7px;\
text-align:left;vertical-align:top}td.n{text-align:right;font-variant-numeric:tabular-nums}\
tr.violation td{background:#fde2e2}.violation{color:#b0141d;font-weight:bold}\
.conformant{color:#1d6b2c}.nodata{color:#777}dl{display:grid;grid-template-columns:max-content auto;\
gap:2px 12px;font-size:.9em}dt{font-weight:bold}dd{margin:0}code{font-size:.95em}\
.key span{display:inline-block;width:.9em;height:.9em;margin:0 4px 0 12px;vertical-align:middle}\
figure{margin:1em 0}figcaption{font-size:.85em;color:#555}.headline{font-size:1.1em}";

/// Escapes text for HTML (the one definition is [`crate::text::html`]).
pub use crate::text::html as esc;

/// The whole page. `stems` gives each test's file stem (same order as `set.tests`), used for
/// anchors and plot file names.
pub fn render(set: &ResultSet, stems: &[String]) -> Result<String, String> {
    let run = &set.run;
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>ptx-litmus report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&run.run_id)
    );
    let _ = writeln!(h, "<h1>ptx-litmus report: run {}</h1>", esc(&run.run_id));
    let ordered = summary::ordered(&set.tests);
    summary_section(&mut h, set);
    violations_section(&mut h, &ordered, &replays::of(set));
    matrix_section(&mut h, &set.tests);
    tests_section(&mut h, set, stems, &ordered);
    kernels_section(&mut h, &ordered);
    plots_section(&mut h, set, stems, &ordered)?;
    skipped_section(&mut h, run);
    let _ = writeln!(
        h,
        "<footer><p>{}</p></footer>\n</body>\n</html>",
        esc(table::NOTE)
    );
    Ok(h)
}

/// The run's totals and facts.
fn summary_section(h: &mut String, set: &ResultSet) {
    let _ = writeln!(h, "<section id=\"summary\">\n<h2>Summary</h2>");
    let _ = writeln!(
        h,
        "<p class=\"headline\">{}</p>",
        esc(&summary::totals_line(&set.run, &set.tests))
    );
    let _ = writeln!(h, "<dl>");
    for (k, v) in table::run_facts(&set.run) {
        let _ = writeln!(h, "<dt>{}</dt><dd>{}</dd>", esc(&k), esc(&v));
    }
    let _ = writeln!(h, "</dl>\n</section>");
}

/// Every violation explained, or the line saying there is none.
fn violations_section(h: &mut String, ordered: &[&TestRecord], replayed: &Replayed) {
    let violations: Vec<&TestRecord> = ordered
        .iter()
        .copied()
        .filter(|t| t.verdict.status == Status::Violation)
        .collect();
    let _ = writeln!(h, "<section id=\"violations\">\n<h2>Violations</h2>");
    if violations.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"conformant\">No test observed an outcome the PTX model forbids.</p>"
        );
    } else {
        for t in &violations {
            violation(h, t, replayed.get(&t.path));
        }
    }
    let _ = writeln!(h, "</section>");
}

/// The test × verdict matrix: the model's answer against how often the condition held.
fn matrix_section(h: &mut String, tests: &[TestRecord]) {
    let _ = writeln!(
        h,
        "<section id=\"matrix\">\n<h2>Test × verdict</h2>\n<p>Rows: the test's quantifier and \
         the model's answer for its condition. Columns: how often the condition held among \
         observed instances.</p>"
    );
    let m = table::matrix(tests);
    let _ = write!(h, "<table>\n<tr><th>model \\ observed</th>");
    for c in &m.columns {
        let _ = write!(h, "<th>{c}</th>");
    }
    let _ = writeln!(h, "</tr>");
    for (row, cells) in &m.rows {
        let _ = write!(h, "<tr><th>{}</th>", esc(row));
        for cell in cells {
            matrix_cell(h, cell);
        }
        let _ = writeln!(h, "</tr>");
    }
    let _ = writeln!(h, "</table>\n</section>");
}

/// One cell of the matrix: how many tests, and the first few by name.
fn matrix_cell(h: &mut String, cell: &[&TestRecord]) {
    if cell.is_empty() {
        let _ = write!(h, "<td></td>");
        return;
    }
    let (shown, left) = table::cell_names(cell);
    let names: Vec<String> = shown
        .iter()
        .map(|t| {
            format!(
                "<span class=\"{}\">{}</span>",
                status_class(t),
                esc(&t.name)
            )
        })
        .collect();
    let _ = write!(
        h,
        "<td><b>{}</b>: {}{}</td>",
        cell.len(),
        names.join(", "),
        table::and_more(left)
    );
}

/// One row per test: verdict, counts, rates and time.
fn tests_section(h: &mut String, set: &ResultSet, stems: &[String], ordered: &[&TestRecord]) {
    let _ = writeln!(
        h,
        "<section id=\"tests\">\n<h2>Tests</h2>\n<table>\n<tr><th>status</th><th>test</th>\
         <th>condition</th><th>observed</th><th>instances</th><th>weak outcomes seen</th>\
         <th>weak / instance</th><th>weak / s</th><th>unseen allowed: rate &lt; (95 %)</th>\
         <th>time (cpu used)</th></tr>"
    );
    for t in ordered {
        let r = Row::of(t);
        let _ = writeln!(
            h,
            "<tr{}><td class=\"{}\">{}</td><td><a href=\"#plot-{}\">{}</a></td>\
             <td><code>{}</code></td><td>{}</td><td class=\"n\">{}</td><td>{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td></tr>",
            if t.verdict.status == Status::Violation {
                " class=\"violation\""
            } else {
                ""
            },
            status_class(t),
            esc(&r.status),
            esc(&stem_of(set, stems, t)),
            esc(&t.name),
            esc(&t.condition),
            esc(&r.observed),
            r.instances,
            esc(&r.weak_seen),
            r.weak_per_instance,
            r.weak_per_second,
            esc(&r.unseen_bound),
            r.time
        );
    }
    let _ = writeln!(h, "</table>\n</section>");
}

/// How each test's kernel was launched, when the run launched kernels.
fn kernels_section(h: &mut String, ordered: &[&TestRecord]) {
    let rows = kernels::rows(ordered);
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<section id=\"kernels\">\n<h2>Kernels</h2>\n<table>\n<tr>"
    );
    for c in kernels::HEADERS {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    let _ = writeln!(h, "</tr>");
    for r in rows {
        let _ = write!(h, "<tr>");
        for (c, numeric) in r.iter().zip(kernels::NUMERIC) {
            let class = match (numeric, c.as_str()) {
                (true, _) => " class=\"n\"",
                (false, "FAIL") => " class=\"violation\"",
                _ => "",
            };
            let _ = write!(h, "<td{class}>{}</td>", esc(c));
        }
        let _ = writeln!(h, "</tr>");
    }
    let _ = writeln!(h, "</table>");
    let failed = kernels::sass_failures(ordered);
    tests_list(h, kernels::SASS_FAILED, " class=\"violation\"", &failed);
    let noted = kernels::kernel_notes(ordered);
    tests_list(h, kernels::KERNEL_NOTES, "", &noted);
    let _ = writeln!(h, "</section>");
}

/// `lead`, then each test with what is said of it, when there are any.
fn tests_list(h: &mut String, lead: &str, class: &str, items: &[(&str, &str)]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(h, "<p{class}>{}:</p>\n<ul>", esc(lead));
    for (name, said) in items {
        let _ = writeln!(h, "<li>{}: {}</li>", esc(name), esc(said));
    }
    let _ = writeln!(h, "</ul>");
}

/// Each test's histogram as inline SVG, under a key of the outcome classes.
fn plots_section(
    h: &mut String,
    set: &ResultSet,
    stems: &[String],
    ordered: &[&TestRecord],
) -> Result<(), String> {
    let _ = writeln!(
        h,
        "<section id=\"plots\">\n<h2>Histograms</h2>\n<p class=\"key\">"
    );
    for c in [Class::Sc, Class::Weak, Class::Forbidden, Class::Unexpected] {
        let _ = write!(
            h,
            "<span style=\"background:{}\"></span>{}",
            plot::css_colour(c),
            c.as_str()
        );
    }
    let _ = writeln!(h, "</p>");
    for t in ordered {
        let stem = stem_of(set, stems, t);
        let svg = plot::svg(t)?;
        let _ = writeln!(
            h,
            "<figure id=\"plot-{}\">\n{}\n<figcaption>{} (<code>{}</code>, hash {}): \
             <a href=\"plots/{}.png\">PNG</a></figcaption>\n</figure>",
            esc(&stem),
            svg.trim_end(),
            esc(&t.name),
            esc(&t.path),
            esc(&t.hash),
            esc(&stem)
        );
    }
    let _ = writeln!(h, "</section>");
    Ok(())
}

/// The tests that did not run, with the reason (nothing when every test ran).
fn skipped_section(h: &mut String, run: &RunRecord) {
    if run.skipped_tests.is_empty() {
        return;
    }
    let _ = writeln!(h, "<section id=\"skipped\">\n<h2>Not run</h2>\n<ul>");
    for s in &run.skipped_tests {
        let (first, rest) = s.reason.split_once('\n').unwrap_or((&s.reason, ""));
        let log = match rest.trim_end() {
            "" => String::new(),
            rest => format!("<pre>{}</pre>", esc(rest)),
        };
        let _ = writeln!(
            h,
            "<li><code>{}</code>: {}{log}</li>",
            esc(&s.path),
            esc(first)
        );
    }
    let _ = writeln!(h, "</ul>\n</section>");
}

fn status_class(t: &TestRecord) -> &'static str {
    match t.verdict.status {
        Status::Violation => "violation",
        Status::Conformant => "conformant",
        Status::NoData => "nodata",
    }
}

/// One violating test: each violating outcome with why the model forbids it, the test's source
/// and the command that runs the set again.
fn violation(h: &mut String, t: &TestRecord, replay: Option<&(String, String)>) {
    let _ = writeln!(
        h,
        "<h3><span class=\"violation\">{}</span> <code>{}</code></h3>\n<ul>",
        esc(&t.name),
        esc(&t.path)
    );
    for (text, n, class, why) in table::violating_outcomes(t) {
        let why = why
            .map(|w| format!(": <code>{}</code>", esc(&w)))
            .unwrap_or_default();
        let _ = writeln!(
            h,
            "<li><code>{}</code> {} × ({}){why}</li>",
            esc(&text),
            format::count(n),
            class.as_str()
        );
    }
    let _ = writeln!(h, "</ul>");
    if let Some(v) = &t.violation {
        let _ = writeln!(
            h,
            "<details open><summary>The test as run</summary><pre>{}</pre></details>",
            esc(&v.source)
        );
    }
    let _ = writeln!(
        h,
        "<p>To run it again with the same seed and settings, in the result set's folder: \
         <code>{}</code></p>",
        esc(&table::replay_command())
    );
    if let Some((saw, folder)) = replay {
        let _ = writeln!(
            h,
            "<p>{} <code>{}/</code>: {}.</p>",
            replays::SAID,
            esc(folder),
            esc(saw)
        );
    }
}
