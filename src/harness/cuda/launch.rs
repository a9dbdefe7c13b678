//! One kernel launch: `cuLaunchKernelEx` on the run's stream, with the cluster-dimension launch
//! attribute when the test needs a cluster launch and the kernel does not state its own. The
//! configuration and the argument list are built once per test; a launch only passes them.

use super::args::ArgValue;
use super::config::{ClusterMode, LaunchPlan};
use super::driver::{check, usable};
use super::wait;
use crate::harness::watchdog::Stall;
use cudarc::driver::sys;
use std::ffi::c_void;
use std::time::Instant;

/// A kernel ready to launch again and again.
pub struct Launcher {
    func: sys::CUfunction,
    config: sys::CUlaunchConfig,
    /// Owned here so that `config.attrs` stays valid.
    attrs: Box<[sys::CUlaunchAttribute]>,
    entry: String,
}

impl Launcher {
    /// Prepares launches of `func` as `plan` says, on `stream`.
    pub fn new(func: sys::CUfunction, plan: &LaunchPlan, stream: sys::CUstream) -> Launcher {
        let mut attrs: Vec<sys::CUlaunchAttribute> = Vec::new();
        if let ClusterMode::Attribute(d) = plan.cluster {
            // SAFETY: an all-zero attribute is a valid value of this plain C union.
            let mut a: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
            a.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            a.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
                x: d[0],
                y: d[1],
                z: d[2],
            };
            attrs.push(a);
        }
        let mut attrs = attrs.into_boxed_slice();
        let config = sys::CUlaunchConfig {
            gridDimX: plan.grid[0],
            gridDimY: plan.grid[1],
            gridDimZ: plan.grid[2],
            blockDimX: plan.block[0],
            blockDimY: plan.block[1],
            blockDimZ: plan.block[2],
            sharedMemBytes: plan.shared_bytes,
            hStream: stream,
            attrs: if attrs.is_empty() {
                std::ptr::null_mut()
            } else {
                attrs.as_mut_ptr()
            },
            numAttrs: attrs.len() as u32,
        };
        Launcher {
            func,
            config,
            attrs,
            entry: plan.entry.clone(),
        }
    }

    /// Enqueues one launch with `args` (one per kernel parameter, in order: see
    /// [`super::args::KernelArgs`]); returns at once.
    pub fn launch(&self, args: &Args) -> Result<(), String> {
        debug_assert_eq!(self.config.numAttrs as usize, self.attrs.len());
        // SAFETY: `config` and its attributes are owned by `self`; `args` holds one pointer per
        // kernel parameter (built from the kernel's parameter list), each to an 8-byte value,
        // all owned by `args` and live for the call (the driver copies them before returning
        // and never writes through them).
        check(
            unsafe {
                sys::cuLaunchKernelEx(
                    &self.config,
                    self.func,
                    args.ptrs.as_ptr() as *mut *mut c_void,
                    std::ptr::null_mut(),
                )
            },
            &format!("cuLaunchKernelEx({})", self.entry),
        )
    }
}

/// A kernel's argument list as the driver reads it, built once per test: every launch of the
/// test passes the same one (each launch finds its seed on the device).
pub struct Args {
    /// The values, only owned here (on the heap, so `ptrs` stays valid when `Args` moves).
    _values: Box<[u64]>,
    /// One pointer per parameter, to its value.
    ptrs: Box<[*mut c_void]>,
}

impl Args {
    /// The argument list of `values` (every parameter is 8 bytes wide).
    pub fn new(values: &[ArgValue]) -> Args {
        let mut values: Box<[u64]> = values.iter().map(|v| v.bits()).collect();
        let ptrs = values
            .iter_mut()
            .map(|v| (v as *mut u64).cast::<c_void>())
            .collect();
        Args {
            _values: values,
            ptrs,
        }
    }
}

impl Launcher {
    /// The clusters of this launch's shape that the device holds at once
    /// (`cuOccupancyMaxActiveClusters`; the kernel's stated cluster size when the launch sets
    /// none).
    pub fn max_active_clusters(&self) -> Result<u32, String> {
        let mut n = 0;
        // SAFETY: valid out-pointer; `config` and its attributes are owned by `self`.
        check(
            unsafe { sys::cuOccupancyMaxActiveClusters(&mut n, self.func, &self.config) },
            &format!("cuOccupancyMaxActiveClusters({})", self.entry),
        )?;
        Ok(n.max(0) as u32)
    }
}

/// Waits, a bounded time, for everything queued on a stream when dropped, so that no kernel
/// still runs when the buffers and module it uses are freed, even when a run ends early with
/// an error. If the wait gives up, the device is lost and nothing is freed.
pub struct Drain(pub sys::CUstream, pub Instant);

impl Drop for Drain {
    fn drop(&mut self) {
        if usable() {
            // An error here was already reported by the call that failed, or is reported by
            // the lost device.
            let _ = wait::drain(self.0, self.1, "the launches left in the queue");
        }
    }
}

/// A pair of events that time the GPU's work on a stream.
pub struct Timer {
    start: sys::CUevent,
    end: sys::CUevent,
}

impl Timer {
    /// Creates the events and records the start on `stream`.
    pub fn start(stream: sys::CUstream) -> Result<Timer, String> {
        let mut start = std::ptr::null_mut();
        let mut end = std::ptr::null_mut();
        // SAFETY: valid out-pointers; a context is current.
        check(
            unsafe { sys::cuEventCreate(&mut start, 0) },
            "cuEventCreate",
        )?;
        // SAFETY: as above.
        check(unsafe { sys::cuEventCreate(&mut end, 0) }, "cuEventCreate")?;
        let t = Timer { start, end };
        // SAFETY: live event and stream.
        check(
            unsafe { sys::cuEventRecord(t.start, stream) },
            "cuEventRecord",
        )?;
        Ok(t)
    }

    /// Records the end on `stream`, waits for it until `deadline` at most, and returns the
    /// milliseconds between.
    pub fn stop(&self, stream: sys::CUstream, deadline: Instant) -> Result<f32, Stall> {
        let fault = |m: String| Stall::Fault(m);
        // SAFETY: live event and stream.
        check(
            unsafe { sys::cuEventRecord(self.end, stream) },
            "cuEventRecord",
        )
        .map_err(fault)?;
        wait::drain(stream, deadline, "the timing event")?;
        let mut ms = 0f32;
        // SAFETY: valid out-pointer; both events recorded and complete.
        check(
            unsafe { sys::cuEventElapsedTime(&mut ms, self.start, self.end) },
            "cuEventElapsedTime",
        )
        .map_err(fault)?;
        Ok(ms)
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if !usable() {
            return;
        }
        // SAFETY: created in `start`, destroyed once.
        unsafe {
            sys::cuEventDestroy_v2(self.start);
            sys::cuEventDestroy_v2(self.end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_pointers_point_at_the_values_after_a_move() {
        let args = Args::new(&[ArgValue::Ptr(0x1000), ArgValue::U64(u64::MAX - 5)]);
        let moved = std::iter::once(args).next().unwrap();
        // SAFETY: each pointer points at an 8-byte value owned by `moved`.
        let read: Vec<u64> = moved
            .ptrs
            .iter()
            .map(|p| unsafe { *p.cast::<u64>() })
            .collect();
        assert_eq!(read, vec![0x1000, u64::MAX - 5]);
    }
}
