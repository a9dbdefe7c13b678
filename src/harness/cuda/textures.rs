//! The descriptors of a kernel's texture and surface objects, built by pure functions so that
//! unit tests check them field by field without a GPU; `objects` hands them to the driver.
//!
//! - The texture object reads the memory buffer itself: a `CU_RESOURCE_TYPE_LINEAR` resource of
//!   one 32-bit unsigned channel per word, so element `i` is the buffer's word `i`. `tld` is
//!   emitted as `tex.1d.v4.u32.s32 d, [p_tex, {i}]`, the fetch CUDA's `tex1Dfetch` makes of
//!   a texture over linear memory: integer coordinates, unfiltered. The descriptor says so
//!   explicitly: point filtering, unnormalised coordinates (with which the driver API allows
//!   only clamp addressing), and `CU_TRSF_READ_AS_INTEGER`, the element-type read mode (a
//!   32-bit integer format is never promoted to float in any case).
//! - The surface object writes and reads a CUDA array made for it (`CUDA_ARRAY3D_SURFACE_LDST`),
//!   2D, one 32-bit unsigned channel, [`Layout::array_extent`] elements wide and high: codegen's
//!   `suld.b.2d`/`sust.b.2d` address word `w` at byte `x = 4 * (w % width)`, row
//!   `y = w / width`.
//!
//! Facts from the CUDA driver API reference (`cuTexObjectCreate`, `cuSurfObjectCreate`,
//! `cuArray3DCreate`): a linear resource's address must be aligned to
//! `CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT`, and its elements (`sizeInBytes / (element size ×
//! channels)`) may not exceed the device's 1D linear texture width; a 2D surface array may not
//! exceed `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_{WIDTH,HEIGHT}`; resource flags must be 0.

use crate::codegen::Layout;
use crate::harness::RunError;
use cudarc::driver::sys;

/// The format of both objects' elements: one word of the test's memory.
pub const FORMAT: sys::CUarray_format = sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT32;
/// Channels per element.
pub const CHANNELS: u32 = 1;
/// Bytes per element.
pub const ELEMENT_BYTES: u64 = 4;

/// What the device allows for the objects, read when a kernel needs one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectLimits {
    /// Alignment in bytes of a linear texture's base (`CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT`).
    pub texture_alignment: u64,
    /// Elements a texture over linear memory may span, for [`FORMAT`] × [`CHANNELS`]
    /// (`cuDeviceGetTexture1DLinearMaxWidth`).
    pub linear_elements: u64,
    /// Width and height of a 2D surface (`CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH`,
    /// `_HEIGHT`).
    pub surface2d: [u64; 2],
}

/// The resource of the texture object over the memory buffer at device address `ptr`, `bytes`
/// long: refused with the reason when the device's linear textures cannot span it.
pub fn linear_resource(
    ptr: u64,
    bytes: u64,
    limits: &ObjectLimits,
) -> Result<sys::CUDA_RESOURCE_DESC, RunError> {
    let elements = bytes / (ELEMENT_BYTES * u64::from(CHANNELS));
    if elements > limits.linear_elements {
        return Err(RunError::Unsupported(format!(
            "the texture over the memory buffer spans {elements} words; this device's textures \
             over linear memory span at most {} (cuDeviceGetTexture1DLinearMaxWidth): lower \
             the instances",
            limits.linear_elements
        )));
    }
    if limits.texture_alignment == 0 || ptr % limits.texture_alignment != 0 {
        return Err(RunError::Failed(format!(
            "the memory buffer at {ptr:#x} is not aligned to the device's texture alignment of \
             {} bytes",
            limits.texture_alignment
        )));
    }
    // SAFETY: an all-zero descriptor is a valid value of this plain C struct and union.
    let mut d: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
    d.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
    d.res.linear = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
        devPtr: ptr,
        format: FORMAT,
        numChannels: CHANNELS,
        sizeInBytes: bytes as usize,
    };
    d.flags = 0;
    Ok(d)
}

/// How the texture object is read: element by element, as stored.
pub fn texture_desc() -> sys::CUDA_TEXTURE_DESC {
    // SAFETY: an all-zero descriptor is a valid value of this plain C struct.
    let mut t: sys::CUDA_TEXTURE_DESC = unsafe { std::mem::zeroed() };
    t.addressMode = [sys::CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP; 3];
    t.filterMode = sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT;
    t.mipmapFilterMode = sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT;
    // No CU_TRSF_NORMALIZED_COORDINATES: the coordinate is the element's index.
    t.flags = sys::CU_TRSF_READ_AS_INTEGER;
    t
}

/// The CUDA array behind `layout`'s surface object (`None` when the test uses no surface):
/// refused with the reason when the device's 2D surfaces are smaller.
pub fn surface_array(
    layout: &Layout,
    limits: &ObjectLimits,
) -> Result<Option<sys::CUDA_ARRAY3D_DESCRIPTOR>, RunError> {
    let Some((width, height)) = layout.array_extent() else {
        return Ok(None);
    };
    // Compared in bytes, the stricter of the two units CUDA's documents give surface widths in.
    let [max_w, max_h] = limits.surface2d;
    if width * ELEMENT_BYTES > max_w || height > max_h {
        return Err(RunError::Unsupported(format!(
            "the CUDA array behind the surface is {width} words ({} bytes) by {height} rows; \
             this device's 2D surfaces are at most {max_w} wide by {max_h}: lower the instances",
            width * ELEMENT_BYTES
        )));
    }
    Ok(Some(sys::CUDA_ARRAY3D_DESCRIPTOR {
        Width: width as usize,
        Height: height as usize,
        // A depth of 0 makes the array 2D.
        Depth: 0,
        Format: FORMAT,
        NumChannels: CHANNELS,
        Flags: sys::CUDA_ARRAY3D_SURFACE_LDST,
    }))
}

