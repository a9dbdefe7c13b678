//! Helpers of the tests that need ptxas and nvdisasm.

use ptx_litmus::codegen::{self, CodegenError, Kernel, Stress};
use ptx_litmus::litmus::ast::Test;
use ptx_litmus::sass::tools::{find, Tool};
use ptx_litmus::toolchain::{store, Spec};

/// Whether ptxas and nvdisasm are available. Without them a test skips (and says so), except
/// under CI, which installs them and must not skip.
pub fn tools_present(test: &str) -> bool {
    for tool in [Tool::Ptxas, Tool::Nvdisasm] {
        if let Err(e) = find(tool) {
            if std::env::var_os("CI").is_some() {
                panic!("{test}: CI must run this test, but {e}");
            }
            super::not_checked(&format!("{test}: {e}"));
            return false;
        }
    }
    true
}

/// The kernel of a test under the `stress` preset.
pub fn kernel(test: &Test) -> Result<Kernel, CodegenError> {
    codegen::build(test, &Stress::full_stress())
}

/// The versions `scripts/setup-tools` installs into the store.
pub fn pinned() -> Vec<String> {
    let script = std::fs::read_to_string(super::root().join("scripts/setup-tools")).unwrap();
    let line = script
        .lines()
        .find_map(|l| l.strip_prefix("toolchains=\""))
        .expect("scripts/setup-tools pins toolchains=\"A B\"");
    line.trim_end_matches('"')
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Whether the pinned versions are in the store; CI must have them.
pub fn pinned_present(test: &str) -> Option<Vec<String>> {
    let versions = pinned();
    assert_eq!(versions.len(), 2, "two pinned versions: {versions:?}");
    let root = store::root();
    for v in &versions {
        let spec: Spec = v.parse().unwrap();
        if let Err(e) = store::resolve(&root, &[spec]) {
            if std::env::var_os("CI").is_some() {
                panic!("{test}: CI must run this test, but {e}");
            }
            super::not_checked(&format!("{test}: {e}"));
            return None;
        }
    }
    tools_present(test).then_some(versions)
}
