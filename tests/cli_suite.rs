//! The built-in suite is found wherever the binary runs (here: from a folder without
//! `litmus/`, through the executable's checkout, or `$PTX_LITMUS_SUITE`), and every command
//! resolves a test name or a `litmus/...` path as `show` does.

mod common;

use common::{bin, root, scratch, text, MP};
use ptx_litmus::litmus;
use ptx_litmus::results::read_result_set;
use std::path::Path;
use std::process::Output;

/// Runs the binary in `dir` with `args`.
fn in_dir(dir: &Path, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().unwrap()
}

/// A suite folder holding the given `(relative path, text)` files.
fn own_suite(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = scratch(name);
    for (rel, body) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    dir
}

#[test]
fn list_elsewhere_lists_the_whole_built_in_suite() {
    let dir = scratch("list-elsewhere");
    let o = in_dir(&dir, &["list"]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    let n = litmus::discover(&[root().join("litmus")]).unwrap().len();
    assert!(n > 200, "the suite holds {n} tests");
    assert_eq!(out.lines().last(), Some(format!("{n} tests").as_str()));
}

#[test]
fn every_command_resolves_test_names_and_suite_paths_from_elsewhere() {
    let dir = scratch("names-elsewhere");
    let show = in_dir(&dir, &["show", "SB+wk+wk"]);
    assert!(show.status.success(), "{}", text(&show.stderr));
    assert!(text(&show.stdout).starts_with("PTX SB+wk+wk"));
    let check = in_dir(&dir, &["check", "SB+wk+wk.litmus", "--json"]);
    assert!(check.status.success(), "{}", text(&check.stderr));
    assert!(text(&check.stdout).contains("\"SB+wk+wk\""));
    let emit = in_dir(&dir, &["emit", "MP+wk+wk"]);
    assert!(emit.status.success(), "{}", text(&emit.stderr));
    assert!(text(&emit.stdout).contains("test MP+wk+wk"));
    let list = in_dir(&dir, &["list", "litmus/sb"]);
    let listed = text(&list.stdout);
    assert!(list.status.success(), "{}", text(&list.stderr));
    assert!(listed.contains("SB+wk+wk") && !listed.contains("MP+wk+wk"));
}

#[test]
fn run_elsewhere_runs_named_tests_and_goes_on_past_an_unknown_name() {
    let dir = scratch("run-elsewhere");
    let o = in_dir(
        &dir,
        &[
            "run",
            "SB+wk+wk",
            "litmus/mp/MP+wk+wk.litmus",
            "No+such+test",
            "--backend",
            "cpu",
            "--iterations",
            "200",
            "--seed",
            "1",
            "--run-id",
            "r",
            "--quiet",
            "--out",
            "res",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("No+such+test: cannot open: no such file or folder, and no test of that name"),
        "{err}"
    );
    // The set lies in `res/<machine>/r`.
    let machine = std::fs::read_dir(dir.join("res")).unwrap().next().unwrap();
    let set = read_result_set(&machine.unwrap().path().join("r")).unwrap();
    let mut names: Vec<&str> = set.tests.iter().map(|t| t.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["MP+wk+wk", "SB+wk+wk"]);
    assert_eq!(set.run.skipped_tests.len(), 1);
}

#[test]
fn the_suite_variable_comes_first_and_a_bad_one_is_refused() {
    let suite = own_suite(
        "own-suite",
        &[("fam/Mine.litmus", &MP.replace("MP", "Mine"))],
    );
    let dir = scratch("own-suite-cwd");
    let o = bin()
        .current_dir(&dir)
        .env("PTX_LITMUS_SUITE", &suite)
        .args(["list"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("Mine") && out.ends_with("1 test\n"), "{out}");
    let o = bin()
        .current_dir(&dir)
        .env("PTX_LITMUS_SUITE", dir.join("absent"))
        .args(["show", "Mine"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("$PTX_LITMUS_SUITE="),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_name_two_tests_share_is_refused_naming_both() {
    let body = MP.replace("MP", "Twice");
    let suite = own_suite(
        "twice",
        &[("a/Twice.litmus", &body), ("b/Twice.litmus", &body)],
    );
    let o = bin()
        .current_dir(scratch("twice-cwd"))
        .env("PTX_LITMUS_SUITE", &suite)
        .args(["check", "Twice"])
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("ambiguous test name"), "{err}");
    assert!(err.contains("a/Twice.litmus") && err.contains("b/Twice.litmus"));
}

/// A folder given with no test in it is named in a warning (most likely the wrong folder), by
/// every command that reads tests; the others still run.
#[test]
fn a_folder_without_tests_is_named_in_a_warning() {
    let empty = scratch("no-tests");
    std::fs::create_dir_all(&empty).unwrap();
    let mp = root().join("litmus/mp/MP+fence.sc.gpu+fence.sc.gpu.litmus");
    for cmd in ["check", "list", "model-diff"] {
        let out = bin().arg(cmd).arg(&empty).arg(&mp).output().unwrap();
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!(
                "{}: no `.litmus` file in this folder",
                empty.display()
            )),
            "{cmd}: {err}"
        );
        assert!(
            text(&out.stdout).contains("MP+fence.sc.gpu+fence.sc.gpu"),
            "{cmd} left the other test out"
        );
    }
    let out = bin().arg("check").arg(&mp).output().unwrap();
    assert!(!text(&out.stderr).contains("no `.litmus` file"));
}
