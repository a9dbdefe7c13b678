//! Whether this process can still use its device. After a test timed out (a kernel may still
//! be running) or the device reported a sticky error (an illegal address, a launch failure:
//! CUDA then fails every later call of the context), nothing more runs on the device in this
//! process; the rest of a batch must run in a fresh one, which `campaign run` starts.

use std::sync::Mutex;

static LOST: Mutex<Option<String>> = Mutex::new(None);

/// Marks the device unusable for the rest of the process; the first reason is kept.
pub fn lose(reason: &str) {
    let mut lost = LOST.lock().unwrap_or_else(|p| p.into_inner());
    if lost.is_none() {
        *lost = Some(reason.to_string());
    }
}

/// Why the device is unusable in this process, if it is.
pub fn lost() -> Option<String> {
    LOST.lock().unwrap_or_else(|p| p.into_inner()).clone()
}
