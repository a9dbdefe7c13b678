//! Two result sets side by side (two drivers, two GPUs, two ptxas versions): new violations
//! first, then verdict changes, weak-rate changes that are statistically significant, and tests
//! present in only one set. Tests are paired by name, and only when their hashes agree.

use super::differences::{differences, placement, Difference};
use super::dispersion::{quasi_binomial, Dispersed};
use super::format;
use super::html::esc;
use super::kernels;
use crate::harness::notes::CODE_HASH;
use crate::results::{ResultSet, TestRecord, Unit};
use crate::verdict::Status;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The family-wise significance level of weak-rate changes.
pub const ALPHA: f64 = 0.05;

/// A test whose judgement differs between the sets.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VerdictChange {
    /// The test's name.
    pub name: String,
    /// Status and observation in A.
    pub a: String,
    /// Status and observation in B.
    pub b: String,
}

/// The weak-rate comparison of a test present in both sets.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RateChange {
    /// The test's name.
    pub name: String,
    /// Weak instances and instances in A.
    pub a: (u64, u64),
    /// Weak instances and instances in B.
    pub b: (u64, u64),
    /// What the comparison counts as one observation: parts, or runs when a set merges them.
    pub unit: Unit,
    /// Units in A and in B.
    pub units: (usize, usize),
    /// The quasi-binomial comparison over the units; `None` when too few were recorded.
    pub test: Option<Dispersed>,
    /// Whether the p-value is below the Bonferroni threshold.
    pub significant: bool,
    /// Whether both ran the same machine code (`kernel.code_hash`), when both recorded it:
    /// with the same code a change is not the compiler's.
    pub same_code: Option<bool>,
}

impl RateChange {
    /// The two-sided p-value, when the rates could be compared.
    pub fn p(&self) -> Option<f64> {
        self.test.map(|t| t.p)
    }
}

/// Everything `diff` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diff {
    /// Run ids of A and B.
    pub runs: (String, String),
    /// Every setting of the two runs that differs (parameters, backend, build, machine).
    pub setup: Vec<Difference>,
    /// Tests that are violations in B but not in A (including tests A did not run).
    pub new_violations: Vec<String>,
    /// Tests that were violations in A and are not in B.
    pub resolved_violations: Vec<String>,
    /// Status or observation changes of tests in both sets.
    pub verdict_changes: Vec<VerdictChange>,
    /// Weak-rate comparisons of tests in both sets with data in both: significant ones first,
    /// then by p-value, those that could not be compared last.
    pub rates: Vec<RateChange>,
    /// The Bonferroni threshold: `ALPHA` over the number of rates compared.
    pub threshold: f64,
    /// Tests only in A.
    pub only_a: Vec<String>,
    /// Tests only in B.
    pub only_b: Vec<String>,
    /// Tests with one name but different hashes: not compared.
    pub changed: Vec<String>,
    /// Of the tests only in one set, those the other refused before running them, and why.
    pub not_run: Vec<NotRun>,
    /// Tests whose code failed the SASS check, in either set: `MP in B: role P1: ...`.
    pub sass_failed: Vec<String>,
}

/// A test one set ran and the other refused.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NotRun {
    /// The test's name.
    pub name: String,
    /// The set that refused it: `A` or `B`.
    pub set: &'static str,
    /// Why, as that run said.
    pub reason: String,
}

impl Diff {
    /// A test of `only_a` or `only_b`, with why the other set did not run it when it said.
    fn only_line(&self, name: &str) -> String {
        match self.not_run.iter().find(|n| n.name == name) {
            Some(n) => format!(
                "{name} ({} did not run it: {})",
                n.set,
                format::one_line(&n.reason, format::REASON_CHARS)
            ),
            None => name.to_string(),
        }
    }
}

