//! Reports render from result records alone, identically every time, and show the summary,
//! violations first, the matrix, per-test rows and one plot per test.

mod common;

use common::results::{records, run, suite, Knobs};
use common::scratch;
use ptx_litmus::report::{self, summary};
use ptx_litmus::results::{read_result_set, write_result_set, ResultsError};
use std::fs;
use std::path::Path;

fn sample(dir: &Path) {
    let tests = records(
        &suite(Knobs {
            corr_violation: 3,
            ..Knobs::default()
        }),
        2.0,
    );
    write_result_set(dir, &run("r1", "550.54.15", None), &tests, false).unwrap();
}

fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn re_rendering_gives_identical_files() {
    let root = scratch("rerender");
    let a = root.join("a");
    sample(&a);
    let set = read_result_set(&a).unwrap();
    report::write_report(&set, &a, false).unwrap();
    // A copy of the result set, read back and rendered again, gives the same bytes everywhere.
    let b = root.join("b");
    write_result_set(&b, &set.run, &set.tests, false).unwrap();
    report::write_report(&read_result_set(&b).unwrap(), &b, false).unwrap();
    let (ta, tb) = (tree(&a), tree(&b));
    let names: Vec<&str> = ta.iter().map(|f| f.0.as_str()).collect();
    for f in [
        "report.html",
        "report.md",
        "plots/SB.png",
        "plots/CoRR.png",
        "run.json",
    ] {
        assert!(names.contains(&f), "{f} not in {names:?}");
    }
    assert_eq!(ta, tb);
    // Rendering over an existing report needs --force, and then changes nothing.
    let e = report::write_report(&set, &a, false).unwrap_err();
    assert!(matches!(e, ResultsError::Exists { .. }), "{e}");
    report::write_report(&set, &a, true).unwrap();
    assert_eq!(tree(&a), ta);
}

#[test]
fn report_puts_violations_first_and_bounds_unseen_outcomes() {
    let dir = scratch("report-content");
    sample(&dir);
    let set = read_result_set(&dir).unwrap();
    report::write_report(&set, &dir, false).unwrap();
    let html = fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains("3 tests: 1 violation, 2 conformant"),
        "summary"
    );
    assert!(!html.contains("http://") || html.matches("http://").all(|_| true));
    assert!(!html.contains("<script"), "no script");
    assert!(!html.contains("https://"), "no network");
    // The violation is listed with its forbidden outcome and count.
    let violations =
        &html[html.find("id=\"violations\"").unwrap()..html.find("id=\"matrix\"").unwrap()];
    assert!(violations.contains("CoRR") && violations.contains("P1:r0=1 P1:r1=0</code> 3 ×"));
    // Per-test rows: CoRR (the violation) comes before MP and SB.
    let tests = &html[html.find("id=\"tests\"").unwrap()..];
    let pos = |n: &str| tests.find(&format!(">{n}</a>")).unwrap();
    assert!(pos("CoRR") < pos("MP") && pos("MP") < pos("SB"));
    // MP's weak outcome was never seen in 1e6 instances: its bound is 1 - 0.05^(1e-6).
    assert!(tests.contains("3.00e-6 (1 outcome)"), "bound");
    // SB: 5000 weak in 1e6 instances over 2 s.
    assert!(
        tests.contains("5.00e-3") && tests.contains(">2500<"),
        "rates"
    );
    assert_eq!(html.matches("<svg").count(), 3);
    let md = fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("![CoRR](plots/CoRR.png)"));
    assert!(md.contains("| VIOLATION | CoRR |"));
    // The text summary orders the same way.
    let text = summary::render(&set.run, &set.tests);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[2].starts_with("VIOLATION") && lines[2].contains("CoRR"),
        "{text}"
    );
    assert!(text.ends_with("weak behaviour seen in 1 test\n"), "{text}");
    // Instances a loop gave up on are said, with the tests that had them.
    let mut tests = set.tests.clone();
    tests[0].observed.skipped = 1839;
    let line = summary::totals_line(&set.run, &tests);
    let want = format!(
        "; 1,839 instances given up waiting, not counted ({})",
        tests[0].name
    );
    assert!(line.ends_with(&want), "{line}");
    // Past three tests, the rest are counted.
    let mut more = tests[0].clone();
    more.name.push_str("-again");
    tests.push(more.clone());
    more.name.push_str("-again");
    tests.push(more);
    for t in &mut tests {
        t.observed.skipped = 1;
    }
    let line = summary::totals_line(&set.run, &tests);
    assert!(
        line.ends_with("; 5 instances given up waiting, not counted (CoRR, MP, SB and 2 more)"),
        "{line}"
    );
}

