//! Bounded waits on the run's stream: `cuStreamQuery` polled until a deadline (see
//! [`watchdog`](crate::harness::watchdog)), never `cuStreamSynchronize`, which would wait as
//! long as a kernel runs.

use super::driver::{self, sticky};
use crate::harness::watchdog::{self, Poll, Queue, Stall};
use cudarc::driver::sys::{self, CUresult};
use std::time::Instant;

/// Everything queued on one stream.
struct StreamQueue(sys::CUstream);

impl Queue for StreamQueue {
    fn poll(&mut self) -> Poll {
        // SAFETY: the stream belongs to the process-wide device and outlives every run.
        match unsafe { sys::cuStreamQuery(self.0) } {
            CUresult::CUDA_SUCCESS => Poll::Ready,
            CUresult::CUDA_ERROR_NOT_READY => Poll::Pending,
            r => {
                if sticky(r) {
                    driver::lose_device(&format!("cuStreamQuery returned {r:?}"));
                }
                Poll::Fault(format!("cuStreamQuery returned {r:?}"))
            }
        }
    }
}

/// Waits, until `deadline` at most, for everything queued on `stream`. When the wait gives
/// up, the device is lost for the rest of the process: the work may still be running.
pub fn drain(stream: sys::CUstream, deadline: Instant, what: &str) -> Result<(), Stall> {
    let r = watchdog::wait(&mut StreamQueue(stream), deadline, what);
    if let Err(stall) = &r {
        driver::lose_device(&stall.to_string());
    }
    r
}

/// Runs `read` once everything queued on `stream` has finished (until `deadline` at most); a
/// copy into pageable memory made then cannot wait on a kernel that never ends. When the wait
/// gives up, `read` is not run and the device is lost, as in [`drain`].
pub fn when_drained<T>(
    stream: sys::CUstream,
    deadline: Instant,
    what: &str,
    read: impl FnOnce() -> T,
) -> Result<T, Stall> {
    let r = watchdog::read_when_idle(&mut StreamQueue(stream), deadline, what, read);
    if let Err(stall) = &r {
        driver::lose_device(&stall.to_string());
    }
    r
}
