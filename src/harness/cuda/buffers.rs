//! The device buffers of one kernel, allocated and zero-filled once per test, on the run's
//! stream (a zeroing on the default stream would not be ordered before the launches on the
//! run's non-blocking stream). Nothing is copied
//! to the device afterwards: the collect kernel resets each instance's locations and result
//! slots and the barrier counter for the next launch, and the histogram accumulates on the
//! device. The only copy is the histogram read back between batches.

use super::driver::{check, usable};
use super::views::Views;
use super::wait;
use crate::codegen::{BufferKind, Layout};
use crate::harness::RunError;
use cudarc::driver::sys;
use std::time::Instant;

/// The buffers of [`Layout::buffers`], by kind.
pub struct Buffers {
    allocated: Vec<(BufferKind, sys::CUdeviceptr)>,
    /// The memory buffer when the test has generic aliases (then not in `allocated`).
    views: Option<Views>,
    histogram_words: usize,
}

impl Buffers {
    /// Allocates every buffer of `layout` on device `ordinal` and queues their zero-filling on
    /// `stream`, ahead of any launch. A context must be current.
    pub fn new(layout: &Layout, ordinal: i32, stream: sys::CUstream) -> Result<Buffers, String> {
        let mut b = Buffers {
            allocated: Vec::new(),
            views: None,
            histogram_words: (layout.buffer_bytes(BufferKind::Histogram) / 8) as usize,
        };
        for buf in &layout.buffers {
            if buf.kind == BufferKind::Memory && layout.memory_views > 1 {
                b.views = Some(Views::new(
                    ordinal,
                    layout.view_bytes,
                    layout.memory_views,
                    stream,
                )?);
                continue;
            }
            // A zero-sized allocation is an error in the driver; round up to one word.
            let bytes = buf.bytes.max(8) as usize;
            let mut ptr = 0;
            // SAFETY: valid out-pointer; a context is current.
            check(
                unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) },
                &format!("cuMemAlloc({:?}, {bytes} bytes)", buf.kind),
            )?;
            b.allocated.push((buf.kind, ptr));
            // SAFETY: `ptr` holds `bytes` bytes; the stream is live.
            check(
                unsafe { sys::cuMemsetD8Async(ptr, 0, bytes, stream) },
                &format!("cuMemsetD8Async({:?})", buf.kind),
            )?;
        }
        Ok(b)
    }

    /// The device address of a buffer (0 for a kind the layout does not have).
    pub fn ptr(&self, kind: BufferKind) -> u64 {
        if let (BufferKind::Memory, Some(v)) = (kind, &self.views) {
            return v.base();
        }
        self.allocated
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0, |(_, p)| *p)
    }

    /// Reads the histogram buffer back after everything queued on `stream` has finished,
    /// waiting until `deadline` at most. The copy is queued only once the stream is idle: into
    /// pageable memory it returns only when done, so behind a hung kernel it would never
    /// return and the deadline would never be looked at.
    pub fn read_histogram(
        &self,
        stream: sys::CUstream,
        deadline: Instant,
        what: &str,
    ) -> Result<Vec<u64>, RunError> {
        let mut words = vec![0u64; self.histogram_words];
        let copy = || {
            check(
                // SAFETY: `words` holds exactly the buffer's bytes; nothing else is queued on
                // `stream`. Should the copy still be in flight when the wait below gives up,
                // `words` is leaked rather than dropped under it.
                unsafe {
                    sys::cuMemcpyDtoHAsync_v2(
                        words.as_mut_ptr().cast(),
                        self.ptr(BufferKind::Histogram),
                        words.len() * 8,
                        stream,
                    )
                },
                "cuMemcpyDtoHAsync(histogram)",
            )
        };
        wait::when_drained(stream, deadline, what, copy)??;
        if let Err(stall) = wait::drain(stream, deadline, what) {
            std::mem::forget(words);
            return Err(stall.into());
        }
        Ok(words)
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        if !usable() {
            // A kernel may still run on these buffers, and cuMemFree would wait for it.
            return;
        }
        for (_, p) in &self.allocated {
            // SAFETY: allocated by `new`, freed once; the runner synchronises its stream first.
            unsafe { sys::cuMemFree_v2(*p) };
        }
    }
}
