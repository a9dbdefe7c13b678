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

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).trim().to_string()
}

#[test]
fn run_backend_cuda_exits_2_with_the_detection_reason() {
    let out = fresh("run");
    let o = ptx_litmus(&[
        "run",
        "--backend",
        "cuda",
        "--iterations",
        "100000",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        "litmus/mp",
    ]);
    match cuda::status() {
        Err(why) => {
            eprintln!("no usable GPU here ({why}); checking the refusal");
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
            eprintln!("no usable GPU here ({why}); checking the fallback to the CPU");
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
            eprintln!("no usable GPU here ({why}); checking the refusal");
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
