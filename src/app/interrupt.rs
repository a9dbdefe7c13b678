//! Stopping a run without losing it: the first SIGINT (Ctrl-C), SIGTERM (`kill`, `timeout`,
//! a Slurm time limit) or SIGHUP (a closed terminal) asks the running test to stop after its
//! current round, and the model to give up within a fraction of a second, so that the result
//! set is completed and marked partial. A second Ctrl-C or hang-up kills the process as usual;
//! a repeated SIGTERM does not, since supervisors send it twice (SIGKILL ends it at once).
//!
//! This is the project's only binding to a C library function outside the CUDA backend: the
//! C standard library's `signal(2)`, declared below rather than pulled in through a crate, with
//! a handler that only stores to an atomic flag and restores the default action (both
//! async-signal-safe).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Set by the first stop signal.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The number of the first stop signal received (0 before any).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

#[cfg(unix)]
#[allow(unsafe_code)]
mod imp {
    use super::{INTERRUPTED, SIGNAL};
    use std::os::raw::c_int;
    use std::sync::atomic::Ordering;

    pub const SIGHUP: c_int = 1;
    pub const SIGINT: c_int = 2;
    const SIGPIPE: c_int = 13;
    pub const SIGTERM: c_int = 15;
    const SIG_DFL: usize = 0;

    extern "C" {
        fn signal(signum: c_int, handler: usize) -> usize;
    }

    extern "C" fn on_stop(sig: c_int) {
        let _ = SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
        INTERRUPTED.store(true, Ordering::SeqCst);
        // A supervisor sends SIGTERM more than once (GNU `timeout` to the process and again
        // to its group; Slurm to every process of the step, which a campaign then forwards to
        // its step's process): the handler stays, and SIGKILL ends the process at once.
        if sig == SIGTERM {
            return;
        }
        // SAFETY: `signal` is async-signal-safe; restoring SIG_DFL makes a second Ctrl-C (or
        // hang-up) terminate the process the ordinary way.
        unsafe {
            signal(sig, SIG_DFL);
        }
    }

    pub fn install() {
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            // SAFETY: installs a handler that only touches atomics and calls `signal` again.
            unsafe {
                signal(sig, on_stop as extern "C" fn(c_int) as usize);
            }
        }
    }

    pub fn default_sigpipe() {
        // SAFETY: restores the default action of SIGPIPE, which the Rust runtime ignores.
        unsafe {
            signal(SIGPIPE, SIG_DFL);
        }
    }
}

#[cfg(not(unix))]
mod imp {
    pub const SIGHUP: i32 = 1;
    pub const SIGINT: i32 = 2;
    pub const SIGTERM: i32 = 15;
    /// Elsewhere the signals keep their default action (no partial result).
    pub fn install() {}
    pub fn default_sigpipe() {}
}

/// Installs the stop-signal handlers (idempotent) and clears the flag.
pub fn install() {
    INTERRUPTED.store(false, Ordering::SeqCst);
    SIGNAL.store(0, Ordering::SeqCst);
    imp::install();
}

/// Lets a write to a closed pipe (`ptx-litmus list | head`) end the process quietly, as it
/// does for every other command-line tool, instead of panicking in `println!`.
pub fn default_sigpipe() {
    imp::default_sigpipe();
}

/// Whether a stop signal arrived since [`install`].
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// The name of the stop signal that arrived, if any.
pub fn signal_name() -> Option<&'static str> {
    match SIGNAL.load(Ordering::Relaxed) {
        imp::SIGINT => Some("SIGINT"),
        imp::SIGTERM => Some("SIGTERM"),
        imp::SIGHUP => Some("SIGHUP"),
        _ => None,
    }
}
