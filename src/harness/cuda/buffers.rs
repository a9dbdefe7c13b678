//! The device buffers of one kernel, allocated and zero-filled once per test. Nothing is copied
//! to the device afterwards: the collect kernel resets each instance's locations and result
//! slots and the barrier counter for the next launch, and the histogram accumulates on the
//! device. The only copy is the histogram read back between batches.

use super::driver::check;
use super::views::Views;
use crate::codegen::{BufferKind, Layout};
use cudarc::driver::sys;

/// The buffers of [`Layout::buffers`], by kind.
pub struct Buffers {
    allocated: Vec<(BufferKind, sys::CUdeviceptr)>,
    /// The memory buffer when the test has generic aliases (then not in `allocated`).
    views: Option<Views>,
    histogram_words: usize,
}

impl Buffers {
    /// Allocates and zero-fills every buffer of `layout` on device `ordinal`. A context must be
    /// current.
    pub fn new(layout: &Layout, ordinal: i32) -> Result<Buffers, String> {
        let mut b = Buffers {
            allocated: Vec::new(),
            views: None,
            histogram_words: (layout.buffer_bytes(BufferKind::Histogram) / 8) as usize,
        };
        for buf in &layout.buffers {
            if buf.kind == BufferKind::Memory && layout.memory_views > 1 {
                b.views = Some(Views::new(ordinal, layout.view_bytes, layout.memory_views)?);
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
            // SAFETY: `ptr` holds `bytes` bytes.
            check(
                unsafe { sys::cuMemsetD8_v2(ptr, 0, bytes) },
                &format!("cuMemsetD8({:?})", buf.kind),
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

    /// Reads the histogram buffer back after everything queued on `stream` has finished.
    pub fn read_histogram(&self, stream: sys::CUstream) -> Result<Vec<u64>, String> {
        let mut words = vec![0u64; self.histogram_words];
        // SAFETY: `words` holds exactly the buffer's bytes; the copy is ordered after the
        // launches on `stream`, and the synchronisation below completes it before `words` is
        // read or dropped.
        check(
            unsafe {
                sys::cuMemcpyDtoHAsync_v2(
                    words.as_mut_ptr().cast(),
                    self.ptr(BufferKind::Histogram),
                    words.len() * 8,
                    stream,
                )
            },
            "cuMemcpyDtoHAsync(histogram)",
        )?;
        // SAFETY: `stream` is a live stream of the current context.
        check(
            unsafe { sys::cuStreamSynchronize(stream) },
            "cuStreamSynchronize (a launch failed, or the copy of the histogram)",
        )?;
        Ok(words)
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        for (_, p) in &self.allocated {
            // SAFETY: allocated by `new`, freed once; the runner synchronises its stream first.
            unsafe { sys::cuMemFree_v2(*p) };
        }
    }
}