/// The description of the statistics, printed with every diff.
pub fn method_note(d: &Diff) -> String {
    let tested = d.tested();
    format!(
        "Weak-rate changes: the unit is a part of a run (a group of consecutive CPU rounds or \
         GPU launch batches, at most {} per test), not the instance, since the instances of one \
         round share its timing and load. The weak counts of the parts are taken as \
         quasi-binomial: their dispersion phi (at least 1) is estimated from how far the parts of \
         each set scatter around that set's rate, and the two rates are compared by a Wald test \
         with variance phi times the binomial's, against Student's t with the parts less 2 as \
         degrees of freedom (a set contributes its parts less 1 when its rate is neither 0 nor \
         1); significant when p < {} / {} = {:.3e} (Bonferroni over the {} tests compared). \
         Tests without such degrees of freedom (too few parts; records written before parts \
         were kept have none) are not tested. Parts of one run cannot tell a change of the \
         GPU, driver or compiler from the drift between two runs of one setup (on the CPU \
         backend, where the host places the cores; on a GPU, its clocks and the state stress \
         leaves), which they may call significant too. So when either set merges repeated runs \
         of a test (`merge`), the unit is the whole run instead: phi then measures how far runs \
         of one setup differ, and a change is significant only beyond that drift ({} of the {} \
         tests compared were compared by run).",
        crate::harness::parts::MAX_PARTS,
        ALPHA,
        tested.max(1),
        d.threshold,
        tested,
        d.rates
            .iter()
            .filter(|r| r.test.is_some() && r.unit == Unit::Run)
            .count(),
        tested
    )
}

fn key_map(set: &ResultSet) -> Records<'_> {
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &set.tests {
        *names.entry(&t.name).or_default() += 1;
    }
    set.tests
        .iter()
        .map(|t| {
            let key = if names[t.name.as_str()] > 1 {
                format!("{} ({})", t.name, t.path)
            } else {
                t.name.clone()
            };
            (key, t)
        })
        .collect()
}

fn judgement(t: &TestRecord) -> String {
    format!("{} / {}", t.verdict.status.as_str(), t.verdict.observation)
}

/// Compares A with B.
pub fn diff(a: &ResultSet, b: &ResultSet) -> Diff {
    let (ma, mb) = (key_map(a), key_map(b));
    let only = |x: &Records<'_>, y: &Records<'_>| -> Vec<String> {
        x.keys().filter(|k| !y.contains_key(*k)).cloned().collect()
    };
    let mut d = Diff {
        runs: (a.run.run_id.clone(), b.run.run_id.clone()),
        setup: differences(&a.run, &b.run)
            .into_iter()
            .chain(placement(&a.tests, &b.tests))
            .collect(),
        new_violations: new_violations(&ma, &mb),
        resolved_violations: Vec::new(),
        verdict_changes: Vec::new(),
        rates: Vec::new(),
        threshold: ALPHA,
        only_a: only(&ma, &mb),
        only_b: only(&mb, &ma),
        changed: Vec::new(),
        not_run: Vec::new(),
        sass_failed: sass_failed(&[("A", a), ("B", b)]),
    };
    for (names, other, set) in [(&d.only_a, b, "B"), (&d.only_b, a, "A")] {
        let refused = names.iter().filter_map(|name| {
            let reason = other.not_run_reason(name)?.to_string();
            let name = name.clone();
            Some(NotRun { name, set, reason })
        });
        d.not_run.extend(refused);
    }
    for (k, ta) in &ma {
        if let Some(tb) = mb.get(k) {
            d.compare(k, ta, tb);
        }
    }
    d.judge_rates();
    d
}

/// The tests of each lettered set whose code failed the SASS check, with what it found.
pub fn sass_failed(sets: &[(&str, &ResultSet)]) -> Vec<String> {
    let mut out = Vec::new();
    for (letter, set) in sets {
        let records: Vec<&TestRecord> = set.tests.iter().collect();
        for (name, problems) in kernels::sass_failures(&records) {
            let problems = format::one_line(problems, format::REASON_CHARS);
            out.push(format!("{name} in {letter}: {problems}"));
        }
    }
    out
}

/// A set's records by key.
type Records<'a> = BTreeMap<String, &'a TestRecord>;

fn violation(t: &TestRecord) -> bool {
    t.verdict.status == Status::Violation
}

/// The tests with a violation in B that A, running the same test, did not have.
fn new_violations(ma: &Records<'_>, mb: &Records<'_>) -> Vec<String> {
    mb.iter()
        .filter(|(k, tb)| {
            let ta = ma.get(*k).filter(|ta| ta.hash == tb.hash);
            violation(tb) && !ta.is_some_and(|ta| violation(ta))
        })
        .map(|(k, _)| k.clone())
        .collect()
}

