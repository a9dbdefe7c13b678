//! The thin layer over the raw driver API: result codes as messages, and the process-wide
//! device handle. Every driver call of the backend goes through `sys` after
//! [`sys::is_culib_present`] has confirmed that `libcuda` loads (otherwise cudarc panics).

use super::config::DeviceLimits;
use super::provenance::{self, DeviceInfo};
use super::support;
use cudarc::driver::sys::{self, CUdevice_attribute as Attr, CUresult};
use std::sync::Mutex;

/// A driver result as a message: the CUresult's name (`CUDA_ERROR_NO_DEVICE`), never the
/// driver's own error string, which needs more of the library than a failed call guarantees.
/// A sticky error also marks the device lost for the rest of the process.
pub fn check(r: CUresult, what: &str) -> Result<(), String> {
    if r == CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let message = format!("{what} returned {r:?}");
    if sticky(r) {
        lose_device(&message);
    }
    Err(message)
}

/// Whether `r` leaves the context unusable: after these, CUDA fails every later call of the
/// context, and only a fresh process can use the device again (CUDA Programming Guide, error
/// checking: "sticky" errors).
pub fn sticky(r: CUresult) -> bool {
    use CUresult::*;
    matches!(
        r,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_ECC_UNCORRECTABLE
            | CUDA_ERROR_CONTEXT_IS_DESTROYED
    )
}

/// Marks the device lost: nothing more runs on it, and nothing is freed (freeing memory
/// waits for the kernels that may still use it).
pub fn lose_device(reason: &str) {
    crate::harness::health::lose(reason);
}

/// Whether the device is still usable in this process.
pub fn usable() -> bool {
    crate::harness::health::lost().is_none()
}

/// An opened device: its primary context, made current on the calling thread by [`Gpu::bind`],
/// and one non-blocking stream for every launch.
pub struct Gpu {
    /// What the device is.
    pub info: DeviceInfo,
    ctx: sys::CUcontext,
    /// The stream all launches and copies of this device go to.
    pub stream: sys::CUstream,
    /// Serialises runs on the device (one test at a time owns the stream).
    pub lock: Mutex<()>,
}

// SAFETY: a CUDA context and stream may be used from any host thread once the context is made
// current there (`bind`); runs on one device are serialised by `lock`.
unsafe impl Send for Gpu {}
// SAFETY: as above; the handles are never mutated after `open`.
unsafe impl Sync for Gpu {}

impl Gpu {
    /// Makes the device's context current on this thread.
    pub fn bind(&self) -> Result<(), String> {
        // SAFETY: `ctx` is the retained primary context, valid for the life of the process.
        check(unsafe { sys::cuCtxSetCurrent(self.ctx) }, "cuCtxSetCurrent")
    }
}

/// The device `ordinal`, opened once per process and kept (its primary context is never
/// released: re-creating it for every test would cost far more than a launch). `Err` is a
/// one-line reason the GPU backend cannot run here.
pub fn gpu(ordinal: i32) -> Result<&'static Gpu, String> {
    type Opened = Vec<(i32, Result<&'static Gpu, String>)>;
    static OPENED: Mutex<Opened> = Mutex::new(Vec::new());
    let mut opened = OPENED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, r)) = opened.iter().find(|(o, _)| *o == ordinal) {
        return r.clone();
    }
    let r = open(ordinal).map(|g| &*Box::leak(Box::new(g)));
    opened.push((ordinal, r.clone()));
    r
}