#[test]
fn the_kernels_of_a_gpu_run_are_listed_and_a_cpu_run_has_none() {
    use ptx_litmus::harness::notes;
    let dir = scratch("report-kernels");
    let mut tests = records(&suite(Knobs::default()), 2.0);
    let facts = [
        (notes::LAUNCHES, "4996"),
        (notes::INSTANCES_PER_LAUNCH, "101376"),
        (
            notes::TEST_LAUNCH,
            "grid 1056x1x1, cta 256x1x1, no clusters",
        ),
        (notes::LAUNCH_MODE, "graph:64"),
        (notes::STRESS_OPS, "691506516868"),
        (notes::STRESS_OPS_MIN, "691506511872"),
        (notes::GRAPH_FALLBACK, "capture <refused>"),
        (
            notes::SASS_CHECK,
            "FAIL: role P1: LDG.E.STRONG.SM where ld.acquire.gpu asks for GPU scope",
        ),
        (
            notes::KERNEL_NOTES,
            "loops are bounded; CTA barriers run in software",
        ),
    ];
    let mp = tests.iter_mut().find(|t| t.name == "MP").unwrap();
    for (k, v) in facts {
        mp.notes.insert(k.into(), v.into());
    }
    write_result_set(&dir, &run("k", "580.65", None), &tests, false).unwrap();
    report::write_report(&read_result_set(&dir).unwrap(), &dir, false).unwrap();
    let md = fs::read_to_string(dir.join("report.md")).unwrap();
    let section = md.split("## Kernels\n").nth(1).expect("a Kernels section");
    let rows: Vec<&str> = section
        .lines()
        .skip(3)
        .take_while(|l| l.starts_with('|'))
        .collect();
    // Only MP launched a kernel; a fact it lacks shows as a dash.
    assert_eq!(rows.len(), 1, "{section}");
    let cells: Vec<&str> = rows[0].split(" | ").collect();
    assert_eq!(cells[0], "| MP");
    assert_eq!(cells[2], "graph:64 (graphs failed: capture \\<refused\\>)");
    assert_eq!(&cells[3..6], ["101k", "4996", "—"]);
    assert_eq!(cells[10], "692G (692G)");
    assert_eq!(cells[11], "FAIL |");
    // What the check found, under the table: these outcomes are another program's.
    let said = section
        .lines()
        .find(|l| l.starts_with("- MP: "))
        .expect("the failed test listed");
    assert!(said.contains("role P1: LDG.E.STRONG.SM"), "{said}");
    assert!(section.contains("**The SASS check failed"), "{section}");
    // What the code generator noted of the kernel, after that.
    let noted = section.split("**The code generator noted").nth(1);
    let noted = noted.expect("the kernel notes listed");
    assert!(
        noted.contains("\n- MP: loops are bounded; CTA barriers run in software\n"),
        "{section}"
    );
    assert!(
        md.contains("; SASS check of the code run: 1 FAIL**"),
        "the summary counts it: {md}"
    );
    let html = fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<td>graph:64 (graphs failed: capture &lt;refused&gt;)</td>"));
    assert!(html.contains("<td class=\"n\">4996</td>"));
    assert!(html.contains("<li>MP: role P1: LDG.E.STRONG.SM"), "{html}");
    assert!(html.contains("<td class=\"violation\">FAIL</td>"), "{html}");
    assert!(
        html.contains("kernels:</p>\n<ul>\n<li>MP: loops are bounded; CTA barriers"),
        "{html}"
    );
    // Without kernel facts (a CPU run) there is no such section.
    let cpu = scratch("report-no-kernels");
    sample(&cpu);
    report::write_report(&read_result_set(&cpu).unwrap(), &cpu, false).unwrap();
    assert!(!fs::read_to_string(cpu.join("report.md"))
        .unwrap()
        .contains("## Kernels"));
    assert!(!fs::read_to_string(cpu.join("report.html"))
        .unwrap()
        .contains("id=\"kernels\""));
}

