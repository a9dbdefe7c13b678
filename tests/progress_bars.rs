//! The progress bars of the commands that work through many tests (`run`, `check`, `bench
//! model`, `model-diff`, `tune`, `sass`; `toolchains prebuild`'s is tested beside its
//! fake ptxas in `sass_matrix.rs`): drawn on stderr when it is a terminal (here `script` gives
//! the command one), never mixed into a line of the command's output, and absent when stderr
//! is piped.

mod common;

use common::terminal::{on_a_terminal, on_a_terminal_ending, pieces};
use common::{bin, text};

/// `args` followed by a fresh scratch folder `name`, for the flag that ends them.
fn into_scratch(name: &str, args: &str) -> String {
    format!("{args} '{}'", common::scratch(name).display())
}

/// A test with six writes to one location and six reads of it: half a million candidate
/// executions, seconds of checking on any machine.
const MANY_CANDIDATES: &str = "PTX CoRR-many
{ x=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0      | P2@cta 2,gpu 0       | P3@cta 3,gpu 0       ;
 st.relaxed.gpu x, 1 | st.relaxed.gpu x, 4 | ld.relaxed.gpu r0, x | ld.relaxed.gpu r3, x ;
 st.relaxed.gpu x, 2 | st.relaxed.gpu x, 5 | ld.relaxed.gpu r1, x | ld.relaxed.gpu r4, x ;
 st.relaxed.gpu x, 3 | st.relaxed.gpu x, 6 | ld.relaxed.gpu r2, x | ld.relaxed.gpu r5, x ;
exists (P2:r0 == 1 /\\ P3:r3 == 2)
";

/// The candidate counts a terminal shows in the bars of `screen`, in order.
fn candidate_counts(screen: &str) -> Vec<u64> {
    pieces(screen)
        .into_iter()
        .filter_map(|p| p.split_once("ETA ?  [")?.1.split_once(" candidates] "))
        .map(|(n, _)| n.replace(',', "").parse().unwrap())
        .collect()
}

/// Asserts that `counts` were redrawn as they grew.
fn growing(counts: &[u64], screen: &str) {
    assert!(counts.len() >= 2, "the count is redrawn: {screen}");
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    assert!(counts[0] < counts[counts.len() - 1], "it grows: {counts:?}");
}

#[test]
fn a_long_check_shows_the_candidates_it_has_examined() {
    let dir = common::scratch("bar-live");
    let file = dir.join("many.litmus");
    std::fs::write(&file, MANY_CANDIDATES).unwrap();
    // The bound ends the check after a second, however fast the machine: five redraws or so.
    let args = format!("check '{}' --timeout 1", file.display());
    let Some((ok, screen)) = on_a_terminal_ending(&args, &[]) else {
        return;
    };
    assert!(!ok && screen.contains("timed out after 1.0 s"), "{screen}");
    growing(&candidate_counts(&screen), &screen);
    // `run` checks each test with the model before running it: the same count in its bar.
    let results = dir.join("results");
    let args = format!(
        "run '{}' --backend cpu --timeout 1 --results '{}'",
        file.display(),
        results.display()
    );
    let Some((_, screen)) = on_a_terminal_ending(&args, &[]) else {
        return;
    };
    assert!(screen.contains("timed out after 1.0 s"), "{screen}");
    growing(&candidate_counts(&screen), &screen);
}

#[test]
fn check_draws_its_bar_on_a_terminal_apart_from_its_lines() {
    let Some(screen) = on_a_terminal("check litmus/mp") else {
        return;
    };
    let bars: Vec<&str> = pieces(&screen)
        .into_iter()
        .filter(|p| p.contains(" tests, ETA "))
        .collect();
    assert!(!bars.is_empty(), "no bar drawn: {screen}");
    assert!(
        bars.iter()
            .any(|b| b.contains("/34 tests") && b.contains("MP+")),
        "the bar counts the 34 tests of litmus/mp and names the one at work: {bars:?}"
    );
    for p in pieces(&screen) {
        let line = p.trim_start_matches("\u{1b}[2K");
        let output = ["Test ", "Verdict ", "Hash="]
            .iter()
            .any(|s| line.contains(s));
        assert!(
            !(output && line.contains("ETA")),
            "bar and output in one line: {p:?}"
        );
    }
    assert_eq!(
        screen.matches("\nVerdict ").count(),
        34,
        "every verdict is printed whole"
    );
}

#[test]
fn bench_model_model_diff_and_tune_draw_their_bars_on_a_terminal() {
    let Some(bench) = on_a_terminal("bench model litmus/mp --runs 1") else {
        return;
    };
    assert!(bench.contains("/34 tests, ETA"), "{bench}");
    let Some(diff) = on_a_terminal("model-diff --tests 4 --seed 1") else {
        return;
    };
    assert!(diff.contains("/4 tests, ETA"), "{diff}");
    assert!(diff.contains("R1-3"), "the test at work is named: {diff}");
    let args = into_scratch(
        "bar-tune",
        "tune litmus/sb --backend cpu --seed 1 --budget 1 --out",
    );
    let Some(tune) = on_a_terminal(&args) else {
        return;
    };
    assert!(tune.contains("0/1 families, ETA ?  SB"), "{tune}");
}

#[test]
fn run_draws_its_bar_on_a_terminal_apart_from_its_rows() {
    let args = into_scratch(
        "bar-run",
        "run litmus/mp --backend cpu --instances 2000 --results",
    );
    let Some(screen) = on_a_terminal(&args) else {
        return;
    };
    assert!(screen.contains("/34 tests, "), "{screen}");
    let rows = pieces(&screen)
        .into_iter()
        .map(|p| p.trim_start_matches("\u{1b}[2K"))
        .filter(|p| p.starts_with("conformant ") || p.starts_with("weak "))
        .inspect(|p| assert!(!p.contains("ETA"), "bar and row in one line: {p:?}"))
        .count();
    assert!(rows > 0, "no row of the table: {screen}");
}

#[test]
fn a_sass_matrix_draws_its_bar_over_its_columns() {
    let name = "a_sass_matrix_draws_its_bar_over_its_columns";
    let Some(v) = common::sass::pinned_present(name) else {
        return;
    };
    let args = format!("sass litmus/mp --ptxas {}", v.join(","));
    let Some(screen) = on_a_terminal(&args) else {
        return;
    };
    let first = format!("0/2 columns, ETA ?  ptxas {}", v[0]);
    assert!(screen.contains(&first), "{screen}");
    for p in pieces(&screen) {
        let line = p.trim_start_matches("\u{1b}[2K");
        if line.contains("not passing") {
            let whole = line.starts_with("ptxas ") && !line.contains("ETA");
            assert!(whole, "bar and line mixed: {p:?}");
        }
    }
}

#[test]
fn sass_with_one_ptxas_draws_its_bar_over_the_kernels() {
    if !common::sass::tools_present("sass_with_one_ptxas_draws_its_bar_over_the_kernels") {
        return;
    }
    let Some(screen) = on_a_terminal("sass litmus/mp") else {
        return;
    };
    assert!(
        screen.contains("0/34 kernels, ETA ?  ptxas for sm_90"),
        "{screen}"
    );
    let passes = pieces(&screen)
        .into_iter()
        .map(|p| p.trim_start_matches("\u{1b}[2K"))
        .filter(|p| p.starts_with("pass "))
        .inspect(|p| assert!(!p.contains("ETA"), "bar and line mixed: {p:?}"))
        .count();
    assert_eq!(passes, 34, "{screen}");
}

#[test]
fn a_piped_stderr_gets_no_bar() {
    let out = bin().args(["check", "litmus/mp"]).output().unwrap();
    assert!(out.status.success());
    let err = text(&out.stderr);
    assert!(!err.contains("ETA") && !err.contains('\r'), "{err}");
    assert_eq!(text(&out.stdout).matches("\nVerdict ").count(), 34);
}