/// The launch limits and per-SM resources of `dev`; what the driver does not report (the
/// allocation units, the registers per thread) is the compute capability 9.0 value.
fn limits(dev: sys::CUdevice) -> Result<DeviceLimits, String> {
    let get = |a| attribute(dev, a).map(|v| v.max(0) as u32);
    let or_model = |a, v: u32| attribute(dev, a).map_or(v, |r| r.max(0) as u32);
    let model = DeviceLimits::h100_sxm();
    Ok(DeviceLimits {
        max_threads_per_block: get(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_grid_x: get(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
        max_shared_per_block: get(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
        cluster_launch: or_model(Attr::CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, 0) != 0,
        sms: get(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        warp_size: get(Attr::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        max_threads_per_sm: get(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
        max_ctas_per_sm: get(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
        registers_per_sm: get(Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
        max_registers_per_thread: model.max_registers_per_thread,
        register_alloc_unit: model.register_alloc_unit,
        shared_per_sm: get(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
        max_shared_per_block_optin: or_model(
            Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            model.max_shared_per_block_optin,
        ),
        reserved_shared_per_block: or_model(
            Attr::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
            model.reserved_shared_per_block,
        ),
        shared_alloc_unit: model.shared_alloc_unit,
        memory_clock_khz: or_model(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 0),
        memory_bus_bits: or_model(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 0),
    })
}

/// Reads one device attribute.
pub(super) fn attribute(dev: sys::CUdevice, attr: Attr) -> Result<i32, String> {
    let mut v = 0;
    // SAFETY: `v` is a valid out-pointer; `dev` came from cuDeviceGet.
    check(
        unsafe { sys::cuDeviceGetAttribute(&mut v, attr, dev) },
        &format!("cuDeviceGetAttribute({attr:?})"),
    )?;
    Ok(v)
}

/// The names under which the driver library is looked up (by cudarc, in this order among
/// others): driver-only machines often have `libcuda.so.1` and no `libcuda.so`.
pub const LIBRARY_NAMES: [&str; 2] = ["libcuda.so", "libcuda.so.1"];

/// Every driver entry point the backend calls, under the name `libcuda` exports it (cudarc
/// looks each up on its first call and panics when the library lacks it). `open` looks them
/// all up first, so that a driver without one is refused, naming it, before anything runs.
pub const SYMBOLS: [&str; 53] = [
    "cuArray3DCreate_v2",
    "cuArrayDestroy",
    "cuCtxSetCurrent",
    "cuDeviceGet",
    "cuDeviceGetAttribute",
    "cuDeviceGetCount",
    "cuDeviceGetName",
    "cuDeviceGetTexture1DLinearMaxWidth",
    "cuDevicePrimaryCtxRetain",
    "cuDeviceTotalMem_v2",
    "cuDriverGetVersion",
    "cuEventCreate",
    "cuEventDestroy_v2",
    "cuEventElapsedTime",
    "cuEventQuery",
    "cuEventRecord",
    "cuFuncGetAttribute",
    "cuGraphDestroy",
    "cuGraphExecDestroy",
    "cuGraphInstantiateWithFlags",
    "cuGraphLaunch",
    "cuInit",
    "cuLaunchKernelEx",
    "cuLinkAddData_v2",
    "cuLinkComplete",
    "cuLinkCreate_v2",
    "cuLinkDestroy",
    "cuMemAddressFree",
    "cuMemAddressReserve",
    "cuMemAlloc_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemCreate",
    "cuMemFree_v2",
    "cuMemGetAllocationGranularity",
    "cuMemMap",
    "cuMemRelease",
    "cuMemSetAccess",
    "cuMemsetD32Async",
    "cuMemsetD8Async",
    "cuMemUnmap",
    "cuModuleGetFunction",
    "cuModuleLoadDataEx",
    "cuModuleUnload",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    "cuOccupancyMaxActiveClusters",
    "cuStreamBeginCapture_v2",
    "cuStreamCreate",
    "cuStreamEndCapture",
    "cuStreamQuery",
    "cuSurfObjectCreate",
    "cuSurfObjectDestroy",
    "cuTexObjectCreate",
    "cuTexObjectDestroy",
];

/// The reason a driver library lacking some of [`SYMBOLS`] cannot be used (`has` says whether
/// it exports a name), or `None` when it has them all.
fn lacking(has: impl Fn(&str) -> bool) -> Option<String> {
    let missing: Vec<&str> = SYMBOLS.iter().copied().filter(|s| !has(s)).collect();
    (!missing.is_empty()).then(|| {
        format!(
            "the CUDA driver library lacks {} of the {} functions ptx-litmus calls: {}",
            missing.len(),
            SYMBOLS.len(),
            missing.join(", ")
        )
    })
}

fn open(ordinal: i32) -> Result<Gpu, String> {
    let api = start_driver()?;
    let dev = device(ordinal)?;
    let info = describe(dev, ordinal, api)?;
    let (ctx, stream) = primary_context(dev)?;
    Ok(Gpu {
        info,
        ctx,
        stream,
        lock: Mutex::new(()),
    })
}

/// Loads the driver library, checks that it has every function the backend calls, starts it
/// and checks its version; the CUDA version it supports.
fn start_driver() -> Result<i32, String> {
    // SAFETY: only tries to load the library; no driver call is made.
    if !unsafe { sys::is_culib_present() } {
        return Err(format!(
            "no CUDA driver: none of {} could be loaded (is the NVIDIA driver installed?)",
            LIBRARY_NAMES.join(", ")
        ));
    }
    // SAFETY: the library is present, so cudarc loads it without panicking; looking a symbol
    // up calls nothing.
    let lib = unsafe { sys::culib() };
    // SAFETY: as above; the pointer type is never called through.
    let has = |name: &str| unsafe { lib.get::<*const std::ffi::c_void>(name.as_bytes()) }.is_ok();
    if let Some(why) = lacking(has) {
        return Err(why);
    }
    // SAFETY: the library is present, so cudarc resolves the symbol instead of panicking.
    let r = unsafe { sys::cuInit(0) };
    if r == CUresult::CUDA_ERROR_NO_DEVICE {
        return Err(
            "the CUDA driver is installed but found no GPU (cuInit: CUDA_ERROR_NO_DEVICE)".into(),
        );
    }
    check(r, "the CUDA driver did not start: cuInit")?;
    let mut api = 0;
    // SAFETY: valid out-pointer; the driver is initialised.
    check(
        unsafe { sys::cuDriverGetVersion(&mut api) },
        "cuDriverGetVersion",
    )?;
    support::check_driver(api)?;
    Ok(api)
}

/// The device `ordinal` of a started driver, or why there is none.
fn device(ordinal: i32) -> Result<sys::CUdevice, String> {
    let mut count = 0;
    // SAFETY: valid out-pointer.
    check(
        unsafe { sys::cuDeviceGetCount(&mut count) },
        "cuDeviceGetCount",
    )?;
    if count == 0 {
        return Err("the CUDA driver found no GPU (cuDeviceGetCount = 0)".into());
    }
    if ordinal >= count {
        return Err(format!(
            "no GPU {ordinal}: the CUDA driver sees {count} device(s), numbered from 0"
        ));
    }
    let mut dev = 0;
    // SAFETY: valid out-pointer; `ordinal` is in range.
    check(
        unsafe { sys::cuDeviceGet(&mut dev, ordinal) },
        "cuDeviceGet",
    )?;
    Ok(dev)
}

/// What `dev` is (its name, compute capability, sizes and limits), refused when its compute
/// capability is too old; `api` is the driver's CUDA version.
fn describe(dev: sys::CUdevice, ordinal: i32, api: i32) -> Result<DeviceInfo, String> {
    let mut name = [0 as std::ffi::c_char; 256];
    // SAFETY: the buffer holds `len` bytes; the driver NUL-terminates.
    check(
        unsafe { sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, dev) },
        "cuDeviceGetName",
    )?;
    let name: Vec<u8> = name.iter().map(|&c| c as u8).collect();
    let name = support::log_text(&name);
    let compute = (
        attribute(dev, Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        attribute(dev, Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
    );
    support::check_compute(&format!("GPU {ordinal} ({name})"), compute)?;
    let optional = |a| attribute(dev, a).ok();
    let mut memory = 0usize;
    // SAFETY: valid out-pointer.
    let memory_bytes = (unsafe { sys::cuDeviceTotalMem_v2(&mut memory, dev) }
        == CUresult::CUDA_SUCCESS)
        .then_some(memory as u64);
    Ok(DeviceInfo {
        ordinal,
        name,
        compute,
        sms: attribute(dev, Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        clock_khz: optional(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
        memory_clock_khz: optional(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
        l2_bytes: optional(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
        memory_bytes,
        pci_bus: optional(Attr::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
        driver_api: api,
        driver_release: provenance::driver_release(),
        limits: limits(dev)?,
    })
}

/// Retains `dev`'s primary context, makes it current and creates the non-blocking stream of
/// every launch.
fn primary_context(dev: sys::CUdevice) -> Result<(sys::CUcontext, sys::CUstream), String> {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the primary context is retained for the life of the process.
    check(
        unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, dev) },
        "cuDevicePrimaryCtxRetain",
    )?;
    // SAFETY: `ctx` was just retained.
    check(unsafe { sys::cuCtxSetCurrent(ctx) }, "cuCtxSetCurrent")?;
    let mut stream = std::ptr::null_mut();
    // SAFETY: valid out-pointer; a context is current.
    check(
        unsafe {
            sys::cuStreamCreate(
                &mut stream,
                sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
            )
        },
        "cuStreamCreate",
    )?;
    Ok((ctx, stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_is_looked_up_under_both_names() {
        let candidates = cudarc::get_lib_name_candidates("cuda");
        for name in LIBRARY_NAMES {
            assert!(
                candidates.iter().any(|c| c == name),
                "{name} is not among the names cudarc tries: {candidates:?}"
            );
        }
    }

    #[test]
    fn every_driver_function_called_is_looked_up_before_the_first_call() {
        // The names after `sys::` in the backend's sources, which cudarc would resolve lazily.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/harness/cuda");
        let mut called = std::collections::BTreeSet::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            for piece in text.split("sys::cu").skip(1) {
                let name: String = piece
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                    called.insert(format!("cu{name}"));
                }
            }
        }
        let listed: std::collections::BTreeSet<String> =
            SYMBOLS.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            called, listed,
            "SYMBOLS must list exactly the driver functions called"
        );
    }

    #[test]
    fn a_driver_lacking_a_function_is_refused_naming_it() {
        assert_eq!(lacking(|_| true), None);
        let why = lacking(|s| s != "cuLaunchKernelEx" && s != "cuMemCreate").unwrap();
        assert_eq!(
            why,
            format!(
                "the CUDA driver library lacks 2 of the {} functions ptx-litmus calls: \
                 cuLaunchKernelEx, cuMemCreate",
                SYMBOLS.len()
            )
        );
    }

    #[test]
    fn faults_that_break_the_context_are_told_from_the_others() {
        assert!(sticky(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
        assert!(sticky(CUresult::CUDA_ERROR_LAUNCH_FAILED));
        assert!(!sticky(CUresult::CUDA_ERROR_NOT_READY));
        assert!(!sticky(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert!(!sticky(CUresult::CUDA_ERROR_OUT_OF_MEMORY));
        assert!(check(CUresult::CUDA_ERROR_INVALID_VALUE, "cuMemAlloc").is_err());
    }
}
