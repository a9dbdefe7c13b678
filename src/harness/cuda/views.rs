//! The memory buffer of a test with generic aliases: one physical allocation mapped at
//! [`Layout::memory_views`](crate::codegen::Layout::memory_views) virtual addresses,
//! `view_bytes` apart, with the driver's virtual memory management API. A generic alias is
//! another virtual address of the same memory; the kernel reaches the k-th alias of a location
//! through view k. Mapping is checked once: a word written through the first view must be read
//! back through every other, or the test is not run.

use super::driver::{check, usable};
use super::wait;
use cudarc::driver::sys::{self, CUdeviceptr};
use std::time::{Duration, Instant};

/// How long the alias check may take: a 4-byte write and a few 4-byte reads.
const CHECK_WAIT: Duration = Duration::from_secs(10);

/// A word written through view 0 and read back through the others.
const PATTERN: u32 = 0x5EED_A11A;

/// One physical allocation mapped at several virtual addresses; unmapped and freed on drop.
pub struct Views {
    base: CUdeviceptr,
    view_bytes: usize,
    views: usize,
    handle: Option<sys::CUmemGenericAllocationHandle>,
    reserved: bool,
    mapped: usize,
}

/// The properties of a pinned allocation on device `ordinal`.
fn allocation(ordinal: i32) -> sys::CUmemAllocationProp {
    // SAFETY: a plain C struct; all-zero is its documented default for the unused fields.
    let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
    prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = location(ordinal);
    prop
}

/// The size in bytes whose multiples the driver maps for allocations like `prop`.
fn granularity(prop: &sys::CUmemAllocationProp) -> Result<usize, String> {
    let mut granularity = 0usize;
    // SAFETY: valid pointers; a context is current.
    check(
        unsafe {
            sys::cuMemGetAllocationGranularity(
                &mut granularity,
                prop,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            )
        },
        "cuMemGetAllocationGranularity",
    )?;
    if granularity == 0 {
        return Err("the driver reports a mapping granularity of 0 bytes".into());
    }
    Ok(granularity)
}

/// Where the allocation lives: device `ordinal`'s memory.
fn location(ordinal: i32) -> sys::CUmemLocation {
    sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id: ordinal,
    }
}

impl Views {
    /// Allocates `view_bytes` of device `ordinal`, maps them `views` times, checks that the
    /// views alias and queues their zero-filling on `stream`. A context must be current.
    pub fn new(
        ordinal: i32,
        view_bytes: u64,
        views: u32,
        stream: sys::CUstream,
    ) -> Result<Views, String> {
        let mut v = Views {
            base: 0,
            view_bytes: view_bytes as usize,
            views: views as usize,
            handle: None,
            reserved: false,
            mapped: 0,
        };
        let prop = allocation(ordinal);
        let granularity = granularity(&prop)?;
        if v.view_bytes % granularity != 0 {
            return Err(format!(
                "the driver maps memory in units of {granularity} bytes, which do not divide \
                 the {} bytes between the views of a generic alias",
                v.view_bytes
            ));
        }
        let mut handle = 0;
        // SAFETY: valid pointers; the size is a multiple of the granularity.
        check(
            unsafe { sys::cuMemCreate(&mut handle, v.view_bytes, &prop, 0) },
            &format!("cuMemCreate({} bytes)", v.view_bytes),
        )?;
        v.handle = Some(handle);
        v.map(handle, ordinal)?;
        v.check_aliasing(stream)?;
        // SAFETY: view 0 is mapped and writable; the stream is live.
        check(
            unsafe { sys::cuMemsetD8Async(v.base, 0, v.view_bytes, stream) },
            "cuMemsetD8Async(memory views)",
        )?;
        Ok(v)
    }

    /// Reserves the address range of every view, maps `handle` at each, and makes them
    /// readable and writable from device `ordinal`.
    fn map(
        &mut self,
        handle: sys::CUmemGenericAllocationHandle,
        ordinal: i32,
    ) -> Result<(), String> {
        let total = self.view_bytes * self.views;
        // SAFETY: valid out-pointer; the size is a multiple of the granularity.
        check(
            unsafe { sys::cuMemAddressReserve(&mut self.base, total, 0, 0, 0) },
            &format!("cuMemAddressReserve({total} bytes)"),
        )?;
        self.reserved = true;
        for k in 0..self.views {
            // SAFETY: the range lies in the reservation and is not mapped yet.
            check(
                unsafe { sys::cuMemMap(self.view(k), self.view_bytes, 0, handle, 0) },
                &format!("cuMemMap(view {k})"),
            )?;
            self.mapped += 1;
        }
        let desc = sys::CUmemAccessDesc {
            location: location(ordinal),
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: the whole range is mapped; one descriptor.
        check(
            unsafe { sys::cuMemSetAccess(self.base, total, &desc, 1) },
            "cuMemSetAccess",
        )
    }

    /// The device address of view `k`.
    fn view(&self, k: usize) -> CUdeviceptr {
        self.base + (k * self.view_bytes) as CUdeviceptr
    }

    /// The first view's address: the memory buffer as the kernel receives it.
    pub fn base(&self) -> CUdeviceptr {
        self.base
    }

    /// Writes [`PATTERN`] through view 0 and reads it through every other view, on `stream`,
    /// waiting a bounded time.
    fn check_aliasing(&self, stream: sys::CUstream) -> Result<(), String> {
        // SAFETY: view 0 is mapped and writable; the stream is live.
        check(
            unsafe { sys::cuMemsetD32Async(self.base, PATTERN, 1, stream) },
            "cuMemsetD32Async(alias check)",
        )?;
        let mut words = vec![0u32; self.views];
        for (k, word) in words.iter_mut().enumerate().skip(1) {
            let dst: *mut u32 = word;
            // SAFETY: `dst` holds the 4 bytes copied and is not touched until the stream is
            // drained; `words` is leaked if anything fails before; view k is mapped.
            let r = check(
                unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), self.view(k), 4, stream) },
                &format!("cuMemcpyDtoHAsync(view {k})"),
            );
            if let Err(e) = r {
                std::mem::forget(words);
                return Err(e);
            }
        }
        if let Err(stall) = wait::drain(stream, Instant::now() + CHECK_WAIT, "the alias check") {
            std::mem::forget(words);
            return Err(stall.to_string());
        }
        for (k, &word) in words.iter().enumerate().skip(1) {
            if word != PATTERN {
                return Err(format!(
                    "memory view {k} does not alias view 0 (read {word:#x}, wrote \
                     {PATTERN:#x}): generic aliases cannot be run"
                ));
            }
        }
        Ok(())
    }
}

impl Drop for Views {
    fn drop(&mut self) {
        if !usable() {
            // A kernel may still run on this memory; unmapping would pull it away.
            return;
        }
        // SAFETY: each call undoes one step `new` completed, in reverse order; the runner
        // synchronises its stream before buffers are dropped.
        unsafe {
            for k in 0..self.mapped {
                sys::cuMemUnmap(self.view(k), self.view_bytes);
            }
            if self.reserved {
                sys::cuMemAddressFree(self.base, self.view_bytes * self.views);
            }
            if let Some(h) = self.handle {
                sys::cuMemRelease(h);
            }
        }
    }
}
