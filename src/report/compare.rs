//! N result sets in one table, in the spirit of herdtools7's mcompare7: one row per test, one
//! column per set, each cell what that set saw (a violation, the weak rate with its 95 %
//! interval, weak outcomes unseen with their 95 % upper bound, no data, or absent). A row is
//! marked when its cells differ in kind or when some pair of sets has significantly different
//! weak rates. Rates, their intervals and their comparisons take the part of a run (a group of
//! rounds or launch batches) as the unit, as the two-way `diff` does ([`super::dispersion`]):
//! the quasi-binomial test for every pair of sets, Bonferroni over every pair of every test.

use super::diff::{code_of, ALPHA};
use super::dispersion::{quasi_binomial, rate_interval};
use super::format;
use super::html::esc;
use super::kernels;
use crate::harness::notes::CODE_HASH;
use crate::results::{ObservedData, ResultSet, TestRecord, Unit};
use crate::text::pad;
use crate::verdict::{unseen_upper_bound_95, Class, Status};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write;

/// What one set saw of one test.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Seen {
    /// The set did not run the test.
    Absent,
    /// The set refused the test before running it, for this reason (a kernel that would not
    /// build with its compiler, a test its backend cannot run).
    NotRun(String),
    /// The set ran a different test of that name (hash differs from the first set's).
    OtherTest,
    /// No instance was observed.
    NoData,
    /// Forbidden or unexpected outcomes: how many, of how many instances.
    Violation(u64, u64),
    /// The model allows no weak outcome; conformant over this many instances.
    ScOnly(u64),
    /// Weak outcomes seen: weak instances, instances, and the 95 % interval of the rate over
    /// the set's parts (`None` when it recorded fewer than 2).
    Weak(u64, u64, Option<(f64, f64)>),
    /// Weak outcomes allowed but unseen in this many instances, with the 95 % upper bound.
    Unseen(u64, f64),
}

impl Seen {
    /// The kind, for telling whether a row's cells differ.
    pub fn kind(&self) -> &'static str {
        match self {
            Seen::Absent => "absent",
            Seen::NotRun(_) => "not run",
            Seen::OtherTest => "other test",
            Seen::NoData => "no data",
            Seen::Violation(..) => "violation",
            Seen::ScOnly(_) => "sc only",
            Seen::Weak(..) => "weak",
            Seen::Unseen(..) => "unseen",
        }
    }

    /// The cell's text.
    pub fn text(&self) -> String {
        match self {
            Seen::Weak(k, n, interval) => {
                let rate = format::rate(crate::verdict::rate_per_instance(*k, *n));
                match interval {
                    Some((lo, hi)) => format!(
                        "weak {rate} [{}, {}]",
                        format::rate(Some(*lo)),
                        format::rate(Some(*hi))
                    ),
                    None => format!("weak {rate} [no interval: < 2 parts]"),
                }
            }
            Seen::Unseen(_, ub) => format!("unseen <{}", format::rate(Some(*ub))),
            Seen::Violation(k, n) => {
                format!("VIOLATION {}/{}", format::count(*k), format::count(*n))
            }
            Seen::ScOnly(n) => format!("conformant ({})", format::count(*n)),
            other => other.kind().to_string(),
        }
    }

    /// Whether the cell has a weak rate to compare (seen or unseen).
    fn has_rate(&self) -> bool {
        matches!(self, Seen::Weak(..) | Seen::Unseen(..))
    }
}

fn seen(t: &TestRecord) -> Seen {
    let v = &t.verdict;
    let n = v.instances;
    let allows_weak = v.outcomes.iter().any(|o| o.class == Class::Weak);
    match v.status {
        Status::NoData => Seen::NoData,
        Status::Violation => Seen::Violation(v.counts.forbidden + v.counts.unexpected, n),
        Status::Conformant if !allows_weak => Seen::ScOnly(n),
        Status::Conformant if v.counts.weak > 0 => Seen::Weak(
            v.counts.weak,
            n,
            rate_interval(&t.observed.units(Unit::of(&[&t.observed]))).map(|r| (r.lo, r.hi)),
        ),
        Status::Conformant => Seen::Unseen(n, unseen_upper_bound_95(n).unwrap_or(1.0)),
    }
}

