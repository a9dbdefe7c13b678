//! Ctrl-C during `run`: the first SIGINT asks the running test to stop after its current round
//! (so the result set is written, marked partial); a second one kills the process as usual.
//!
//! This is the project's only binding to a C library function outside the CUDA backend: the
//! C standard library's `signal(2)`, declared below rather than pulled in through a crate, with
//! a handler that only stores to an atomic flag and restores the default action (both
//! async-signal-safe).

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the first SIGINT.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
mod imp {
    use super::INTERRUPTED;
    use std::os::raw::c_int;
    use std::sync::atomic::Ordering;

    const SIGINT: c_int = 2;
    const SIG_DFL: usize = 0;

    extern "C" {
        fn signal(signum: c_int, handler: usize) -> usize;
    }

    extern "C" fn on_sigint(_: c_int) {
        INTERRUPTED.store(true, Ordering::SeqCst);
        // SAFETY: `signal` is async-signal-safe; restoring SIG_DFL makes a second Ctrl-C
        // terminate the process the ordinary way.
        unsafe {
            signal(SIGINT, SIG_DFL);
        }
    }

    pub fn install() {
        // SAFETY: installs a handler that only touches an atomic and calls `signal` again.
        unsafe {
            signal(SIGINT, on_sigint as extern "C" fn(c_int) as usize);
        }
    }
}

#[cfg(not(unix))]
mod imp {
    /// Elsewhere Ctrl-C keeps its default action (no partial result).
    pub fn install() {}
}

/// Installs the SIGINT handler (idempotent) and clears the flag.
pub fn install() {
    INTERRUPTED.store(false, Ordering::SeqCst);
    imp::install();
}

/// Whether Ctrl-C was pressed since [`install`].
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}
