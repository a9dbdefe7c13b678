//! Loading a generated PTX module. The driver's JIT compiles the PTX through the linker API
//! (`cuLinkAddData` + `cuLinkComplete`), which hands back the compiled cubin so that the exact
//! machine code that runs can be saved and disassembled (`cuobjdump -sass`); the cubin is then
//! loaded with `cuModuleLoadDataEx`. Both steps capture the JIT's info and error logs, so a bad
//! kernel reports ptxas's own message. A cubin made offline (`compiler=ptxas:…`) is loaded the
//! same way, without the JIT step.

use super::driver::check;
use super::support::{log_summary, log_text};
use cudarc::driver::sys::{self, CUjit_option as Opt, CUresult};
use std::ffi::{c_void, CString};

/// Bytes of each JIT log buffer.
const LOG_BYTES: usize = 64 * 1024;

/// A loaded module and what its compilation produced.
pub struct Module {
    handle: sys::CUmodule,
    /// The driver-JIT'd machine code (an ELF cubin).
    pub cubin: Vec<u8>,
    /// The JIT's info log (register and memory use per function, with verbose logging).
    pub info_log: String,
    /// Milliseconds the JIT spent, as the driver reports them.
    pub jit_wall_ms: f32,
}

/// Log buffers and the option arrays that point into them.
struct JitLogs {
    info: Vec<u8>,
    error: Vec<u8>,
    options: Vec<Opt>,
    values: Vec<*mut c_void>,
}

impl JitLogs {
    fn new() -> JitLogs {
        let mut l = JitLogs {
            info: vec![0; LOG_BYTES],
            error: vec![0; LOG_BYTES],
            options: Vec::new(),
            values: Vec::new(),
        };
        // Size options are pointer-sized integers in the value array, not pointers.
        l.options = vec![
            Opt::CU_JIT_INFO_LOG_BUFFER,
            Opt::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
            Opt::CU_JIT_ERROR_LOG_BUFFER,
            Opt::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            Opt::CU_JIT_LOG_VERBOSE,
            Opt::CU_JIT_WALL_TIME,
        ];
        l.values = vec![
            l.info.as_mut_ptr().cast(),
            std::ptr::without_provenance_mut(LOG_BYTES),
            l.error.as_mut_ptr().cast(),
            std::ptr::without_provenance_mut(LOG_BYTES),
            std::ptr::without_provenance_mut(1),
            std::ptr::null_mut(),
        ];
        l
    }

    /// The wall time the driver wrote over its option value (a `float` in the slot's low bits).
    fn wall_ms(&self) -> f32 {
        f32::from_bits(self.values[5].addr() as u32)
    }

    fn info(&self) -> String {
        log_text(&self.info)
    }

    fn error(&self) -> String {
        log_text(&self.error)
    }

    /// A failed JIT step as one line with ptxas's first messages.
    fn failure(&self, r: CUresult, step: &str, test: &str) -> String {
        let log = self.error();
        let log = if log.is_empty() { self.info() } else { log };
        if log.is_empty() {
            format!("JIT of {test} failed: {step} returned {r:?}")
        } else {
            format!(
                "JIT of {test} failed: {step} returned {r:?}: {}",
                log_summary(&log, 4)
            )
        }
    }
}