impl Diff {
    /// Sets the records of test `k` in A and B side by side: a changed test, a resolved
    /// violation, a changed verdict, the two weak rates.
    fn compare(&mut self, k: &str, ta: &TestRecord, tb: &TestRecord) {
        if ta.hash != tb.hash {
            self.changed.push(k.to_string());
            return;
        }
        if violation(ta) && !violation(tb) {
            self.resolved_violations.push(k.to_string());
        }
        if judgement(ta) != judgement(tb) {
            self.verdict_changes.push(VerdictChange {
                name: k.to_string(),
                a: judgement(ta),
                b: judgement(tb),
            });
        }
        self.rates.extend(rate_change(k, ta, tb));
    }

    /// Marks the significant rate changes (Bonferroni over those tested) and sorts them
    /// first, smallest p-value first.
    fn judge_rates(&mut self) {
        self.threshold = ALPHA / self.tested().max(1) as f64;
        for r in &mut self.rates {
            r.significant = r.p().is_some_and(|p| p < self.threshold);
        }
        let order = |r: &RateChange| (!r.significant, r.p().is_none(), r.p().unwrap_or(1.0));
        self.rates.sort_by(|x, y| {
            order(x)
                .partial_cmp(&order(y))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }
}

/// The weak rates of one test in A and B; `None` when either side has no instances.
fn rate_change(name: &str, ta: &TestRecord, tb: &TestRecord) -> Option<RateChange> {
    let (ka, na) = (ta.verdict.counts.weak, ta.verdict.instances);
    let (kb, nb) = (tb.verdict.counts.weak, tb.verdict.instances);
    if na == 0 || nb == 0 {
        return None;
    }
    let unit = Unit::of(&[&ta.observed, &tb.observed]);
    let (ua, ub) = (ta.observed.units(unit), tb.observed.units(unit));
    Some(RateChange {
        name: name.into(),
        a: (ka, na),
        b: (kb, nb),
        unit,
        units: (ua.len(), ub.len()),
        test: quasi_binomial(&ua, &ub),
        significant: false,
        same_code: same_code(ta, tb),
    })
}

/// Whether the two records ran the same machine code, when both say which.
fn same_code(ta: &TestRecord, tb: &TestRecord) -> Option<bool> {
    Some(code_of(ta)? == code_of(tb)?)
}

/// The machine code a record's kernel ran, when its run recorded it.
pub fn code_of(t: &TestRecord) -> Option<&str> {
    t.notes.get(CODE_HASH).map(String::as_str)
}

impl Diff {
    /// Whether B has a violation that A did not: `diff`'s exit status 1.
    pub fn regressed(&self) -> bool {
        !self.new_violations.is_empty()
    }

    /// The significant weak-rate changes.
    pub fn significant(&self) -> impl Iterator<Item = &RateChange> {
        self.rates.iter().filter(|r| r.significant)
    }

    /// How many weak rates were compared (had enough parts).
    pub fn tested(&self) -> usize {
        self.rates.iter().filter(|r| r.test.is_some()).count()
    }

    /// Of the tests whose rates were set side by side with their code named on both sides:
    /// how many ran the same code, and how many there were; `None` when no test named it.
    pub fn codes(&self) -> Option<(usize, usize)> {
        let known: Vec<bool> = self.rates.iter().filter_map(|r| r.same_code).collect();
        (!known.is_empty()).then(|| (known.iter().filter(|&&s| s).count(), known.len()))
    }
}

fn rate(k: u64, n: u64) -> String {
    format::rate(crate::verdict::rate_per_instance(k, n))
}

fn ratio(r: &RateChange) -> String {
    let (ra, rb) = (r.a.0 as f64 / r.a.1 as f64, r.b.0 as f64 / r.b.1 as f64);
    if ra == 0.0 {
        "new".into()
    } else {
        format!("×{}", format::rate(Some(rb / ra)))
    }
}

/// The p-value and dispersion of a comparison, or why there is none.
fn test_summary(r: &RateChange) -> String {
    match r.test {
        Some(t) => format!(
            "p = {:.2e}, phi = {:.1}, {} + {} {}",
            t.p,
            t.phi,
            r.units.0,
            r.units.1,
            r.unit.plural()
        ),
        None => format!(
            "not tested: {} + {} {} recorded",
            r.units.0,
            r.units.1,
            r.unit.plural()
        ),
    }
}

/// The settings that differ between the runs, one per line.
fn setup_text(s: &mut String, d: &Diff) {
    if d.setup.is_empty() {
        let _ = writeln!(s, "Runs differ in: nothing but their ids and times");
        return;
    }
    let _ = writeln!(s, "Runs differ in: {} settings", d.setup.len());
    for x in &d.setup {
        let _ = writeln!(s, "  {}: {} -> {}", x.field, x.a, x.b);
    }
}

/// The significant weak-rate changes and how many rates could not be compared.
fn rates_text(s: &mut String, d: &Diff) {
    let sig: Vec<&RateChange> = d.significant().collect();
    let untested = d.rates.len() - d.tested();
    let _ = write!(
        s,
        "\nSignificant weak-rate changes: {} of {} tests compared",
        sig.len(),
        d.tested()
    );
    if untested > 0 {
        let _ = write!(s, " ({untested} not tested: too few parts or runs)");
    }
    let _ = writeln!(s);
    if let Some((same, of)) = d.codes() {
        let _ = writeln!(
            s,
            "  ({same} of {of} tests ran the same machine code in A and B ({CODE_HASH}): a change in \
             those is not the compiler's)"
        );
    }
    let by_part = sig.iter().any(|r| r.unit == Unit::Part);
    for r in sig {
        let code = match r.same_code {
            Some(true) => ", same code",
            Some(false) => ", other code",
            None => "",
        };
        let _ = writeln!(
            s,
            "  {}: {} -> {} weak/instance ({}), {}{code}",
            r.name,
            rate(r.a.0, r.a.1),
            rate(r.b.0, r.b.1),
            ratio(r),
            test_summary(r)
        );
    }
    if by_part {
        let _ = writeln!(
            s,
            "  (compared by the parts of one run a side, which cannot tell these from the drift \
             between runs of one setup: `merge` repeated runs of each and diff again to compare \
             by run)"
        );
    }
}

/// The diff as text, for the terminal.
pub fn text(d: &Diff) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "A = {}, B = {}", d.runs.0, d.runs.1);
    setup_text(&mut s, d);
    let list = |s: &mut String, title: &str, items: &[String]| {
        let _ = writeln!(s, "\n{title}: {}", items.len());
        for i in items {
            let _ = writeln!(s, "  {i}");
        }
    };
    list(&mut s, "New violations in B", &d.new_violations);
    list(
        &mut s,
        "Violations in A resolved in B",
        &d.resolved_violations,
    );
    let _ = writeln!(s, "\nVerdict changes: {}", d.verdict_changes.len());
    for c in &d.verdict_changes {
        let _ = writeln!(s, "  {}: {} -> {}", c.name, c.a, c.b);
    }
    rates_text(&mut s, d);
    if !d.sass_failed.is_empty() {
        list(&mut s, kernels::SASS_FAILED_TITLE, &d.sass_failed);
    }
    let only = |names: &[String]| -> Vec<String> { names.iter().map(|n| d.only_line(n)).collect() };
    list(&mut s, "Only in A", &only(&d.only_a));
    list(&mut s, "Only in B", &only(&d.only_b));
    list(
        &mut s,
        "Same name, different test (hash differs; not compared)",
        &d.changed,
    );
    let _ = writeln!(s, "\n{}", method_note(d));
    s
}

