//! The CUDA backend end to end against a simulated driver (`tests/sim/cuda_driver.c`, built
//! here with `cc` and found through `LD_LIBRARY_PATH`): every driver call of a run, from
//! `cuInit` through the JIT, the buffers, aliased views, texture and surface objects, direct
//! launches, graph capture and replay, the bounded waits and the histogram reads, on a
//! simulated H100 that checks the driver's contract and logs each breach. Its kernels run no
//! code but count as the kernel's launch ABI says a GPU would, every outcome equally often, so
//! a run passes its checksum and stress self-test and writes records from CUDA counts. What is
//! asserted is that runs get there with no breach, that those counts and records are the ones
//! the simulation made, the launch shapes the device's occupancy gives, and the timeout and
//! fault paths of the real driver layer.

mod common;

use common::{bin, fresh, root, scratch, text};
use ptx_litmus::toolchain::store;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The folder holding the simulated `libcuda.so` (and `.so.1`), built once per test binary;
/// `None` without a C compiler.
fn driver() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = scratch("driver");
            let lib = dir.join("libcuda.so");
            let ok = std::process::Command::new("cc")
                .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o"])
                .arg(&lib)
                .arg(root().join("tests/sim/cuda_driver.c"))
                .arg("-lm")
                .status()
                .is_ok_and(|s| s.success());
            ok.then(|| {
                std::fs::copy(&lib, dir.join("libcuda.so.1")).unwrap();
                dir
            })
        })
        .as_deref()
}

/// What a command did on the simulated GPU.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// The simulation's log: `violation:`, `launch:` and `stats:` lines.
    log: String,
    /// The result set written, if any.
    set: Option<serde_json::Value>,
    /// Its test records.
    records: Vec<serde_json::Value>,
    took: Duration,
}

impl Ran {
    /// The simulation's counter `key` from its `stats:` line.
    fn stat(&self, key: &str) -> u64 {
        let line = self.log.lines().find(|l| l.starts_with("stats:"));
        let line = line.unwrap_or_else(|| panic!("no stats line in\n{}", self.log));
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in {line}"))
            .parse()
            .unwrap()
    }

    /// The `launch:` line of `entry`'s first launch.
    fn launch(&self, entry: &str) -> &str {
        let prefix = format!("launch: {entry} ");
        self.log
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("{entry} never launched:\n{}", self.log))
    }

    /// Fails the test on any breach of the driver's contract the simulation logged.
    fn no_violation(&self) {
        let v: Vec<&str> = self
            .log
            .lines()
            .filter(|l| l.starts_with("violation"))
            .collect();
        assert!(v.is_empty(), "{}\nstderr:\n{}", v.join("\n"), self.stderr);
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
    }

    /// The reasons the run gives for the tests it could not complete.
    fn reasons(&self) -> Vec<String> {
        let set = self.set.as_ref().expect("a result set");
        set["skipped_tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["reason"].as_str().unwrap().to_string())
            .collect()
    }
}

/// Runs the binary with `args` on the simulated GPU, with `env` for the simulation; `None`
/// (said in the output) without a C compiler.
fn on_sim(name: &str, args: &[&str], env: &[(&str, &str)]) -> Option<Ran> {
    let Some(lib) = driver() else {
        common::not_checked("no C compiler (`cc`) here to build the simulated driver");
        return None;
    };
    let dir = scratch(name);
    let log = dir.join("sim.log");
    let out = fresh(&format!("{name}-results"));
    let t0 = Instant::now();
    let mut cmd = bin();
    cmd.current_dir(root())
        .args(args)
        .env("LD_LIBRARY_PATH", lib)
        .env("PTXL_SIM_LOG", &log);
    if args[0] == "run" {
        cmd.args([
            "--backend",
            "cuda",
            "--quiet",
            "--seed",
            "1",
            "--run-id",
            "r",
            "--out",
        ])
        .arg(&out);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let took = t0.elapsed();
    // `--out` holds one folder per machine, holding the set named by the run id.
    let set_dir = out.join("simulated-h100-80gb-hbm3-cuda-13.0/r");
    let set = std::fs::read_to_string(set_dir.join("run.json"))
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    let records = std::fs::read_dir(set_dir.join("tests"))
        .into_iter()
        .flatten()
        .map(|e| serde_json::from_str(&std::fs::read_to_string(e.unwrap().path()).unwrap()))
        .collect::<Result<_, _>>()
        .unwrap();
    let ran = Ran {
        code: o.status.code(),
        stdout: text(&o.stdout),
        stderr: text(&o.stderr),
        log: std::fs::read_to_string(&log).unwrap_or_default(),
        set,
        records,
        took,
    };
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&out);
    Some(ran)
}

