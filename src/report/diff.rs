//! Two result sets side by side (two drivers, two GPUs, two ptxas versions): new violations
//! first, then verdict changes, weak-rate changes that are statistically significant, and tests
//! present in only one set. Tests are paired by name, and only when their hashes agree.

use super::format;
use super::html::esc;
use super::stats::{self, Method};
use crate::results::{ResultSet, TestRecord};
use crate::verdict::Status;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The family-wise significance level of weak-rate changes.
pub const ALPHA: f64 = 0.05;

/// A test whose judgement differs between the sets.
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictChange {
    /// The test's name.
    pub name: String,
    /// Status and observation in A.
    pub a: String,
    /// Status and observation in B.
    pub b: String,
}

/// The weak-rate comparison of a test present in both sets.
#[derive(Clone, Debug, PartialEq)]
pub struct RateChange {
    /// The test's name.
    pub name: String,
    /// Weak instances and instances in A.
    pub a: (u64, u64),
    /// Weak instances and instances in B.
    pub b: (u64, u64),
    /// The two-sided p-value.
    pub p: f64,
    /// The test that computed it.
    pub method: Method,
    /// Whether `p` is below the Bonferroni threshold.
    pub significant: bool,
}

/// Everything `diff` reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    /// Run ids of A and B.
    pub runs: (String, String),
    /// Tests that are violations in B but not in A (including tests A did not run).
    pub new_violations: Vec<String>,
    /// Tests that were violations in A and are not in B.
    pub resolved_violations: Vec<String>,
    /// Status or observation changes of tests in both sets.
    pub verdict_changes: Vec<VerdictChange>,
    /// Weak-rate comparisons of tests in both sets with data in both, by name.
    pub rates: Vec<RateChange>,
    /// The Bonferroni threshold: `ALPHA / rates.len()`.
    pub threshold: f64,
    /// Tests only in A.
    pub only_a: Vec<String>,
    /// Tests only in B.
    pub only_b: Vec<String>,
    /// Tests with one name but different hashes: not compared.
    pub changed: Vec<String>,
}

/// The description of the statistics, printed with every diff.
pub fn method_note(d: &Diff) -> String {
    format!(
        "Weak-rate changes: weak instances / instances of A against B, two-sided Fisher's exact \
         test (two-sided two-proportion z-test with pooled variance when both sets together saw \
         more than {} weak or non-weak instances); significant when p < {} / {} = {:.3e} \
         (Bonferroni over the {} tests compared).",
        format::count(stats::EXACT_LIMIT),
        ALPHA,
        d.rates.len().max(1),
        d.threshold,
        d.rates.len()
    )
}

fn key_map(set: &ResultSet) -> BTreeMap<String, &TestRecord> {
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
    let mut d = Diff {
        runs: (a.run.run_id.clone(), b.run.run_id.clone()),
        new_violations: Vec::new(),
        resolved_violations: Vec::new(),
        verdict_changes: Vec::new(),
        rates: Vec::new(),
        threshold: ALPHA,
        only_a: ma
            .keys()
            .filter(|k| !mb.contains_key(*k))
            .cloned()
            .collect(),
        only_b: mb
            .keys()
            .filter(|k| !ma.contains_key(*k))
            .cloned()
            .collect(),
        changed: Vec::new(),
    };
    let violation = |t: &TestRecord| t.verdict.status == Status::Violation;
    for (k, tb) in &mb {
        let ta = ma.get(k).filter(|ta| ta.hash == tb.hash);
        if violation(tb) && !ta.is_some_and(|ta| violation(ta)) {
            d.new_violations.push(k.clone());
        }
    }
    for (k, ta) in &ma {
        let Some(tb) = mb.get(k) else { continue };
        if ta.hash != tb.hash {
            d.changed.push(k.clone());
            continue;
        }
        if violation(ta) && !violation(tb) {
            d.resolved_violations.push(k.clone());
        }
        if judgement(ta) != judgement(tb) {
            d.verdict_changes.push(VerdictChange {
                name: k.clone(),
                a: judgement(ta),
                b: judgement(tb),
            });
        }
        let (ka, na) = (ta.verdict.counts.weak, ta.verdict.instances);
        let (kb, nb) = (tb.verdict.counts.weak, tb.verdict.instances);
        if let Some((p, method)) = stats::two_proportion(ka, na, kb, nb) {
            d.rates.push(RateChange {
                name: k.clone(),
                a: (ka, na),
                b: (kb, nb),
                p,
                method,
                significant: false,
            });
        }
    }
    d.threshold = ALPHA / d.rates.len().max(1) as f64;
    for r in &mut d.rates {
        r.significant = r.p < d.threshold;
    }
    d
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

/// The diff as text, for the terminal.
pub fn text(d: &Diff) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "A = {}, B = {}", d.runs.0, d.runs.1);
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
    let sig: Vec<&RateChange> = d.significant().collect();
    let _ = writeln!(
        s,
        "\nSignificant weak-rate changes: {} of {} tests compared",
        sig.len(),
        d.rates.len()
    );
    for r in sig {
        let _ = writeln!(
            s,
            "  {}: {} -> {} weak/instance ({}), p = {:.2e} ({})",
            r.name,
            rate(r.a.0, r.a.1),
            rate(r.b.0, r.b.1),
            ratio(r),
            r.p,
            r.method.as_str()
        );
    }
    list(&mut s, "Only in A", &d.only_a);
    list(&mut s, "Only in B", &d.only_b);
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
    let list = |h: &mut String, id: &str, title: &str, items: &[String], class: &str| {
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
    };
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
    let _ = writeln!(
        h,
        "</table>\n</section>\n<section id=\"rates\">\n<h2>Weak rates ({} significant of {})</h2>\n\
         <table>\n<tr><th>test</th><th>A weak / instances</th><th>B weak / instances</th>\
         <th>A rate</th><th>B rate</th><th>B / A</th><th>p</th><th>test used</th>\
         <th>significant</th></tr>",
        d.significant().count(),
        d.rates.len()
    );
    for r in &d.rates {
        let _ = writeln!(
            h,
            "<tr{}><td>{}</td><td>{} / {}</td><td>{} / {}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{:.2e}</td><td>{}</td><td>{}</td></tr>",
            if r.significant { " class=\"sig\"" } else { "" },
            esc(&r.name),
            format::count(r.a.0),
            format::count(r.a.1),
            format::count(r.b.0),
            format::count(r.b.1),
            rate(r.a.0, r.a.1),
            rate(r.b.0, r.b.1),
            ratio(r),
            r.p,
            r.method.as_str(),
            if r.significant { "yes" } else { "no" }
        );
    }
    let _ = writeln!(h, "</table>\n<p>{}</p>\n</section>", esc(&method_note(d)));
    list(&mut h, "only-a", "Only in A", &d.only_a, "");
    list(&mut h, "only-b", "Only in B", &d.only_b, "");
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
