//! `bench gpu --dry-run`: the launch plan of every shape under every preset, printed without a
//! GPU, on an H100 (the default) or H200 model.

mod common;

use common::{bin, text};

/// The dry run's output with ptxas hidden, so registers are the assumed 32 per thread.
fn dry_run(extra: &[&str]) -> String {
    let o = bin()
        .args(["bench", "gpu", "--dry-run"])
        .args(extra)
        .env("PTX_LITMUS_PTXAS", "/nonexistent/ptxas")
        .output()
        .expect("run ptx-litmus");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    text(&o.stdout)
}

/// The rows of the table of `preset`: (shape, the row's fields).
fn rows(out: &str, preset: &str) -> Vec<(String, Vec<String>)> {
    out.lines()
        .skip_while(|l| *l != format!("stress preset {preset}"))
        .skip(2)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<String> = l.split_whitespace().map(str::to_string).collect();
            (f[0].clone(), f)
        })
        .collect()
}

#[test]
fn the_plan_covers_every_preset_and_shape_and_fills_an_h100() {
    let out = dry_run(&[]);
    assert!(out.contains("H100 SXM model (132 SMs"), "{out}");
    assert!(out.contains("3.35 TB/s"), "{out}");
    assert!(out.contains("registers assumed (32 per thread)"), "{out}");
    for preset in ["basic", "interleave", "stress"] {
        let rows = rows(&out, preset);
        let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
        for shape in [
            "SB",
            "MP",
            "LB",
            "2+2W",
            "CoRR",
            "MP+shared",
            "MP+cluster",
            "WRC",
            "IRIW",
        ] {
            assert!(names.contains(&shape), "{preset}: no {shape} in {names:?}");
        }
        for (name, f) in &rows {
            // shape thr regs smem CTAs/SM (limit) grid cta cl inst occupancy B/inst bound
            assert_eq!(f[2], "32*", "{preset} {name}: {f:?}");
            assert_eq!(f[4], "8", "{preset} {name}: {f:?}");
            let grid = if preset == "stress" {
                "792/1056"
            } else {
                "1056/1056"
            };
            assert_eq!(f[6], grid, "{preset} {name}: {f:?}");
            let threads: u64 = f[1].parse().unwrap();
            let testing: u64 = grid.split('/').next().unwrap().parse().unwrap();
            assert_eq!(f[9], (testing * 256 / threads).to_string(), "{name}: {f:?}");
            assert_eq!(f[10], "1.000", "{name}");
        }
        let cluster = rows.iter().find(|(n, _)| n == "MP+cluster").unwrap();
        assert_eq!(cluster.1[8], "2", "{cluster:?}");
    }
}

#[test]
fn an_h200_model_has_the_same_launches_and_a_higher_bound() {
    let (h100, h200) = (
        dry_run(&["--stress", "basic", "--only", "IRIW"]),
        dry_run(&[
            "--stress",
            "basic",
            "--only",
            "IRIW",
            "--device-model",
            "h200",
        ]),
    );
    assert!(
        h200.contains("H200 model") && h200.contains("4.80 TB/s"),
        "{h200}"
    );
    let (a, b) = (&rows(&h100, "basic")[0].1, &rows(&h200, "basic")[0].1);
    assert_eq!(a[..12], b[..12]);
    let bound = |f: &Vec<String>| f[12].parse::<f64>().unwrap();
    assert!(
        (bound(b) / bound(a) - 4.8 / 3.352).abs() < 0.01,
        "{a:?} {b:?}"
    );
    assert!(!h100.contains("stress preset interleave"));
    let o = bin()
        .args(["bench", "gpu", "--dry-run", "--device-model", "a100"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("h100 or h200"));
}

#[test]
fn with_ptxas_the_registers_are_the_kernels() {
    let Ok(_) = ptx_litmus::sass::tools::find(ptx_litmus::sass::Tool::Ptxas) else {
        common::not_checked("no ptxas here: the registers ptxas reports");
        return;
    };
    let o = bin()
        .args([
            "bench",
            "gpu",
            "--dry-run",
            "--stress",
            "basic",
            "--only",
            "MP",
        ])
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert!(!out.contains("assumed"), "{out}");
    for (name, f) in rows(&out, "basic") {
        let regs: u32 = f[2].parse().unwrap_or_else(|_| panic!("{name}: {f:?}"));
        assert!((8..=255).contains(&regs), "{name}: {f:?}");
    }
}

#[test]
fn the_plan_counts_driver_calls_per_launch_in_each_mode() {
    // The last field of each row: kernel-submitting driver calls per launch.
    let calls = |extra: &[&str]| -> Vec<(String, String)> {
        let mut args = vec!["--stress", "interleave"];
        args.extend_from_slice(extra);
        let out = dry_run(&args);
        assert!(
            out.contains("the histogram is read once per batch"),
            "{out}"
        );
        rows(&out, "interleave")
            .into_iter()
            .map(|(n, f)| (n, f.last().unwrap().clone()))
            .collect()
    };
    // By default a graph of 64 launches: one cuGraphLaunch per 64 launches, every shape.
    let graph = calls(&[]);
    assert!(graph.len() >= 9, "{graph:?}");
    assert!(graph.iter().all(|(_, c)| c == "0.0156"), "{graph:?}");
    // Direct: two cuLaunchKernelEx per launch.
    let direct = calls(&["-o", "graph=off"]);
    assert!(direct.iter().all(|(_, c)| c == "2.0000"), "{direct:?}");
    assert_eq!(direct.len(), graph.len());
    assert!(calls(&["-o", "graph=8"]).iter().all(|(_, c)| c == "0.1250"));
    // A fixed batch of 100: one graph of 64, then 36 launches direct: 73 calls.
    let fixed = calls(&["-o", "batch=100"]);
    assert!(fixed.iter().all(|(_, c)| c == "0.7300"), "{fixed:?}");
    let o = bin()
        .args(["bench", "gpu", "--dry-run", "-o", "graph=0"])
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(text(&o.stderr).contains("graph=0"), "{}", text(&o.stderr));
}
