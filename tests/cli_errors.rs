//! The built binary on bad input: exact `file:line:col`, exit code 2, and a batch that goes on
//! past a bad file.

mod common;

use common::{bin, scratch, text, MP as GOOD};
use ptx_litmus::litmus;
use std::path::Path;
use std::process::Output;

fn run(args: &[&str], cwd: &Path) -> Output {
    bin()
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the binary runs")
}

/// `GOOD` with `from` replaced by `to` (which must occur).
fn variant(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

/// Runs `show` on `source` and checks exit code 2 and the error's position and cause.
fn assert_error(name: &str, source: &str, position: &str, cause: &str) {
    let dir = scratch(name);
    let file = format!("{name}.litmus");
    std::fs::write(dir.join(&file), source).unwrap();
    let out = run(&["show", &file], &dir);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
    let prefix = format!("{file}:{position}: ");
    assert!(
        stderr.contains(&prefix),
        "{name}: expected `{prefix}` in {stderr}"
    );
    assert!(
        stderr.contains(cause),
        "{name}: expected `{cause}` in {stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "{name}: printed {}",
        text(&out.stdout)
    );
}

#[test]
fn truncated_file_names_end_of_file_and_what_was_expected() {
    let cut = GOOD.lines().take(4).collect::<Vec<_>>().join("\n");
    assert_error(
        "truncated",
        &cut,
        "4:46",
        "found end of file, expected the condition",
    );
    let mid = &GOOD[..GOOD.find("ld.acquire.gpu r0,").unwrap() + "ld.acquire.gpu r0,".len()];
    assert_error(
        "truncated-mid",
        mid,
        "4:42",
        "found end of file, expected a location",
    );
}

#[test]
fn unknown_instruction() {
    let src = variant("st.weak x, 1 ", "stx.weak x, 1");
    assert_error(
        "unknown-instruction",
        &src,
        "4:2",
        "found `stx.weak`, expected an instruction",
    );
}

#[test]
fn unknown_scope() {
    let src = variant("ld.acquire.gpu", "ld.acquire.gcu");
    assert_error(
        "unknown-scope",
        &src,
        "4:34",
        "found `.gcu` in `ld.acquire.gcu`, expected a scope",
    );
    let src = variant("st.weak x, 1 ", "fence.sc.ctx ");
    assert_error(
        "unknown-fence-scope",
        &src,
        "4:10",
        "found `.ctx` in `fence.sc.ctx`, expected a scope",
    );
}

#[test]
fn branch_to_a_missing_label() {
    let src = variant("st.weak x, 1        |", "bne r0, 0, LC09     |");
    assert_error(
        "missing-label",
        &src,
        "4:13",
        "branch to label `LC09`, which P0 does not define",
    );
}

#[test]
fn condition_on_a_missing_thread() {
    let src = variant("P1:r1 == 0", "P2:r1 == 0");
    assert_error(
        "missing-thread",
        &src,
        "6:23",
        "P2 is not a thread of this test",
    );
}

#[test]
fn misnumbered_thread() {
    let src = variant("P1@cta 1", "P2@cta 1");
    assert_error("misnumbered", &src, "3:24", "found `P2`, expected `P1`");
}

#[test]
fn show_prints_a_test_that_parses_back_with_its_hash() {
    let dir = scratch("show");
    std::fs::write(dir.join("mp.litmus"), GOOD).unwrap();
    let out = run(&["show", "mp.litmus"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    let original = litmus::parse(GOOD, Path::new("mp.litmus")).unwrap();
    let reparsed = litmus::parse(&shown, Path::new("shown.litmus")).unwrap();
    assert_eq!(reparsed, original);
    let hash_line = format!("(* hash {} *)", litmus::hash(&original));
    assert_eq!(shown.lines().last(), Some(hash_line.as_str()));
}

#[test]
fn a_batch_with_one_bad_file_lists_the_good_ones_and_exits_2() {
    let dir = scratch("batch");
    std::fs::create_dir_all(dir.join("tests/sub")).unwrap();
    std::fs::write(dir.join("tests/a-good.litmus"), GOOD).unwrap();
    std::fs::write(
        dir.join("tests/b-bad.litmus"),
        variant("ld.weak r1", "ld.wek r1"),
    )
    .unwrap();
    std::fs::write(
        dir.join("tests/sub/c-good.litmus"),
        GOOD.replace("PTX MP", "PTX MP2"),
    )
    .unwrap();
    std::fs::write(dir.join("tests/notes.txt"), "not a test").unwrap();
    let out = run(&["list", "tests"], &dir);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].starts_with("tests/a-good.litmus") && lines[0].contains(" MP "),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("tests/sub/c-good.litmus") && lines[1].contains(" MP2 "),
        "{stdout}"
    );
    assert!(
        lines[0].contains("2 threads") && lines[0].contains("gpu"),
        "{stdout}"
    );
    assert_eq!(lines[2], "2 tests, 1 failed to parse");
    assert!(
        stderr.contains("tests/b-bad.litmus:5:26: found `.wek` in `ld.wek`"),
        "{stderr}"
    );
    assert!(!stdout.contains("notes"), "{stdout}");

    std::fs::remove_file(dir.join("tests/b-bad.litmus")).unwrap();
    let out = run(&["list", "tests"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().last(), Some("2 tests"));
}

#[test]
fn a_missing_path_is_an_error_naming_it_and_the_rest_still_lists() {
    let dir = scratch("missing");
    std::fs::write(dir.join("mp.litmus"), GOOD).unwrap();
    let out = run(&["list", "mp.litmus", "nowhere"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("nowhere: cannot open"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).starts_with("mp.litmus"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn an_unknown_backend_option_is_one_error_before_any_test_runs() {
    let dir = scratch("bad-option");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let test = root.join("litmus/sb/SB+rlx.gpu+rlx.gpu.litmus");
    let out = dir.join("results");
    let o = run(
        &[
            "run",
            "--backend",
            "cpu",
            test.to_str().unwrap(),
            "-o",
            "bogus=1",
            "--out",
            out.to_str().unwrap(),
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("unknown cpu option `bogus`"), "{err}");
    assert_eq!(
        err.matches("bogus").count(),
        1,
        "one message, not one per test: {err}"
    );
    assert!(!out.exists(), "no result set is written");
}

#[test]
fn an_unknown_stress_preset_is_one_error_with_the_same_text_in_every_command() {
    let dir = scratch("bad-preset");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let test = root.join("litmus/sb/SB+rlx.gpu+rlx.gpu.litmus");
    let test = test.to_str().unwrap();
    let out = dir.join("results");
    let commands: [&[&str]; 4] = [
        &["emit", test, "--stress", "nope"],
        &["sass", test, "--stress", "nope"],
        &[
            "run",
            "--backend",
            "cpu",
            test,
            "--stress",
            "nope",
            "--out",
            out.to_str().unwrap(),
        ],
        &["bench", "gpu", "--stress", "nope"],
    ];
    for args in commands {
        let o = run(args, &dir);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = text(&o.stderr);
        assert!(
            err.contains(
                "unknown stress preset `nope` (expected basic, interleave, stress or random-<seed>)"
            ),
            "{args:?}: {err}"
        );
    }
    assert!(!out.exists(), "no result set is written");
}