/// The resource of the surface object over `array`.
pub fn array_resource(array: sys::CUarray) -> sys::CUDA_RESOURCE_DESC {
    // SAFETY: an all-zero descriptor is a valid value of this plain C struct and union.
    let mut d: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
    d.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
    d.res.array = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_1 { hArray: array };
    d.flags = 0;
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::{build, ptx::SURFACE_ROW, Stress};
    use std::path::Path;

    fn limits() -> ObjectLimits {
        ObjectLimits {
            texture_alignment: 512,
            linear_elements: 1 << 28,
            surface2d: [131072, 65536],
        }
    }

    fn layout(source: &str) -> Layout {
        let test = crate::litmus::parse(source, Path::new("t.litmus")).expect("parses");
        build(&test, &Stress::basic()).expect("emits").layout
    }

    /// Three surface-only locations (`x` written and read through `s`; `y`, `z` likewise).
    const SURFACE: &str = "PTX SB+sur\n{\nx = 0;\ns @ surface aliases x;\ny = 0;\n\
        u @ surface aliases y;\n}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n sust.weak s, 1 | \
        sust.weak u, 1 ;\n suld.weak r0, u | suld.weak r1, s ;\nexists (P0:r0 == 0 /\\ P1:r1 == 0)\n";

    #[test]
    fn the_texture_reads_the_memory_buffer_word_by_word() {
        let d = linear_resource(0x7000_0000, 4096, &limits()).unwrap();
        assert_eq!(d.resType, sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR);
        assert_eq!(d.flags, 0);
        // SAFETY: `linear` is the member a linear resource sets.
        let l = unsafe { d.res.linear };
        assert_eq!(l.devPtr, 0x7000_0000);
        assert_eq!(l.format, sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT32);
        assert_eq!(l.numChannels, 1);
        assert_eq!(l.sizeInBytes, 4096);
        let t = texture_desc();
        assert_eq!(t.filterMode, sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT);
        assert_eq!(t.flags & sys::CU_TRSF_NORMALIZED_COORDINATES, 0);
        assert_ne!(t.flags & sys::CU_TRSF_READ_AS_INTEGER, 0);
        assert_eq!(
            t.addressMode,
            [sys::CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP; 3]
        );
        assert_eq!((t.maxAnisotropy, t.maxMipmapLevelClamp), (0, 0.0));
    }

    #[test]
    fn a_texture_beyond_the_device_or_misaligned_is_refused() {
        let small = ObjectLimits {
            linear_elements: 1000,
            ..limits()
        };
        // 1000 words fit exactly; one more does not.
        assert!(linear_resource(0, 4000, &small).is_ok());
        match linear_resource(0, 4004, &small) {
            Err(RunError::Unsupported(why)) => {
                assert!(
                    why.contains("1001 words") && why.contains("at most 1000"),
                    "{why}"
                )
            }
            other => panic!("expected a refusal, got {:?}", other.err()),
        }
        match linear_resource(0x7000_0100, 4000, &limits()) {
            Err(RunError::Failed(why)) => assert!(why.contains("512 bytes"), "{why}"),
            other => panic!("expected a failure, got {:?}", other.err()),
        }
    }

    #[test]
    fn the_surface_array_has_the_layouts_extent() {
        let l = layout(SURFACE);
        let (width, height) = l.array_extent().expect("surface locations");
        assert_eq!(width, SURFACE_ROW);
        assert_eq!(height, l.array_words.div_ceil(SURFACE_ROW));
        // Every word of every instance has its element, and no row is wholly unused.
        assert!(width * height >= l.array_words && width * (height - 1) < l.array_words);
        let a = surface_array(&l, &limits()).unwrap().expect("an array");
        assert_eq!(
            (a.Width as u64, a.Height as u64, a.Depth),
            (width, height, 0)
        );
        assert_eq!(a.Format, sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT32);
        assert_eq!(a.NumChannels, 1);
        assert_eq!(a.Flags, sys::CUDA_ARRAY3D_SURFACE_LDST);
        let r = array_resource(std::ptr::null_mut());
        assert_eq!(r.resType, sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY);
        assert_eq!(r.flags, 0);
        // SAFETY: `array` is the member an array resource sets.
        assert!(unsafe { r.res.array.hArray }.is_null());
    }

    #[test]
    fn a_surface_beyond_the_device_is_refused_and_none_is_made_without_surfaces() {
        let l = layout(SURFACE);
        let (width, height) = l.array_extent().unwrap();
        let low = ObjectLimits {
            surface2d: [width * ELEMENT_BYTES, height - 1],
            ..limits()
        };
        assert!(matches!(
            surface_array(&l, &low),
            Err(RunError::Unsupported(_))
        ));
        let narrow = ObjectLimits {
            surface2d: [width * ELEMENT_BYTES - 1, height],
            ..limits()
        };
        match surface_array(&l, &narrow) {
            Err(RunError::Unsupported(why)) => assert!(why.contains("2D surfaces"), "{why}"),
            other => panic!("expected a refusal, got {:?}", other.map(|a| a.is_some())),
        }
        let plain = layout(
            "PTX MP\n{\nx = 0;\n}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | \
             ld.weak r0, x ;\nexists (P1:r0 == 1)\n",
        );
        assert!(surface_array(&plain, &limits()).unwrap().is_none());
    }
}
