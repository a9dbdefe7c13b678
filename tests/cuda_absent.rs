//! The CUDA backend on a machine without a usable GPU (CI): `run --backend cuda` and `bench gpu`
//! exit 2 with the one-line reason `detect` gives, and `--backend auto` falls back to the CPU
//! saying why. Where a GPU is usable, the same tests check the other branch: the GPU runs.

mod common;

use common::{bin, fresh};
use ptx_litmus::harness::cuda;
use std::process::Output;

const MP: &str = "litmus/mp/MP+rel.gpu+acq.gpu.litmus";

fn ptx_litmus(args: &[&str]) -> Output {
    bin().args(args).output().expect("run ptx-litmus")
}

/// `run --backend cuda` of `tests` for 100,000 iterations, results under `out`.
fn run_on_cuda(out: &std::path::Path, tests: &std::path::Path) -> Output {
    ptx_litmus(&[
        "run",
        "--backend",
        "cuda",
        "--iterations",
        "100000",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        tests.to_str().unwrap(),
    ])
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).trim().to_string()
}

#[test]
fn run_backend_cuda_exits_2_with_the_detection_reason() {
    let out = fresh("run");
    let o = run_on_cuda(&out, std::path::Path::new("litmus/mp"));
    match cuda::status() {
        Err(why) => {
            common::not_checked(&format!(
                "the MP family on a GPU ({why}); the refusal is checked"
            ));
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            let err = stderr(&o);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains("--backend cuda"), "{err}");
            assert!(err.contains(&why), "{err} lacks {why}");
            assert!(!err.contains("panicked"), "{err}");
            assert!(!out.exists(), "a refused run wrote {}", out.display());
        }
        Ok(gpu) => {
            eprintln!("a GPU is usable ({gpu}); checking that the MP family runs on it");
            assert!(
                matches!(o.status.code(), Some(0) | Some(1)),
                "{}",
                stderr(&o)
            );
            assert!(out.exists());
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// A texture read of a generically written location, and surface-only locations: kernels that
/// take a texture object and a surface object.
const PROXY_TESTS: [(&str, &str); 2] = [
    (
        "MP+tex.litmus",
        "PTX MP+tex\n{\nx = 0;\nt @ texture aliases x;\nflag = 0;\n}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r0, flag ;\n st.release.gpu flag, 1 | tld.weak r1, t ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
    ),
    (
        "MP+sur.litmus",
        "PTX MP+sur\n{\nx = 0;\ns @ surface aliases x;\nflag = 0;\n}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n sust.weak s, 1 | ld.acquire.gpu r0, flag ;\n st.release.gpu flag, 1 | suld.weak r1, s ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
    ),
];

/// The test records of the result sets under `out` (`out/MACHINE/RUN/tests/*.json`).
fn records(out: &std::path::Path) -> usize {
    let dirs = |p: &std::path::Path| {
        std::fs::read_dir(p)
            .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let runs = dirs(out).iter().flat_map(|m| dirs(m)).collect::<Vec<_>>();
    runs.iter()
        .flat_map(|r| dirs(&r.join("tests")))
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
        .count()
}

#[test]
fn proxy_tests_take_the_same_path_as_plain_ones() {
    let dir = common::scratch("proxy-tests");
    for (file, source) in PROXY_TESTS {
        let path = dir.join(file);
        std::fs::write(&path, source).unwrap();
        // The kernels really take the objects: this is the path of the texture and surface
        // proxies, not of a refusal before codegen.
        let test = ptx_litmus::litmus::parse_file(&path).unwrap();
        let k = ptx_litmus::codegen::build(&test, &ptx_litmus::codegen::Stress::basic())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(
            k.layout.linear_texture || k.layout.array_words > 0,
            "{file}"
        );
    }
    // The CPU backend runs both (as generic accesses), which checks how records are counted.
    let on_cpu = fresh("proxy-cpu");
    let o = ptx_litmus(&[
        "run",
        "--backend",
        "cpu",
        "--iterations",
        "1000",
        "--quiet",
        "--out",
        on_cpu.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(records(&on_cpu), PROXY_TESTS.len());
    let _ = std::fs::remove_dir_all(&on_cpu);
    let out = fresh("proxy-run");
    let o = run_on_cuda(&out, &dir);
    let err = stderr(&o);
    match cuda::status() {
        Err(why) => {
            common::not_checked(&format!(
                "the proxy tests on a GPU ({why}); their refusal is checked"
            ));
            assert_eq!(o.status.code(), Some(2), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.contains("--backend cuda") && err.contains(&why),
                "{err}"
            );
            assert!(!out.exists(), "a refused run wrote {}", out.display());
        }
        Ok(gpu) => {
            eprintln!("a GPU is usable ({gpu}); checking that both proxy tests ran on it");
            assert!(matches!(o.status.code(), Some(0) | Some(1)), "{err}");
            assert_eq!(records(&out), PROXY_TESTS.len(), "{err}");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn auto_says_which_backend_it_took() {
    let out = fresh("auto");
    let o = ptx_litmus(&[
        "run",
        "--backend",
        "auto",
        "--iterations",
        "2000",
        "--seed",
        "5",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        MP,
    ]);
    let err = stderr(&o);
    assert!(matches!(o.status.code(), Some(0) | Some(1)), "{err}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    match cuda::status() {
        Err(why) => {
            common::not_checked(&format!(
                "`--backend auto` taking a GPU ({why}); the fallback to the CPU is checked"
            ));
            assert!(err.contains("no usable GPU") && err.contains(&why), "{err}");
            assert!(err.contains("CPU backend"), "{err}");
            assert!(stdout.contains("cpu"), "{stdout}");
        }
        Ok(gpu) => {
            eprintln!("a GPU is usable ({gpu}); checking that auto took it");
            assert!(err.contains(&gpu), "{err}");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bench_gpu_exits_2_with_the_detection_reason() {
    match cuda::status() {
        Err(why) => {
            common::not_checked(&format!(
                "the MP family on a GPU ({why}); the refusal is checked"
            ));
            let o = ptx_litmus(&["bench", "gpu", "--time", "0.1"]);
            assert_eq!(o.status.code(), Some(2));
            let err = stderr(&o);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains("bench gpu") && err.contains(&why), "{err}");
            assert!(
                o.stdout.is_empty(),
                "{}",
                String::from_utf8_lossy(&o.stdout)
            );
        }
        Ok(gpu) => {
            eprintln!("a GPU is usable ({gpu}); checking that bench gpu prints its table");
            let o = ptx_litmus(&["bench", "gpu", "--time", "0.2", "--only", "MP"]);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            let table = String::from_utf8_lossy(&o.stdout);
            assert!(table.lines().any(|l| l.starts_with("MP ")), "{table}");
        }
    }
}
