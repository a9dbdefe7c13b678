//! Bad input and hostile conditions on the built binary: each case once made the tool hang,
//! exhaust memory, panic, lose or mix up results, or trust a damaged record.

mod common;

use common::{bin, scratch, text, MP};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin().args(args).current_dir(dir).output().unwrap()
}

/// A CPU run of `tests` (paths inside `dir`) into `dir/out` with run id `id`.
fn cpu_run(dir: &Path, id: &str, extra: &[&str], tests: &[&str]) -> Output {
    let mut args = vec!["run", "--backend", "cpu", "--quiet", "--iterations", "200"];
    args.extend(["--out", "out", "--run-id", id]);
    args.extend(extra);
    args.extend(tests);
    run_in(dir, &args)
}

/// The result set `id` under `dir/out` (one machine folder).
fn set_dir(dir: &Path, id: &str) -> PathBuf {
    let machine = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    machine.join(id)
}

#[test]
fn a_stray_percent_or_dollar_is_a_positioned_error_at_once() {
    let dir = scratch("percent");
    let cases = [
        (
            "cluster",
            MP.replace("P1@cta 1,gpu 0", "P1@cta 0,cluster %0,gpu 0"),
            "3:",
        ),
        ("cond", MP.replace("exists (P1:r0", "exists (%P1:r0"), "6:9"),
        ("loc", MP.replace("{ x=0;", "{ s @ $; x=0;"), "2:7"),
    ];
    for (name, source, pos) in cases {
        let file = format!("{name}.litmus");
        std::fs::write(dir.join(&file), source).unwrap();
        for cmd in ["check", "list", "emit"] {
            let started = Instant::now();
            let o = run_in(&dir, &[cmd, &file]);
            assert!(started.elapsed() < Duration::from_secs(5), "{cmd} {name}");
            assert_eq!(
                o.status.code(),
                Some(2),
                "{cmd} {name}: {}",
                text(&o.stderr)
            );
            let err = text(&o.stderr);
            assert!(
                err.contains(&format!("{file}:{pos}")),
                "{cmd} {name}: {err}"
            );
        }
    }
}

#[test]
fn deep_conditions_wide_constants_and_bad_utf8_are_refused_with_a_position() {
    let dir = scratch("deep");
    let deep = format!("{}P1:r0 == 1{}", "(".repeat(10_000), ")".repeat(10_000));
    let chain = vec!["P1:r0 == 1"; 5_000].join(" /\\ ");
    let cases = [
        (
            "parens",
            MP.replace("(P1:r0 == 1 /\\ P1:r1 == 0)", &format!("({deep})")),
            "nested at most",
        ),
        (
            "chain",
            MP.replace("P1:r0 == 1 /\\ P1:r1 == 0", &chain),
            "nested at most",
        ),
        (
            "wide",
            MP.replace("st.weak x, 1", "st.weak x, 4294967296"),
            "a 32-bit value",
        ),
        (
            "negative",
            MP.replace("st.weak x, 1", "st.weak x, -2147483649"),
            "a 32-bit value",
        ),
    ];
    for (name, source, cause) in cases {
        let file = format!("{name}.litmus");
        std::fs::write(dir.join(&file), source).unwrap();
        let o = run_in(&dir, &["check", &file]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(cause) && err.contains(&format!("{file}:")),
            "{name}: {err}"
        );
    }
    let mut bytes = MP.as_bytes().to_vec();
    let at = MP.find("st.release").unwrap();
    bytes[at] = 0xff;
    std::fs::write(dir.join("utf8.litmus"), bytes).unwrap();
    let o = run_in(&dir, &["check", "utf8.litmus"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "utf8.litmus:5:2: invalid UTF-8 at byte offset {at}"
        )),
        "{err}"
    );
    // The good limit is still accepted.
    std::fs::write(
        dir.join("max.litmus"),
        MP.replace("st.weak x, 1", "st.weak x, 4294967295"),
    )
    .unwrap();
    assert_eq!(
        run_in(&dir, &["check", "max.litmus"]).status.code(),
        Some(0)
    );
}

