//! The kernel arguments of a launch, built from the kernel's own parameter list
//! ([`Layout::params`]): the buffers' device addresses, the seed state, and the texture and
//! surface objects of a test that reads or writes through those proxies. Pure: no driver
//! calls, so the order and types are tested against the emitted PTX without a GPU.

use crate::codegen::{BufferKind, Layout, Param};

/// One kernel argument as the driver receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgValue {
    /// A device pointer.
    Ptr(u64),
    /// A 64-bit value: the test's seed state ([`Param::Seed`]).
    U64(u64),
    /// A texture or surface object (`CUtexObject`, `CUsurfObject`: 64-bit handles by value).
    Object(u64),
}

impl ArgValue {
    /// Size in bytes of the parameter.
    pub fn size(self) -> usize {
        8
    }

    /// The parameter's bits.
    pub fn bits(self) -> u64 {
        match self {
            ArgValue::Ptr(v) | ArgValue::U64(v) | ArgValue::Object(v) => v,
        }
    }

    /// The parameter's type as the PTX declares it (`.param .u64 p_mem`).
    pub fn ptx_type(self) -> &'static str {
        "u64"
    }
}

/// The buffer a pointer parameter points to; `None` for the seed and the object handles.
pub fn buffer_of(p: Param) -> Option<BufferKind> {
    match p {
        Param::Memory => Some(BufferKind::Memory),
        Param::Results => Some(BufferKind::Results),
        Param::Histogram => Some(BufferKind::Histogram),
        Param::Stress => Some(BufferKind::Stress),
        Param::Sync => Some(BufferKind::Sync),
        Param::Seed | Param::Texture | Param::Surface => None,
    }
}

/// The texture and surface objects created for a kernel (`None`: not created).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handles {
    /// The texture object over the memory buffer ([`Param::Texture`]).
    pub texture: Option<u64>,
    /// The surface object over the CUDA array ([`Param::Surface`]).
    pub surface: Option<u64>,
}

/// The arguments of both kernels of a layout (`litmus_test` and `litmus_collect` take the same),
/// in parameter order, the same for every launch of a test (each launch derives its seed on the
/// device from the seed state).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelArgs {
    values: Vec<ArgValue>,
}

impl KernelArgs {
    /// The arguments of `layout`'s kernels: `pointer(kind)` gives a buffer's device address,
    /// `handles` the objects created for it, `seed_state` the test's seed state. A kernel that takes an object none was created for,
    /// or an object created for a kernel that takes none, is an error naming the parameter:
    /// either would launch with arguments that do not match the kernel's.
    pub fn new(
        layout: &Layout,
        pointer: impl Fn(BufferKind) -> u64,
        handles: Handles,
        seed_state: u64,
    ) -> Result<KernelArgs, String> {
        let params = layout.params();
        let object = |p: Param, h: Option<u64>| {
            h.map(ArgValue::Object).ok_or_else(|| {
                format!(
                    "{}: the kernels take {} but no object was created for it",
                    layout.test,
                    p.name()
                )
            })
        };
        let mut values = Vec::with_capacity(params.len());
        for &p in &params {
            values.push(match (p, buffer_of(p)) {
                (_, Some(kind)) => ArgValue::Ptr(pointer(kind)),
                (Param::Texture, None) => object(p, handles.texture)?,
                (Param::Surface, None) => object(p, handles.surface)?,
                (_, None) => ArgValue::U64(seed_state),
            });
        }
        for (p, h) in [
            (Param::Texture, handles.texture),
            (Param::Surface, handles.surface),
        ] {
            if h.is_some() && !params.contains(&p) {
                return Err(format!(
                    "{}: an object was created for {}, which the kernels do not take",
                    layout.test,
                    p.name()
                ));
            }
        }
        Ok(KernelArgs { values })
    }

