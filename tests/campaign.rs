//! `campaign run`, `unpack` and `status` end to end on the CPU backend: steps run within the
//! budget in processes of their own, a step whose device is lost goes on in a fresh process,
//! a step past the budget is stopped and marked incomplete, every archive comes back within
//! the device's limits, and unpacking them makes `status` say what is done.

mod common;

use common::{bin, scratch, text};
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
    // Everything under --out comes back: three archives and the summary.
    let files = limits::check(&out).unwrap();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["bench.tar.gz", "mp.tar.gz", "sb.tar.gz", "summary.txt"]
    );

    let archives: Vec<PathBuf> = files[..3].iter().map(|(n, _)| out.join(n)).collect();
    let mut u = bin();
    u.args(["campaign", "unpack", "--results"])
        .arg(&results)
        .args(&archives);
    let o = u.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
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
    for step in ["bench", "sb", "mp"] {
        assert!(said.contains(&format!("  done  {step}")), "{said}");
    }
    assert!(said.contains("  todo  later"), "{said}");
    assert!(said.contains("next: later"), "{said}");
    // On the GPU backend nothing of this counts as done.
    let said = text(&campaign(&["status"], &common).stdout);
    assert!(said.contains("next: bench (4 step(s) left"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

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
    let o = campaign(&["run", "--backend", "cpu", "--budget", "18s"], &dirs);
    let took = t0.elapsed().as_secs_f64();
    // 18 s less the 15 s kept for packing: stopped after about 3 s, not 60.
    assert!(took < 30.0, "{took}");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains("slow: INCOMPLETE"),
        "{}",
        text(&o.stdout)
    );
    let o = bin()
        .args(["campaign", "unpack", "--results"])
        .arg(&results)
        .arg(out.join("slow.tar.gz"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
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

#[test]
fn the_checked_in_manifest_reads_and_says_what_comes_first() {
    let empty = scratch("fresh");
    let o = campaign(&["status"], &[("--results", &empty)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let said = text(&o.stdout);
    assert!(said.contains("  todo  preflight"), "{said}");
    assert!(said.contains("next: preflight"), "{said}");
    for preset in ["basic", "interleave", "stress"] {
        assert!(said.contains(&format!("todo  litmus-{preset}")), "{said}");
        assert!(said.contains(&format!("todo  dat3m-{preset}")), "{said}");
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
        "preflight",
    ];
    // Without NVIDIA tools on PATH the preflight skips memcheck and the SASS check, saying so.
    let o = bin()
        .arg("campaign")
        .args(args)
        .args(["--only", "bench", "--results"])
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
    let o = bin()
        .args(["campaign", "unpack", "--results"])
        .arg(&results)
        .args(&archives)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
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
    let o = bin()
        .args(["campaign", "unpack", "--results"])
        .arg(&results)
        .args(&archives)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let tuned = step_dir(&results, "tune").join("tuned");
    for family in ["SB", "MP", "LB", "2+2W", "WRC", "IRIW"] {
        let file = std::fs::read_to_string(tuned.join(format!("{family}.stress"))).unwrap();
        assert!(file.contains("# seed: 1"), "{file}");
        assert!(tuned.join(format!("{family}.search.json")).is_file());
        assert!(tuned.join(format!("plots/tune-{family}.png")).is_file());
    }
    let page = std::fs::read_to_string(tuned.join("tune.html")).unwrap();
    assert_eq!(page.matches("<svg").count(), 6, "one plot per family");
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
        println!("not checked: no git checkout here to list the tracked files of");
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
