//! The plain-text conformance summary printed by `run` (row by row, as tests finish) and by
//! `report`: every test with its counts, condition observation and weak rate, fitted to the
//! terminal width, then totals.

use super::format;
use crate::harness::notes;
use crate::results::{judge_model, JudgeModel, RunRecord, TestRecord};
use crate::text::{elide, pad};
use crate::verdict::Status;
use std::fmt::Write;

/// The summary of a run, fitted to [`crate::text::width`]: violations first, then totals.
pub fn render(run: &RunRecord, tests: &[TestRecord]) -> String {
    render_in(run, tests, crate::text::width())
}

/// The summary of a run with no line wider than `width` characters (when `width` leaves room
/// for the narrowest layout, 59 characters).
pub fn render_in(run: &RunRecord, tests: &[TestRecord], width: usize) -> String {
    let mut s = title(run);
    if run.partial {
        s.insert_str(s.find('\n').unwrap_or(s.len()), ", PARTIAL");
    }
    let longest = tests.iter().map(|t| t.name.chars().count()).max();
    // The CPU backend's rates hold for the CPU it got: shown per test when recorded.
    let cpu = tests.iter().any(|t| t.notes.contains_key(notes::CPU_USED));
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

/// How a table too narrow for whole test names makes room, in order: the least telling
/// columns go first (unexpected counts are rare and also reported on stderr, sc follows from
/// weak and the instances), then counts are shortened (`12.3M`), then the instances go; each
/// step is taken only while names up to [`NAME_GOAL`] characters would be elided.
const MAKE_ROOM: [Step; 4] = [
    Step::Drop(Col::Unexpected),
    Step::Drop(Col::Sc),
    Step::ShortCounts,
    Step::Drop(Col::Instances),
];

/// The last resorts, taken only while names would get narrower than [`MIN_NAME_W`].
const LAST_RESORT: [Step; 2] = [Step::Drop(Col::Cpu), Step::Drop(Col::WeakRate)];

/// One way of making room for test names.
#[derive(Clone, Copy)]
enum Step {
    Drop(Col),
    ShortCounts,
}

/// Width of `status` plus its gap; the name width the layout makes room for (test names of
/// herd/diy style, `MP+rel.gpu+acq.gpu-diffcta-samecluster`, reach about 40), and the
/// narrowest a name gets before the last columns go.
const STATUS_W: usize = 12;
const NAME_GOAL: usize = 40;
const MIN_NAME_W: usize = 20;

/// Width of a shortened count column (`999.9k`, `12.3M`; [`format::short_count`]).
const SHORT_W: usize = 6;

impl Col {
    fn head(self, short: bool) -> &'static str {
        match self {
            Col::Instances if short => "inst",
            Col::Instances => "instances",
            Col::Sc => "sc",
            Col::Weak => "weak",
            Col::Forbidden if short => "forbid",
            Col::Forbidden => "forbidden",
            Col::Unexpected if short => "unexp",
            Col::Unexpected => "unexpect",
            Col::Condition => "condition",
            Col::WeakRate => "weak/inst",
            Col::Cpu => "cpu",
        }
    }

    /// Whether the column holds a count, which `short` shortens.
    fn is_count(self) -> bool {
        matches!(
            self,
            Col::Instances | Col::Sc | Col::Weak | Col::Forbidden | Col::Unexpected
        )
    }

    fn width(self, short: bool) -> usize {
        match self {
            c if short && c.is_count() => SHORT_W,
            Col::Instances => 15,
            Col::Sc | Col::Weak => 13,
            Col::Cpu => 5,
            _ => 9,
        }
    }

    fn cell(self, t: &TestRecord, short: bool) -> String {
        let v = &t.verdict;
        let n = |k: u64| {
            if short {
                format::short_count(k)
            } else {
                format::count(k)
            }
        };
        match self {
            Col::Instances => n(v.instances),
            Col::Sc => n(v.counts.sc),
            Col::Weak => n(v.counts.weak),
            Col::Forbidden => n(v.counts.forbidden),
            Col::Unexpected => n(v.counts.unexpected),
            Col::Condition => v.observation.to_string(),
            Col::WeakRate => format::rate(t.rates.weak_per_instance),
            Col::Cpu => t.notes.get(notes::CPU_USED).cloned().unwrap_or("-".into()),
        }
    }

    /// Right-aligned `text` in the column, after its two-space gap.
    fn show(self, text: &str, short: bool) -> String {
        let w = self.width(short);
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
    /// Whether counts are shortened.
    short: bool,
}

impl Layout {
    /// Fits the table in `width` characters: test names up to `longest` characters, and the
    /// `cpu` column when `cpu`. While names up to 40 characters would not fit, room is made
    /// ([`MAKE_ROOM`]); while they would get narrower than 20, the cpu and rate columns go
    /// too; longer names are elided in the middle.
    pub fn fit(width: usize, longest: usize, cpu: bool) -> Layout {
        use Col::*;
        let all = [
            Instances, Sc, Weak, Forbidden, Unexpected, Condition, WeakRate, Cpu,
        ];
        let mut l = Layout {
            name_w: 0,
            cols: all.into_iter().filter(|&c| cpu || c != Cpu).collect(),
            short: false,
        };
        let goal = longest.clamp(4, NAME_GOAL);
        for (steps, want) in [
            (&MAKE_ROOM[..], goal),
            (&LAST_RESORT[..], MIN_NAME_W.min(goal)),
        ] {
            for &step in steps {
                if l.used() + want <= width {
                    break;
                }
                match step {
                    Step::Drop(c) => l.cols.retain(|&x| x != c),
                    Step::ShortCounts => l.short = true,
                }
            }
        }
        let room = width.saturating_sub(l.used()).max(MIN_NAME_W.min(goal));
        l.name_w = longest.max(4).min(room);
        l
    }

    /// The width of everything but the test name.
    fn used(&self) -> usize {
        STATUS_W
            + self
                .cols
                .iter()
                .map(|c| c.width(self.short) + 2)
                .sum::<usize>()
    }

    /// The column headings, one line.
    pub fn header(&self) -> String {
        let mut s = format!("{:<10}  {}", "status", pad("test", self.name_w));
        for c in &self.cols {
            s.push_str(&c.show(c.head(self.short), self.short));
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
            s.push_str(&c.show(&c.cell(t, self.short), self.short));
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

/// The instances a harness gave up waiting on (a CPU role out of patience, a GPU thread out of
/// its loop budget), which no histogram counts: they explain instances missing from the rows,
/// and a test with a loop the model says may spin for ever is expected to have them.
fn uncounted(tests: &[TestRecord]) -> Option<String> {
    let with: Vec<&TestRecord> = tests.iter().filter(|t| t.observed.skipped > 0).collect();
    let n: u64 = with.iter().map(|t| t.observed.skipped).sum();
    const NAMED: usize = 3;
    (n > 0).then(|| {
        let names: Vec<&str> = with.iter().take(NAMED).map(|t| t.name.as_str()).collect();
        let mut named = names.join(", ");
        if with.len() > NAMED {
            let _ = write!(named, " and {} more", with.len() - NAMED);
        }
        format!(
            "{} instance{} given up waiting, not counted ({named})",
            super::format::count(n),
            if n == 1 { "" } else { "s" },
        )
    })
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
    if let Some(uncounted) = uncounted(tests) {
        let _ = write!(line, "; {uncounted}");
    }
    if !run.skipped_tests.is_empty() {
        let _ = write!(line, "; {} not run", run.skipped_tests.len());
    }
    if let Some(sass) = super::kernels::sass_tally(tests) {
        let _ = write!(line, "; {sass}");
    }
    line
}
