//! `campaign run`, `unpack` and `status` end to end on the CPU backend: steps run within the
//! budget in processes of their own, a step whose device is lost goes on in a fresh process,
//! a step past the budget is stopped and marked incomplete, every archive comes back within
//! the device's limits, and unpacking them makes `status` say what is done.

mod common;

use common::{bin, root, scratch, text};
use ptx_litmus::campaign::{limits, progress};
use std::path::{Path, PathBuf};
use std::process::Output;

const HUNG: &str = "SB+fence.sc.cta+fence.sc.cta-diffcta";

fn campaign(args: &[&str], dirs: &[(&str, &Path)]) -> Output {
    let mut c = bin();
    c.arg("campaign").args(args).env("BENCH_SECONDS", "0.1");
    for (flag, p) in dirs {
        c.arg(flag).arg(p);
    }
    c.output().unwrap()
}

/// The step folders under a results folder (`<machine>/<run>`), by step name.
fn step_dir(results: &Path, step: &str) -> PathBuf {
    let machine = std::fs::read_dir(results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::read_dir(machine)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{step}-"))
        })
        .unwrap_or_else(|| panic!("no folder of step {step}"))
}

#[test]
fn a_campaign_runs_packs_unpacks_and_resumes_from_what_is_done() {
    let dir = scratch("e2e");
    let manifest = dir.join("m.txt");
    std::fs::write(
        &manifest,
        format!(
            "bench 20 script campaign/bench.sh\n\
             sb 30 run litmus/sb --iterations 2000 -o inject=hang:{HUNG}:0.3\n\
             mp 30 run litmus/mp --iterations 2000\n\
             corw 30 run litmus/corw --iterations 2000\n\
             later 900 run litmus --iterations 2000\n"
        ),
    )
    .unwrap();
    let (out, results) = (dir.join("out"), dir.join("results"));
    let common = [
        ("--manifest", manifest.as_path()),
        ("--results", results.as_path()),
    ];
    let mut dirs = common.to_vec();
    dirs.push(("--out", &out));
    let o = campaign(&["run", "--backend", "cpu", "--budget", "120s"], &dirs);
    let said = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}{}", text(&o.stderr));
    assert!(said.contains("sb: complete"), "{said}");
    assert!(
        said.contains("process 1 lost the device; 15 test(s) went on in process 2"),
        "{said}"
    );
    assert!(
        said.contains("not run: later (later needs ~900 s"),
        "{said}"
    );
    // Everything under --out comes back: four archives and the summary.
    let files = limits::check(&out).unwrap();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "bench.tar.gz",
            "corw.tar.gz",
            "mp.tar.gz",
            "sb.tar.gz",
            "summary.txt"
        ]
    );

    let archives: Vec<PathBuf> = files[..4].iter().map(|(n, _)| out.join(n)).collect();
    unpack(&results, &archives);
    // The step that lost its device: one result set, complete, the hung test recorded as
    // timed out and every other test counted.
    let sb = step_dir(&results, "sb");
    let rec = progress::read(&sb.join(progress::RECORD)).unwrap();
    assert!(rec.complete);
    assert_eq!(rec.exits, [4, 0]);
    let set = ptx_litmus::results::read_result_set(&sb).unwrap();
    assert!(!set.run.partial);
    assert_eq!(set.run.test_paths.len(), 20);
    assert_eq!(set.tests.len(), 19);
    assert_eq!(set.run.skipped_tests.len(), 1);
    assert!(set.run.skipped_tests[0].reason.starts_with("timed out: "));
    assert!(sb.join("report.html").is_file());
    assert!(step_dir(&results, "bench")
        .join("bench-basic.txt")
        .is_file());
    // Unpacking again is refused rather than mixing two runs.
    let o = bin()
        .args(["campaign", "unpack", "--results"])
        .arg(&results)
        .arg(&archives[0])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("exists (--force replaces it)"),
        "{}",
        text(&o.stderr)
    );

    let o = campaign(&["status", "--backend", "cpu"], &common);
    let said = text(&o.stdout);
    for step in ["bench", "sb", "mp", "corw"] {
        assert!(said.contains(&format!("  done  {step}")), "{said}");
    }
    assert!(said.contains("  todo  later"), "{said}");
    assert!(said.contains("next: later"), "{said}");
    // Three complete run steps (not bench, a script) give a pace, which scales the plan.
    assert!(
        said.contains("the 3 complete run step(s) on the cpu backend took"),
        "{said}"
    );
    // They all ran on this machine's model, which then has its own pace.
    let model = rec.model.to_ascii_lowercase();
    assert!(!model.is_empty());
    let o = campaign(
        &["status", "--backend", "cpu", "--hardware", &model],
        &common,
    );
    let said = text(&o.stdout);
    let own = format!("the 3 complete run step(s) on {model} took");
    assert!(said.contains(&own), "{said}");
    // On the GPU backend nothing of this counts as done.
    let said = text(&campaign(&["status"], &common).stdout);
    assert!(said.contains("next: bench (5 step(s) left"), "{said}");
    let o = campaign(&["table", "--backend", "cuda"], &common);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(
        text(&o.stderr).contains("no complete step among"),
        "{}",
        text(&o.stderr)
    );
    results_table(&common, &sb);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `campaign table` over the steps `sb` and `mp`: a row per shape whose numbers are those of
/// the result sets, the published figures beside them, and the bench step's tables.
fn results_table(common: &[(&str, &Path)], sb: &Path) {
    let o = campaign(&["table", "--backend", "cpu", "--steps", "sb,mp"], common);
    let said = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}{}", text(&o.stderr));
    let set = ptx_litmus::results::read_result_set(sb).unwrap();
    let mut rates: Vec<f64> = set
        .tests
        .iter()
        .filter_map(|t| t.rates.instances_per_second)
        .collect();
    let median = ptx_litmus::report::stats::median(&mut rates);
    let row = format!(
        "| SB | {} | 19 | {} |",
        set.run.parameters.preset,
        ptx_litmus::report::format::rate(median)
    );
    assert!(said.contains(&row), "{row} in {said}");
    let mp = said.lines().position(|l| l.starts_with("| MP "));
    let sb_at = said.lines().position(|l| l.starts_with("| SB "));
    assert!(mp.is_some() && mp < sb_at, "MP comes first: {said}");
    assert!(said.contains(ptx_litmus::report::shapes::PEER), "{said}");
    assert!(said.contains("/bench-basic.txt`:"), "{said}");
}

