//! The built-in checker against a cat model on the same test: which outcomes only one of them
//! allows, each with the axiom (built-in) or check (cat) that excludes it on the other side;
//! over a stream of random tests, counts of agreements and of disagreements by class.

use super::ast::Model;
use super::check::{check as cat_check, CatVerdict};
use crate::gen::random::{test_name, test_text, Stream};
use crate::litmus::{self, ast::Test};
use crate::model::ModelVerdict;
use crate::outcome::Outcome;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Instant;

/// Where the two sides differ on one test.
#[derive(Clone, Debug, Default)]
pub struct Comparison {
    /// Outcomes the built-in checker allows and the model forbids, with the model's check.
    pub only_builtin: Vec<(Outcome, String)>,
    /// Outcomes the model allows and the built-in checker forbids, with the built-in axiom.
    pub only_cat: Vec<(Outcome, String)>,
    /// Outcomes that some candidate gives on one side only (allowed or excluded there, neither
    /// on the other), with that side: the two enumerate different candidates, whatever the
    /// model, since each lists every outcome of its candidates.
    pub unshared: Vec<(Outcome, &'static str)>,
}

impl Comparison {
    /// Whether both allow the same outcomes out of the same candidate outcomes.
    pub fn agrees(&self) -> bool {
        self.only_builtin.is_empty() && self.only_cat.is_empty() && self.unshared.is_empty()
    }

    /// The class of the disagreement: which side allows more, and the check or axiom excluding
    /// the first such outcome on the other side (`None` when they agree).
    pub fn class(&self) -> Option<String> {
        if let Some((_, axiom)) = self.only_cat.first() {
            return Some(format!("model allows more; built-in excludes by {axiom}"));
        }
        if let Some((_, check)) = self.only_builtin.first() {
            return Some(format!("built-in allows more; model excludes by {check}"));
        }
        self.unshared
            .first()
            .map(|(_, side)| format!("candidate outcomes differ; one only the {side} gives"))
    }
}

/// Compares the built-in checker with `model` on `test`.
pub fn compare(model: &Model, test: &Test) -> Result<Comparison, String> {
    compare_timed(model, test).0
}

/// [`compare`], with the seconds each side took.
fn compare_timed(model: &Model, test: &Test) -> (Result<Comparison, String>, Seconds) {
    compare_with(
        || crate::model::check(test).map_err(|e| format!("built-in: {e}")),
        || cat_check(model, test).map_err(|e| format!("model: {e}")),
    )
}

/// Runs the built-in side, then (when it decides the test) the cat side, and compares them:
/// the comparison or the first side's error, and the seconds each took.
pub fn compare_with(
    builtin: impl FnOnce() -> Result<ModelVerdict, String>,
    cat: impl FnOnce() -> Result<CatVerdict, String>,
) -> (Result<Comparison, String>, Seconds) {
    let start = Instant::now();
    let b = builtin();
    let mut secs = Seconds {
        builtin: start.elapsed().as_secs_f64(),
        cat: 0.0,
    };
    let b = match b {
        Ok(b) => b,
        Err(e) => return (Err(e), secs),
    };
    let start = Instant::now();
    let c = cat();
    secs.cat = start.elapsed().as_secs_f64();
    (c.map(|c| compare_verdicts(&b, &c)), secs)
}

/// Where the built-in verdict `b` and the cat verdict `c` of one test differ.
pub fn compare_verdicts(b: &ModelVerdict, c: &CatVerdict) -> Comparison {
    let axiom_of = |o: &Outcome| {
        b.excluded
            .iter()
            .find(|e| &e.outcome == o)
            .map_or("no candidate".to_string(), |e| e.axiom.name().to_string())
    };
    let check_of = |o: &Outcome| {
        c.excluded
            .get(o)
            .cloned()
            .unwrap_or_else(|| "no candidate".into())
    };
    let b_space: BTreeSet<&Outcome> = b
        .allowed
        .iter()
        .chain(b.excluded.iter().map(|e| &e.outcome))
        .collect();
    let c_space: BTreeSet<&Outcome> = c.allowed.iter().chain(c.excluded.keys()).collect();
    let unshared = b_space
        .difference(&c_space)
        .map(|&o| (o.clone(), "built-in checker"))
        .chain(c_space.difference(&b_space).map(|&o| (o.clone(), "model")))
        .collect();
    Comparison {
        unshared,
        only_builtin: b
            .allowed
            .difference(&c.allowed)
            .map(|o| (o.clone(), check_of(o)))
            .collect(),
        only_cat: c
            .allowed
            .difference(&b.allowed)
            .map(|o| (o.clone(), axiom_of(o)))
            .collect(),
    }
}

/// What a differential run found.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Tests compared.
    pub tests: usize,
    /// Tests with RMWs (`atom`, `red`) among them.
    pub with_rmw: usize,
    /// Tests on which both sides allow the same outcomes.
    pub agree: usize,
    /// Per class: how many tests, and the text of the first one.
    pub classes: BTreeMap<String, (usize, String)>,
    /// Tests one side could not decide (too large), with the reason.
    pub undecided: Vec<String>,
    /// The test that took longest (both sides), and the seconds of each side.
    pub slowest: Option<(String, Seconds)>,
}

