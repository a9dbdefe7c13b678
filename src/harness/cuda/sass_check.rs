//! The optcheck of the machine code a test runs. The cubin that the driver's JIT (or a ptxas
//! of the store) made is disassembled and each role checked, on a thread of its own while the
//! launches go on, so that the check costs the GPU window nothing. A compiler that reorders,
//! drops or weakens an access of a role makes the test test something else: its record then
//! says so (`kernel.sass_check`), whatever outcomes it saw.

use super::support::log_summary;
use crate::codegen::Kernel;
use crate::sass::cubin::sections;
use crate::sass::{check_sass, tools};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

/// The verdict of a check that passed.
pub const PASS: &str = "pass";

/// The prefix of the verdict of a check that failed.
pub const FAIL: &str = "FAIL: ";

/// The prefix of the verdict of a check that could not be made.
pub const NOT_CHECKED: &str = "not checked: ";

/// The longest a disassembly may take before the test's record is written without it.
const PATIENCE: Duration = Duration::from_secs(60);

/// A check under way, or none (`sass_check=off`).
pub struct Pending(Option<Receiver<String>>);

impl Pending {
    /// Starts checking `cubin` against `kernel`'s roles when `on`.
    pub fn start(on: bool, kernel: &Kernel, cubin: &[u8]) -> Pending {
        if !on {
            return Pending(None);
        }
        let (kernel, cubin) = (kernel.clone(), cubin.to_vec());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(verdict(&kernel, &cubin));
        });
        Pending(Some(rx))
    }

    /// The verdict, once the check ends (at most [`PATIENCE`] from now); `None` when off.
    pub fn finish(self) -> Option<String> {
        let rx = self.0?;
        Some(match rx.recv_timeout(PATIENCE) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => {
                format!("{NOT_CHECKED}the disassembler took over {PATIENCE:?}")
            }
            Err(RecvTimeoutError::Disconnected) => format!("{NOT_CHECKED}the check failed"),
        })
    }
}

/// `pass`, `FAIL: ` and the problems, or `not checked: ` and why.
pub fn verdict(kernel: &Kernel, cubin: &[u8]) -> String {
    if let Err(e) = sections(cubin) {
        return format!("{NOT_CHECKED}{e}");
    }
    let sass = match tools::disassemble(cubin) {
        Ok(sass) => sass,
        Err(e) => return format!("{NOT_CHECKED}{}", log_summary(&e.to_string(), 2)),
    };
    let check = check_sass(kernel, &sass);
    if check.ok() {
        PASS.to_string()
    } else {
        format!("{FAIL}{}", log_summary(&check.errors().join("\n"), 6))
    }
}