/// The diff as a self-contained HTML page.
pub fn html(d: &Diff) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>ptx-litmus diff: {} vs {}</title>\n<style>body{{font-family:sans-serif;\
         margin:1.5em auto;max-width:1100px}}table{{border-collapse:collapse;font-size:.9em}}\
         td,th{{border:1px solid #ccc;padding:3px 7px;text-align:left}}\
         .violation{{color:#b0141d;font-weight:bold}}tr.sig td{{background:#fff3d6}}</style>\n\
         </head>\n<body>\n<h1>ptx-litmus diff</h1>\n<p>A = <code>{}</code>, B = <code>{}</code></p>\n",
        esc(&d.runs.0),
        esc(&d.runs.1),
        esc(&d.runs.0),
        esc(&d.runs.1)
    );
    setup_html(&mut h, d);
    list(
        &mut h,
        "new-violations",
        "New violations in B",
        &d.new_violations,
        "violation",
    );
    list(
        &mut h,
        "resolved",
        "Violations in A resolved in B",
        &d.resolved_violations,
        "",
    );
    verdicts_html(&mut h, d);
    rates_html(&mut h, d);
    let _ = writeln!(h, "<p>{}</p>\n</section>", esc(&method_note(d)));
    if !d.sass_failed.is_empty() {
        let failed = &d.sass_failed;
        list(
            &mut h,
            "sass-failed",
            kernels::SASS_FAILED_TITLE,
            failed,
            "violation",
        );
    }
    let only = |names: &[String]| -> Vec<String> { names.iter().map(|n| d.only_line(n)).collect() };
    list(&mut h, "only-a", "Only in A", &only(&d.only_a), "");
    list(&mut h, "only-b", "Only in B", &only(&d.only_b), "");
    list(
        &mut h,
        "changed",
        "Same name, different test (hash differs; not compared)",
        &d.changed,
        "",
    );
    let _ = writeln!(h, "</body>\n</html>");
    h
}

/// A section listing `items`, each of CSS class `class`.
fn list(h: &mut String, id: &str, title: &str, items: &[String], class: &str) {
    let _ = writeln!(
        h,
        "<section id=\"{id}\">\n<h2>{title} ({})</h2>",
        items.len()
    );
    if !items.is_empty() {
        let _ = writeln!(h, "<ul>");
        for i in items {
            let _ = writeln!(h, "<li class=\"{class}\">{}</li>", esc(i));
        }
        let _ = writeln!(h, "</ul>");
    }
    let _ = writeln!(h, "</section>");
}

/// The tests whose verdict changed, as a table.
fn verdicts_html(h: &mut String, d: &Diff) {
    let _ = writeln!(
        h,
        "<section id=\"verdicts\">\n<h2>Verdict changes ({})</h2>\n<table>\n\
         <tr><th>test</th><th>A</th><th>B</th></tr>",
        d.verdict_changes.len()
    );
    for c in &d.verdict_changes {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.name),
            esc(&c.a),
            esc(&c.b)
        );
    }
    let _ = writeln!(h, "</table>\n</section>");
}

