//! Helpers of the tests that need ptxas and nvdisasm.

use ptx_litmus::codegen::{self, CodegenError, Kernel, Stress};
use ptx_litmus::litmus::ast::Test;
use ptx_litmus::sass::tools::{find, Tool};

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

/// The kernel of a test under the `stress` preset.
pub fn kernel(test: &Test) -> Result<Kernel, CodegenError> {
    codegen::build(test, &Stress::full_stress())
}
