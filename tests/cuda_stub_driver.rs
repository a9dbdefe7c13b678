//! Opening the CUDA backend against stand-in driver libraries (built here with the C
//! compiler, found through `LD_LIBRARY_PATH` before any installed driver): a library lacking
//! functions the backend calls, a driver that finds no GPU, one too old, one that counts no
//! device. Each is refused with a one-line reason and exit code 2, never a panic, which checks
//! the detection path of `harness/cuda/driver.rs` without a GPU.

mod common;

use common::{bin, scratch, text};
use ptx_litmus::harness::cuda::DRIVER_SYMBOLS;
use std::path::{Path, PathBuf};

/// What the stand-in's answers are.
struct Stub {
    /// The functions it exports.
    symbols: Vec<&'static str>,
    /// `cuInit`'s CUresult.
    init: i32,
    /// What `cuDriverGetVersion` reports.
    version: i32,
}

/// Builds `dir/libcuda.so` (and `libcuda.so.1`) from `stub`; `None` without a C compiler.
fn build(dir: &Path, stub: &Stub) -> Option<PathBuf> {
    let mut c = String::from("typedef int CUresult;\n");
    for s in &stub.symbols {
        c.push_str(&match *s {
            "cuInit" => format!("CUresult cuInit(unsigned f) {{ return {}; }}\n", stub.init),
            "cuDriverGetVersion" => format!(
                "CUresult cuDriverGetVersion(int *v) {{ *v = {}; return 0; }}\n",
                stub.version
            ),
            "cuDeviceGetCount" => {
                "CUresult cuDeviceGetCount(int *n) { *n = 0; return 0; }\n".into()
            }
            // CUDA_ERROR_UNKNOWN: the backend must never get this far in these cases.
            other => format!("CUresult {other}(void) {{ return 999; }}\n"),
        });
    }
    std::fs::create_dir_all(dir).unwrap();
    let src = dir.join("stub.c");
    std::fs::write(&src, c).unwrap();
    let lib = dir.join("libcuda.so");
    let built = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        return None;
    }
    std::fs::copy(&lib, dir.join("libcuda.so.1")).unwrap();
    Some(dir.to_path_buf())
}

/// `campaign machine --backend cuda` against the stand-in in `dir`: exit code and stderr.
fn open_with(dir: &Path) -> (Option<i32>, String) {
    let o = bin()
        .args(["campaign", "machine", "--backend", "cuda"])
        .env("LD_LIBRARY_PATH", dir)
        .output()
        .unwrap();
    (o.status.code(), text(&o.stderr).trim().to_string())
}

/// Checks that the stand-in built from `stub` is refused with a reason containing `says`.
fn refused(name: &str, stub: Stub, says: &str) {
    let dir = scratch(name);
    let Some(lib) = build(&dir.join("lib"), &stub) else {
        common::not_checked("no C compiler (`cc`) here to build a stand-in libcuda");
        return;
    };
    let (code, err) = open_with(&lib);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains(says), "{err}\nlacks: {says}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_driver_lacking_functions_is_refused_naming_them_before_any_call() {
    // Only cuInit, which would succeed: the missing functions are found before it is called.
    let stub = Stub {
        symbols: vec!["cuInit"],
        init: 0,
        version: 13000,
    };
    let n = DRIVER_SYMBOLS.len();
    let missing: Vec<&str> = DRIVER_SYMBOLS
        .iter()
        .copied()
        .filter(|s| *s != "cuInit")
        .collect();
    refused(
        "lacking",
        stub,
        &format!(
            "lacks {} of the {n} functions ptx-litmus calls: {}",
            n - 1,
            missing.join(", ")
        ),
    );
}

#[test]
fn a_driver_that_finds_no_gpu_is_refused() {
    let stub = Stub {
        symbols: DRIVER_SYMBOLS.to_vec(),
        init: 100, // CUDA_ERROR_NO_DEVICE
        version: 13000,
    };
    refused(
        "nodevice",
        stub,
        "the CUDA driver is installed but found no GPU (cuInit: CUDA_ERROR_NO_DEVICE)",
    );
}

#[test]
fn a_driver_older_than_cuda_12_is_refused_with_its_version() {
    let stub = Stub {
        symbols: DRIVER_SYMBOLS.to_vec(),
        init: 0,
        version: 11080,
    };
    refused("old", stub, "the CUDA driver supports CUDA 11.8");
}

#[test]
fn a_cuda_13_driver_counting_no_device_is_refused() {
    let stub = Stub {
        symbols: DRIVER_SYMBOLS.to_vec(),
        init: 0,
        version: 13000,
    };
    refused("nocount", stub, "found no GPU (cuDeviceGetCount = 0)");
}