/// The settings that differ between the runs, as a table.
fn setup_html(h: &mut String, d: &Diff) {
    let _ = writeln!(
        h,
        "<section id=\"setup\">\n<h2>Settings that differ ({})</h2>\n<table>\n\
         <tr><th>setting</th><th>A</th><th>B</th></tr>",
        d.setup.len()
    );
    for x in &d.setup {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&x.field),
            esc(&x.a),
            esc(&x.b)
        );
    }
    let _ = writeln!(h, "</table>\n</section>");
}

/// Every weak-rate comparison, significant rows first (the order of `d.rates`).
fn rates_html(h: &mut String, d: &Diff) {
    let _ = writeln!(
        h,
        "<section id=\"rates\">\n<h2>Weak rates ({} significant of {} compared)</h2>\n\
         <table>\n<tr><th>test</th><th>A weak / instances</th><th>B weak / instances</th>\
         <th>A rate</th><th>B rate</th><th>B / A</th><th>p</th><th>phi</th><th>units</th>\
         <th>significant</th><th>code</th></tr>",
        d.significant().count(),
        d.tested()
    );
    for r in &d.rates {
        let (p, phi) = match r.test {
            Some(t) => (format!("{:.2e}", t.p), format!("{:.1}", t.phi)),
            None => ("not tested".into(), "-".into()),
        };
        let _ = writeln!(
            h,
            "<tr{}><td>{}</td><td>{} / {}</td><td>{} / {}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{p}</td><td>{phi}</td><td>{} + {} {}</td><td>{}</td><td>{}</td></tr>",
            if r.significant { " class=\"sig\"" } else { "" },
            esc(&r.name),
            format::count(r.a.0),
            format::count(r.a.1),
            format::count(r.b.0),
            format::count(r.b.1),
            rate(r.a.0, r.a.1),
            rate(r.b.0, r.b.1),
            ratio(r),
            r.units.0,
            r.units.1,
            r.unit.plural(),
            if r.significant { "yes" } else { "no" },
            match r.same_code {
                Some(true) => "same",
                Some(false) => "other",
                None => "-",
            }
        );
    }
    let _ = writeln!(h, "</table>");
}