/// One test across the sets.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Line {
    /// The test's name.
    pub name: String,
    /// One cell per set.
    pub cells: Vec<Seen>,
    /// Whether the cells differ in kind.
    pub kinds_differ: bool,
    /// The smallest p-value of a weak-rate comparison between two sets, if any pair could be
    /// compared.
    pub min_p: Option<f64>,
    /// Pairs of sets with weak rates that could not be compared (too few parts).
    pub untested: usize,
    /// Whether `min_p` is below the threshold.
    pub significant: bool,
    /// Which sets ran the same machine code (`kernel.code_hash`), as groups of letters:
    /// `A=C B`; `None` when fewer than two sets name it (CPU runs name none).
    pub codes: Option<String>,
}

/// The whole comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// Each set's run id and a short description (backend, device, driver, compiler).
    pub runs: Vec<(String, String)>,
    /// One line per test name, sorted.
    pub lines: Vec<Line>,
    /// The Bonferroni threshold of the weak-rate comparisons.
    pub threshold: f64,
    /// How many pairs of cells were compared, over every test.
    pub pairs: usize,
}

fn describe(set: &ResultSet) -> String {
    let p = &set.run.provenance;
    let mut parts = vec![set.run.backend.clone()];
    for key in ["gpu", "device", "cpu", "driver", "compiler", "ptxas"] {
        if let Some(v) = p.get(key) {
            parts.push(format!("{key} {v}"));
        }
    }
    parts.join(", ")
}

/// Each set's cell for the test, with its record's observations when the cell has a weak rate.
fn cells_of<'a>(sets: &'a [ResultSet], name: &str) -> Vec<(Seen, Option<&'a ObservedData>)> {
    let mut first_hash: Option<&str> = None;
    sets.iter()
        .map(|s| match s.tests.iter().find(|t| t.name == name) {
            None => match s.not_run_reason(name) {
                Some(why) => (Seen::NotRun(why.to_string()), None),
                None => (Seen::Absent, None),
            },
            Some(t) if first_hash.is_some_and(|h| h != t.hash) => (Seen::OtherTest, None),
            Some(t) => {
                first_hash.get_or_insert(&t.hash);
                let cell = seen(t);
                let observed = cell.has_rate().then_some(&t.observed);
                (cell, observed)
            }
        })
        .collect()
}

/// The sets that ran the same machine code for the test called `name`, grouped: `A=C B`.
fn code_groups(sets: &[ResultSet], name: &str) -> Option<String> {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    let mut named = 0;
    for (i, set) in sets.iter().enumerate() {
        let record = set.tests.iter().find(|t| t.name == name);
        let Some(hash) = record.and_then(code_of) else {
            continue;
        };
        named += 1;
        // `!`: this set's code failed the SASS check.
        let failed = record.is_some_and(kernels::sass_failed);
        let mark = format!("{}{}", letter(i), if failed { "!" } else { "" });
        match groups.iter_mut().find(|(h, _)| *h == hash) {
            Some((_, letters)) => letters.push(mark),
            None => groups.push((hash, vec![mark])),
        }
    }
    let joined: Vec<String> = groups.iter().map(|(_, l)| l.join("=")).collect();
    (named >= 2).then(|| joined.join(" "))
}

/// Over every pair of cells with weak rates: the smallest two-sided p-value of the
/// quasi-binomial comparison (by run when either merges runs, else by part), the pairs
/// compared, and those without enough units to compare.
fn pairwise(sets: &[&ObservedData]) -> (Option<f64>, usize, usize) {
    let (mut min, mut pairs, mut untested): (Option<f64>, usize, usize) = (None, 0, 0);
    for i in 0..sets.len() {
        for j in i + 1..sets.len() {
            let unit = Unit::of(&[sets[i], sets[j]]);
            match quasi_binomial(&sets[i].units(unit), &sets[j].units(unit)) {
                Some(d) => {
                    pairs += 1;
                    min = Some(min.map_or(d.p, |m| m.min(d.p)));
                }
                None => untested += 1,
            }
        }
    }
    (min, pairs, untested)
}

