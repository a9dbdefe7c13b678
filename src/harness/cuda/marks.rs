//! The two events that bound how far the host runs ahead of the device: one is recorded at the
//! end of each window of launches ([`super::submitter::WINDOW`]), and the host polls the one of
//! two windows back before it enqueues more, with `cuEventQuery`, never `cuEventSynchronize`.

use super::driver::{self, check, sticky, usable};
use crate::harness::watchdog::Poll;
use cudarc::driver::sys::{self, CUresult};

/// Two timing-free events, used in turn.
pub struct Marks([sys::CUevent; 2]);

impl Marks {
    /// Creates both events.
    pub fn new() -> Result<Marks, String> {
        let mut m = Marks([std::ptr::null_mut(); 2]);
        let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
        for e in &mut m.0 {
            // SAFETY: valid out-pointer; a context is current.
            check(unsafe { sys::cuEventCreate(e, flags) }, "cuEventCreate")?;
        }
        Ok(m)
    }

    /// Records event `slot` after everything enqueued on `stream` so far.
    pub fn record(&self, slot: usize, stream: sys::CUstream) -> Result<(), String> {
        // SAFETY: a live event of `self` and a live stream.
        check(
            unsafe { sys::cuEventRecord(self.0[slot], stream) },
            "cuEventRecord",
        )
    }

    /// Whether the work before event `slot` has finished: one non-blocking query.
    pub fn poll(&self, slot: usize) -> Poll {
        // SAFETY: a live event of `self`.
        match unsafe { sys::cuEventQuery(self.0[slot]) } {
            CUresult::CUDA_SUCCESS => Poll::Ready,
            CUresult::CUDA_ERROR_NOT_READY => Poll::Pending,
            r => {
                if sticky(r) {
                    driver::lose_device(&format!("cuEventQuery returned {r:?}"));
                }
                Poll::Fault(format!("cuEventQuery returned {r:?}"))
            }
        }
    }
}

impl Drop for Marks {
    fn drop(&mut self) {
        if !usable() {
            return;
        }
        for e in self.0 {
            if !e.is_null() {
                // SAFETY: created in `new`, destroyed once; one still pending is released by
                // the driver when it completes.
                unsafe { sys::cuEventDestroy_v2(e) };
            }
        }
    }
}
