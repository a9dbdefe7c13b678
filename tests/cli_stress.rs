//! Stress set parameter by parameter: `--stress-set KEY=VALUE` and `--stress-file FILE` on top
//! of a preset, the same for `run`, `emit`, `sass` and `toolchains prebuild`; every key
//! documented; each mistake refused with its text (and file:line); the settings recorded in
//! `run.json` and applied again by `--replay`.

mod common;

use common::{bin, fresh, scratch, text};
use ptx_litmus::codegen::STRESS_KEYS;
use ptx_litmus::results::read_result_set;
use std::path::{Path, PathBuf};

const SB: &str = "litmus/sb/SB+rlx.gpu+rlx.gpu.litmus";

fn help(args: &[&str]) -> String {
    let o = bin().args(args).arg("--help").output().unwrap();
    assert!(o.status.success(), "{args:?}");
    text(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn every_key_is_in_each_help_and_in_the_docs() {
    let docs = std::fs::read_to_string("docs/stress.md").unwrap();
    for args in [
        &["run"][..],
        &["emit"],
        &["sass"],
        &["toolchains", "prebuild"],
    ] {
        let h = help(args);
        for flag in [
            "--stress-set <KEY=VALUE>",
            "--stress-file <FILE>",
            "random-<seed>",
        ] {
            assert!(h.contains(flag), "{args:?} lacks {flag}: {h}");
        }
        for k in STRESS_KEYS {
            assert!(h.contains(k.name), "{args:?} help lacks key {}", k.name);
        }
    }
    for k in STRESS_KEYS {
        let alias = match k.alias {
            "" => "—".to_string(),
            a => format!("`{a}`"),
        };
        let row = format!("| `{}` | {alias} |", k.name);
        assert!(
            docs.contains(&row),
            "docs/stress.md lacks the row of {}",
            k.name
        );
    }
}

fn emit(extra: &[&str]) -> std::process::Output {
    bin().args(["emit", SB]).args(extra).output().unwrap()
}

#[test]
fn a_file_and_single_settings_make_the_same_kernel() {
    let dir = scratch("same-kernel");
    let file = dir.join("tuned.txt");
    std::fs::write(
        &file,
        "# tuned\nmem_stress_pct = 25   # fewer\n\nbarrierPct=0\npre_stress_pattern=ld;ld\n",
    )
    .unwrap();
    let from_file = emit(&["--stress-file", file.to_str().unwrap()]);
    let from_flags = emit(&[
        "--stress-set",
        "barrier_pct=0",
        "--stress-set",
        "pre_stress_pattern=3",
        "--stress-set",
        "memStressPct=25",
    ]);
    let plain = emit(&[]);
    assert!(from_file.status.success(), "{}", text(&from_file.stderr));
    assert_eq!(from_file.stdout, from_flags.stdout);
    assert_ne!(from_file.stdout, plain.stdout);
    let header = text(&from_file.stdout);
    assert!(
        header.contains(
            "// stress: stress with barrier_pct=0 mem_stress_pct=25 pre_stress_pattern=ld;ld\n"
        ),
        "{}",
        header.lines().take(3).collect::<Vec<_>>().join("\n")
    );
    // A single setting overrides the file; setting the preset's own value is the preset.
    let over = emit(&[
        "--stress-file",
        file.to_str().unwrap(),
        "--stress-set",
        "mem_stress_pct=100",
        "--stress-set",
        "barrier_pct=100",
        "--stress-set",
        "pre_stress_pattern=ld;st",
    ]);
    assert_eq!(over.stdout, plain.stdout);
}

/// The error line of a refused command (exit 2, nothing on stdout).
fn refused(o: std::process::Output) -> String {
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    text(&o.stderr)
}

#[test]
fn each_mistake_is_refused_with_its_text() {
    let dir = scratch("mistakes");
    let file = dir.join("bad.txt");
    std::fs::write(&file, "# ok\nshuffle_pct=10\n\nshuffle=10\n").unwrap();
    let e = refused(emit(&["--stress-file", file.to_str().unwrap()]));
    assert!(
        e.contains(&format!(
            "{}:4: unknown stress key `shuffle`",
            file.display()
        )),
        "{e}"
    );
    std::fs::write(&file, "mem_stress_pattern = st;st;st\n").unwrap();
    let e = refused(emit(&["--stress-file", file.to_str().unwrap()]));
    assert!(
        e.contains(":1: stress key `mem_stress_pattern`: `st;st;st` is not a pattern"),
        "{e}"
    );
    std::fs::write(&file, "a=1\njust words\n").unwrap();
    let e = refused(emit(&["--stress-file", file.to_str().unwrap()]));
    assert!(e.contains(":2: `just words`: expected KEY=VALUE"), "{e}");
    let e = refused(emit(&[
        "--stress-file",
        dir.join("absent").to_str().unwrap(),
    ]));
    assert!(
        e.contains("--stress-file") && e.contains("cannot read"),
        "{e}"
    );
    let e = refused(emit(&["--stress-set", "barrier_pct=150"]));
    assert!(
        e.contains("--stress-set barrier_pct=150: stress key `barrier_pct`: `150` is not a percentage from 0 to 100"),
        "{e}"
    );
    let e = refused(emit(&["--stress-set", "aliased_memory=maybe"]));
    assert!(e.contains("is not true or false"), "{e}");
    let e = refused(emit(&["--stress-set", "cta_size"]));
    assert!(e.contains("expected KEY=VALUE"), "{e}");
    let e = refused(emit(&["--stress-set", "testing_ctas=999"]));
    assert!(
        e.contains("stress configuration: need 0 < testing_ctas (999) <= max_ctas (264)"),
        "{e}"
    );
    // The same refusal before `run` runs anything.
    let out = fresh("refused-run");
    let e = refused(
        bin()
            .args([
                "run",
                "--backend",
                "cpu",
                "--quiet",
                "--stress-set",
                "cta_size=33",
            ])
            .arg("--out")
            .arg(&out)
            .arg(SB)
            .output()
            .unwrap(),
    );
    assert!(e.contains("cta_size = 33 must be a multiple of 32"), "{e}");
    assert!(!out.exists(), "a refused run wrote {}", out.display());
}

/// The one result set under `out` (`out/<machine>/<run>`).
fn only_set(out: &Path) -> PathBuf {
    let machine = std::fs::read_dir(out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::read_dir(machine)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

#[test]
fn settings_are_recorded_and_replayed() {
    let out = fresh("recorded");
    let o = bin()
        .args([
            "run",
            "--backend",
            "cpu",
            "--iterations",
            "2048",
            "--seed",
            "3",
        ])
        .args(["--quiet", "--stress", "interleave"])
        .args([
            "--stress-set",
            "shuffle_pct=40",
            "--stress-set",
            "memStride=8",
        ])
        .arg("--out")
        .arg(&out)
        .arg(SB)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let dir = only_set(&out);
    let first = read_result_set(&dir).unwrap().run.parameters;
    assert_eq!(first.preset, "interleave");
    let set: Vec<(&str, &str)> = first
        .stress_set
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(set, [("mem_stride", "8"), ("shuffle_pct", "40")]);
    assert_eq!(first.incantations["shuffle_pct"], 40);
    assert_eq!(first.incantations["barrier_pct"], 100, "the preset's value");
    let again = fresh("replayed");
    let o = bin()
        .arg("run")
        .arg("--replay")
        .arg(dir.join("run.json"))
        .args(["--quiet", "--out"])
        .arg(&again)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let second = read_result_set(&only_set(&again)).unwrap().run.parameters;
    assert_eq!(second, first);
    // A replay takes its stress from run.json alone.
    let o = bin()
        .arg("run")
        .arg("--replay")
        .arg(dir.join("run.json"))
        .args(["--stress-set", "shuffle_pct=1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("cannot be used with"),
        "{}",
        text(&o.stderr)
    );
}