/// Compares the sets, test by test.
pub fn compare(sets: &[ResultSet]) -> Comparison {
    let names: BTreeSet<&str> = sets
        .iter()
        .flat_map(|s| s.tests.iter().map(|t| t.name.as_str()))
        .collect();
    let mut pairs_total = 0;
    let mut lines: Vec<Line> = names
        .into_iter()
        .map(|name| {
            let (cells, observed): (Vec<Seen>, Vec<_>) = cells_of(sets, name).into_iter().unzip();
            let kinds: BTreeSet<&str> = cells.iter().map(Seen::kind).collect();
            let observed: Vec<&ObservedData> = observed.into_iter().flatten().collect();
            let (min_p, pairs, untested) = pairwise(&observed);
            pairs_total += pairs;
            Line {
                name: name.to_string(),
                kinds_differ: kinds.len() > 1,
                cells,
                min_p,
                untested,
                significant: false,
                codes: code_groups(sets, name),
            }
        })
        .collect();
    let threshold = ALPHA / pairs_total.max(1) as f64;
    for l in &mut lines {
        l.significant = l.min_p.is_some_and(|p| p < threshold);
    }
    Comparison {
        runs: sets
            .iter()
            .map(|s| (s.run.run_id.clone(), describe(s)))
            .collect(),
        lines,
        threshold,
        pairs: pairs_total,
    }
}

impl Comparison {
    /// Whether a set after the first has a violation in a test the first set did not.
    pub fn regressed(&self) -> bool {
        self.lines.iter().any(|l| {
            !matches!(l.cells[0], Seen::Violation(..))
                && l.cells[1..]
                    .iter()
                    .any(|c| matches!(c, Seen::Violation(..)))
        })
    }

    /// Each cell of a test a set refused: the set's letter, the test, the reason.
    pub fn not_run(&self) -> Vec<(String, &str, &str)> {
        let mut out = Vec::new();
        for l in &self.lines {
            for (i, cell) in l.cells.iter().enumerate() {
                if let Seen::NotRun(why) = cell {
                    out.push((letter(i), l.name.as_str(), why.as_str()));
                }
            }
        }
        out
    }

    /// Whether some test names its machine code in two sets or more (GPU runs): the tables
    /// then show which sets ran the same code.
    pub fn names_codes(&self) -> bool {
        self.lines.iter().any(|l| l.codes.is_some())
    }

    /// The marker of a line: `!` kinds differ, `*` a significant rate difference.
    pub fn mark(l: &Line) -> &'static str {
        match (l.kinds_differ, l.significant) {
            (true, true) => "!*",
            (true, false) => "!",
            (false, true) => "*",
            (false, false) => "",
        }
    }
}

/// Column letters: A, B, …, Z, then AA, AB, ….
pub fn letter(i: usize) -> String {
    if i < 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        format!("{}{}", letter(i / 26 - 1), letter(i % 26))
    }
}

fn note(c: &Comparison) -> String {
    let untested: usize = c.lines.iter().map(|l| l.untested).sum();
    format!(
        "`!`: the sets saw different kinds of result; `*`: two sets' weak rates differ \
         significantly. The unit is a part of a run (a group of consecutive CPU rounds or GPU \
         launch batches), not the instance, since the instances of one round share its timing \
         and load: each pair of sets is compared by the quasi-binomial Wald test over their \
         parts (dispersion phi, at least 1, from how far each set's parts scatter around its \
         rate; Student's t), or over their runs when either set merges repeated runs of the \
         test, so that the drift between runs of one setup is not called a change; \
         significant when p < {ALPHA} / {} = {:.3e} (Bonferroni over the {} pairs compared; \
         {untested} pairs had too few parts to compare). weak: rate per instance [95 % \
         interval over the set's parts, or runs when it merges them: Wilson's at n / phi \
         instances with t's critical value]; unseen: allowed weak outcomes never seen, rate < the 95 % upper bound \
         of independent instances (about 3/n; rounds that share their load make the honest \
         bound wider); conformant (n): no violation in n instances, and the model allows no \
         weak outcome to see.{}",
        c.pairs.max(1),
        c.threshold,
        c.pairs,
        if c.names_codes() {
            format!(
                " same code: the sets that ran the same machine code ({CODE_HASH}: the cubin's \
                 code, relocations and constant banks, not its metadata) joined by `=`, so a \
                 change between sets of one group is not the compiler's; `!` after a set: its \
                 code failed the SASS check, so its outcomes are another program's."
            )
        } else {
            String::new()
        }
    )
}