/// Where `tool` is on this machine's PATH.
fn on_path(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

#[cfg(unix)]
#[test]
fn a_step_past_the_budget_is_stopped_and_stays_to_do() {
    let dir = scratch("budget");
    let manifest = dir.join("m.txt");
    let script = dir.join("slow.sh");
    std::fs::write(
        &script,
        "echo started > \"$STEP_DIR/started.txt\"\nexec sleep 60\n",
    )
    .unwrap();
    std::fs::write(&manifest, format!("slow 1 script {}\n", script.display())).unwrap();
    let (out, results) = (dir.join("out"), dir.join("results"));
    let t0 = std::time::Instant::now();
    let dirs = [
        ("--manifest", manifest.as_path()),
        ("--results", &results),
        ("--out", &out),
    ];
    // A minimal image may have no `kill` program: the PATH holds only what the step needs.
    let bin_dir = dir.join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    for tool in ["sh", "bash", "sleep"] {
        let Some(found) = on_path(tool) else {
            common::not_checked(&format!("no `{tool}` on PATH"));
            return;
        };
        std::os::unix::fs::symlink(found, bin_dir.join(tool)).unwrap();
    }
    // Packing uses gzip where it runs, else leaves the archive a plain tar.
    if let Some(gzip) = on_path("gzip") {
        std::os::unix::fs::symlink(gzip, bin_dir.join("gzip")).unwrap();
    }
    let mut c = bin();
    c.args(["campaign", "run", "--backend", "cpu", "--budget", "18s"])
        .env("PATH", &bin_dir);
    for (flag, p) in dirs {
        c.arg(flag).arg(p);
    }
    let o = c.output().unwrap();
    let took = t0.elapsed().as_secs_f64();
    // 18 s less the 15 s kept for packing: stopped by SIGTERM after about 3 s, not 60 (nor
    // killed 10 s later, as when the stop could not be sent).
    assert!(took < 10.0, "{took}");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains("slow: INCOMPLETE"),
        "{}",
        text(&o.stdout)
    );
    unpack(&results, &[out.join("slow.tar.gz")]);
    let slow = step_dir(&results, "slow");
    assert!(slow.join("started.txt").is_file());
    let rec = progress::read(&slow.join(progress::RECORD)).unwrap();
    assert!(!rec.complete);
    assert!(
        rec.notes[0].contains("stopped at the end of the budget"),
        "{:?}",
        rec.notes
    );
    let dirs = [("--manifest", manifest.as_path()), ("--results", &results)];
    let said = text(&campaign(&["status", "--backend", "cpu"], &dirs).stdout);
    assert!(said.contains("todo  slow  ~1 s  (incomplete: "), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A supervisor's stop as GNU `timeout` and Slurm send it: SIGTERM to the whole process group,
/// and again. The step's process still finishes its test (hung here for 6 s) rather than
/// dying at the second signal, and the campaign packs the step, says what stopped it and
/// writes its summary.
#[cfg(unix)]
#[test]
fn sigterm_sent_twice_to_the_campaign_s_group_still_packs_the_step() {
    use std::os::unix::process::CommandExt;
    use std::time::Duration;
    let dir = scratch("twice");
    let manifest = dir.join("m.txt");
    let test = "MP+rlx.gpu+rlx.gpu";
    std::fs::write(
        &manifest,
        format!(
            "mp 60 run litmus/mp/{test}.litmus --iterations 100000 -o inject=hang:{test}:6\n\
             sb 10 run litmus/sb --iterations 1000\n"
        ),
    )
    .unwrap();
    let (out, results) = (dir.join("out"), dir.join("results"));
    let child = bin()
        .args(["campaign", "run", "--backend", "cpu", "--budget", "120s"])
        .arg("--manifest")
        .arg(&manifest)
        .arg("--results")
        .arg(&results)
        .arg("--out")
        .arg(&out)
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let group = format!("-{}", child.id());
    for wait in [2500, 1000] {
        std::thread::sleep(Duration::from_millis(wait));
        let sent = std::process::Command::new("kill")
            .args(["-TERM", "--", &group])
            .status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -TERM -- {group}");
    }
    let o = child.wait_with_output().unwrap();
    let said = text(&o.stdout);
    assert!(o.status.code().is_some(), "{:?} {said}", o.status);
    assert!(said.contains("mp: INCOMPLETE"), "{said}");
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(summary.contains("stopped by SIGTERM"), "{summary}");
    assert!(
        summary.contains("not run: sb (the campaign was stopped by SIGTERM)"),
        "{summary}"
    );
    unpack(&results, &[out.join("mp.tar.gz")]);
    let rec = progress::read(&step_dir(&results, "mp").join(progress::RECORD)).unwrap();
    // The hung test ended as timed out (exit 4) in its own time; killed, it would say -1.
    assert_eq!(rec.exits, vec![4], "{:?}", rec.notes);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A step that fails by itself (a preflight check, a script's error) would fail the same way
/// in every window and spend its time there: once its record is back, `status` marks it
/// `fail` and leaves it out of the plan, `campaign run` holds it back and says so, and `--only`
/// runs it again.
#[test]
fn a_step_that_failed_by_itself_is_held_back_until_named() {
    let dir = scratch("failed");
    let manifest = dir.join("m.txt");
    let (fails, works) = (dir.join("fails.sh"), dir.join("works.sh"));
    std::fs::write(&fails, "echo checking\nexit 1\n").unwrap();
    std::fs::write(&works, "exit 0\n").unwrap();
    std::fs::write(
        &manifest,
        format!(
            "fails 5 script {}\nworks 5 script {}\n",
            fails.display(),
            works.display()
        ),
    )
    .unwrap();
    let results = dir.join("results");
    let run_into = |out: &str, extra: &[&str]| {
        let out = dir.join(out);
        let dirs = [
            ("--manifest", manifest.as_path()),
            ("--results", &results),
            ("--out", &out),
        ];
        let mut args = vec!["run", "--backend", "cpu", "--budget", "60s"];
        args.extend(extra);
        let said = text(&campaign(&args, &dirs).stdout);
        (said, out)
    };
    let (said, out) = run_into("out1", &[]);
    assert!(said.contains("fails: INCOMPLETE"), "{said}");
    unpack(&results, &[out.join("fails.tar.gz")]);
    let dirs = [("--manifest", manifest.as_path()), ("--results", &results)];
    let status = text(&campaign(&["status", "--backend", "cpu"], &dirs).stdout);
    assert!(status.contains("  fail  fails  "), "{status}");
    assert!(
        status.contains("`campaign run --only fails` runs it again"),
        "{status}"
    );
    assert!(status.contains("  todo  works"), "{status}");
    assert!(status.contains("next: works (1 step(s) left"), "{status}");
    let (said, _) = run_into("out2", &[]);
    assert!(
        said.contains("held back: fails (it failed by itself in "),
        "{said}"
    );
    assert!(!said.contains("fails: INCOMPLETE"), "{said}");
    assert!(said.contains("works: complete"), "{said}");
    let (said, _) = run_into("out3", &["--only", "fails"]);
    assert!(said.contains("fails: INCOMPLETE"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_checked_in_manifest_reads_and_says_what_comes_first() {
    let empty = scratch("fresh");
    let o = campaign(&["status"], &[("--results", &empty)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let said = text(&o.stdout);
    assert!(said.contains("  todo  preflight"), "{said}");
    assert!(said.contains("next: preflight"), "{said}");
    // Nothing has run: the first window is the one call that smokes, then campaigns.
    assert!(
        said.contains("first window: nothing has run on a GPU yet"),
        "{said}"
    );
    let cpu = text(&campaign(&["status", "--backend", "cpu"], &[("--results", &empty)]).stdout);
    assert!(!cpu.contains("first window:"), "{cpu}");
    for preset in ["basic", "interleave", "stress"] {
        assert!(said.contains(&format!("todo  litmus-{preset}")), "{said}");
        assert!(said.contains(&format!("todo  dat3m-{preset}")), "{said}");
    }
    // What each issue of the hardware run is owed comes first: the first window (after the
    // window script's smoke) runs the suite under every preset; the next ones bench and the compilers
    // (twice each, filling a window's files), the proxies and the tuning; every step fits
    // some window.
    let window = |step: &str| -> usize {
        said.lines()
            .filter_map(|l| l.trim().split_once(": "))
            .find(|(_, steps)| steps.split([',', ' ']).any(|s| s == step))
            .and_then(|(n, _)| n.parse().ok())
            .unwrap_or_else(|| panic!("{step} in no window: {said}"))
    };
    let wanted: [(usize, &[&str]); 3] = [
        (
            1,
            &[
                "preflight",
                "litmus-basic",
                "litmus-interleave",
                "litmus-stress",
            ],
        ),
        (
            2,
            &[
                "bench",
                "compiler-jit",
                "compiler-ptxas-13.0",
                "compiler-jit-2",
                "compiler-ptxas-13.0-2",
            ],
        ),
        (3, &["dat3m-proxy", "gen-proxy"]),
    ];
    for (w, steps) in wanted {
        for &step in steps {
            assert_eq!(window(step), w, "{step}: {said}");
        }
    }
    assert!(window("tune") <= 4, "{said}");
    assert!(!said.contains("never started"), "{said}");
    // docs/gpu-runs.md shows the first windows of this plan: each line it shows is printed.
    let doc = std::fs::read_to_string(root().join("docs/gpu-runs.md")).unwrap();
    let shown = doc
        .split_once("```\nwindows of 480 s")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("the plan's block in docs/gpu-runs.md")
        .0;
    for line in shown.lines().skip(1).filter(|l| l.trim() != "...") {
        assert!(
            said.contains(line),
            "docs/gpu-runs.md shows `{line}`; status says:\n{said}"
        );
    }
}

#[test]
fn every_test_path_of_a_run_step_is_in_the_tree_or_made_by_campaign_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("campaign/manifest.txt")).unwrap();
    let script = std::fs::read_to_string(root.join("scripts/campaign-corpus")).unwrap();
    let mut copied = Vec::new();
    for line in manifest
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
    {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.get(2) != Some(&"run") {
            continue;
        }
        for path in words[3..].iter().take_while(|w| !w.starts_with("--")) {
            if path.starts_with("campaign/corpus") {
                // Third-party tests are copied there, never committed.
                assert!(
                    script.contains(&format!("\ncopy {path} ")),
                    "{}: scripts/campaign-corpus does not make {path}",
                    words[0]
                );
                copied.push(*path);
            } else {
                assert!(root.join(path).exists(), "{}: {path} is missing", words[0]);
            }
        }
    }
    copied.sort_unstable();
    copied.dedup();
    assert_eq!(copied, ["campaign/corpus", "campaign/corpus-proxy"]);
}

#[test]
fn archives_that_are_not_a_step_are_refused() {
    use ptx_litmus::campaign::ustar::{write, Entry};
    let dir = scratch("bad");
    let results = dir.join("results");
    let stray = write(&[
        Entry::File("m/r/campaign.json".into(), b"{}".to_vec()),
        Entry::File("m/other/x".into(), b"x".to_vec()),
    ])
    .unwrap();
    std::fs::write(dir.join("stray.tar"), stray).unwrap();
    std::fs::write(dir.join("junk.tar"), b"not an archive").unwrap();
    let o = bin()
        .args(["campaign", "unpack", "--results"])
        .arg(&results)
        .arg(dir.join("stray.tar"))
        .arg(dir.join("junk.tar"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("member m/other/x lies outside m/r/"), "{err}");
    assert!(
        err.contains("junk.tar: the archive ends without its end marker"),
        "{err}"
    );
    assert!(!results.join("m/other").exists());
}

#[test]
fn the_checked_in_preflight_and_bench_steps_run_on_the_cpu_backend() {
    let dir = scratch("preflight");
    let (out, results) = (dir.join("out"), dir.join("results"));
    let args = [
        "run",
        "--backend",
        "cpu",
        "--budget",
        "400s",
        "--only",
        "preflight,bench",
    ];
    // Without NVIDIA tools on PATH the preflight skips memcheck and the SASS check, saying so.
    let o = bin()
        .arg("campaign")
        .args(args)
        .arg("--results")
        .arg(&results)
        .arg("--out")
        .arg(&out)
        .env("BENCH_SECONDS", "0.1")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let said = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}{}", text(&o.stderr));
    assert!(said.contains("preflight: complete"), "{said}");
    assert!(said.contains("bench: complete"), "{said}");
    let files = limits::check(&out).unwrap();
    let archives: Vec<PathBuf> = files
        .iter()
        .filter(|(n, _)| n.ends_with(".gz") || n.ends_with(".tar"))
        .map(|(n, _)| out.join(n))
        .collect();
    unpack(&results, &archives);
    let report =
        std::fs::read_to_string(step_dir(&results, "preflight").join("preflight.txt")).unwrap();
    for preset in ["basic", "interleave", "stress"] {
        assert!(
            report.contains(&format!("passed  mp-{preset} (exit 0)")),
            "{report}"
        );
    }
    assert!(
        report.contains("passed  proxy-objects (exit 0, both conformant)"),
        "{report}"
    );
    let bench =
        std::fs::read_to_string(step_dir(&results, "bench").join("bench-basic.txt")).unwrap();
    assert!(bench.contains("SB"), "{bench}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_checked_in_tune_step_runs_on_the_cpu_backend_and_unpacks_with_its_page() {
    let dir = scratch("tune");
    let (out, results) = (dir.join("out"), dir.join("results"));
    let o = bin()
        .args(["campaign", "run", "--backend", "cpu", "--budget", "540s"])
        .args(["--only", "tune", "--results"])
        .arg(&results)
        .arg("--out")
        .arg(&out)
        .env("TUNE_SECONDS", "6")
        .output()
        .unwrap();
    let said = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}{}", text(&o.stderr));
    assert!(said.contains("tune: complete"), "{said}");
    let files = limits::check(&out).unwrap();
    let archives: Vec<PathBuf> = files
        .iter()
        .filter(|(n, _)| n.ends_with(".gz"))
        .map(|(n, _)| out.join(n))
        .collect();
    unpack(&results, &archives);
    let tuned = step_dir(&results, "tune").join("tuned");
    for family in ["SB", "MP", "LB", "2+2W", "WRC", "IRIW"] {
        let file = std::fs::read_to_string(tuned.join(format!("{family}.stress"))).unwrap();
        assert!(file.contains("# seed: 1"), "{file}");
        assert!(tuned.join(format!("{family}.search.json")).is_file());
        assert!(tuned.join(format!("plots/tune-{family}.png")).is_file());
    }
    let page = std::fs::read_to_string(tuned.join("tune.html")).unwrap();
    assert_eq!(page.matches("<svg").count(), 6, "one plot per family");
    // The step's output names the files as they lie beside it, not in the machine's work folder.
    let said = std::fs::read_to_string(step_dir(&results, "tune").join("tune.txt")).unwrap();
    assert!(said.contains("-> tuned/IRIW.stress"), "{said}");
    // `campaign table` ends with the Tuned table: a row per family, the peer's figure for IRIW.
    let o = bin()
        .args(["campaign", "table", "--backend", "cpu", "--results"])
        .arg(&results)
        .output()
        .unwrap();
    let table = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let tuned = table.split("Tuned, from").nth(1).expect("a Tuned table");
    for family in ["SB", "MP", "LB", "2+2W", "WRC", "IRIW"] {
        let row = tuned
            .lines()
            .find(|l| l.starts_with(&format!("| {family} |")));
        let row = row.unwrap_or_else(|| panic!("no {family} row in {tuned}"));
        let cells: Vec<&str> = row.split(" | ").collect();
        assert_eq!(cells.len(), 8, "{row}");
        assert_eq!(cells[6] == "2.80e6", family == "IRIW", "{row}");
    }
    // In the shape table's order.
    let at = |f: &str| tuned.find(&format!("| {f} |")).unwrap();
    let order = ["MP", "SB", "LB", "IRIW", "2+2W", "WRC"];
    assert!(order.windows(2).all(|w| at(w[0]) < at(w[1])), "{tuned}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_process_that_saw_a_violation_before_it_lost_the_device_still_hands_on_its_tests() {
    // Under a model that allows nothing, every test counted is a violation, so `run` exits 1
    // (a finding comes first) although it also lost the device.
    let dir = scratch("finding-then-lost");
    let never = dir.join("never.cat");
    std::fs::write(&never, "PTX never\nacyclic id as never\n").unwrap();
    let manifest = dir.join("m.txt");
    std::fs::write(
        &manifest,
        format!(
            "sb 60 run litmus/sb --iterations 500 --model {} -o inject=hang:{HUNG}:0.3\n",
            never.display()
        ),
    )
    .unwrap();
    let (out, results) = (dir.join("out"), dir.join("results"));
    let dirs = [
        ("--manifest", manifest.as_path()),
        ("--results", results.as_path()),
        ("--out", out.as_path()),
    ];
    let o = campaign(&["run", "--backend", "cpu", "--budget", "90s"], &dirs);
    let said = text(&o.stdout);
    assert!(said.contains("sb: complete"), "{said}{}", text(&o.stderr));
    assert!(
        said.contains("process 1 lost the device; 15 test(s) went on in process 2"),
        "{said}"
    );
    let archive = out.join("sb.tar.gz");
    unpack(&results, &[&archive]);
    let rec = progress::read(&step_dir(&results, "sb").join(progress::RECORD)).unwrap();
    assert_eq!(rec.exits, [1, 1]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs a manifest of the one line `step` on the CPU backend within `budget`, under `dir`: what
/// it printed, and its `--out` and `--results` folders.
fn one_step(dir: &Path, step: &str, budget: &str) -> (String, PathBuf, PathBuf) {
    let manifest = dir.join("m.txt");
    std::fs::write(&manifest, format!("{step}\n")).unwrap();
    let (out, results) = (dir.join("out"), dir.join("results"));
    let dirs = [
        ("--manifest", manifest.as_path()),
        ("--results", results.as_path()),
        ("--out", out.as_path()),
    ];
    let o = campaign(&["run", "--backend", "cpu", "--budget", budget], &dirs);
    let said = format!("{}{}", text(&o.stdout), text(&o.stderr));
    (said, out, results)
}

/// `campaign run` on the CPU backend, 60 s, of the manifest `m.txt` in `dir` (results and
/// archives beside it) with the toolchain store `store` and `extra` flags.
fn run_with_store(dir: &Path, store: &Path, extra: &[&str]) -> Output {
    bin()
        .args(["campaign", "run", "--backend", "cpu", "--budget", "60s"])
        .args(extra)
        .arg("--manifest")
        .arg(dir.join("m.txt"))
        .arg("--results")
        .arg(dir.join("results"))
        .arg("--out")
        .arg(dir.join("out"))
        .env("PTX_LITMUS_TOOLCHAINS", store)
        .output()
        .unwrap()
}

/// Unpacks `archives` into `results`, which must succeed.
fn unpack<P: AsRef<Path>>(results: &Path, archives: &[P]) {
    let u = bin()
        .args(["campaign", "unpack", "--results"])
        .arg(results)
        .args(archives.iter().map(AsRef::as_ref))
        .output()
        .unwrap();
    assert_eq!(u.status.code(), Some(0), "{}", text(&u.stderr));
}

#[test]
fn a_step_whose_tests_or_compiler_did_not_come_waits_and_the_next_runs() {
    let dir = scratch("absent-compiler");
    let (manifest, results, out) = (dir.join("m.txt"), dir.join("results"), dir.join("out"));
    let store = dir.join("empty-store");
    std::fs::create_dir_all(&store).unwrap();
    let mp = "litmus/mp/MP+rlx.gpu+rlx.gpu.litmus --iterations 200";
    let steps = format!(
        "x 5 run {mp} --compiler ptxas:12.4\nw 5 run campaign/nowhere --iterations 200\n\
         y 5 run {mp}\n"
    );
    std::fs::write(&manifest, steps).unwrap();
    let o = run_with_store(&dir, &store, &[]);
    let said = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}{}", text(&o.stderr));
    let why = "not run: x (its compiler is not here: no installed ptxas matches `12.4`";
    assert!(said.contains(why), "{said}");
    let why = "not run: w (its tests are not here: no campaign/nowhere)";
    assert!(said.contains(why), "{said}");
    assert!(said.contains("y: complete"), "{said}");
    assert!(!out.join("x.tar.gz").exists());
    unpack(&results, &[out.join("y.tar.gz")]);
    let dirs = [("--manifest", manifest.as_path()), ("--results", &results)];
    let status = text(&campaign(&["status", "--backend", "cpu"], &dirs).stdout);
    assert!(status.contains("  todo  x"), "waits, not failed: {status}");
    assert!(status.contains("  todo  w"), "waits, not failed: {status}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_step_done_on_other_hardware_runs_again_on_this_one() {
    let dir = scratch("other-hardware");
    let (said, out, results) = one_step(
        &dir,
        "mp 5 run litmus/mp/MP+rlx.gpu+rlx.gpu.litmus \
         --iterations 200",
        "60s",
    );
    assert!(said.contains("mp: complete"), "{said}");
    unpack(&results, &[out.join("mp.tar.gz")]);
    let here = text(
        &bin()
            .args(["campaign", "machine", "--backend", "cpu", "--hardware"])
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_string();
    let record = step_dir(&results, "mp").join(progress::RECORD);
    assert_eq!(progress::read(&record).unwrap().model, here);
    let manifest = dir.join("m.txt");
    let status = |hardware: Option<&str>| {
        let mut args = vec!["status", "--backend", "cpu"];
        args.extend(hardware.map(|h| ["--hardware", h]).into_iter().flatten());
        text(&campaign(&args, &[("--manifest", &manifest), ("--results", &results)]).stdout)
    };
    assert!(status(Some(&here)).contains("every step is done"));
    // The same record, as if an H200 had made it.
    let mut rec = progress::read(&record).unwrap();
    rec.model = "nvidia-h200".into();
    std::fs::write(&record, serde_json::to_string(&rec).unwrap()).unwrap();
    let any = status(None);
    assert!(any.contains("every step is done"), "{any}");
    assert!(
        any.contains("counted whatever hardware they ran on: 1 on nvidia-h200"),
        "{any}"
    );
    assert!(status(Some("H200")).contains("every step is done"));
    assert!(
        status(Some(&here)).contains("next: mp"),
        "{}",
        status(Some(&here))
    );
    // `campaign run` counts only this hardware's steps, so it runs the step again.
    std::fs::remove_dir_all(&out).unwrap();
    let dirs = [
        ("--manifest", manifest.as_path()),
        ("--results", &results),
        ("--out", &out),
    ];
    let o = campaign(&["run", "--backend", "cpu", "--budget", "60s"], &dirs);
    assert!(
        text(&o.stdout).contains("mp: complete"),
        "{}",
        text(&o.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_step_that_ran_no_test_is_not_done_and_waits_for_a_look() {
    // Both tests are refused before they run (no execution meets their barrier's quorum), as
    // every test of a compiler step is when its carried cubins are not the kernels'.
    let dir = scratch("none-ran");
    let q = "litmus/barrier-quorum";
    let step = format!(
        "q 5 run {q}/MP+bar.q4of3-hang.litmus {q}/SB+bar.q2-inst1+inst2-hang.litmus \
         --iterations 200"
    );
    let (said, out, results) = one_step(&dir, &step, "60s");
    assert!(said.contains("q: INCOMPLETE"), "{said}");
    assert!(
        said.contains("no test ran: all 2 were skipped (the first, "),
        "{said}"
    );
    unpack(&results, &[out.join("q.tar.gz")]);
    let dirs = [("--manifest", dir.join("m.txt")), ("--results", results)];
    let dirs: Vec<(&str, &Path)> = dirs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    let status = text(&campaign(&["status", "--backend", "cpu"], &dirs).stdout);
    assert!(status.contains("  fail  q"), "{status}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_compiler_step_whose_carried_cubins_are_other_kernels_waits() {
    let dir = scratch("stale-cubins");
    let (manifest, out) = (dir.join("m.txt"), dir.join("out"));
    // A store as a device call carries it: cubins, no ptxas; this one of another kernel.
    let store = dir.join("store");
    let cubins = store.join("cuda-12.4.131/cubins");
    std::fs::create_dir_all(&cubins).unwrap();
    std::fs::write(cubins.join("sm_90-0123456789abcdef.cubin"), "cubin").unwrap();
    let mp = "litmus/mp/MP+rlx.gpu+rlx.gpu.litmus --iterations 200";
    let steps = format!("x 5 run {mp} --compiler ptxas:12.4 -o grid=preset\ny 5 run {mp}\n");
    std::fs::write(&manifest, steps).unwrap();
    let o = run_with_store(&dir, &store, &[]);
    let said = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}{}", text(&o.stderr));
    let why = "not run: x (its carried cubins are none of its 1 kernels' (made from other PTX";
    assert!(said.contains(why), "{said}");
    assert!(
        said.contains("toolchains prebuild 12.4.131 ... --prune"),
        "{said}"
    );
    assert!(said.contains("y: complete"), "{said}");
    // Prebuilt for today's kernel (by a stand-in ptxas, taken away after), x starts.
    let bin_dir = store.join("cuda-12.4.131/bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let ptxas = bin_dir.join("ptxas");
    std::fs::write(&ptxas, "#!/bin/sh\nprintf cubin > \"$4\"\n").unwrap();
    std::fs::set_permissions(&ptxas, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let test = "litmus/mp/MP+rlx.gpu+rlx.gpu.litmus";
    let o = bin()
        .args(["toolchains", "prebuild", "12.4", test])
        .env("PTX_LITMUS_TOOLCHAINS", &store)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    std::fs::remove_dir_all(&bin_dir).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    let o = run_with_store(&dir, &store, &["--only", "x"]);
    let said = text(&o.stdout);
    assert!(!said.contains("not run: x"), "{said}");
    // (The CPU backend then refuses the compiler, as it must.)
    assert!(said.contains("x: failed"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_violations_a_step_saw_are_replayed_in_its_window_and_come_back_with_it() {
    // Under a model that allows nothing, every test of litmus/wrc is a violation: the first
    // three are replayed with the part's seed and settings, the rest only counted.
    let dir = scratch("replayed");
    let never = dir.join("never.cat");
    std::fs::write(&never, "PTX never\nacyclic id as never\n").unwrap();
    let step = format!(
        "wrc 60 run litmus/wrc --iterations 300 --seed 7 --model {}",
        never.display()
    );
    let (said, out, results) = one_step(&dir, &step, "90s");
    assert!(said.contains("wrc: complete"), "{said}");
    let again = said
        .lines()
        .filter(|l| l.contains("(seed 7, as in wrc-") && l.contains(": the violation again, "))
        .count();
    assert_eq!(again, 3, "{said}");
    let wrc = ptx_litmus::litmus::discover(&[PathBuf::from("litmus/wrc")]).unwrap();
    let more = format!(
        "{} more violation(s) not replayed (at most 3 a step)",
        wrc.len() - 3
    );
    assert!(said.contains(&more), "{said}");
    unpack(&results, &[out.join("wrc.tar.gz")]);
    let step = step_dir(&results, "wrc");
    let rec = progress::read(&step.join(progress::RECORD)).unwrap();
    assert_eq!(
        rec.exits,
        [1],
        "a replay is not one of the step's processes"
    );
    assert_eq!(rec.notes.len(), 4, "{:?}", rec.notes);
    // The replay's own result set, packed with the step: the three tests, the step's seed.
    let set = ptx_litmus::results::read_result_set(&step.join("replay-1")).unwrap();
    assert!(set.run.run_id.ends_with(".p1-replay"), "{}", set.run.run_id);
    // The step's report says, under each replayed violation, what its replay saw.
    let md = std::fs::read_to_string(step.join("report.md")).unwrap();
    let said = "Replayed in the same campaign window, with the same seed and settings, in \
                `replay-1/`: the violation again, 300 forbidden or unexpected in 300 instances.";
    assert_eq!(md.matches(said).count(), 3, "{md}");
    let html = std::fs::read_to_string(step.join("report.html")).unwrap();
    assert_eq!(
        html.matches("<code>replay-1/</code>: the violation again")
            .count(),
        3
    );
    assert_eq!(set.tests.len(), 3);
    assert_eq!(set.run.parameters.seed, 7);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_test_whose_name_passes_ustar_s_100_bytes_is_packed_and_unpacked_whole() {
    let dir = scratch("long-names");
    let cluster = ptx_litmus::litmus::discover(&[PathBuf::from("litmus/generated/cluster-iriw")]);
    let longest = cluster
        .unwrap()
        .into_iter()
        .max_by_key(|p| p.as_os_str().len())
        .unwrap();
    let stem = longest.file_stem().unwrap().to_string_lossy().into_owned();
    assert!(stem.len() + ".json".len() > 100, "{stem}");
    let step = format!("long 30 run {} --iterations 200", longest.display());
    let (said, out, results) = one_step(&dir, &step, "60s");
    assert!(said.contains("long: complete"), "{said}");
    unpack(&results, &[out.join("long.tar.gz")]);
    let set = ptx_litmus::results::read_result_set(&step_dir(&results, "long")).unwrap();
    assert_eq!(set.tests.len(), 1);
    assert_eq!(set.tests[0].path, longest.display().to_string());
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a device call may carry in all (the tracked tree plus the carried paths).
const CARRY_LIMIT: u64 = 64 << 20;
/// Room kept for the `device` profile's binary (about 6 MB), the corpus copy and the cubins.
const ROOM_FOR_CARRIED: u64 = 24 << 20;

#[test]
fn the_tracked_tree_leaves_room_for_what_a_device_call_carries() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output();
    let Some(listed) = listed.ok().filter(|o| o.status.success()) else {
        common::not_checked("no git checkout here to list the tracked files of");
        return;
    };
    let total: u64 = listed
        .stdout
        .split(|b| *b == 0)
        .filter(|name| !name.is_empty())
        .filter_map(|name| {
            std::fs::metadata(root.join(String::from_utf8_lossy(name).as_ref())).ok()
        })
        .map(|meta| meta.len())
        .sum();
    assert!(
        total + ROOM_FOR_CARRIED <= CARRY_LIMIT,
        "the tracked tree is {} MiB: with {} MiB for the binary, corpus and cubins it passes \
         the {} MiB a device call carries (docs/gpu-runs.md)",
        total >> 20,
        ROOM_FOR_CARRIED >> 20,
        CARRY_LIMIT >> 20
    );
}

#[test]
fn a_campaign_that_finds_no_usable_gpu_says_why_under_out() {
    let dir = scratch("nogpu");
    let (out, results) = (dir.join("out"), dir.join("results"));
    let machine = campaign(&["machine", "--backend", "cuda"], &[]);
    if machine.status.success() {
        // A usable GPU: the path under test cannot be reached; check what replaces it.
        common::not_checked("a GPU is usable here, so the campaign would run its steps");
        assert!(limits::plain_name(text(&machine.stdout).trim()));
        return;
    }
    let why = text(&machine.stderr);
    let why = why.trim().trim_start_matches("ptx-litmus: error: ");
    let t0 = std::time::Instant::now();
    let o = campaign(
        &["run", "--backend", "cuda", "--budget", "540s"],
        &[("--out", &out), ("--results", &results)],
    );
    assert!(t0.elapsed().as_secs() < 20, "took {:?}", t0.elapsed());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    // The summary is all a device call brings back, so the reason must be in it.
    let files = limits::check(&out).expect("what is under --out comes back");
    assert_eq!(files.len(), 1, "{files:?}");
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(
        summary.starts_with("ptx-litmus campaign: nothing ran\n"),
        "{summary}"
    );
    assert!(
        summary.contains(&format!("no machine for the cuda backend: {why}")),
        "{summary}"
    );
    assert!(
        summary.contains("not run: preflight, litmus-basic"),
        "{summary}"
    );
    assert!(
        !summary.contains("ptx-litmus: error: --backend"),
        "{summary}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn steps_that_load_prebuilt_cubins_launch_the_grid_they_were_built_for() {
    use ptx_litmus::codegen::{build, Stress};
    use ptx_litmus::harness::cuda::occupancy::{fill_stress, full_grid, occupancy};
    use ptx_litmus::harness::cuda::{occupancy::KernelResources, DeviceLimits};
    // A grid sized to fill an H100 changes the kernel's PTX, and with it the hash its
    // prebuilt cubin is found by: a step compiled offline must keep the preset's grid.
    let stress = Stress::preset("stress").unwrap();
    let h100 = DeviceLimits::h100_sxm();
    let k = KernelResources {
        threads: stress.cta_size,
        registers: 32,
        shared_bytes: 0,
    };
    let occ = occupancy(&h100, &k).unwrap();
    let filled = fill_stress(&stress, &full_grid(&h100, &occ, 1, None));
    let test = common::load("litmus/mp/MP+rel.gpu+acq.gpu.litmus");
    assert_ne!(
        build(&test, &stress).unwrap().ptx,
        build(&test, &filled).unwrap().ptx
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("campaign/manifest.txt")).unwrap();
    let mut offline = 0;
    for line in manifest.lines().map(|l| l.split('#').next().unwrap_or("")) {
        if line.contains("--compiler ptxas:") {
            offline += 1;
            assert!(line.contains("-o grid=preset"), "{line}");
        }
    }
    assert!(
        offline >= 2,
        "no offline-compiler steps found in the manifest"
    );
}

/// Runs `bash campaign/SCRIPT` with `before` and the built binary as its first arguments,
/// then `after`, with `OUT=out` and `env`; its exit code and output.
fn script(
    name: &str,
    before: &[&str],
    after: &[&std::ffi::OsStr],
    out: &Path,
    env: (&str, &str),
) -> (Option<i32>, String) {
    let o = std::process::Command::new("bash")
        .arg(root().join("campaign").join(name))
        .args(before)
        .arg(env!("CARGO_BIN_EXE_ptx-litmus"))
        .args(after)
        .env("OUT", out)
        .env(env.0, env.1)
        .output()
        .unwrap();
    (o.status.code(), text(&o.stdout) + &text(&o.stderr))
}

/// Runs `campaign/smoke.sh` with the built binary and `OUT=out`; its exit code and output.
fn smoke(out: &Path, backend: &str) -> (Option<i32>, String) {
    script("smoke.sh", &[], &[], out, ("SMOKE_BACKEND", backend))
}

#[test]
fn the_smoke_script_brings_back_three_result_sets_in_two_plain_files() {
    let dir = scratch("smoke-cpu");
    let out = dir.join("out");
    let (code, said) = smoke(&out, "cpu");
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("== smoke: 3 of 3 presets ran"), "{said}");
    let files = limits::check(&out).expect("what is under OUT comes back");
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["smoke.tar.gz", "smoke.txt"]);
    // The log is what was printed; the archive unpacks into one result set per preset.
    let log = std::fs::read_to_string(out.join("smoke.txt")).unwrap();
    assert!(log.contains("packed: 3 result set(s)"), "{log}");
    let unpacked = dir.join("results");
    std::fs::create_dir_all(&unpacked).unwrap();
    let tar = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(out.join("smoke.tar.gz"))
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(tar.success());
    let machine = std::fs::read_dir(&unpacked)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    for preset in ["basic", "interleave", "stress"] {
        let set = machine.path().join(format!("smoke-{preset}"));
        let run = std::fs::read_to_string(set.join("run.json")).unwrap();
        assert!(run.contains(&format!("\"preset\": \"{preset}\"")), "{run}");
        assert!(
            set.join("tests/MP+rlx.gpu+rlx.gpu.json").is_file(),
            "{set:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_smoke_script_with_no_usable_gpu_ends_at_once_saying_why() {
    if bin()
        .args(["campaign", "machine", "--backend", "cuda"])
        .output()
        .unwrap()
        .status
        .success()
    {
        common::not_checked("a GPU is usable here, so the smoke runs would run");
        return;
    }
    let dir = scratch("smoke-cuda");
    let out = dir.join("out");
    let t0 = std::time::Instant::now();
    let (code, said) = smoke(&out, "cuda");
    assert!(t0.elapsed().as_secs() < 60, "took {:?}", t0.elapsed());
    assert_ne!(code, Some(0), "{said}");
    let log = std::fs::read_to_string(out.join("smoke.txt")).unwrap();
    assert!(
        log.contains("FAILED: the cuda backend cannot run here"),
        "{log}"
    );
    assert!(log.contains("== smoke: 0 of 3 presets ran"), "{log}");
    assert!(log.contains("packed: 0 result set(s)"), "{log}");
    assert_eq!(limits::check(&out).map(|f| f.len()), Ok(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_window_script_runs_the_smoke_then_the_campaign_within_eight_files() {
    let dir = scratch("window-cpu");
    let (out, results, manifest) = (dir.join("out"), dir.join("results"), dir.join("m.txt"));
    std::fs::create_dir_all(&results).unwrap();
    let steps: String = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|s| format!("{s} 5 run litmus/mp/MP+rlx.gpu+rlx.gpu.litmus --iterations 200\n"))
        .collect();
    std::fs::write(&manifest, steps).unwrap();
    let dirs = [
        "--manifest".as_ref(),
        manifest.as_os_str(),
        "--results".as_ref(),
        results.as_os_str(),
    ];
    let (code, said) = script(
        "window.sh",
        &["300"],
        &dirs,
        &out,
        ("WINDOW_BACKEND", "cpu"),
    );
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("== smoke: 3 of 3 presets ran"), "{said}");
    // The smoke's two files leave six: five archives and the summary.
    let files = limits::check(&out).expect("what is under OUT comes back");
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), limits::MAX_FILES, "{names:?}");
    assert!(names.contains(&"campaign/summary.txt"), "{names:?}");
    assert!(names.contains(&"campaign/e.tar.gz"), "{names:?}");
    assert!(
        said.contains("not run: f (5 archives and the summary are all that come back)"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_window_script_starts_no_campaign_after_a_failed_smoke_or_without_time() {
    let dir = scratch("window-fail");
    let window = |limit: &str, backend: &str, out: &Path| {
        script("window.sh", &[limit], &[], out, ("WINDOW_BACKEND", backend))
    };
    let (code, said) = window("100", "cpu", &dir.join("short"));
    assert_eq!(code, Some(3), "{said}");
    assert!(said.contains("under 120 s: not started"), "{said}");
    assert!(!dir.join("short/campaign").exists());
    let (code, said) = window("ten", "cpu", &dir.join("bad"));
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("LIMIT must be whole seconds"), "{said}");
    let (code, said) = window("600", "nothing", &dir.join("failed"));
    assert_ne!(code, Some(0), "{said}");
    assert!(said.contains("the smoke failed"), "{said}");
    assert!(!dir.join("failed/campaign").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// One window on the CPU backend: `campaign run` of the one-step `manifest` (step `s`) with
/// `budget` into `out`, its archive unpacked into `results`; what it printed.
fn window_of(manifest: &Path, results: &Path, out: &Path, budget: &str) -> String {
    let dirs = [
        ("--manifest", manifest),
        ("--results", results),
        ("--out", out),
    ];
    let said = text(&campaign(&["run", "--backend", "cpu", "--budget", budget], &dirs).stdout);
    unpack(results, &[out.join("s.tar.gz")]);
    said
}

/// The tests of the result set in `dir`, by path, with their instance counts.
fn counts(dir: &Path) -> std::collections::BTreeMap<String, u64> {
    let set = ptx_litmus::results::read_result_set(dir).unwrap();
    set.tests
        .iter()
        .map(|t| (t.path.clone(), t.verdict.instances))
        .collect()
}

#[test]
fn a_step_cut_by_the_budget_resumes_with_only_the_tests_it_left() {
    let dir = scratch("resume");
    let manifest = dir.join("m.txt");
    // The 1 s step gets 5 s of an 20 s budget (15 s are kept for packing): a few of its seven
    // one-second tests, then it is stopped.
    std::fs::write(&manifest, "s 1 run litmus/s --time 1\n").unwrap();
    let results = dir.join("results");
    let said = window_of(&manifest, &results, &dir.join("out1"), "20s");
    assert!(said.contains("s: INCOMPLETE"), "{said}");
    let first = step_dir(&results, "s");
    let before = counts(&first);
    assert!(
        !before.is_empty() && before.len() < 7,
        "{} tests recorded before the cut",
        before.len()
    );
    let dirs = [("--manifest", manifest.as_path()), ("--results", &results)];
    let status = text(&campaign(&["status", "--backend", "cpu"], &dirs).stdout);
    let recorded = format!("; {} of 7 tests recorded, ~", before.len());
    assert!(status.contains(&recorded), "{status}");

    let said = window_of(&manifest, &results, &dir.join("out2"), "60s");
    assert!(said.contains("s: complete"), "{said}");
    let left = 7 - before.len();
    assert!(
        said.contains(&format!("tests were recorded there, {left} left")),
        "{said}"
    );
    let status = text(&campaign(&["status", "--backend", "cpu"], &dirs).stdout);
    assert!(status.contains("  done  s "), "{status}");
    let done = status
        .split("  done  s  ")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    let after = counts(Path::new(done.trim()));
    assert_eq!(after.len(), 7);
    // The tests of the first try are merged in as they were counted, not run again.
    for (path, n) in &before {
        assert_eq!(after[path], *n, "{path}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_step_that_does_not_fit_leaves_the_budget_to_shorter_ones_after_it() {
    let dir = scratch("fill");
    let manifest = dir.join("m.txt");
    std::fs::write(
        &manifest,
        "a 5 run litmus/corw --iterations 1000\n\
         long 900 run litmus/mp --time 1\n\
         b 5 run litmus/coww --iterations 1000\n\
         script 900 script campaign/bench.sh\n",
    )
    .unwrap();
    let results = dir.join("results");
    let go = |out: &Path, budget: &str| {
        let dirs = [
            ("--manifest", manifest.as_path()),
            ("--results", &results),
            ("--out", out),
        ];
        let o = campaign(&["run", "--backend", "cpu", "--budget", budget], &dirs);
        let names: Vec<String> = limits::check(out)
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        (o.status.code(), text(&o.stdout), names)
    };
    let (code, said, names) = go(&dir.join("out1"), "60s");
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("not run: long (long needs ~900 s"), "{said}");
    assert!(
        said.contains("a: complete") && said.contains("b: complete"),
        "{said}"
    );
    assert!(
        said.contains("not run: script (script needs ~900 s"),
        "{said}"
    );
    assert_eq!(names, ["a.tar.gz", "b.tar.gz", "summary.txt"]);
    let archives: Vec<PathBuf> = names[..2]
        .iter()
        .map(|n| dir.join("out1").join(n))
        .collect();
    unpack(&results, &archives);
    // A run step longer than any window starts in one of its own, to be cut and resumed; a
    // script step that long never starts (it would start again from nothing each time).
    let (_, said, names) = go(&dir.join("out2"), "20s");
    assert!(said.contains("long: INCOMPLETE"), "{said}");
    assert!(said.contains("not run: script"), "{said}");
    assert_eq!(names, ["long.tar.gz", "summary.txt"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_try_whose_tests_changed_since_is_not_merged_and_the_step_runs_whole() {
    let dir = scratch("changed");
    let tests = dir.join("s");
    std::fs::create_dir_all(&tests).unwrap();
    for e in std::fs::read_dir(common::root().join("litmus/s")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, tests.join(p.file_name().unwrap())).unwrap();
    }
    let manifest = dir.join("m.txt");
    std::fs::write(&manifest, format!("s 1 run {} --time 1\n", tests.display())).unwrap();
    let results = dir.join("results");
    let said = window_of(&manifest, &results, &dir.join("out1"), "20s");
    assert!(said.contains("s: INCOMPLETE"), "{said}");
    let before = counts(&step_dir(&results, "s"));
    let (edited, _) = before
        .iter()
        .next()
        .expect("a test recorded before the cut");
    // What the test means changes (y starts at 3), so its hash does.
    let src = std::fs::read_to_string(edited).unwrap();
    assert!(src.contains("y=0;"), "{src}");
    std::fs::write(edited, src.replace("y=0;", "y=3;")).unwrap();
    let dirs = [("--manifest", manifest.as_path()), ("--results", &results)];
    let status = text(&campaign(&["status", "--backend", "cpu"], &dirs).stdout);
    assert!(
        status.contains(&format!("not resumable: {edited} has changed since")),
        "{status}"
    );
    let said = window_of(&manifest, &results, &dir.join("out2"), "60s");
    assert!(said.contains("s: complete"), "{said}");
    assert!(said.contains("not resumed: "), "{said}");
    assert!(said.contains("every test ran again"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_step_says_why_in_the_summary_and_takes_no_file_that_comes_back() {
    let dir = scratch("failed");
    let manifest = dir.join("m.txt");
    // More failing steps than files come back, then one that works: a failure writes no
    // archive, so it must not use up the files the good step's archive needs.
    let mut m: String = (1..=limits::MAX_FILES)
        .map(|k| format!("bad{k} 1 run litmus/corw --no-such-flag\n"))
        .collect();
    m.push_str("good 5 run litmus/corw --iterations 1000\n");
    std::fs::write(&manifest, m).unwrap();
    let out = dir.join("out");
    let dirs = [
        ("--manifest", manifest.as_path()),
        ("--results", &dir.join("results")),
        ("--out", &out),
    ];
    let o = campaign(&["run", "--backend", "cpu", "--budget", "60s"], &dirs);
    assert_eq!(o.status.code(), Some(2));
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(summary.contains("good: complete"), "{summary}");
    assert!(
        summary.contains("bad1: failed: ptx-litmus run wrote no result set"),
        "{summary}"
    );
    // The log does not come back, so its end is in the summary.
    let tail = summary
        .lines()
        .find(|l| l.starts_with("  | ") && l.contains("--no-such-flag"));
    assert!(tail.is_some(), "{summary}");
    assert!(
        text(&o.stdout).contains("bad1: failed"),
        "{}",
        text(&o.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The preflight on the cuda backend, with a `compute-sanitizer` that prints `says` and exits
/// `code` (no GPU here: the MP runs fail; only the memcheck lines are read).
fn preflight_with_sanitizer(name: &str, says: &str, code: i32) -> String {
    let dir = scratch(name);
    let tools = dir.join("bin");
    std::fs::create_dir_all(&tools).unwrap();
    let fake = tools.join("compute-sanitizer");
    std::fs::write(&fake, format!("#!/bin/sh\necho '{says}'\nexit {code}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = std::process::Command::new("bash")
        .arg("campaign/preflight.sh")
        .current_dir(root())
        .env("STEP_DIR", &dir)
        .env("PTX_LITMUS", env!("CARGO_BIN_EXE_ptx-litmus"))
        .env("CAMPAIGN_BACKEND", "cuda")
        .env("PATH", format!("{}:/usr/bin:/bin", tools.display()))
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0), "no GPU: the MP runs fail");
    std::fs::read_to_string(dir.join("preflight.txt")).unwrap()
}

#[test]
fn a_device_the_sanitizer_refuses_skips_memcheck_and_an_error_it_finds_fails_it() {
    let refused = preflight_with_sanitizer(
        "sanitizer-refuses",
        "========= Error: Device not supported",
        255,
    );
    let line = "skipped memcheck-MP-rel.gpu-acq.gpu: compute-sanitizer refused the device: \
                ========= Error: Device not supported";
    assert!(refused.contains(line), "{refused}");
    assert!(!refused.contains("FAILED  memcheck"), "{refused}");
    let found = preflight_with_sanitizer("sanitizer-finds", "Invalid __global__ write", 9);
    assert!(
        found.contains("FAILED  memcheck-MP-rel.gpu-acq.gpu (exit 9)"),
        "{found}"
    );
}