/// The seconds one test took the built-in checker and the cat model.
#[derive(Clone, Copy, Debug, Default)]
pub struct Seconds {
    /// The built-in checker's.
    pub builtin: f64,
    /// The cat model's (0 when the built-in checker did not decide the test).
    pub cat: f64,
}

impl Seconds {
    fn total(self) -> f64 {
        self.builtin + self.cat
    }
}

/// Random test `index` of `stream` of `seed`: its text and the parsed test.
pub fn random_test(seed: u64, index: u64, stream: Stream) -> (String, Test) {
    let text = test_text(seed, index, stream);
    let test =
        litmus::parse(&text, Path::new("random.litmus")).expect("the generator writes valid tests");
    (text, test)
}

/// Compares the two sides on random tests `0..count` of `stream` of `seed`.
pub fn run(model: &Model, seed: u64, count: u64, stream: Stream) -> Summary {
    let mut s = Summary::default();
    for i in 0..count {
        let (text, test) = random_test(seed, i, stream);
        let (compared, secs) = compare_timed(model, &test);
        s.add(&test_name(seed, i, stream), &text, compared, secs);
    }
    s
}

impl Summary {
    /// Counts one test: `name`, its text, the comparison (or why a side did not decide it) and
    /// the seconds each side took.
    pub fn add(
        &mut self,
        name: &str,
        text: &str,
        compared: Result<Comparison, String>,
        secs: Seconds,
    ) {
        if self
            .slowest
            .as_ref()
            .is_none_or(|(_, t)| secs.total() > t.total())
        {
            self.slowest = Some((name.to_string(), secs));
        }
        let c = match compared {
            Err(e) => {
                self.undecided.push(format!("{name}: {e}"));
                return;
            }
            Ok(c) => c,
        };
        self.tests += 1;
        if text.contains("atom.") || text.contains("red.") {
            self.with_rmw += 1;
        }
        match c.class() {
            None => self.agree += 1,
            Some(k) => self.classes.entry(k).or_insert((0, text.to_string())).0 += 1,
        }
    }

    /// A plain-text report: counts, then each class with its count and first test.
    pub fn report(&self, examples: bool) -> String {
        let mut out = format!(
            "{} tests ({} with RMWs): {} agree, {} disagree, {} undecided\n",
            self.tests,
            self.with_rmw,
            self.agree,
            self.tests - self.agree,
            self.undecided.len()
        );
        for (k, (n, text)) in &self.classes {
            out.push_str(&format!("  {n:>6}  {k}\n"));
            if examples {
                for l in text.lines() {
                    out.push_str(&format!("          {l}\n"));
                }
            }
        }
        if let Some((name, s)) = &self.slowest {
            out.push_str(&format!(
                "  slowest test: {name}, {:.3} s (built-in checker {:.3} s, cat model {:.3} s)\n",
                s.total(),
                s.builtin,
                s.cat
            ));
        }
        for u in &self.undecided {
            out.push_str(&format!("  undecided: {u}\n"));
        }
        out
    }
}