/// A kernel fact of a test record, as a number.
fn fact(record: &serde_json::Value, key: &str) -> u64 {
    let v = record["notes"][key].as_str();
    let v = v.unwrap_or_else(|| panic!("no {key} in {}", record["notes"]));
    v.parse().unwrap_or_else(|_| panic!("{key} = {v}"))
}

/// Every one of the `tests` completed, with the counts the simulation made: the instances of
/// every launch (each launch's, as its kernel facts say), all the simulation counted, every
/// outcome of the test's space equally often; the exit code says whether one was forbidden.
fn counted_as_simulated(ran: &Ran, tests: usize) {
    assert_eq!(ran.reasons(), Vec::<String>::new());
    assert_eq!(ran.records.len(), tests, "{}", ran.stderr);
    let mut total = 0;
    for r in &ran.records {
        let instances = r["verdict"]["instances"].as_u64().unwrap();
        let launches = fact(r, "kernel.launches");
        assert_eq!(instances, launches * fact(r, "kernel.instances_per_launch"));
        assert!(fact(r, "kernel.stress_ops") >= fact(r, "kernel.stress_ops_min"));
        let counts: Vec<u64> = r["verdict"]["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["count"].as_u64().unwrap())
            .collect();
        assert!(counts.len() > 1, "{}", r["verdict"]);
        // Spread evenly over the outcome words, launch by launch.
        let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(hi - lo <= launches, "{counts:?}");
        total += instances;
    }
    assert_eq!(total, ran.stat("counted"));
    let violation = ran
        .records
        .iter()
        .any(|r| r["verdict"]["status"] == "violation");
    assert_eq!(ran.code, Some(i32::from(violation)), "{}", ran.stderr);
}

const MP: &str = "litmus/mp/MP+rlx.gpu+rlx.gpu.litmus";

#[test]
fn a_run_under_each_preset_makes_every_driver_call_of_the_launch_path_within_the_contract() {
    for preset in ["basic", "interleave", "stress"] {
        let args = ["run", MP, "--stress", preset, "--time", "0.3"];
        let Some(ran) = on_sim(&format!("mp-{preset}"), &args, &[]) else {
            return;
        };
        ran.no_violation();
        counted_as_simulated(&ran, 1);
        // The first collect launch and the first pair go directly; the rest in graph
        // replays of captured pairs.
        assert!(ran.stat("direct") >= 3, "{}", ran.log);
        assert!(ran.stat("captured") > 0, "{}", ran.log);
        assert!(ran.stat("graph_launches") > 0, "{}", ran.log);
        // A preset sized to fill the device loads its kernel once more first, to read its
        // registers and shared memory.
        assert!((1..=2).contains(&ran.stat("modules")), "{}", ran.log);
        // Every buffer argument of both kernels points into device memory.
        for entry in ["litmus_test", "litmus_collect"] {
            assert!(ran.launch(entry).contains("pointers=5"), "{}", ran.log);
        }
        // The simulated JIT's "cubin" is no ELF image: the record says the code went
        // unchecked, and why, rather than nothing.
        let check = &ran.records[0]["notes"]["kernel.sass_check"];
        assert!(
            check
                .as_str()
                .unwrap()
                .starts_with("not checked: not a readable ELF64"),
            "{check}"
        );
    }
}

#[test]
fn the_test_grid_fills_the_simulated_h100_as_its_occupancy_allows() {
    // 256-thread CTAs of 32 registers a thread: 8 per SM (2,048 threads), 1,056 on 132 SMs;
    // of 128 registers: 2 per SM (64 K registers), 264.
    for (regs, grid) in [("32", 1056), ("128", 264)] {
        let args = ["run", MP, "--time", "0.2"];
        let Some(ran) = on_sim(&format!("grid-{regs}"), &args, &[("PTXL_SIM_REGS", regs)]) else {
            return;
        };
        ran.no_violation();
        let line = ran.launch("litmus_test");
        assert!(line.contains(&format!(" grid={grid} block=256 ")), "{line}");
    }
}

#[test]
fn a_kernel_is_compiled_once_when_its_kind_already_showed_its_grid() {
    let tests = [
        "litmus/mp/MP+rlx.gpu+rlx.gpu.litmus",
        "litmus/mp/MP+rel.gpu+acq.gpu.litmus",
        "litmus/mp/MP+fence.sc.gpu+fence.sc.gpu.litmus",
    ];
    let grids = |ran: &Ran| -> Vec<String> {
        let test_lines = ran
            .log
            .lines()
            .filter(|l| l.starts_with("launch: litmus_test "));
        test_lines
            .map(|l| l.split_whitespace().nth(2).unwrap().to_string())
            .collect()
    };
    let mut args = vec!["run"];
    args.extend(tests);
    args.extend(["--time", "0.1"]);
    // The first test's preset kernel is loaded to size the grid, then the full-grid kernel:
    // two compiles; the next two are generated for that grid and compiled once.
    let Some(ran) = on_sim("once", &args, &[]) else {
        return;
    };
    ran.no_violation();
    counted_as_simulated(&ran, 3);
    assert_eq!(ran.stat("modules"), 4, "{}", ran.log);
    assert_eq!(grids(&ran), ["grid=1056"; 3]);
    // From the third module on, kernels take 128 registers: the second test's kernel, made
    // for 1,056 CTAs, fits only 264 and is made again; the third is made for 264 at once.
    let env = [("PTXL_SIM_REGS", "32,32,128")];
    let Some(ran) = on_sim("regrid", &args, &env) else {
        return;
    };
    ran.no_violation();
    assert_eq!(ran.stat("modules"), 5, "{}", ran.log);
    assert_eq!(grids(&ran), ["grid=1056", "grid=264", "grid=264"]);
}

/// A toolchain store as it travels to a GPU machine: `version`'s cubins of `test`, made by
/// `toolchains prebuild` with the real store's ptxas, and no ptxas.
fn carried_store(name: &str, version: &str, test: &str) -> PathBuf {
    let real = store::resolve(&store::root(), &[version.parse().unwrap()]).unwrap();
    let carried = fresh(name);
    let bin_dir = carried.join(format!("cuda-{version}/bin"));
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::os::unix::fs::symlink(real[0].ptxas(), bin_dir.join("ptxas")).unwrap();
    let o = bin()
        .args(["toolchains", "prebuild", version, test, "--stress", "basic"])
        .env(store::ENV, &carried)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    std::fs::remove_dir_all(&bin_dir).unwrap();
    carried
}

#[test]
fn an_offline_cubin_is_loaded_as_prebuilt_and_counts_as_the_ptx_it_was_made_of() {
    let name = "an_offline_cubin_is_loaded_as_prebuilt_and_counts_as_the_ptx_it_was_made_of";
    let Some(versions) = common::sass::pinned_present(name) else {
        return;
    };
    let v = &versions[0];
    let carried = carried_store("offline_store", v, MP);
    let compiler = format!("ptxas:{v}");
    let args = [
        "run",
        MP,
        "--stress",
        "basic",
        "--time",
        "0.2",
        "--compiler",
        &compiler,
    ];
    let args = [&args[..], &["-o", "grid=preset"]].concat();
    let env = [(store::ENV, carried.to_str().unwrap())];
    let Some(ran) = on_sim("offline", &args, &env) else {
        return;
    };
    ran.no_violation();
    counted_as_simulated(&ran, 1);
    assert!(ran.log.contains("module: offline cubin of "), "{}", ran.log);
    assert!(!ran.log.contains("counts nothing"), "{}", ran.log);
    // The cubin that ran is the prebuilt file, byte for byte.
    let notes = &ran.records[0]["notes"];
    assert_eq!(notes["kernel.compiler"], format!("ptxas {v} (prebuilt)"));
    let cubins = std::fs::read_dir(carried.join(format!("cuda-{v}/cubins"))).unwrap();
    let cubin = std::fs::read(cubins.flatten().next().unwrap().path()).unwrap();
    let hash = format!("{:016x}", ptx_litmus::litmus::fnv1a64(&cubin));
    assert_eq!(notes["kernel.sass_hash"], hash.as_str());
    let code = ptx_litmus::sass::cubin::code_hash(&cubin).unwrap();
    assert_eq!(notes["kernel.code_hash"], code.as_str());
    // The optcheck of the code that ran, made beside the launches.
    assert_eq!(notes["kernel.sass_check"], "pass");
    assert_eq!(
        notes["kernel.cubin_bytes"],
        cubin.len().to_string().as_str()
    );
    // Without its PTX beside it the simulation counts nothing, and the checksum says so.
    std::fs::remove_dir_all(carried.join(format!("cuda-{v}/ptx"))).unwrap();
    let Some(ran) = on_sim("offline-uncounted", &args, &env) else {
        return;
    };
    ran.no_violation();
    assert!(ran.log.contains("counts nothing"), "{}", ran.log);
    let reasons = ran.reasons();
    assert!(
        reasons[0].contains("device counts do not add up"),
        "{reasons:?}"
    );
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
}

#[test]
fn cluster_and_shared_memory_tests_launch_within_the_device_limits() {
    let args = [
        "run",
        "litmus/cluster/MP+rel.cluster+acq.cluster-samecluster.litmus",
        "litmus/shared/SB+wk+wk-shared.litmus",
        "--time",
        "0.2",
    ];
    let Some(ran) = on_sim("cluster", &args, &[]) else {
        return;
    };
    ran.no_violation();
    counted_as_simulated(&ran, 2);
    let clustered = ran
        .log
        .lines()
        .filter(|l| l.contains(" cluster=2 "))
        .count();
    assert_eq!(clustered, 1, "{}", ran.log);
}

#[test]
fn the_code_generator_s_notes_of_a_kernel_reach_its_record() {
    let two_gpus = "litmus/mp/MP+rel.gpu+acq.gpu-diffgpu.litmus";
    let Some(ran) = on_sim(
        "kernel-notes",
        &["run", two_gpus, MP, "--time", "0.05"],
        &[],
    ) else {
        return;
    };
    ran.no_violation();
    counted_as_simulated(&ran, 2);
    let said = |name: &str| {
        let r = ran.records.iter().find(|r| r["name"] == name).unwrap();
        r["notes"]["kernel.notes"].as_str().map(str::to_string)
    };
    let noted = said("MP+rel.gpu+acq.gpu-diffgpu").expect("the placement noted");
    assert!(noted.contains("runs on the same GPU as P0"), "{noted}");
    assert_eq!(said("MP+rlx.gpu+rlx.gpu"), None);
}

#[test]
fn aliased_views_textures_and_surfaces_are_made_as_the_driver_allows() {
    let args = [
        "run",
        "campaign/proxy-check",
        "litmus/generated/proxy/CoRR+rlx.cta+rlx.cta_ali-diffcta.litmus",
        "--time",
        "0.2",
    ];
    let Some(ran) = on_sim("objects", &args, &[]) else {
        return;
    };
    ran.no_violation();
    // The texture and surface checks, and one test through two generic views of one memory.
    counted_as_simulated(&ran, 3);
    assert!(ran.stat("views") >= 2, "{}", ran.log);
    assert!(ran.stat("textures") >= 1, "{}", ran.log);
    assert!(ran.stat("surfaces") >= 1, "{}", ran.log);
}

/// Checks a run of `litmus/sb` that lost its device in its first test with `prefix`.
fn lost_in_the_first_test(ran: &Ran, prefix: &str) {
    ran.no_violation();
    assert_eq!(ran.code, Some(4), "{}", ran.stderr);
    assert!(ran.stderr.contains("fresh process"), "{}", ran.stderr);
    let set = ran.set.as_ref().unwrap();
    assert_eq!(set["partial"], true);
    let reasons = ran.reasons();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].starts_with(prefix), "{}", reasons[0]);
}