    /// The arguments, in parameter order.
    pub fn values(&self) -> &[ArgValue] {
        &self.values
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::layout::{COLLECT_ENTRY, TEST_ENTRY};
    use crate::codegen::{build, Stress};
    use std::path::Path;

    /// A generic store, a texture read and a surface-only location: the kernel takes both objects.
    const BOTH: &str = "PTX MP+tex+sur\n{\nx = 0;\nt @ texture aliases x;\ny = 0;\n\
        s @ surface aliases y;\n}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | suld.weak r0, s ;\n \
        sust.weak s, 1 | tld.weak r1, t ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n";
    const TEXTURE: &str = "PTX MP+tex\n{\nx = 0;\nt @ texture aliases x;\nflag = 0;\n}\n \
        P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r0, flag ;\n \
        st.release.gpu flag, 1 | tld.weak r1, t ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n";
    const SURFACE: &str = "PTX MP+sur\n{\nx = 0;\ns @ surface aliases x;\nflag = 0;\n}\n \
        P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n sust.weak s, 1 | ld.acquire.gpu r0, flag ;\n \
        st.release.gpu flag, 1 | suld.weak r1, s ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n";
    const PLAIN: &str = "PTX MP\n{\nx = 0;\nflag = 0;\n}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
        st.weak x, 1 | ld.acquire.gpu r0, flag ;\n st.release.gpu flag, 1 | ld.weak r1, x ;\n\
        exists (P1:r0 == 1 /\\ P1:r1 == 0)\n";

    fn kernel(source: &str) -> crate::codegen::Kernel {
        let test = crate::litmus::parse(source, Path::new("t.litmus")).expect("parses");
        build(&test, &Stress::basic()).expect("emits")
    }

    /// The `(type, name)` of each parameter of `entry` as the PTX declares it.
    fn entry_params(ptx: &str, entry: &str) -> Vec<(String, String)> {
        let head = format!(".entry {entry}(");
        let at = ptx
            .find(&head)
            .unwrap_or_else(|| panic!("no {entry} in the PTX"))
            + head.len();
        let list = &ptx[at..at + ptx[at..].find(')').expect("a closed parameter list")];
        list.split(',')
            .map(|p| {
                let words: Vec<&str> = p.split_whitespace().collect();
                assert_eq!(words.len(), 3, "{p:?}");
                assert_eq!(words[0], ".param");
                (words[1].trim_start_matches('.').into(), words[2].into())
            })
            .collect()
    }

    /// Builds the arguments of `source`'s kernel with made-up addresses and handles where the
    /// layout wants them, and checks them against both entries of the emitted PTX.
    fn arguments_match_the_entries(source: &str, objects: &[&str]) {
        let k = kernel(source);
        let handles = Handles {
            texture: k.layout.linear_texture.then_some(0x7E0),
            surface: (k.layout.array_words > 0).then_some(0x5F0),
        };
        let pointer = |kind: BufferKind| 0x1000 * (1 + kind as u64);
        let args = KernelArgs::new(&k.layout, pointer, handles, 0xDEAD_BEEF_0123_4567).unwrap();
        let args = args.values().to_vec();
        for entry in [TEST_ENTRY, COLLECT_ENTRY] {
            let declared = entry_params(&k.ptx, entry);
            assert_eq!(declared.len(), args.len(), "{entry}: {declared:?}");
            for ((ty, name), (a, p)) in declared.iter().zip(args.iter().zip(k.layout.params())) {
                assert_eq!((ty.as_str(), name.as_str()), (a.ptx_type(), p.name()));
                let expected = match (p, buffer_of(p)) {
                    (_, Some(kind)) => ArgValue::Ptr(pointer(kind)),
                    (Param::Seed, _) => ArgValue::U64(0xDEAD_BEEF_0123_4567),
                    (Param::Texture, _) => ArgValue::Object(0x7E0),
                    _ => ArgValue::Object(0x5F0),
                };
                assert_eq!(*a, expected, "{entry}: {name}");
            }
            let tail: Vec<&str> = declared[6..].iter().map(|(_, n)| n.as_str()).collect();
            assert_eq!(tail, objects, "{entry}");
        }
        let bytes: usize = args.iter().map(|a| a.size()).sum();
        assert_eq!(bytes, 6 * 8 + 8 * objects.len());
    }

    #[test]
    fn arguments_follow_each_kernels_parameter_list() {
        arguments_match_the_entries(PLAIN, &[]);
        arguments_match_the_entries(TEXTURE, &["p_tex"]);
        arguments_match_the_entries(SURFACE, &["p_surf"]);
        arguments_match_the_entries(BOTH, &["p_tex", "p_surf"]);
    }

    #[test]
    fn objects_and_parameters_must_match() {
        let tex = kernel(TEXTURE);
        let e = KernelArgs::new(&tex.layout, |_| 0x1000, Handles::default(), 0).unwrap_err();
        assert!(e.contains("p_tex") && e.contains("no object"), "{e}");
        let sur = kernel(SURFACE);
        let e = KernelArgs::new(&sur.layout, |_| 0x1000, Handles::default(), 0).unwrap_err();
        assert!(e.contains("p_surf"), "{e}");
        // An object created for a kernel that does not take it is a harness fault too.
        let plain = kernel(PLAIN);
        let extra = Handles {
            texture: Some(1),
            surface: None,
        };
        let e = KernelArgs::new(&plain.layout, |_| 0x1000, extra, 0).unwrap_err();
        assert!(e.contains("p_tex") && e.contains("do not take"), "{e}");
    }
}
