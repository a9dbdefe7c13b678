//! The plain-text conformance summary printed by `run` (row by row, as tests finish) and by
//! `report`: every test with its counts, condition observation and weak rate, fitted to the
//! terminal width, then totals.

use super::format;
use crate::results::{judge_model, JudgeModel, RunRecord, TestRecord};
use crate::text::{elide, pad};
use crate::verdict::Status;
use std::fmt::Write;

/// The summary of a run, fitted to [`crate::text::width`]: violations first, then totals.
pub fn render(run: &RunRecord, tests: &[TestRecord]) -> String {
    render_in(run, tests, crate::text::width())
}

/// The summary of a run with no line wider than `width` characters (when `width` leaves room
/// for the narrowest layout, 61 characters).
pub fn render_in(run: &RunRecord, tests: &[TestRecord], width: usize) -> String {
    let mut s = title(run);
    if run.partial {
        s.insert_str(s.find('\n').unwrap_or(s.len()), ", PARTIAL");
    }
    let longest = tests.iter().map(|t| t.name.chars().count()).max();
    // The CPU backend's rates hold for the CPU it got: shown per test when recorded.
    let cpu = tests.iter().any(|t| t.notes.contains_key("cpu_used"));
    let layout = Layout::fit(width, longest.unwrap_or(4), cpu);
    s.push_str(&layout.header());
    for t in ordered(tests) {
        s.push_str(&layout.row(t));
    }
    let _ = writeln!(s, "{}", totals_line(run, tests));
    s
}

/// The lines naming the run (its id, backend, machine and seed) and a non-default judging model.
pub fn title(run: &RunRecord) -> String {
    let machine = run
        .provenance
        .get("gpu")
        .or_else(|| run.provenance.get("cpu"))
        .map(|m| format!(" ({m})"))
        .unwrap_or_default();
    let mut s = format!(
        "run {} on {}{machine}, seed {}\n",
        run.run_id, run.backend, run.parameters.seed
    );
    let model = JudgeModel::of_run(run);
    if model.checker != judge_model::BUILT_IN {
        let _ = writeln!(s, "judged by the model {}", model.label());
    }
    s
}

/// A column after `status` and `test`.
#[derive(Clone, Copy, PartialEq)]
enum Col {
    Instances,
    Sc,
    Weak,
    Forbidden,
    Unexpected,
    Condition,
    WeakRate,
    Cpu,
}

/// Dropped first when the terminal is narrow: the least telling columns (sc and instances
/// follow from weak and the rate; unexpected counts are rare and also reported on stderr).
const DROP_ORDER: [Col; 5] = [
    Col::Unexpected,
    Col::Sc,
    Col::Instances,
    Col::Cpu,
    Col::WeakRate,
];

/// Width of `status` plus its gap, and the narrowest a test name gets before columns go.
const STATUS_W: usize = 12;
const MIN_NAME_W: usize = 12;

impl Col {
    fn head(self) -> &'static str {
        match self {
            Col::Instances => "instances",
            Col::Sc => "sc",
            Col::Weak => "weak",
            Col::Forbidden => "forbidden",
            Col::Unexpected => "unexpect",
            Col::Condition => "condition",
            Col::WeakRate => "weak/inst",
            Col::Cpu => "cpu",
        }
    }

    fn width(self) -> usize {
        match self {
            Col::Instances => 15,
            Col::Sc | Col::Weak => 13,
            Col::Cpu => 5,
            _ => 9,
        }
    }

    fn cell(self, t: &TestRecord) -> String {
        let v = &t.verdict;
        match self {
            Col::Instances => format::count(v.instances),
            Col::Sc => format::count(v.counts.sc),
            Col::Weak => format::count(v.counts.weak),
            Col::Forbidden => format::count(v.counts.forbidden),
            Col::Unexpected => format::count(v.counts.unexpected),
            Col::Condition => v.observation.to_string(),
            Col::WeakRate => format::rate(t.rates.weak_per_instance),
            Col::Cpu => t.notes.get("cpu_used").cloned().unwrap_or("-".into()),
        }
    }

    /// Right-aligned `text` in the column, after its two-space gap.
    fn show(self, text: &str) -> String {
        let w = self.width();
        if self == Col::Condition {
            format!("  {}", pad(text, w))
        } else {
            format!("  {text:>w$}")
        }
    }
}

/// The summary's columns and test-name width for one terminal width.
pub struct Layout {
    name_w: usize,
    cols: Vec<Col>,
}

impl Layout {
    /// Fits the table in `width` characters: test names up to `longest` characters, and the
    /// `cpu` column when `cpu`; columns are dropped in [`DROP_ORDER`] while names would get
    /// narrower than 12 characters, and longer names are elided.
    pub fn fit(width: usize, longest: usize, cpu: bool) -> Layout {
        use Col::*;
        let all = [
            Instances, Sc, Weak, Forbidden, Unexpected, Condition, WeakRate, Cpu,
        ];
        let mut cols: Vec<Col> = all.into_iter().filter(|&c| cpu || c != Cpu).collect();
        let used = |cols: &[Col]| STATUS_W + cols.iter().map(|c| c.width() + 2).sum::<usize>();
        for drop in DROP_ORDER {
            if used(&cols) + MIN_NAME_W <= width {
                break;
            }
            cols.retain(|&c| c != drop);
        }
        let room = width.saturating_sub(used(&cols)).max(MIN_NAME_W);
        Layout {
            name_w: longest.max(4).min(room),
            cols,
        }
    }

    /// The column headings, one line.
    pub fn header(&self) -> String {
        let mut s = format!("{:<10}  {}", "status", pad("test", self.name_w));
        for c in &self.cols {
            s.push_str(&c.show(c.head()));
        }
        s.push('\n');
        s
    }

    /// One test's line.
    pub fn row(&self, t: &TestRecord) -> String {
        let v = &t.verdict;
        let status = match v.status {
            Status::Violation => "VIOLATION",
            Status::Conformant | Status::NoData => v.status.as_str(),
        };
        let name = pad(&elide(&t.name, self.name_w), self.name_w);
        let mut s = format!("{status:<10}  {name}");
        for c in &self.cols {
            s.push_str(&c.show(&c.cell(t)));
        }
        s.push('\n');
        s
    }
}

/// Violations first (most violating instances first), then by name and path.
pub fn ordered(tests: &[TestRecord]) -> Vec<&TestRecord> {
    let mut v: Vec<&TestRecord> = tests.iter().collect();
    v.sort_by(|a, b| {
        let key = |t: &TestRecord| {
            (
                t.verdict.status != Status::Violation,
                std::cmp::Reverse(t.verdict.counts.forbidden + t.verdict.counts.unexpected),
            )
        };
        key(a)
            .cmp(&key(b))
            .then_with(|| (&a.name, &a.path).cmp(&(&b.name, &b.path)))
    });
    v
}

/// Counts of tests by status, in one sentence.
pub fn totals_line(run: &RunRecord, tests: &[TestRecord]) -> String {
    let n = |st: Status| tests.iter().filter(|t| t.verdict.status == st).count();
    let weak = tests.iter().filter(|t| t.verdict.counts.weak > 0).count();
    let mut line = format!(
        "{} tests: {} violation{}, {} conformant, {} no data; weak behaviour seen in {} test{}",
        tests.len(),
        n(Status::Violation),
        if n(Status::Violation) == 1 { "" } else { "s" },
        n(Status::Conformant),
        n(Status::NoData),
        weak,
        if weak == 1 { "" } else { "s" },
    );
    if !run.skipped_tests.is_empty() {
        let _ = write!(line, "; {} not run", run.skipped_tests.len());
    }
    line
}
