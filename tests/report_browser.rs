//! The HTML report in a real headless browser (Debian's `chromium`): the page loads from a
//! file with no network, and its DOM holds the summary and the SVG histograms. A screenshot is
//! left in `target/report-screenshot.png` for a person to look at.

mod common;

use common::scratch;
use ptx_litmus::report::summary;
use ptx_litmus::results::read_result_set;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs every test of `litmus/` on the CPU backend through `ptx-litmus run` (few instances
/// each) and returns the result set's directory.
fn cpu_run_of_the_suite(root: &Path) -> PathBuf {
    let out = common::bin()
        .args(["run", "litmus", "--backend", "cpu", "--iterations", "2000"])
        .args(["--seed", "7", "--run-id", "browser", "--quiet", "--out"])
        .arg(root)
        .output()
        .unwrap();
    let code = out.status.code();
    // 1 would be a violation observed on the CPU: still a result set to render.
    assert!(
        matches!(code, Some(0 | 1)),
        "run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path().join("browser"))
        .filter(|d| d.join("run.json").is_file())
        .collect();
    assert_eq!(found.len(), 1, "one result set under {}", root.display());
    found.remove(0)
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
        common::not_checked("chromium is not installed (CI installs Debian's chromium)");
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is required in CI for the browser test"
        );
        return;
    };
    let root = scratch("browser");
    let dir = cpu_run_of_the_suite(&root.join("results"));
    let set = read_result_set(&dir).unwrap();
    assert!(set.tests.len() >= 100, "only {} tests ran", set.tests.len());
    assert_eq!(set.run.backend, "cpu");
    let totals = summary::totals_line(&set.run, &set.tests);
    let out = common::bin().arg("report").arg(&dir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