/// The comparison as a text table.
pub fn text(c: &Comparison) -> String {
    let mut s = String::new();
    for (i, (id, d)) in c.runs.iter().enumerate() {
        let _ = writeln!(s, "{} = {id} ({d})", letter(i));
    }
    let codes = c.names_codes();
    let rows: Vec<Vec<String>> = c
        .lines
        .iter()
        .map(|l| {
            let mut r = vec![Comparison::mark(l).to_string(), l.name.clone()];
            r.extend(l.cells.iter().map(Seen::text));
            if codes {
                r.push(l.codes.clone().unwrap_or_else(|| "-".into()));
            }
            r
        })
        .collect();
    let mut header = vec![String::new(), "test".to_string()];
    header.extend((0..c.runs.len()).map(letter));
    if codes {
        header.push("same code".into());
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|j| {
            rows.iter()
                .map(|r| r[j].chars().count())
                .chain([header[j].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    s.push('\n');
    for r in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = r.iter().zip(&widths).map(|(x, w)| pad(x, *w)).collect();
        let _ = writeln!(s, "{}", cells.join("  ").trim_end());
    }
    let marked = c
        .lines
        .iter()
        .filter(|l| !Comparison::mark(l).is_empty())
        .count();
    let _ = writeln!(s, "\n{} tests, {marked} marked", c.lines.len());
    let not_run = c.not_run();
    if !not_run.is_empty() {
        let _ = writeln!(s, "\nNot run, and why:");
        for (set, name, why) in not_run {
            let _ = writeln!(
                s,
                "  {set}  {name}: {}",
                format::one_line(why, format::REASON_CHARS)
            );
        }
    }
    let _ = writeln!(s, "\n{}", note(c));
    s
}

/// The comparison as a self-contained HTML page.
pub fn html(c: &Comparison) -> String {
    let mut h = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>ptx-litmus comparison</title>\n<style>body{font-family:sans-serif;margin:1.5em}\
         table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ccc;\
         padding:2px 6px;text-align:left}.violation{color:#b0141d;font-weight:bold}\
         tr.marked td{background:#fff3d6}</style>\n</head>\n<body>\n\
         <h1>ptx-litmus comparison</h1>\n<ul>\n",
    );
    for (i, (id, d)) in c.runs.iter().enumerate() {
        let _ = writeln!(
            h,
            "<li>{} = <code>{}</code> ({})</li>",
            letter(i),
            esc(id),
            esc(d)
        );
    }
    let _ = write!(h, "</ul>\n<table>\n<tr><th></th><th>test</th>");
    for i in 0..c.runs.len() {
        let _ = write!(h, "<th>{}</th>", letter(i));
    }
    let codes = c.names_codes();
    if codes {
        h.push_str("<th>same code</th>");
    }
    h.push_str("</tr>\n");
    for l in &c.lines {
        html_row(&mut h, l, codes);
    }
    let _ = writeln!(h, "</table>");
    html_not_run(&mut h, c);
    let _ = writeln!(h, "<p>{}</p>\n</body>\n</html>", esc(&note(c)));
    h
}

/// Line `l` of the table as an HTML row, with its `same code` cell when `codes`.
fn html_row(h: &mut String, l: &Line, codes: bool) {
    let mark = Comparison::mark(l);
    let class = if mark.is_empty() {
        ""
    } else {
        " class=\"marked\""
    };
    let _ = write!(h, "<tr{class}><td>{mark}</td><td>{}</td>", esc(&l.name));
    for cell in &l.cells {
        let v = if matches!(cell, Seen::Violation(..)) {
            " class=\"violation\""
        } else {
            ""
        };
        let title = match cell {
            Seen::NotRun(why) => format!(" title=\"{}\"", esc(why)),
            _ => String::new(),
        };
        let _ = write!(h, "<td{v}{title}>{}</td>", esc(&cell.text()));
    }
    if codes {
        let groups = l.codes.as_deref().unwrap_or("-");
        let _ = write!(h, "<td>{}</td>", esc(groups));
    }
    h.push_str("</tr>\n");
}

/// The tests a set did not run, and why, as an HTML list (nothing when every set ran all).
fn html_not_run(h: &mut String, c: &Comparison) {
    let not_run = c.not_run();
    if not_run.is_empty() {
        return;
    }
    let _ = writeln!(h, "<h2>Not run, and why</h2>\n<ul>");
    for (set, name, why) in not_run {
        let _ = writeln!(h, "<li>{set} {}: {}</li>", esc(name), esc(why));
    }
    let _ = writeln!(h, "</ul>");
}