#[test]
fn kernels_that_never_finish_end_the_test_as_timed_out_by_its_deadline() {
    let args = ["run", "litmus/sb", "--time", "0.2", "-o", "wait_s=1"];
    let Some(ran) = on_sim("hang", &args, &[("PTXL_SIM_HANG_AFTER", "300")]) else {
        return;
    };
    lost_in_the_first_test(&ran, "timed out: ");
    // The deadline is twice the budget plus 5 s; nothing waited on the hung kernels beyond it
    // (no copy was queued behind them: that would be a violation above).
    assert!(ran.took < Duration::from_secs(30), "{:?}", ran.took);
}

#[test]
fn a_sticky_device_fault_ends_the_test_as_a_device_error() {
    let args = ["run", "litmus/sb", "--time", "0.2"];
    let Some(ran) = on_sim("fault", &args, &[("PTXL_SIM_FAULT_AFTER", "300")]) else {
        return;
    };
    lost_in_the_first_test(&ran, "device error: ");
    assert!(ran.reasons()[0].contains("CUDA_ERROR_ILLEGAL_ADDRESS"));
}

#[test]
fn a_step_whose_processes_keep_losing_the_device_stops_after_sixteen_and_says_what_is_left() {
    // Every process faults at its first launch: its first test ends as a device error, and
    // each fresh process takes one more test, until the sixteenth.
    let dir = scratch("lost-often-step");
    let manifest = dir.join("m.txt");
    std::fs::write(&manifest, "sb 60 run litmus/sb --time 0.05\n").unwrap();
    let (out, results) = (dir.join("out"), dir.join("results"));
    let args = [
        "campaign",
        "run",
        "--backend",
        "cuda",
        "--budget",
        "90s",
        "--manifest",
        manifest.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ];
    let Some(ran) = on_sim("lost-often", &args, &[("PTXL_SIM_FAULT_AFTER", "0")]) else {
        return;
    };
    ran.no_violation();
    let said = &ran.stdout;
    assert!(said.contains("sb: INCOMPLETE"), "{said}");
    assert!(
        said.contains("process 15 lost the device; 5 test(s) went on in process 16"),
        "{said}"
    );
    assert!(
        said.contains(
            "process 16 lost the device; 4 test(s) left for the step's next try (at most 16 \
             processes a try)"
        ),
        "{said}"
    );
    assert!(!said.contains("process 17"), "{said}");
    assert_eq!(ran.stat("modules"), 0, "{}", ran.log);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The rows of `preset`'s table in a `bench gpu` output: the shape and the rest of its row.
fn bench_rows(out: &str, preset: &str) -> Vec<(String, String)> {
    let table = out
        .split(&format!("stress preset {preset}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("no {preset} table in\n{out}"));
    let rows = table.lines().skip(1).take_while(|l| !l.trim().is_empty());
    rows.map(|l| {
        let (shape, rest) = l.split_once(' ').unwrap();
        (shape.to_string(), rest.trim().to_string())
    })
    .collect()
}

#[test]
fn bench_gpu_launches_every_row_of_its_dry_run_plan() {
    let Some(ran) = on_sim("bench", &["bench", "gpu", "--time", "0.05"], &[]) else {
        return;
    };
    ran.no_violation();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(
        ran.stdout.starts_with("GPU 0: Simulated H100"),
        "{}",
        ran.stdout
    );
    // The dry run with the 32 registers the simulated kernels report too.
    let plan = bin()
        .current_dir(root())
        .args(["bench", "gpu", "--dry-run"])
        .env("PTX_LITMUS_PTXAS", "/nonexistent/ptxas")
        .output()
        .unwrap();
    let plan = text(&plan.stdout);
    for preset in ["basic", "interleave", "stress"] {
        let planned = bench_rows(&plan, preset);
        let measured = bench_rows(&ran.stdout, preset);
        let shapes = |rows: &[(String, String)]| -> Vec<String> {
            rows.iter().map(|(s, _)| s.clone()).collect()
        };
        assert_eq!(shapes(&planned), shapes(&measured), "{preset}");
        for ((shape, p), (_, m)) in planned.iter().zip(&measured) {
            // The instances per launch the plan gives are those the launch path sized.
            // Columns: ..., the grid (`1056/1056`), CTA threads, cluster, instances per launch.
            let cols: Vec<&str> = p.split_whitespace().collect();
            let grid = cols.iter().position(|c| c.contains('/')).unwrap();
            let per_launch = cols[grid + 3];
            // Measured: threads, instances per launch, launches, instances/s, weak/s, ...
            let m: Vec<&str> = m.split_whitespace().collect();
            assert_eq!(m[1], per_launch, "{preset} {shape}: {m:?}\nplan: {p}");
            let rate = |i: usize| m[i].parse::<f64>().unwrap();
            // Every outcome is counted equally often, so each shape's weak ones show.
            assert!(rate(3) > 0.0 && rate(4) > 0.0, "{preset} {shape}: {m:?}");
            assert!(rate(4) < rate(3), "{preset} {shape}: {m:?}");
        }
    }
}

/// `tune` on the simulated GPU for `budget` seconds into a fresh folder, with `env`.
fn tune(name: &str, budget: &str, env: &[(&str, &str)]) -> Option<(Ran, PathBuf)> {
    let out = fresh(&format!("{name}-out"));
    let args = [
        "tune",
        "--backend",
        "cuda",
        "--seed",
        "1",
        "--budget",
        budget,
        "--out",
    ];
    let mut args: Vec<&str> = args.to_vec();
    args.push(out.to_str().unwrap());
    Some((on_sim(name, &args, env)?, out))
}

const FAMILIES: [&str; 6] = ["SB", "MP", "LB", "2+2W", "WRC", "IRIW"];

#[test]
fn tune_measures_every_family_and_writes_a_tuned_file_that_run_takes() {
    let Some((ran, out)) = tune("tuned", "6", &[]) else {
        return;
    };
    ran.no_violation();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    for f in FAMILIES {
        let search = std::fs::read_to_string(out.join(format!("{f}.search.json"))).unwrap();
        let search: serde_json::Value = serde_json::from_str(&search).unwrap();
        let trials = search["search"]["trials"].as_array().unwrap();
        assert!(trials.iter().all(|t| t.get("failed").is_none()), "{f}");
        // Those the budget reached.
        let measured = trials
            .iter()
            .filter(|t| t["samples"] != serde_json::json!([]));
        let measured: Vec<_> = measured.collect();
        assert!(measured.len() > 1, "{f}: {trials:?}");
        for t in measured {
            // Measured from the device's counts: every outcome as often, weak ones included.
            let (weak, all) = (&t["estimate"]["weak"], &t["estimate"]["instances"]);
            assert!(
                weak.as_u64() > Some(0) && weak.as_u64() < all.as_u64(),
                "{f}: {t}"
            );
        }
        let file = out.join(format!("{f}.stress"));
        let tuned = std::fs::read_to_string(&file).unwrap();
        assert!(tuned.contains("# gpu: Simulated H100 80GB HBM3"), "{tuned}");
    }
    // The tuned file is a preset `run` takes, and the run launches with its settings.
    let preset = format!("tuned:{}", out.join("MP.stress").display());
    let args = ["run", MP, "--stress", &preset, "--time", "0.1"];
    let Some(ran) = on_sim("tuned-run", &args, &[]) else {
        return;
    };
    ran.no_violation();
    counted_as_simulated(&ran, 1);
}

#[test]
fn tune_reports_each_family_it_cannot_measure_and_goes_on_with_the_next() {
    let env = [("PTXL_SIM_FAULT_AFTER", "0")];
    let Some((ran, _)) = tune("tune-fault", "20", &env) else {
        return;
    };
    ran.no_violation();
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    for f in FAMILIES {
        let row = format!("{f:<8} failed: {f}: device");
        assert!(ran.stdout.contains(&row), "{row}\n{}", ran.stdout);
    }
    let all = FAMILIES.join(", ");
    assert!(ran
        .stderr
        .contains(&format!("no family could be tuned ({all})")));
}

#[test]
fn the_machine_is_named_from_what_the_driver_reports_and_never_as_real_hardware() {
    for (gpu, machine) in [
        ("h100", "simulated-h100-80gb-hbm3-cuda-13.0"),
        ("h200", "simulated-h200-cuda-13.0"),
    ] {
        let args = ["campaign", "machine", "--backend", "cuda"];
        let Some(ran) = on_sim(&format!("machine-{gpu}"), &args, &[("PTXL_SIM_GPU", gpu)]) else {
            return;
        };
        ran.no_violation();
        assert_eq!(ran.code, Some(0), "{}", ran.stderr);
        assert_eq!(ran.stdout.trim(), machine);
    }
}

/// Runs MP (`basic`, the preset's grid) on the simulated GPU into `out`, run id `id`, with
/// `extra` arguments and `env`; the result set's folder.
fn mp_set(lib: &Path, out: &Path, id: &str, extra: &[&str], env: &[(&str, &str)]) -> PathBuf {
    let args = format!(
        "run {MP} --backend cuda --stress basic --time 0.2 -o grid=preset --quiet --seed 1 \
         --run-id {id} --out"
    );
    let mut cmd = bin();
    cmd.current_dir(root())
        .args(args.split_whitespace())
        .arg(out)
        .args(extra)
        .env("LD_LIBRARY_PATH", lib);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        text(&o.stderr)
    );
    out.join("simulated-h100-80gb-hbm3-cuda-13.0").join(id)
}

#[test]
fn the_jit_s_cubin_and_ptxas_s_run_the_same_code_in_other_files_and_diff_says_so() {
    let name = "the_jit_s_cubin_and_ptxas_s_run_the_same_code_in_other_files_and_diff_says_so";
    let Some(v) = common::sass::pinned_present(name) else {
        return;
    };
    let Some(lib) = driver() else {
        common::not_checked(&format!(
            "{name}: no C compiler (`cc`) to build the simulated driver"
        ));
        return;
    };
    // The simulated JIT is the newer pinned ptxas; B runs that ptxas's prebuilt cubin, C the
    // older one's.
    let newer = store::resolve(&store::root(), &[v[1].parse().unwrap()]).unwrap();
    let jit_ptxas = newer[0].ptxas();
    let out = fresh(&format!("{name}-sets"));
    let jit_env = [("PTXL_SIM_JIT_PTXAS", jit_ptxas.to_str().unwrap())];
    let a = mp_set(lib, &out, "jit", &["--compiler", "jit"], &jit_env);
    let sets: Vec<PathBuf> = [("new", &v[1]), ("old", &v[0])]
        .iter()
        .map(|(id, version)| {
            let store_dir = carried_store(&format!("{name}-{id}"), version, MP);
            let compiler = format!("ptxas:{version}");
            let env = [(store::ENV, store_dir.to_str().unwrap())];
            mp_set(lib, &out, id, &["--compiler", &compiler], &env)
        })
        .collect();
    let note = |set: &Path, key: &str| {
        let tests = std::fs::read_dir(set.join("tests")).unwrap();
        let record = std::fs::read_to_string(tests.flatten().next().unwrap().path()).unwrap();
        let record: serde_json::Value = serde_json::from_str(&record).unwrap();
        record["notes"][key].as_str().unwrap_or("").to_string()
    };
    assert_eq!(note(&a, "kernel.compiler"), "driver JIT");
    assert_eq!(
        note(&a, "kernel.sass_check"),
        "pass",
        "the JIT's code is checked"
    );
    assert_ne!(
        note(&a, "kernel.sass_hash"),
        note(&sets[0], "kernel.sass_hash")
    );
    assert_eq!(
        note(&a, "kernel.code_hash"),
        note(&sets[0], "kernel.code_hash")
    );
    let diff = |dirs: &[&Path]| text(&bin().arg("diff").args(dirs).output().unwrap().stdout);
    let two = diff(&[&a, &sets[0]]);
    assert!(
        two.contains("(1 of 1 tests ran the same machine code in A and B (kernel.code_hash)"),
        "{two}"
    );
    let three = diff(&[&a, &sets[0], &sets[1]]);
    let row = three.lines().find(|l| l.contains("MP+rlx")).unwrap();
    assert!(row.trim_end().ends_with("A=B C"), "{three}");
}
