//! The HTML report in a real headless browser (Debian's `chromium`): the page loads from a
//! file with no network, and its DOM holds the summary and the SVG histograms. A screenshot is
//! left in `target/report-screenshot.png` for a person to look at.

mod results_common;

use ptx_litmus::report;
use ptx_litmus::results::{read_result_set, write_result_set};
use results_common::{records, run, scratch, suite, Knobs};
use std::path::{Path, PathBuf};
use std::process::Command;

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
    let tests = records(
        &suite(Knobs {
            corr_violation: 3,
            ..Knobs::default()
        }),
        2.0,
    );
    write_result_set(&dir, &run("browser-run", "550.54.15", None), &tests, false).unwrap();
    let set = read_result_set(&dir).unwrap();
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
    assert!(
        dom.contains("3 tests: 1 violation, 2 conformant"),
        "summary text missing from DOM"
    );
    let plots = &dom[dom.find("id=\"plots\"").expect("plots section")..];
    assert!(plots.contains("<svg"), "no SVG plot in the DOM");
    assert!(plots.contains("CoRR — violation"), "plot caption missing");

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