#[test]
fn a_long_test_name_and_wide_tables_do_not_lose_the_run() {
    let dir = scratch("longname");
    let name = "N".repeat(70_000);
    std::fs::write(
        dir.join("long.litmus"),
        MP.replacen("PTX MP", &format!("PTX {name}"), 1),
    )
    .unwrap();
    for cmd in ["list", "check"] {
        let o = run_in(&dir, &[cmd, "long.litmus"]);
        assert_eq!(o.status.code(), Some(0), "{cmd}: {}", text(&o.stderr));
    }
    let o = cpu_run(&dir, "long", &[], &["long.litmus"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let set = ptx_litmus::results::read_result_set(&set_dir(&dir, "long")).unwrap();
    assert_eq!(set.tests.len(), 1);
    assert_eq!(set.tests[0].name, name);
}

#[test]
fn one_test_reached_by_two_spellings_runs_once_and_same_named_tests_keep_both_records() {
    let dir = scratch("spellings");
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(dir.join("a/MP.litmus"), MP).unwrap();
    // Same name, different test: both records must survive.
    std::fs::write(
        dir.join("b/MP.litmus"),
        MP.replace("ld.weak r1, x", "ld.relaxed.gpu r1, x"),
    )
    .unwrap();
    let o = cpu_run(&dir, "r", &[], &["a", "./a", "a/MP.litmus", "b"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let set = ptx_litmus::results::read_result_set(&set_dir(&dir, "r")).unwrap();
    assert_eq!(
        set.tests.len(),
        2,
        "{:?}",
        set.tests.iter().map(|t| &t.path).collect::<Vec<_>>()
    );
    assert_eq!(
        std::fs::read_dir(set_dir(&dir, "r").join("tests"))
            .unwrap()
            .count(),
        2
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_in_a_test_directory_ends() {
    let dir = scratch("symloop");
    std::fs::create_dir_all(dir.join("t/sub")).unwrap();
    std::fs::write(dir.join("t/MP.litmus"), MP).unwrap();
    std::os::unix::fs::symlink("..", dir.join("t/sub/up")).unwrap();
    std::os::unix::fs::symlink("../sub", dir.join("t/sub/again")).unwrap();
    let started = Instant::now();
    let o = run_in(&dir, &["list", "t"]);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("1 test"), "{}", text(&o.stdout));
}

#[test]
fn a_bad_target_is_refused_before_any_test_runs() {
    let dir = scratch("target");
    std::fs::write(dir.join("MP.litmus"), MP).unwrap();
    std::fs::write(dir.join("file"), "not a directory").unwrap();
    let started = Instant::now();
    let o = run_in(
        &dir,
        &[
            "run",
            "--backend",
            "cpu",
            "--time",
            "30",
            "--out",
            "file",
            "MP.litmus",
        ],
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "it ran the suite first"
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("file"), "{}", text(&o.stderr));
    // An existing run id likewise, before running.
    assert_eq!(
        cpu_run(&dir, "same", &[], &["MP.litmus"]).status.code(),
        Some(0)
    );
    let started = Instant::now();
    let o = run_in(
        &dir,
        &[
            "run",
            "--backend",
            "cpu",
            "--time",
            "30",
            "--out",
            "out",
            "--run-id",
            "same",
            "MP.litmus",
        ],
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "it ran the suite first"
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("already exists"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn runs_that_name_their_sets_themselves_never_refuse_each_other() {
    let dir = scratch("same-second");
    std::fs::write(dir.join("MP.litmus"), MP).unwrap();
    // Short runs with one seed: all start within a second or two, so their made ids
    // (time and seed) meet.
    let args = [
        "run",
        "--backend",
        "cpu",
        "--quiet",
        "--iterations",
        "200",
        "--seed",
        "1",
        "--out",
        "out",
        "MP.litmus",
    ];
    for _ in 0..3 {
        let o = run_in(&dir, &args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    let machine = set_dir(&dir, "");
    let sets = std::fs::read_dir(&machine).unwrap().count();
    assert_eq!(sets, 3, "{}", machine.display());
}

#[test]
fn force_removes_the_old_report_and_records() {
    let dir = scratch("force");
    std::fs::write(dir.join("MP.litmus"), MP).unwrap();
    std::fs::write(dir.join("SB.litmus"), MP.replacen("PTX MP", "PTX Other", 1)).unwrap();
    assert_eq!(
        cpu_run(&dir, "f", &[], &["MP.litmus", "SB.litmus"])
            .status
            .code(),
        Some(0)
    );
    let set = set_dir(&dir, "f");
    let o = run_in(&dir, &["report", set.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(set.join("report.html").exists());
    assert_eq!(
        cpu_run(&dir, "f", &["--force"], &["MP.litmus"])
            .status
            .code(),
        Some(0)
    );
    assert!(!set.join("report.html").exists() && !set.join("plots").exists());
    let read = ptx_litmus::results::read_result_set(&set).unwrap();
    assert_eq!(read.tests.len(), 1);
}

#[test]
fn two_runs_into_one_set_exactly_one_refuses_before_running() {
    let dir = scratch("concurrent");
    std::fs::write(dir.join("MP.litmus"), MP).unwrap();
    let start = |n: &str| {
        bin()
            .args([
                "run",
                "--backend",
                "cpu",
                "--quiet",
                "--time",
                "1",
                "--seed",
                n,
            ])
            .args(["--out", "out", "--run-id", "shared", "MP.litmus"])
            .current_dir(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    for _ in 0..5 {
        let _ = std::fs::remove_dir_all(dir.join("out"));
        let (a, b) = (start("1"), start("2"));
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let codes = [a.status.code(), b.status.code()];
        assert!(
            codes.contains(&Some(0)) && codes.contains(&Some(2)),
            "{codes:?}"
        );
        let loser = if a.status.code() == Some(2) { &a } else { &b };
        let why = text(&loser.stderr);
        // The lock is never seen empty: its owner is named whenever it refuses.
        assert!(
            (why.contains("another run (") && why.contains('@') && !why.contains("()"))
                || why.contains("already exists"),
            "{why}"
        );
        let set = ptx_litmus::results::read_result_set(&set_dir(&dir, "shared")).unwrap();
        let winner_seed = if a.status.code() == Some(0) { 1 } else { 2 };
        assert_eq!(set.run.parameters.seed, winner_seed, "a mixed set");
        assert!(!set.run.partial);
    }
}

#[test]
fn merging_a_set_with_itself_is_refused() {
    let dir = scratch("mergeself");
    std::fs::write(dir.join("MP.litmus"), MP).unwrap();
    assert_eq!(
        cpu_run(&dir, "m", &["--seed", "3"], &["MP.litmus"])
            .status
            .code(),
        Some(0)
    );
    let set = set_dir(&dir, "m");
    let s = set.to_str().unwrap();
    let o = run_in(&dir, &["merge", s, s, "--out", "merged"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("twice"), "{}", text(&o.stderr));
    assert!(!dir.join("merged/run.json").exists());
}

/// Edits the one test record of `set` with `edit` on its JSON.
fn tamper(set: &Path, edit: impl Fn(&mut serde_json::Value)) {
    let tests = set.join("tests");
    let file = std::fs::read_dir(&tests)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&file, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

#[test]
fn readers_refuse_records_whose_counts_do_not_add_up() {
    let dir = scratch("tamper");
    std::fs::write(dir.join("MP.litmus"), MP).unwrap();
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit); 4] = [
        ("sum", |v| v["verdict"]["outcomes"][0]["count"] = 7.into()),
        ("status", |v| v["verdict"]["status"] = "violation".into()),
        ("class", |v| {
            v["verdict"]["outcomes"][0]["class"] = "forbidden".into()
        }),
        ("overflow", |v| {
            v["verdict"]["outcomes"][0]["count"] = u64::MAX.into();
            v["verdict"]["outcomes"][1]["count"] = u64::MAX.into();
        }),
    ];
    for (name, edit) in edits {
        let _ = std::fs::remove_dir_all(dir.join("out"));
        assert_eq!(
            cpu_run(&dir, name, &[], &["MP.litmus"]).status.code(),
            Some(0)
        );
        let set = set_dir(&dir, name);
        tamper(&set, edit);
        for cmd in ["report", "merge"] {
            let mut args = vec![cmd, set.to_str().unwrap()];
            if cmd == "merge" {
                args.extend(["--out", "merged"]);
            }
            let o = run_in(&dir, &args);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{name} {cmd}: {err}");
            assert!(
                err.contains("inconsistent record") && err.contains(".json"),
                "{name} {cmd}: {err}"
            );
        }
    }
    // A record deleted from a complete set.
    let _ = std::fs::remove_dir_all(dir.join("out"));
    assert_eq!(
        cpu_run(&dir, "gone", &[], &["MP.litmus"]).status.code(),
        Some(0)
    );
    let set = set_dir(&dir, "gone");
    for f in std::fs::read_dir(set.join("tests")).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    let o = run_in(&dir, &["report", set.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("has no record"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_missing_path_is_reported_and_the_rest_of_the_batch_runs() {
    let dir = scratch("missing");
    std::fs::write(dir.join("MP.litmus"), MP).unwrap();
    let o = cpu_run(&dir, "m", &[], &["nowhere", "MP.litmus"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("nowhere"));
    let set = ptx_litmus::results::read_result_set(&set_dir(&dir, "m")).unwrap();
    assert_eq!(set.tests.len(), 1);
    assert_eq!(set.run.skipped_tests.len(), 1);
}

/// The size in bytes of the file `name` of a result set.
fn sizes(set: &Path, name: &str) -> u64 {
    std::fs::metadata(set.join(name)).unwrap().len()
}

#[test]
fn a_record_the_disk_refuses_stops_the_run_and_keeps_what_was_written() {
    let dir = scratch("disk-refuses");
    let small = common::root().join("litmus/2+2w/2+2W+fence.acq_rel.gpu+fence.acq_rel.gpu.litmus");
    let large = common::root().join("litmus/iriw/IRIW+fence.acq_rel.gpu+fence.acq_rel.gpu.litmus");
    let tests = [small.to_str().unwrap(), large.to_str().unwrap()];
    // First a free run, to size a limit that lets `run.json` and the 2+2W record be written
    // and refuses the IRIW one (16 outcomes make its record the larger).
    assert_eq!(cpu_run(&dir, "free", &[], &tests).status.code(), Some(0));
    let free = set_dir(&dir, "free");
    let fits = sizes(&free, "run.json").max(sizes(
        &free,
        "tests/2+2W+fence.acq_rel.gpu+fence.acq_rel.gpu.json",
    ));
    let refused = sizes(&free, "tests/IRIW+fence.acq_rel.gpu+fence.acq_rel.gpu.json");
    let limit_kib = fits / 1024 + 1;
    assert!(
        limit_kib * 1024 < refused,
        "no limit between {fits} and {refused} bytes"
    );
    // A file-size limit makes every write past it fail (EFBIG), as a full disk makes it fail
    // (ENOSPC), without needing one; SIGXFSZ is ignored so that the write fails instead.
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {limit_kib}; exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_ptx-litmus"))
        .args(["run", "--backend", "cpu", "--quiet", "--iterations", "200"])
        .args(["--out", "out", "--run-id", "limited"])
        .args(tests)
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("IRIW+fence.acq_rel.gpu+fence.acq_rel.gpu.json: File too large"),
        "{err}"
    );
    assert!(
        err.contains("the 1 test record(s) written before it are kept"),
        "{err}"
    );
    let limited = set_dir(&dir, "limited");
    let left = common::file_names(&limited.join("tests"));
    assert_eq!(
        left,
        ["2+2W+fence.acq_rel.gpu+fence.acq_rel.gpu.json"],
        "no partial file left"
    );
    let set = ptx_litmus::results::read_result_set(&limited).unwrap();
    assert!(set.run.partial, "the set reads as partial");
    assert_eq!(set.tests.len(), 1);
}

#[test]
fn a_batch_too_large_for_memory_is_refused() {
    let dir = scratch("batch");
    std::fs::write(dir.join("MP.litmus"), MP).unwrap();
    let o = cpu_run(&dir, "b", &["-o", "batch=16777216"], &["MP.litmus"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("GiB"), "{}", text(&o.stderr));
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_quietly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' list litmus | head -n 1",
            env!("CARGO_BIN_EXE_ptx-litmus")
        ))
        .current_dir(dir)
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(text(&o.stdout).lines().count(), 1);
}

/// Six threads of store/load/store/load over a ring of locations: no answer for minutes
/// (the walk over trace combinations alone is huge), so it exercises every bound.
fn six_thread_ring() -> String {
    let n = 6;
    let heads: Vec<String> = (0..n).map(|i| format!("P{i}@cta {i},gpu 0")).collect();
    let mut rows = Vec::new();
    for k in 0..4 {
        let cells: Vec<String> = (0..n)
            .map(|i| {
                let l = format!("x{}", (i + k) % n);
                if k % 2 == 0 {
                    format!("st.relaxed.gpu {l}, {}", k + 1)
                } else {
                    format!("ld.relaxed.gpu r{k}, {l}")
                }
            })
            .collect();
        rows.push(format!(" {} ;", cells.join(" | ")));
    }
    let init: Vec<String> = (0..n).map(|i| format!("x{i}=0;")).collect();
    let cond: Vec<String> = (0..n).map(|i| format!("P{i}:r1 == 0")).collect();
    format!(
        "PTX ring6\n{{ {} }}\n {} ;\n{}\nexists ({})\n",
        init.join(" "),
        heads.join(" | "),
        rows.join("\n"),
        cond.join(" /\\ ")
    )
}

#[test]
fn a_model_check_over_its_time_bound_is_reported_and_the_batch_goes_on() {
    let dir = scratch("timeout");
    std::fs::write(dir.join("ring6.litmus"), six_thread_ring()).unwrap();
    std::fs::write(dir.join("MP.litmus"), MP).unwrap();
    let started = Instant::now();
    let o = run_in(
        &dir,
        &["check", "--timeout", "1", "ring6.litmus", "MP.litmus"],
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("ring6: timed out after 1.0 s"), "{err}");
    assert!(text(&o.stdout).contains("MP"), "the batch went on");
    let o = cpu_run(
        &dir,
        "t",
        &["--timeout", "1"],
        &["ring6.litmus", "MP.litmus"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let set = ptx_litmus::results::read_result_set(&set_dir(&dir, "t")).unwrap();
    assert_eq!(set.tests.len(), 1);
    assert!(set.run.skipped_tests[0].reason.contains("timed out"));
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_model_within_a_second() {
    let dir = scratch("modelint");
    std::fs::write(dir.join("ring6.litmus"), six_thread_ring()).unwrap();
    let mut child = bin()
        .args([
            "run",
            "--backend",
            "cpu",
            "--quiet",
            "--out",
            "out",
            "ring6.litmus",
        ])
        .current_dir(&dir)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    if !ok.is_ok_and(|s| s.success()) {
        let _ = child.kill();
        let _ = child.wait();
        common::not_checked("no `kill` command to send SIGINT");
        return;
    }
    let o = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("model: interrupted"),
        "{}",
        text(&o.stderr)
    );
}

/// A second Ctrl-C ends a stopping run at once, as someone who presses it twice means; a
/// second SIGTERM does not, since supervisors send it twice (GNU `timeout` to the process and
/// to its group): the run finishes the test under way (hung here for 4 s) and writes its set.
#[cfg(unix)]
#[test]
fn a_second_ctrl_c_kills_a_stopping_run_and_a_second_sigterm_does_not() {
    use std::os::unix::process::ExitStatusExt;
    for signal in ["INT", "TERM"] {
        let dir = scratch(&format!("second-{signal}"));
        std::fs::write(dir.join("MP.litmus"), MP).unwrap();
        let name = ptx_litmus::litmus::parse(MP, Path::new("MP.litmus"))
            .unwrap()
            .name;
        let inject = format!("inject=hang:{name}:4");
        let child = bin()
            .args(["run", "--backend", "cpu", "--quiet", "--iterations", "200"])
            .args(["--out", "out", "--run-id", "s", "-o", &inject, "MP.litmus"])
            .current_dir(&dir)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        for wait in [1500, 500] {
            std::thread::sleep(Duration::from_millis(wait));
            let sent = Command::new("kill")
                .args([&format!("-{signal}"), &child.id().to_string()])
                .status();
            assert!(sent.is_ok_and(|s| s.success()), "kill -{signal}");
        }
        let o = child.wait_with_output().unwrap();
        if signal == "INT" {
            // Ended by SIGINT itself (2), not by an exit of its own.
            assert_eq!(o.status.signal(), Some(2), "{}", text(&o.stderr));
            continue;
        }
        assert!(o.status.code().is_some(), "{:?}", o.status);
        let set = ptx_litmus::results::read_result_set(&set_dir(&dir, "s")).unwrap();
        assert!(set.run.partial, "a stopped run reads as partial");
        assert!(
            set.run.skipped_tests[0].reason.contains("timed out"),
            "{:?}",
            set.run.skipped_tests
        );
    }
}
