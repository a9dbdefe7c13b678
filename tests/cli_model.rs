//! `check --model` and `model-diff` end to end: a built-in transcription or a `.cat` file judges
//! a test (text and JSON name the model), a bad model file is refused with its line (a binary
//! or oversized one with its cause), and the differential command reports its counts and saves
//! the tests that disagree.

mod common;

use common::{bin, scratch, text};

const M4: &str = "PTX M4
{ x=0; }
 P0@cta 1,gpu 0                 | P1@cta 0,gpu 0                 ;
 atom.relaxed.cta.exch r0, x, 1 | atom.relaxed.gpu.exch r0, x, 2 ;
exists (P0:r0 == 2 /\\ P1:r0 == 1)
";

#[test]
fn check_with_a_named_model_and_with_a_cat_file() {
    let d = scratch("named");
    std::fs::write(d.join("m4.litmus"), M4).unwrap();
    let out = bin()
        .args(["check", "--model", "ptx-7.5"])
        .arg(&d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Model ptx-7.5 (PTX v7.5"), "{text}");
    assert!(text.contains("States 3\n"), "{text}");
    assert!(
        text.contains("\nVerdict Forbidden: 0 of 3 allowed states"),
        "{text}"
    );
    assert!(
        text.contains("Excluded P0:r0=2; P1:r0=1; by no_thin_air"),
        "{text}"
    );

    // A model file without rmw in No-Thin-Air allows the fourth state.
    let cat = d.join("weaker.cat");
    let weaker = ptx_litmus::cat::builtin::PTX_7_5.replace(
        "acyclic (rf | addr | data | ctrl | rmw)",
        "acyclic (rf | addr | data | ctrl)",
    );
    std::fs::write(&cat, weaker).unwrap();
    let out = bin()
        .args(["check", "--json", "--model"])
        .arg(&cat)
        .arg(d.join("m4.litmus"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["model"], cat.display().to_string());
    assert_eq!(line["result"], "Ok");
    assert_eq!(line["allowed"].as_array().unwrap().len(), 4);
}

#[test]
fn a_bad_model_file_is_refused_with_its_line() {
    let d = scratch("bad");
    std::fs::write(d.join("m4.litmus"), M4).unwrap();
    let cat = d.join("bad.cat");
    std::fs::write(&cat, "M\nlet a = po\nacyclic (a | W) as x\n").unwrap();
    let out = bin()
        .args(["check", "--model"])
        .arg(&cat)
        .arg(&d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("bad.cat:3:"), "{err}");
    // A model that is not text, or far larger than any model, is refused naming the cause.
    let binary = d.join("binary.cat");
    std::fs::write(&binary, b"M\nlet a = p\xffo\n").unwrap();
    let huge = d.join("huge.cat");
    std::fs::write(&huge, "(* *)\n".repeat(1 << 20)).unwrap();
    for (file, cause) in [
        (&binary, "binary.cat:2:10: invalid UTF-8 at byte offset 11"),
        (
            &huge,
            "huge.cat: larger than 4194304 bytes; not a cat model",
        ),
    ] {
        let out = bin()
            .args(["check", "--model"])
            .arg(file)
            .arg(&d)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(cause), "{err}");
    }
    let out = bin()
        .args(["check", "--explain", "--model", "ptx-7.5"])
        .arg(&d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn model_diff_reports_agreement_counts() {
    let out = bin()
        .args(["model-diff", "--tests", "8", "--seed", "5"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("8 tests ("), "{text}");
    assert!(
        text.contains(": 8 agree, 0 disagree, 0 undecided"),
        "{text}"
    );
    // A later slice of the same stream: tests 6 and 7 only.
    let out = bin()
        .args(["model-diff", "--tests", "2", "--seed", "5", "--first", "6"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("2 tests ("), "{text}");
    let slowest = text.split("slowest test: R5-").nth(1).unwrap_or("");
    assert!(
        slowest.starts_with('6') || slowest.starts_with('7'),
        "{text}"
    );
    // The slowest test's time, split between the two sides, which add up to it.
    let line = slowest.lines().next().unwrap_or("");
    let secs: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|w| w.contains('.'))
        .map(|w| w.parse().unwrap())
        .collect();
    assert!(
        line.contains("(built-in checker ") && line.contains(", cat model "),
        "{line}"
    );
    assert_eq!(secs.len(), 3, "{line}");
    assert!((secs[0] - secs[1] - secs[2]).abs() < 0.002, "{line}");
}

#[test]
fn model_diff_saves_the_tests_that_disagree_for_a_second_look() {
    let d = scratch("diff-save");
    // A model without a single check allows every candidate: it disagrees wherever the PTX
    // model forbids an outcome.
    std::fs::write(d.join("none.cat"), "\"no checks\"\n").unwrap();
    let saved = d.join("saved");
    let out = bin()
        .args(["model-diff", "--tests", "5", "--seed", "1", "--model"])
        .arg(d.join("none.cat"))
        .arg("--save")
        .arg(&saved)
        .output()
        .unwrap();
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let disagree: usize = said
        .split(" agree, ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    let files: Vec<_> = std::fs::read_dir(&saved).unwrap().flatten().collect();
    assert!(disagree > 0, "{said}");
    assert_eq!(
        files.len(),
        disagree,
        "one file per disagreeing test: {said}"
    );
    assert!(said.contains(&format!(
        "{disagree} test(s) that disagree or are undecided written to"
    )));
    // Each file is the test itself: checked again alone, the model still allows more states.
    let states = |args: &[&std::ffi::OsStr]| -> usize {
        let out = bin().arg("check").args(args).output().unwrap();
        let said = text(&out.stdout);
        let n = said
            .split("\nStates ")
            .nth(1)
            .and_then(|r| r.lines().next());
        n.and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{said}"))
    };
    for f in files {
        let name = f.file_name().into_string().unwrap();
        let test = std::fs::read_to_string(f.path()).unwrap();
        assert!(test.starts_with(&format!("PTX {}\n", name.trim_end_matches(".litmus"))));
        let path = f.path();
        let none = d.join("none.cat");
        let built_in = states(&[path.as_os_str()]);
        let cat = states(&["--model".as_ref(), none.as_os_str(), path.as_os_str()]);
        assert!(cat > built_in, "{name}: {cat} states against {built_in}");
    }
}

/// Five threads each storing to `x` then loading it: 4231 coherence orders of five writes times
/// every reads-from choice, far more than a second of the interpreter's work.
const W5X: &str = "PTX W5x
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 | P3@cta 0,gpu 0 | P4@cta 1,gpu 0 ;
 st.relaxed.gpu x, 1 | st.relaxed.gpu x, 2 | st.relaxed.gpu x, 3 | st.relaxed.gpu x, 4 | st.relaxed.gpu x, 5 ;
 ld.relaxed.gpu r0, x | ld.relaxed.gpu r0, x | ld.relaxed.gpu r0, x | ld.relaxed.gpu r0, x | ld.relaxed.gpu r0, x ;
exists (P0:r0 == 2 /\\ P1:r0 == 1)
";

/// A CPU run of `m4.litmus` in `dir` into `dir/out`, run id `id`, with `extra` flags.
fn cpu_run(dir: &std::path::Path, id: &str, extra: &[&str]) -> std::process::Output {
    bin()
        .args(["run", "--backend", "cpu", "--quiet", "--iterations", "500"])
        .args(["--seed", "1", "--out", "out", "--run-id", id])
        .args(extra)
        .arg("m4.litmus")
        .current_dir(dir)
        .output()
        .unwrap()
}

/// `run.json` and the one test record of set `id`.
fn read_set(
    dir: &std::path::Path,
    id: &str,
) -> (std::path::PathBuf, serde_json::Value, serde_json::Value) {
    let machine = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let set = machine.join(id);
    let json = |p: std::path::PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let run = json(set.join("run.json"));
    let test = json(set.join("tests/M4.json"));
    (set, run, test)
}

#[test]
fn run_is_judged_by_the_chosen_model_which_provenance_report_diff_and_merge_name() {
    let d = scratch("run-model");
    std::fs::write(d.join("m4.litmus"), M4).unwrap();
    // A model under which nothing is consistent: every outcome the CPU shows is forbidden.
    std::fs::write(d.join("never.cat"), "PTX never\nacyclic id as never\n").unwrap();
    let weaker = ptx_litmus::cat::builtin::PTX_7_5.replace(
        "acyclic (rf | addr | data | ctrl | rmw)",
        "acyclic (rf | addr | data | ctrl)",
    );
    std::fs::write(d.join("weaker.cat"), &weaker).unwrap();

    let o = cpu_run(&d, "builtin", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (a, run, test) = read_set(&d, "builtin");
    assert_eq!(run["provenance"]["model"], "ptx-7.5");
    assert_eq!(run["provenance"]["model.checker"], "built-in");
    assert_eq!(test["model"]["allowed"].as_array().unwrap().len(), 3);

    let o = cpu_run(&d, "never", &["--model", "never.cat"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("forbidden by the model never.cat (cat model \"PTX never\""),
        "{err}"
    );
    // Judged by a model that is not PTX's, a CPU violation is no bug of the CPU mapping.
    assert!(err.contains("is not PTX's model"), "{err}");
    assert!(!err.contains("bug in the CPU mapping"), "{err}");
    let (b, run, test) = read_set(&d, "never");
    let p = &run["provenance"];
    assert_eq!(
        (p["model"].as_str(), p["model.checker"].as_str()),
        (Some("never.cat"), Some("cat"))
    );
    assert_eq!(p["model.file"], "never.cat");
    let hash = ptx_litmus::results::judge_model::text_hash("PTX never\nacyclic id as never\n");
    assert_eq!(p["model.hash"], hash.as_str());
    assert!(test["model"]["allowed"].as_array().unwrap().is_empty());
    assert_eq!(test["verdict"]["status"], "violation");

    let o = cpu_run(&d, "weaker", &["--model", "weaker.cat"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (c, _, test) = read_set(&d, "weaker");
    assert_eq!(test["model"]["allowed"].as_array().unwrap().len(), 4);
    assert_eq!(test["model"]["result"], "Ok");
    assert!(test["notes"]["model.vs_built_in"]
        .as_str()
        .unwrap()
        .starts_with("allows 1 outcome(s) the built-in checker forbids"));

    // The report names the model; diff lists it among the settings that differ.
    let o = bin().arg("report").arg(&b).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let md = std::fs::read_to_string(b.join("report.md")).unwrap();
    assert!(md.contains("never.cat (cat model"), "{md}");
    let o = bin().arg("diff").arg(&a).arg(&c).output().unwrap();
    let out = text(&o.stdout);
    assert!(out.contains("provenance.model.checker"), "{out}");
    assert!(out.contains("weaker.cat"), "{out}");

    // Sets judged by different models are not merged.
    let o = bin()
        .arg("merge")
        .arg(&a)
        .arg(&c)
        .arg("--out")
        .arg(d.join("m"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("different models"),
        "{}",
        text(&o.stderr)
    );

    // A replay is judged by the recorded model, and refused once that model's text changed.
    let o = bin()
        .args([
            "run", "--quiet", "--out", "out", "--run-id", "again", "--replay",
        ])
        .arg(c.join("run.json"))
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (_, run, _) = read_set(&d, "again");
    assert_eq!(run["provenance"]["model"], "weaker.cat");
    std::fs::write(d.join("weaker.cat"), format!("{weaker}\n")).unwrap();
    let o = bin()
        .args([
            "run", "--quiet", "--out", "out", "--run-id", "changed", "--replay",
        ])
        .arg(c.join("run.json"))
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("the model weaker.cat has changed since the run"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn check_with_a_model_keeps_to_its_time_bound_and_the_batch_goes_on() {
    let d = scratch("cat-timeout");
    std::fs::write(d.join("w5x.litmus"), W5X).unwrap();
    std::fs::write(d.join("m4.litmus"), M4).unwrap();
    let started = std::time::Instant::now();
    let o = bin()
        .args([
            "check",
            "--model",
            "ptx-7.5",
            "--timeout",
            "1",
            "w5x.litmus",
            "m4.litmus",
        ])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("w5x.litmus: W5x: timed out after 1.0 s"),
        "{err}"
    );
    assert!(text(&o.stdout).contains("Test M4"), "the batch went on");
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_run_judged_by_a_cat_model_within_a_second() {
    let d = scratch("cat-int");
    std::fs::write(d.join("w5x.litmus"), W5X).unwrap();
    let mut child = bin()
        .args([
            "run",
            "--backend",
            "cpu",
            "--quiet",
            "--out",
            "out",
            "--model",
            "ptx-7.5",
        ])
        .arg("w5x.litmus")
        .current_dir(&d)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let sent = std::time::Instant::now();
    let sigint = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    if !sigint.is_ok_and(|s| s.success()) {
        let _ = child.kill();
        let _ = child.wait();
        common::not_checked("no `kill` command to send SIGINT");
        return;
    }
    let o = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < std::time::Duration::from_secs(2),
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

/// The row of `suite` in a `bench model` table: its test and error counts.
fn bench_row(table: &str, suite: &str) -> (usize, usize) {
    let row = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(suite))
        .unwrap_or_else(|| panic!("no row for {suite}:\n{table}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    (cols[1].parse().unwrap(), cols[2].parse().unwrap())
}

#[test]
fn bench_model_times_the_checker_or_the_cat_interpreter_it_is_given() {
    let d = scratch("bench-model");
    std::fs::write(d.join("m4.litmus"), M4).unwrap();
    // Seven writes to one location: the checker orders them, the interpreter enumerates at
    // most six.
    let seven = "PTX W7\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n st.weak x, 2 ;\n \
               st.weak x, 3 ;\n st.weak x, 4 ;\n st.weak x, 5 ;\n st.weak x, 6 ;\n \
               st.weak x, 7 ;\nexists (x == 7)\n";
    std::fs::write(d.join("seven.litmus"), seven).unwrap();
    let suite = d.display().to_string();

    let out = bin()
        .args(["bench", "model", "--runs", "1"])
        .arg(&d)
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{table}");
    assert_eq!(bench_row(&table, &suite), (2, 0), "{table}");
    assert!(!table.contains("cat interpreter"), "{table}");

    // The interpreter refuses the seven writes: that test is an error, named on stderr.
    let out = bin()
        .args(["bench", "model", "--runs", "1", "--model", "ptx-7.5"])
        .arg(&d)
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{table}{err}");
    assert_eq!(bench_row(&table, &suite), (1, 1), "{table}");
    assert!(
        table.contains("the cat interpreter running ptx-7.5)"),
        "{table}"
    );
    assert!(
        err.contains("seven.litmus") && err.contains("7 writes to x"),
        "{err}"
    );
}

/// `model-diff PATHS` compares on the tests under the paths: M4 disagrees with a reading of
/// the model that leaves `rmw` out of `no_thin_air`, MP agrees, a file that does not parse is
/// named with its line and turns the exit to 2, and the stream's flags are refused beside
/// paths.
#[test]
fn model_diff_compares_on_the_tests_under_paths() {
    let d = scratch("diff-paths");
    let tests = d.join("tests");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(tests.join("M4.litmus"), M4).unwrap();
    let mp = std::fs::read_to_string(
        common::root().join("litmus/mp/MP+fence.sc.gpu+fence.sc.gpu.litmus"),
    )
    .unwrap();
    std::fs::write(tests.join("MP.litmus"), mp).unwrap();
    let reading = ptx_litmus::cat::builtin::PTX_7_5.replace(
        "acyclic (rf | addr | data | ctrl | rmw) as no_thin_air",
        "acyclic (rf | addr | data | ctrl) as no_thin_air",
    );
    std::fs::write(d.join("no-rmw.cat"), reading).unwrap();
    let diff = |extra: &[&str]| {
        bin()
            .args(["model-diff", "--model"])
            .arg(d.join("no-rmw.cat"))
            .arg(&tests)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = diff(&[]);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("2 tests under "), "{said}");
    assert!(
        said.contains(": 1 agree, 1 disagree, 0 undecided"),
        "{said}"
    );
    assert!(
        said.contains("1  model allows more; built-in excludes by no_thin_air"),
        "{said}"
    );
    std::fs::write(
        tests.join("bad.litmus"),
        "PTX bad\n{ x=0; }\n P0 ;\n foo r0 ;\n",
    )
    .unwrap();
    let out = diff(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("bad.litmus:4:"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains(": 1 agree, 1 disagree"));
    let out = diff(&["--seed", "3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot be used with"));
}

/// `--jobs N` compares N tests at once and takes their results in the tests' order: the
/// summary, the classes and their first tests are those of one test at a time.
#[test]
fn model_diff_on_several_threads_says_what_one_thread_says() {
    let d = scratch("diff-jobs");
    std::fs::write(d.join("none.cat"), "\"no checks\"\n").unwrap();
    let said = |jobs: &str| {
        let out = bin()
            .args(["model-diff", "--tests", "24", "--seed", "3", "--examples"])
            .args(["--jobs", jobs, "--model"])
            .arg(d.join("none.cat"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        // The first line and the slowest test carry times.
        let all = text(&out.stdout);
        let kept: Vec<&str> = all
            .lines()
            .skip(1)
            .filter(|l| !l.contains("slowest test:"))
            .collect();
        kept.join("\n")
    };
    let one = said("1");
    assert!(one.contains("24 tests ("), "{one}");
    assert!(one.contains("PTX R3-"), "the classes' first tests: {one}");
    assert_eq!(said("3"), one);
    let out = bin().args(["model-diff", "--jobs", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
