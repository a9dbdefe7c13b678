//! Helpers shared by the tests that need ptxas and nvdisasm.

#![allow(dead_code)]

use ptx_litmus::codegen::{self, CodegenError, Kernel, Stress};
use ptx_litmus::litmus::{self, ast::Test};
use ptx_litmus::sass::tools::{find, Tool};
use std::path::{Path, PathBuf};

/// Whether ptxas and nvdisasm are available. Without them a test skips (and says so), except
/// under CI, which installs them and must not skip.
pub fn tools_present(test: &str) -> bool {
    for tool in [Tool::Ptxas, Tool::Nvdisasm] {
        if let Err(e) = find(tool) {
            if std::env::var_os("CI").is_some() {
                panic!("{test}: CI must run this test, but {e}");
            }
            eprintln!("{test}: skipping: {e}");
            return false;
        }
    }
    true
}

/// The project root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The published corpus beside the project, if present.
pub fn corpus() -> Option<PathBuf> {
    let p = root().join("../shared/corpus/dat3m/litmus/PTX");
    p.is_dir().then_some(p)
}

/// Parses one test file of the project's corpus.
pub fn load(rel: &str) -> Test {
    litmus::parse_file(&root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every test of `litmus/` and every test of the published corpus, parsed, each with whether it
/// lies in a `proxy/` folder.
pub fn all_tests() -> Vec<(PathBuf, Test, bool)> {
    let mut dirs = vec![root().join("litmus")];
    match corpus() {
        Some(c) => dirs.push(c),
        None => eprintln!("../shared/corpus is absent: checking litmus/ only"),
    }
    litmus::load(&dirs)
        .into_iter()
        .map(|(p, t)| {
            let t = t.unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let proxy = p.components().any(|c| c.as_os_str() == "proxy");
            (p, t, proxy)
        })
        .collect()
}

/// The kernel of a test under the `stress` preset.
pub fn kernel(test: &Test) -> Result<Kernel, CodegenError> {
    codegen::build(test, &Stress::full_stress())
}

/// The file name of a path, for messages.
pub fn name(p: &Path) -> String {
    p.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}
