//! One default stress preset: `run` launches a stressed kernel unless told otherwise, and
//! `emit`, `sass` and `toolchains prebuild` default to the same preset, so the kernel checked
//! is the kernel launched; every help names `random-<seed>`.

mod common;

use common::{bin, fresh, text};
use ptx_litmus::codegen::DEFAULT_PRESET;
use ptx_litmus::results::read_result_set;

/// The `--stress` entry of a command's help: its text and its default.
fn stress_help(args: &[&str]) -> (String, String) {
    let o = bin().args(args).arg("--help").output().unwrap();
    let help = text(&o.stdout);
    let start = help
        .find("--stress")
        .unwrap_or_else(|| panic!("{args:?}: {help}"));
    let rest = &help[start..];
    let end = rest[2..].find("\n  -").map_or(rest.len(), |e| e + 2);
    let entry = rest[..end].split_whitespace().collect::<Vec<_>>().join(" ");
    let default = entry
        .split("[default: ")
        .nth(1)
        .and_then(|d| d.split(']').next())
        .unwrap_or_else(|| panic!("{args:?}: no default in {entry}"))
        .to_string();
    (entry, default)
}

#[test]
fn run_emit_sass_and_prebuild_share_a_stressed_default() {
    assert_ne!(
        DEFAULT_PRESET, "basic",
        "basic sets every stress percentage to 0"
    );
    for args in [
        &["run"][..],
        &["emit"],
        &["sass"],
        &["toolchains", "prebuild"],
    ] {
        let (entry, default) = stress_help(args);
        assert_eq!(default, DEFAULT_PRESET, "{args:?}: {entry}");
        assert!(entry.contains("random-<seed>"), "{args:?}: {entry}");
    }
}

#[test]
fn emit_without_a_preset_is_emit_with_run_s_default() {
    let test = "litmus/sb/SB+rlx.gpu+rlx.gpu.litmus";
    let plain = bin().args(["emit", test]).output().unwrap();
    let named = bin()
        .args(["emit", test, "--stress", DEFAULT_PRESET])
        .output()
        .unwrap();
    let basic = bin()
        .args(["emit", test, "--stress", "basic"])
        .output()
        .unwrap();
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    assert_eq!(plain.stdout, named.stdout);
    assert_ne!(plain.stdout, basic.stdout);
}

#[test]
fn a_run_without_a_preset_records_the_default() {
    let out = fresh("run-default");
    let o = bin()
        .args([
            "run",
            "--backend",
            "cpu",
            "--iterations",
            "2048",
            "--seed",
            "1",
            "--quiet",
        ])
        .args(["--run-id", "d", "--out"])
        .arg(&out)
        .arg("litmus/sb/SB+rlx.gpu+rlx.gpu.litmus")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let machine = std::fs::read_dir(&out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let set = read_result_set(&machine.join("d")).unwrap();
    assert_eq!(set.run.parameters.preset, DEFAULT_PRESET);
}
