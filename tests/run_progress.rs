//! `run` shows its table as it goes: each test's row is printed once, when the test finishes,
//! and no line is wider than `COLUMNS`.

mod common;

use common::{bin, fresh};
use std::io::{BufRead, BufReader};
use std::process::Stdio;

const TESTS: [&str; 3] = [
    "litmus/sb/SB+fence.sc.gpu+fence.sc.gpu.litmus",
    "litmus/sb/SB+rlx.gpu+rlx.gpu.litmus",
    "litmus/mp/MP+rel.gpu+acq.gpu.litmus",
];

#[test]
fn rows_stream_in_finish_order_within_the_terminal_width() {
    let out = fresh("progress");
    let mut child = bin()
        .env("COLUMNS", "80")
        .args(["run", "--backend", "cpu", "--seed", "5", "--time", "1.5"])
        .args(["--out", out.to_str().unwrap()])
        .args(TESTS)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run ptx-litmus");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // The first row arrives while the other tests still run (each takes 1.5 s).
    let first_row = lines
        .by_ref()
        .map(|l| l.unwrap())
        .find(|l| l.starts_with("conformant") || l.starts_with("VIOLATION"))
        .expect("a first row");
    assert!(
        child.try_wait().unwrap().is_none(),
        "the first row came only after the run ended: {first_row}"
    );
    let mut text: Vec<String> = vec![first_row];
    text.extend(lines.map(|l| l.unwrap()));
    assert!(child.wait().unwrap().success(), "{text:?}");
    let rows: Vec<&String> = text
        .iter()
        .filter(|l| l.starts_with("conformant"))
        .collect();
    let header = text.iter().filter(|l| l.starts_with("status "));
    for l in header.chain(rows.iter().copied()) {
        assert!(l.chars().count() <= 80, "wider than COLUMNS=80: {l:?}");
    }
    assert_eq!(rows.len(), 3, "one row per test: {text:?}");
    // In the order the tests ran (paths sorted), names elided to fit but told apart.
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r.split_whitespace().nth(1).unwrap())
        .collect();
    assert!(
        names[0].starts_with("MP+rel") && names[0].ends_with("cq.gpu"),
        "{names:?}"
    );
    assert!(
        names[1].starts_with("SB+fen") && names[1].contains('…'),
        "{names:?}"
    );
    assert!(
        names[2].starts_with("SB+rlx") && names[2].ends_with("lx.gpu"),
        "{names:?}"
    );
    let totals = text
        .iter()
        .position(|l| l.starts_with("3 tests: 0 violations"));
    assert!(totals.is_some(), "{text:?}");
}

/// The header line of `run`'s table on one test, run under `script` with a terminal `cols`
/// wide (`None`: piped), without `COLUMNS`.
fn header_at(cols: Option<u16>, out: &std::path::Path) -> String {
    let run = format!(
        "{} run --backend cpu --quiet --instances 512 --results {} {}",
        env!("CARGO_BIN_EXE_ptx-litmus"),
        out.display(),
        TESTS[2]
    );
    let o = match cols {
        Some(c) => std::process::Command::new("script")
            .args([
                "-qec",
                &format!("stty rows 50 cols {c}; {run}"),
                "/dev/null",
            ])
            .env_remove("COLUMNS")
            .output()
            .unwrap(),
        None => std::process::Command::new("sh")
            .args(["-c", &run])
            .env_remove("COLUMNS")
            .output()
            .unwrap(),
    };
    let s = String::from_utf8_lossy(&o.stdout).replace('\r', "");
    let line = s
        .lines()
        .find(|l| l.starts_with("status"))
        .unwrap_or_default();
    line.trim_end().to_string()
}

#[test]
fn the_table_fits_the_terminal_and_a_pipe_gets_100() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        common::not_checked("no `script` (util-linux) to give `run` a terminal");
        return;
    }
    let wide = header_at(Some(200), &fresh("term-200"));
    let narrow = header_at(Some(70), &fresh("term-70"));
    let piped = header_at(None, &fresh("term-pipe"));
    // All columns at 200, the shortened ones at 70, 100's layout in a pipe.
    assert!(
        wide.contains("instances") && wide.contains("unexpect"),
        "{wide}"
    );
    assert!(!narrow.contains(" inst ") && narrow.len() <= 70, "{narrow}");
    assert!(
        piped.contains(" inst ") && !piped.contains("unexpect"),
        "{piped}"
    );
}