impl Module {
    /// JIT-compiles `ptx` for the current context's device and loads it. `test` names the test
    /// in messages. A context must be current.
    pub fn load(ptx: &str, test: &str) -> Result<Module, String> {
        let source = CString::new(ptx).map_err(|_| format!("the PTX of {test} contains NUL"))?;
        let name = CString::new("litmus.ptx").expect("no NUL");
        let mut logs = JitLogs::new();
        let mut state: sys::CUlinkState = std::ptr::null_mut();
        // SAFETY: the option arrays have equal lengths and point to live buffers of the stated
        // sizes; `state` is a valid out-pointer.
        let r = unsafe {
            sys::cuLinkCreate_v2(
                logs.options.len() as u32,
                logs.options.as_mut_ptr(),
                logs.values.as_mut_ptr(),
                &mut state,
            )
        };
        if r != CUresult::CUDA_SUCCESS {
            return Err(logs.failure(r, "cuLinkCreate", test));
        }
        let linked = (|| {
            // SAFETY: `source` is NUL-terminated and outlives the call; its size includes the
            // terminator as the API asks for PTX input.
            let r = unsafe {
                sys::cuLinkAddData_v2(
                    state,
                    sys::CUjitInputType::CU_JIT_INPUT_PTX,
                    source.as_ptr() as *mut c_void,
                    source.as_bytes_with_nul().len(),
                    name.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            if r != CUresult::CUDA_SUCCESS {
                return Err(logs.failure(r, "cuLinkAddData (ptxas)", test));
            }
            let mut cubin: *mut c_void = std::ptr::null_mut();
            let mut size = 0usize;
            // SAFETY: valid out-pointers; the cubin stays owned by `state` until destroyed.
            let r = unsafe { sys::cuLinkComplete(state, &mut cubin, &mut size) };
            if r != CUresult::CUDA_SUCCESS || cubin.is_null() {
                return Err(logs.failure(r, "cuLinkComplete", test));
            }
            // SAFETY: the driver returned `size` readable bytes at `cubin`.
            Ok(unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec())
        })();
        // SAFETY: `state` was created above and is destroyed exactly once.
        unsafe { sys::cuLinkDestroy(state) };
        let mut module = Module::load_cubin(linked?, test)?;
        module.info_log = logs.info();
        module.jit_wall_ms = logs.wall_ms();
        Ok(module)
    }

    /// Loads a cubin made beforehand (by an offline ptxas). A context must be current.
    pub fn load_cubin(cubin: Vec<u8>, test: &str) -> Result<Module, String> {
        let mut load_logs = JitLogs::new();
        let mut handle: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: `cubin` is a complete image that outlives the call; option arrays as above.
        let r = unsafe {
            sys::cuModuleLoadDataEx(
                &mut handle,
                cubin.as_ptr().cast(),
                load_logs.options.len() as u32,
                load_logs.options.as_mut_ptr(),
                load_logs.values.as_mut_ptr(),
            )
        };
        if r != CUresult::CUDA_SUCCESS {
            return Err(load_logs.failure(r, "cuModuleLoadDataEx", test));
        }
        Ok(Module {
            handle,
            cubin,
            info_log: String::new(),
            jit_wall_ms: 0.0,
        })
    }

    /// The kernel `entry` of the module.
    pub fn function(&self, entry: &str) -> Result<sys::CUfunction, String> {
        let c = CString::new(entry).map_err(|_| format!("entry name {entry:?} contains NUL"))?;
        let mut f = std::ptr::null_mut();
        // SAFETY: valid out-pointer; `handle` is a loaded module; `c` is NUL-terminated.
        check(
            unsafe { sys::cuModuleGetFunction(&mut f, self.handle, c.as_ptr()) },
            &format!("cuModuleGetFunction({entry})"),
        )?;
        Ok(f)
    }
}

/// One attribute of a kernel (`CU_FUNC_ATTRIBUTE_*`).
pub fn function_attribute(
    f: sys::CUfunction,
    attr: sys::CUfunction_attribute,
) -> Result<i32, String> {
    let mut v = 0;
    // SAFETY: valid out-pointer; `f` came from a loaded module.
    check(
        unsafe { sys::cuFuncGetAttribute(&mut v, attr, f) },
        &format!("cuFuncGetAttribute({attr:?})"),
    )?;
    Ok(v)
}

impl Drop for Module {
    fn drop(&mut self) {
        if !super::driver::usable() {
            // A kernel of this module may still run.
            return;
        }
        // SAFETY: the module was loaded by `load` and is unloaded once; nothing launched from it
        // is still running (the runner drains its stream before dropping it).
        unsafe { sys::cuModuleUnload(self.handle) };
    }
}
