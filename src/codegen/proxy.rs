//! What the GPU harness can run of a test's proxies, and why it refuses the rest: the facts of
//! `docs/proxies.md` (PTX ISA §8.6 and the state-space, texture and surface chapters, checked
//! against ptxas), one refusal per construct, decided before anything is laid out.

use super::CodegenError;
use crate::litmus::ast::{Fence, Instr, LocationKind, Proxy, ProxyFenceKind, Space, Test};
use std::collections::BTreeMap;

/// The proxy fences PTX spells: `fence.proxy.alias` (and `.async`, `tensormap::generic`, which
/// no test uses). The mixed-proxy model's texture, surface and constant fences have no
/// spelling, and no other instruction is documented to have their effect.
pub fn fence_is_spelled(kind: ProxyFenceKind) -> bool {
    kind == ProxyFenceKind::Alias
}

/// How the accesses of a test reach one memory location.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocationProxies {
    /// Some access is generic (`ld`, `st`, `atom`, `red`, through any name of the location).
    pub generic: bool,
    /// Some access is a texture read (`tld`).
    pub texture: bool,
    /// Some access is a surface read or write (`suld`, `sust`).
    pub surface: bool,
    /// Some access is a constant read (`cold`).
    pub constant: bool,
    /// Some access writes it (`st`, `sust`, `atom`, `red`).
    pub written: bool,
}

/// Per memory location (aliases resolved), the proxies its accesses go through. Only the
/// instruction decides an access's proxy: a generic `ld` through a surface alias's name is a
/// generic access of the alias's target (the model gives such aliases their target's address).
pub fn location_proxies(test: &Test) -> BTreeMap<String, LocationProxies> {
    let mut uses: BTreeMap<String, LocationProxies> = BTreeMap::new();
    for i in test.threads.iter().flat_map(|t| &t.body) {
        let (Some(a), Some(proxy)) = (i.addr(), i.proxy()) else {
            continue;
        };
        let Some(target) = test.resolve(&a.loc) else {
            continue;
        };
        let u = uses.entry(target.to_string()).or_default();
        match proxy {
            Proxy::Generic => u.generic = true,
            Proxy::Texture => u.texture = true,
            Proxy::Surface => u.surface = true,
            Proxy::Constant => u.constant = true,
        }
        u.written |= !matches!(i, Instr::Load { .. });
    }
    uses
}

fn refuse(construct: String, reason: &str) -> CodegenError {
    CodegenError::Unsupported {
        construct,
        reason: reason.into(),
    }
}

/// Why a texture, surface or constant proxy fence cannot run.
pub const UNSPELLED_FENCE: &str = "PTX has no such fence: fence.proxy takes only .alias, .async \
    and tensormap::generic (PTX ISA, fence), ptxas rejects this one, and the ISA names no other \
    instruction that orders texture, surface or constant accesses with other proxies (§8.6 \
    requires a proxy fence); without it the kernel would be another test";

/// Why a location read through the constant proxy and written by the test cannot run.
pub const CONSTANT_WRITTEN: &str = "the .const state space is read-only to kernels and \
    initialised by the host (PTX ISA §5.1.3), so no kernel store is defined to reach what a \
    constant read sees";

/// Why a constant read of a location no thread writes does not run (yet).
pub const CONSTANT_UNWRITTEN: &str = "the harness creates no constant views; a location no \
    thread writes could be read from a host-initialised .const array";

/// Why a location accessed through both the surface and the generic proxy cannot run.
pub const SURFACE_AND_GENERIC: &str = "surfaces address CUDA arrays (cuSurfObjectCreate takes \
    only an array resource), which generic loads and stores cannot address, so no memory is \
    reachable both ways";

/// Why a texture read of a location that lives in a CUDA array does not run (yet).
pub const TEXTURE_OF_ARRAY: &str = "the location lives in a CUDA array (it is written through \
    a surface), and the harness creates texture objects over the memory buffer only";

/// Why a texture or surface access through a generic alias's name does not run.
pub const OBJECT_THROUGH_ALIAS: &str = "texture and surface objects bind the location's own \
    address, and in the model an access through a generic alias's address is another access";

/// Why a texture or surface access of shared memory cannot run.
pub const OBJECT_OF_SHARED: &str = "texture and surface objects bind global memory (a linear \
    buffer or a CUDA array), never shared memory";

