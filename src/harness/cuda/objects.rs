//! The texture and surface objects of one kernel, created once per test from the descriptors
//! of `textures` and destroyed when dropped. The runner drops them after its `Drain` has waited
//! for the queued launches and before the buffers, so no kernel still reads an object, and no
//! object outlives the memory it reads, on any way out of a run.

use super::args::Handles;
use super::driver::{attribute, check, usable};
use super::textures::{self, ObjectLimits, CHANNELS, FORMAT};
use crate::codegen::{BufferKind, Layout};
use crate::harness::RunError;
use cudarc::driver::sys::{self, CUdevice_attribute as Attr};

/// A kernel's texture object, its surface object and the CUDA array behind the surface, each
/// present only when the kernel takes it.
pub struct Objects {
    texture: Option<sys::CUtexObject>,
    surface: Option<sys::CUsurfObject>,
    array: Option<(sys::CUarray, usize, usize)>,
}

impl Objects {
    /// Creates the objects `layout`'s kernels take: a texture over the memory buffer at device
    /// address `memory`, a CUDA array and a surface over it. What the device `ordinal` cannot
    /// hold is refused with the reason ([`RunError::Unsupported`]); a failed driver call names
    /// the call. A context must be current.
    pub fn new(layout: &Layout, memory: u64, ordinal: i32) -> Result<Objects, RunError> {
        // Filled one by one, so that on an early return `drop` destroys what was made.
        let mut o = Objects {
            texture: None,
            surface: None,
            array: None,
        };
        if !layout.linear_texture && layout.array_words == 0 {
            return Ok(o);
        }
        let limits = read_limits(ordinal)?;
        if layout.linear_texture {
            let bytes = layout.buffer_bytes(BufferKind::Memory);
            let res = textures::linear_resource(memory, bytes, &limits)?;
            let desc = textures::texture_desc();
            let mut t = 0;
            // SAFETY: valid out-pointer and descriptors; no resource view (null) for a linear
            // resource; the buffer outlives the object (see the module's doc).
            check(
                unsafe { sys::cuTexObjectCreate(&mut t, &res, &desc, std::ptr::null()) },
                &format!("cuTexObjectCreate(the memory buffer, {bytes} bytes)"),
            )?;
            o.texture = Some(t);
        }
        if let Some(a) = textures::surface_array(layout, &limits)? {
            let mut array = std::ptr::null_mut();
            // SAFETY: valid out-pointer and descriptor.
            check(
                unsafe { sys::cuArray3DCreate_v2(&mut array, &a) },
                &format!("cuArray3DCreate({} x {} words)", a.Width, a.Height),
            )?;
            o.array = Some((array, a.Width, a.Height));
            let res = textures::array_resource(array);
            let mut s = 0;
            // SAFETY: valid out-pointer; `res` names the live array made for surfaces above.
            check(
                unsafe { sys::cuSurfObjectCreate(&mut s, &res) },
                "cuSurfObjectCreate(the CUDA array)",
            )?;
            o.surface = Some(s);
        }
        Ok(o)
    }

    /// The handles the kernel arguments carry.
    pub fn handles(&self) -> Handles {
        Handles {
            texture: self.texture,
            surface: self.surface,
        }
    }

    /// The objects made, for provenance (`None` when the kernel takes none).
    pub fn describe(&self) -> Option<String> {
        let texture = self
            .texture
            .map(|_| "texture object over the memory buffer (linear, u32 x 1)".to_string());
        let surface = self.array.map(|(_, w, h)| {
            format!("surface object over a {w} x {h} CUDA array (u32 x 1, surface load/store)")
        });
        let all: Vec<String> = texture.into_iter().chain(surface).collect();
        (!all.is_empty()).then(|| all.join("; "))
    }
}

impl Drop for Objects {
    fn drop(&mut self) {
        if !usable() {
            // A kernel may still run with these objects: leave them to the lost context.
            return;
        }
        // SAFETY: each handle was created by `new` and is destroyed once, the objects before
        // the array they read; the runner drained its stream first. Errors here would only
        // repeat one already reported.
        unsafe {
            if let Some(t) = self.texture {
                sys::cuTexObjectDestroy(t);
            }
            if let Some(s) = self.surface {
                sys::cuSurfObjectDestroy(s);
            }
            if let Some((a, _, _)) = self.array {
                sys::cuArrayDestroy(a);
            }
        }
    }
}

/// The device's limits on the objects.
fn read_limits(ordinal: i32) -> Result<ObjectLimits, String> {
    let mut dev = 0;
    // SAFETY: valid out-pointer; the driver is initialised (a context is current).
    check(
        unsafe { sys::cuDeviceGet(&mut dev, ordinal) },
        "cuDeviceGet",
    )?;
    let get = |a| attribute(dev, a).map(|v| v.max(0) as u64);
    let mut linear = 0usize;
    // SAFETY: valid out-pointer and device.
    check(
        unsafe { sys::cuDeviceGetTexture1DLinearMaxWidth(&mut linear, FORMAT, CHANNELS, dev) },
        "cuDeviceGetTexture1DLinearMaxWidth(u32 x 1)",
    )?;
    Ok(ObjectLimits {
        texture_alignment: get(Attr::CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)?,
        linear_elements: linear as u64,
        surface2d: [
            get(Attr::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH)?,
            get(Attr::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT)?,
        ],
    })
}
