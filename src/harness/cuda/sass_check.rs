//! The optcheck of the machine code a test runs. The cubin that the driver's JIT (or a ptxas
//! of the store) made is disassembled and each role checked, on a thread of its own while the
//! launches go on, so that the check costs the GPU window nothing. A compiler that reorders,
//! drops or weakens an access of a role makes the test test something else: its record then
//! says so (`kernel.sass_check`), whatever outcomes it saw.

use super::support::log_summary;
use crate::codegen::Kernel;
use crate::sass::cubin::sections;
use crate::sass::{check_functions, disasm, tools};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

/// The verdict of a check that passed.
pub const PASS: &str = "pass";

/// The prefix of the verdict of a check that failed.
pub const FAIL: &str = "FAIL: ";

/// The prefix of the verdict of a check that could not be made.
pub const NOT_CHECKED: &str = "not checked: ";

/// The longest a test waits for its check after its launches (the check began when its
/// module was loaded, so it has had the test's run as well).
const PATIENCE: Duration = Duration::from_secs(10);

/// Set once a check outlasted [`PATIENCE`]: the rest of the process makes none, so that a
/// disassembler that hangs costs one test's wait, not every test's.
static TOO_SLOW: AtomicBool = AtomicBool::new(false);

/// A check under way, one not made, or none (`sass_check=off`).
pub enum Pending {
    /// `sass_check=off`.
    Off,
    /// Not made, and why.
    Skipped(String),
    /// Under way on its own thread.
    Running(Receiver<String>),
}

impl Pending {
    /// Starts checking `cubin` against `kernel`'s roles when `on`.
    pub fn start(on: bool, kernel: &Kernel, cubin: &[u8]) -> Pending {
        if !on {
            return Pending::Off;
        }
        if TOO_SLOW.load(Ordering::Relaxed) {
            let why = format!("an earlier check in this process took over {PATIENCE:?}");
            return Pending::Skipped(format!("{NOT_CHECKED}{why}"));
        }
        let (kernel, cubin) = (kernel.clone(), cubin.to_vec());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(verdict(&kernel, &cubin));
        });
        Pending::Running(rx)
    }

    /// The verdict, once the check ends (at most [`PATIENCE`] from now); `None` when off.
    pub fn finish(self) -> Option<String> {
        let rx = match self {
            Pending::Off => return None,
            Pending::Skipped(why) => return Some(why),
            Pending::Running(rx) => rx,
        };
        Some(match rx.recv_timeout(PATIENCE) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => {
                TOO_SLOW.store(true, Ordering::Relaxed);
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
    let funcs = disasm::functions(&sass);
    let inlined: Vec<&str> = kernel
        .roles
        .iter()
        .filter(|r| !funcs.contains_key(&r.func))
        .map(|r| r.func.as_str())
        .collect();
    if !inlined.is_empty() {
        // The check reads each role's own function: one the compiler merged into the entry
        // cannot be told apart, which is no fault of the code.
        let names = inlined.join(", ");
        return format!(
            "{NOT_CHECKED}the compiler inlined {names}; the check reads role functions"
        );
    }
    let check = check_functions(kernel, &funcs, "");
    if check.ok() {
        PASS.to_string()
    } else {
        format!("{FAIL}{}", log_summary(&check.errors().join("\n"), 6))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::{build, Stress};

    fn mp() -> Kernel {
        let source = "PTX MP { x=0; y=0; }
             P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
             st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, y ;
             st.relaxed.gpu y, 1 | ld.relaxed.gpu r1, x ;
             exists (P1:r0 == 1 /\\ P1:r1 == 0)";
        let test = crate::litmus::parse(source, std::path::Path::new("mp.litmus")).unwrap();
        build(&test, &Stress::basic()).unwrap()
    }

    #[test]
    fn a_check_is_off_made_or_skipped_and_says_which() {
        let k = mp();
        assert_eq!(Pending::start(false, &k, b"").finish(), None);
        // What is no cubin is said without running a disassembler.
        let junk = Pending::start(true, &k, b"PTXL-SIM-CUBIN")
            .finish()
            .unwrap();
        assert!(
            junk.starts_with(NOT_CHECKED) && junk.contains("ELF64"),
            "{junk}"
        );
        let skipped = Pending::Skipped(format!("{NOT_CHECKED}why")).finish();
        assert_eq!(skipped.as_deref(), Some("not checked: why"));
    }
}