/// The first construct of the test's proxies the GPU harness cannot run exactly, with the
/// reason: fences PTX does not spell first, then each location's mix of proxies.
pub fn refusal(test: &Test) -> Option<CodegenError> {
    for (t, thread) in test.threads.iter().enumerate() {
        for i in &thread.body {
            if let Instr::Fence(Fence::Proxy(k)) = i {
                if !fence_is_spelled(*k) {
                    let construct = format!("fence.proxy.{} in P{t}", k.as_str());
                    return Some(refuse(construct, UNSPELLED_FENCE));
                }
            }
        }
    }
    for (loc, u) in location_proxies(test) {
        if let Some(e) = location_refusal(test, &loc, u) {
            return Some(e);
        }
    }
    None
}

/// Why one location's mix of proxies cannot run, if it cannot.
fn location_refusal(test: &Test, loc: &str, u: LocationProxies) -> Option<CodegenError> {
    let shared = matches!(
        test.location(loc).map(|l| &l.kind),
        Some(LocationKind::Memory {
            space: Space::Shared { .. },
            ..
        })
    );
    if u.constant {
        let why = if u.written {
            CONSTANT_WRITTEN
        } else {
            CONSTANT_UNWRITTEN
        };
        return Some(refuse(format!("a constant-proxy read of {loc}"), why));
    }
    if (u.texture || u.surface) && shared {
        return Some(refuse(
            format!("a texture or surface access of {loc}, in shared memory"),
            OBJECT_OF_SHARED,
        ));
    }
    if u.surface && u.generic {
        return Some(refuse(
            format!("{loc}, accessed through the surface and the generic proxy"),
            SURFACE_AND_GENERIC,
        ));
    }
    if u.surface && u.texture {
        return Some(refuse(
            format!("a texture read of {loc}, a location of a CUDA array"),
            TEXTURE_OF_ARRAY,
        ));
    }
    None
}

/// The global locations that live in the CUDA array rather than the memory buffer: those the
/// test accesses through the surface proxy (and, for a test that runs, through no other).
pub fn array_locations(test: &Test) -> Vec<String> {
    let uses = location_proxies(test);
    uses.into_iter()
        .filter(|(_, u)| u.surface)
        .map(|(l, _)| l)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn test(init: &str, rows: &str) -> Test {
        let text = format!("PTX t\n{{\n{init}\n}}\n P0@cta 0,gpu 0 ;\n{rows}\nexists (x == 0)\n");
        crate::litmus::parse(&text, Path::new("t.litmus")).unwrap()
    }

    fn reason(t: &Test) -> Option<String> {
        match refusal(t)? {
            CodegenError::Unsupported { reason, .. } => Some(reason),
            e => panic!("{e}"),
        }
    }

    #[test]
    fn only_the_instruction_decides_the_proxy() {
        let t = test("x = 0;\ns @ surface aliases x;", " ld.weak r0, s ;");
        let uses = location_proxies(&t);
        assert_eq!(uses.len(), 1);
        assert!(uses["x"].generic && !uses["x"].surface && !uses["x"].written);
        assert_eq!(reason(&t), None);
    }

    #[test]
    fn each_fact_refuses_its_construct() {
        let fence = test("x = 0;", " fence.proxy.texture ;");
        assert_eq!(reason(&fence).as_deref(), Some(UNSPELLED_FENCE));
        let alias = test("x = 0;", " fence.proxy.alias ;");
        assert_eq!(reason(&alias), None);
        let constant = test(
            "x = 0;\nc @ constant aliases x;",
            " st.weak x, 1 ;\n cold r0, c ;",
        );
        assert_eq!(reason(&constant).as_deref(), Some(CONSTANT_WRITTEN));
        let read_only = test("x = 0;\nc @ constant aliases x;", " cold r0, c ;");
        assert_eq!(reason(&read_only).as_deref(), Some(CONSTANT_UNWRITTEN));
        let mixed = test(
            "x = 0;\ns @ surface aliases x;",
            " sust.weak s, 1 ;\n ld.weak r0, x ;",
        );
        assert_eq!(reason(&mixed).as_deref(), Some(SURFACE_AND_GENERIC));
        let surface = test(
            "x = 0;\ns @ surface aliases x;",
            " sust.weak s, 1 ;\n suld.weak r0, s ;",
        );
        assert_eq!(reason(&surface), None);
    }
}
