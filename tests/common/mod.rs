//! Helpers shared by the integration tests: where the project and the published corpus are,
//! their tests loaded, fresh scratch directories; `sass` for the tests that need ptxas and
//! nvdisasm, `cpu` for in-process runs of the CPU backend, `results` for hand-built result sets,
//! `terminal` for commands run on a terminal.

#![allow(dead_code)]

pub mod cpu;
pub mod results;
pub mod sass;
pub mod terminal;

use ptx_litmus::litmus::{self, ast::Test};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Says, on the test process's own stderr where the harness does not capture it, that a
/// check did not run and why: a test that lacks what it needs passes, but never silently (the
/// line shows in `cargo test`'s output, CI's included).
pub fn not_checked(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "NOT CHECKED: {why}");
}

/// Message passing with a release store and an acquire load: the weak outcome is forbidden.
pub const MP: &str = "PTX MP
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.weak x, 1        | ld.acquire.gpu r0, y ;
 st.release.gpu y, 1 | ld.weak r1, x        ;
exists (P1:r0 == 1 /\\ P1:r1 == 0)
";

/// The built binary, as a command.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ptx-litmus"))
}

/// Output bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The project root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The published Dat3M corpus beside the project (its `expected/` verdicts and `litmus/`), if
/// present.
pub fn dat3m() -> Option<PathBuf> {
    let p = root().join("../shared/corpus/dat3m");
    p.is_dir().then_some(p)
}

/// The published PTX tests beside the project, if present.
pub fn corpus() -> Option<PathBuf> {
    let p = dat3m()?.join("litmus/PTX");
    p.is_dir().then_some(p)
}

/// Parses one test file of the project's corpus, `rel` from the project root.
pub fn load(rel: &str) -> Test {
    litmus::parse_file(&root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The test files of `litmus/` and of the published corpus (when present, else saying so),
/// sorted.
pub fn all_files() -> Vec<PathBuf> {
    let mut dirs = vec![root().join("litmus")];
    match corpus() {
        Some(c) => dirs.push(c),
        None => not_checked("../shared/corpus is absent: litmus/ only"),
    }
    litmus::discover(&dirs).expect("the test folders can be listed")
}

/// Every test of `litmus/` and of the published corpus, parsed, each with whether it lies in a
/// `proxy/` folder.
pub fn all_tests() -> Vec<(PathBuf, Test, bool)> {
    all_files()
        .into_iter()
        .map(|p| {
            let t = litmus::parse_file(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let proxy = p.components().any(|c| c.as_os_str() == "proxy");
            (p, t, proxy)
        })
        .collect()
}

/// The file name of a path, for messages.
pub fn name(p: &Path) -> String {
    p.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// A family of every critical cycle of up to six edges over a broad pool: program order to
/// the same and other locations, `fence.sc` and `fence.acq_rel`, address, data and control
/// dependencies, and communication between and inside threads (697 cycles).
pub const BROAD_CYCLES: &str = "family broad\ncycles 6 4\n\
    relax PodWR PodWW PodRR PodRW PosWR PosRR PosWW PosRW Fence(sc)dWR Fence(acq_rel)dRR \
    DpAddrdR DpDatadW DpCtrldW\nsafe Rfe Fre Coe Rfi Fri Coi\n";

/// A family of every critical cycle of up to six edges through atomic read-modify-writes
/// (`Rmw`, some of them `.cta` in a `.gpu` test), with program order and communication, at
/// two scopes and two placements (287 cycles): where `no_thin_air` orders through `rmw`.
pub const RMW_CYCLES: &str = "family rmw\ncycles 6 4\nrelax Rmw rlx.cta:Rmw\n\
    safe Rfe Fre Coe PodWR PodRW PodRR PodWW\nscope cta gpu\nplacement samecta diffcta\n";

/// The names of the entries of folder `dir`, sorted.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| name(&e.unwrap().path()))
        .collect();
    names.sort();
    names
}

/// A path under `target/` for test `name` of this test binary, with nothing there: for a
/// command to create.
pub fn fresh(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{}-{name}", env!("CARGO_CRATE_NAME")));
    let _ = std::fs::remove_dir_all(&path);
    path
}

/// A fresh empty directory under `target/` for test `name` of this test binary.
pub fn scratch(name: &str) -> PathBuf {
    let dir = fresh(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
