//! The device buffers of one kernel, allocated and zero-filled once per test, on the run's
//! stream (a zeroing on the default stream would not be ordered before the launches on the
//! run's non-blocking stream). Nothing is copied
//! to the device afterwards: the collect kernel resets each instance's locations and result
//! slots and the barrier counter for the next launch, and the histogram accumulates on the
//! device. The only copy is the histogram read back between batches.

use super::driver::{check, usable};
use super::views::Views;
use super::wait;
use crate::codegen::layout::MEMORY_ZERO_BITS;
use crate::codegen::{BufferKind, Layout};
use crate::harness::RunError;
use cudarc::driver::sys;
use std::time::Instant;

/// Where every buffer starts: a multiple of 4 KiB. The driver promises allocations only
/// 256-byte alignment (CUDA C++ Programming Guide, "Device Memory Accesses"), but a texture
/// over the memory buffer must start at the device's `TEXTURE_ALIGNMENT` (512 bytes on
/// compute capability 9.0; `textures::linear_resource` checks the device's own), so each
/// buffer is allocated this much larger and placed at the first boundary inside.
const BASE_ALIGN: u64 = 4096;

/// The memory buffer's address `ptr` has the low bits the test kernel takes its zero from
/// ([`MEMORY_ZERO_BITS`]) clear; a buffer elsewhere would move every location argument.
fn zero_bits(ptr: u64) -> Result<(), String> {
    match ptr & u64::from(MEMORY_ZERO_BITS) {
        0 => Ok(()),
        _ => Err(format!(
            "the memory buffer is at {ptr:#x}, whose low bits ({MEMORY_ZERO_BITS:#x}) the \
             kernel needs to be 0"
        )),
    }
}

/// A buffer's allocation and the aligned address it is used at.
struct Allocation {
    kind: BufferKind,
    raw: sys::CUdeviceptr,
    base: sys::CUdeviceptr,
}

/// The buffers of [`Layout::buffers`], by kind.
pub struct Buffers {
    allocated: Vec<Allocation>,
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
            let mut raw = 0;
            // SAFETY: valid out-pointer; a context is current.
            check(
                unsafe { sys::cuMemAlloc_v2(&mut raw, bytes + BASE_ALIGN as usize) },
                &format!("cuMemAlloc({:?}, {bytes} bytes)", buf.kind),
            )?;
            let base = raw.next_multiple_of(BASE_ALIGN);
            b.allocated.push(Allocation {
                kind: buf.kind,
                raw,
                base,
            });
            // SAFETY: `base` holds `bytes` bytes of the allocation; the stream is live.
            check(
                unsafe { sys::cuMemsetD8Async(base, 0, bytes, stream) },
                &format!("cuMemsetD8Async({:?})", buf.kind),
            )?;
        }
        zero_bits(b.ptr(BufferKind::Memory))?;
        Ok(b)
    }

    /// The device address of a buffer (0 for a kind the layout does not have).
    pub fn ptr(&self, kind: BufferKind) -> u64 {
        if let (BufferKind::Memory, Some(v)) = (kind, &self.views) {
            return v.base();
        }
        self.allocated
            .iter()
            .find(|a| a.kind == kind)
            .map_or(0, |a| a.base)
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
        for a in &self.allocated {
            // SAFETY: allocated by `new`, freed once; the runner synchronises its stream first.
            unsafe { sys::cuMemFree_v2(a.raw) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_buffer_s_placement_keeps_the_kernel_s_zero() {
        // Every buffer starts at a BASE_ALIGN boundary, which clears the bits the kernel reads.
        assert_eq!(BASE_ALIGN & u64::from(MEMORY_ZERO_BITS), 0);
        assert!(zero_bits(0x7f12_3456_1000_u64.next_multiple_of(BASE_ALIGN)).is_ok());
        let err = zero_bits(0x7f12_3456_1010).unwrap_err();
        assert!(err.contains("0x7f1234561010"), "{err}");
    }
}
