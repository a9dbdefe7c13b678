//! The HTML report in a real headless browser (Debian's `chromium`): the page loads from a
//! file with no network, and its DOM holds the summary and the SVG histograms. A screenshot is
//! left in `target/report-screenshot.png` for a person to look at.

mod results_common;

use ptx_litmus::harness::{cpu, Budget, Control, RunParams};
use ptx_litmus::report;
use ptx_litmus::results::{
    read_result_set, time, write_result_set, Parameters, RunRecord, SkippedTest, TestRecord,
};
use ptx_litmus::{litmus, model};
use results_common::scratch;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Runs every test of `litmus/` on the CPU backend (a few rounds each) and writes the result
/// set, as `run` does: tests the parser, model or backend cannot take are recorded as not run.
fn cpu_run_of_the_suite(dir: &Path) {
    let now = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
    };
    let started = now();
    let clock = Instant::now();
    let params = RunParams::new(Budget::Instances(2_000), 7);
    let mut run = RunRecord::new(
        time::run_id(started, params.seed),
        "cpu",
        vec![
            "cargo".into(),
            "test".into(),
            "--test".into(),
            "report_browser".into(),
        ],
        Parameters::from_run_params(&params),
        time::rfc3339(started),
    );
    let cancel = AtomicBool::new(false);
    let mut tests: Vec<TestRecord> = Vec::new();
    for path in litmus::discover(&[PathBuf::from("litmus")]).unwrap() {
        let shown = path.display().to_string();
        run.test_paths.push(shown.clone());
        let outcome = litmus::parse_file(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| model::check(&t).map(|m| (t, m)).map_err(|e| e.to_string()))
            .and_then(|(t, m)| {
                let mut progress = |_: &ptx_litmus::harness::Progress<'_>| {};
                let control = Control {
                    cancel: &cancel,
                    progress: &mut progress,
                };
                let r = cpu::run(&t, &params, control).map_err(|e| e.to_string())?;
                if run.provenance.is_empty() {
                    run.provenance = r.info.provenance.clone();
                    run.parameters = Parameters::from_run_params(&r.info.params);
                }
                TestRecord::from_run(&shown, &t, &m, &r).map_err(|e| e.to_string())
            });
        match outcome {
            Ok(rec) => tests.push(rec),
            Err(reason) => run.skipped_tests.push(SkippedTest {
                path: shown,
                reason,
            }),
        }
    }
    run.provenance.remove("threads");
    run.elapsed_s = clock.elapsed().as_secs_f64();
    run.finished = time::rfc3339(now());
    assert!(tests.len() >= 100, "only {} tests ran", tests.len());
    write_result_set(dir, &run, &tests, false).unwrap();
}

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

fn headless(browser: &Path, profile: &Path) -> Command {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

#[test]
fn report_loads_in_headless_chromium_with_summary_and_plots() {
    let Some(browser) = chromium() else {
        eprintln!("skipping: chromium is not installed (CI installs Debian's chromium)");
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is required in CI for the browser test"
        );
        return;
    };
    let root = scratch("browser");
    let dir = root.join("results");
    cpu_run_of_the_suite(&dir);
    let set = read_result_set(&dir).unwrap();
    let totals = ptx_litmus::report::summary::totals_line(&set.run, &set.tests);
    report::write_report(&set, &dir, false).unwrap();
    let page = std::fs::canonicalize(dir.join("report.html")).unwrap();
    let url = format!("file://{}", page.display());

    let out = headless(&browser, &root.join("profile-dom"))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && !dom.is_empty(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        dom.contains("<section id=\"summary\">"),
        "no summary in DOM"
    );
    assert!(dom.contains(&totals), "summary `{totals}` missing from DOM");
    let plots = &dom[dom.find("id=\"plots\"").expect("plots section")..];
    assert_eq!(
        plots.matches("<svg").count(),
        set.tests.len(),
        "one SVG plot per test"
    );
    let first = &set.tests[0];
    assert!(
        plots.contains(&format!(
            "{} — {}",
            first.name,
            first.verdict.status.as_str()
        )),
        "plot title of {} missing",
        first.name
    );

    let shot = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("report-screenshot.png");
    let _ = std::fs::remove_file(&shot);
    let out = headless(&browser, &root.join("profile-shot"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1200,1800")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "screenshot is not a PNG"
    );
}