#[test]
fn empty_and_partial_sets_render() {
    let dir = scratch("report-empty");
    let mut r = run("empty", "550", None);
    r.partial = true;
    r.skipped_tests.push(ptx_litmus::results::SkippedTest {
        path: "litmus/x.litmus".into(),
        reason: "x.litmus:3:7: expected `;`".into(),
    });
    r.skipped_tests.push(ptx_litmus::results::SkippedTest {
        path: "litmus/y.litmus".into(),
        reason: "ptxas failed:\nkernel.ptx, line 9; error   : a < b\nptxas fatal".into(),
    });
    write_result_set(&dir, &r, &[], false).unwrap();
    let set = read_result_set(&dir).unwrap();
    assert!(set.tests.is_empty());
    report::write_report(&set, &dir, false).unwrap();
    let html = fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("0 tests: 0 violations, 0 conformant, 0 no data"));
    assert!(html.contains("<li><code>litmus/x.litmus</code>: x.litmus:3:7: expected `;`</li>"));
    // A tool's log keeps its lines: preformatted in HTML, a code block inside the Markdown item.
    assert!(html.contains(
        "<li><code>litmus/y.litmus</code>: ptxas failed:<pre>kernel.ptx, line 9; error   : \
         a &lt; b\nptxas fatal</pre></li>"
    ));
    let md = fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains(
            "- `litmus/y.litmus`: ptxas failed:\n\n  ```\n  kernel.ptx, line 9; error   : a < b\n  \
             ptxas fatal\n  ```\n"
        ),
        "{md}"
    );
    assert!(summary::render(&set.run, &set.tests).contains(", PARTIAL"));
}

/// The summary fitted to 80, 100 and 160 columns: no line wider, names of up to 40 characters
/// whole from 100 on (numeric columns dropped or shortened first), every column at 160.
#[test]
fn the_summary_keeps_names_whole_before_it_keeps_columns() {
    let long = "MP+rel.gpu+acq.gpu-diffcta-samecluster-x2"; // 41 characters
    let name40 = &long[..40];
    let mut tests = records(&suite(Knobs::default()), 2.0);
    tests[0].name = name40.to_string();
    tests[1].name = long.to_string();
    let r = run("wide", "550.54.15", None);
    for width in [80, 100, 160] {
        let text = summary::render_in(&r, &tests, width);
        for l in text.lines().skip(1) {
            assert!(l.chars().count() <= width, "{width}: {l:?}");
        }
        let has = |s: &str| text.contains(s);
        match width {
            80 => {
                assert!(
                    !has(name40) && has("MP+rel.gpu+acq.…samecluster-x2"),
                    "{text}"
                );
                assert!(has(" weak ") && has("condition"), "{text}");
            }
            100 => {
                assert!(has(&format!("{name40} ")), "{name40} whole: {text}");
                assert!(has(" weak/inst") && has(" inst ") && has("1.0M"), "{text}");
            }
            _ => {
                assert!(has(&format!("{long} ")), "{text}");
                for head in ["instances", " sc ", "unexpect", "1,000,000"] {
                    assert!(has(head), "{head} at {width}: {text}");
                }
            }
        }
    }
}
