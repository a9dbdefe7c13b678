//! The location arguments of a role function: one per access, in program order. Separate
//! (equal-valued) pointers keep ptxas from proving two accesses hit one address, so it can
//! neither merge two loads nor drop a store; each location's bias names it in the SASS.

use super::unsupported;
use crate::codegen::layout::Layout;
use crate::codegen::layout::LocationLayout;
use crate::codegen::proxy::OBJECT_THROUGH_ALIAS;
use crate::codegen::ptx::PSpace;
use crate::codegen::CodegenError;
use crate::litmus::ast::{LocationKind, Proxy, Space, Test};
use serde::{Deserialize, Serialize};

/// One location argument of a role function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocArg {
    /// The memory location (aliases resolved).
    pub loc: String,
    /// How the role reaches it.
    pub space: PSpace,
    /// The memory view it goes through (0: the location's own address; k: the k-th generic
    /// alias's, see [`Layout::memory_views`]).
    #[serde(default)]
    pub view: u32,
    /// Bytes the argument is biased by (the caller passes `address - bias`, every access adds
    /// `bias` back as an immediate offset that survives into the SASS: the caller computes
    /// the bias from a zero ptxas cannot see, so it cannot cancel the two).
    pub bias: u32,
}

/// The bias of the `k`-th location (in order of first access) of a role.
fn arg_bias(k: usize) -> u32 {
    16 * (k as u32 + 1)
}

/// The memory location a name reaches and the view it goes through, rejecting aliases the
/// GPU harness cannot provide.
pub(super) fn memory_of<'t>(
    test: &'t Test,
    layout: &Layout,
    name: &str,
    role: usize,
) -> Result<(&'t str, u32), CodegenError> {
    let loc = test
        .location(name)
        .ok_or_else(|| CodegenError::Invalid(format!("P{role}: location {name} not declared")))?;
    let target = test
        .resolve(name)
        .ok_or_else(|| CodegenError::Invalid(format!("P{role}: alias {name} has no target")))?;
    match (&loc.kind, layout.view_of(test, name)) {
        (_, Some(view)) => Ok((target, view)),
        (
            LocationKind::Alias {
                proxy: Proxy::Generic,
                ..
            },
            None,
        ) => Err(unsupported(
            format!("P{role} accesses {name}, a generic alias of shared memory"),
            "the harness maps second virtual addresses of global memory only",
        )),
        (LocationKind::Alias { .. }, None) => Err(unsupported(
            format!("P{role} accesses {name}, an alias of a generic alias of shared memory"),
            "the harness maps second virtual addresses of global memory only",
        )),
        (LocationKind::Memory { .. }, None) => unreachable!("a memory location is its own view"),
    }
}

/// One access of a role: the memory location, the view it goes through and its proxy.
#[derive(PartialEq)]
struct Access {
    loc: String,
    view: u32,
    proxy: Proxy,
}

/// Every access of `role`, in program order.
fn accesses(test: &Test, layout: &Layout, role: usize) -> Result<Vec<Access>, CodegenError> {
    let mut accessed = Vec::new();
    for i in &test.threads[role].body {
        let (Some(a), Some(proxy)) = (i.addr(), i.proxy()) else {
            continue;
        };
        let (m, view) = memory_of(test, layout, &a.loc, role)?;
        let what = || {
            let kind = format!("{proxy:?}").to_lowercase();
            format!("a {kind}-proxy access of P{role} to {}", a.loc)
        };
        match proxy {
            Proxy::Generic => {}
            Proxy::Texture | Proxy::Surface if view != 0 => {
                return Err(unsupported(what(), OBJECT_THROUGH_ALIAS));
            }
            Proxy::Texture | Proxy::Surface if a.offset.is_some() => {
                let why = "a texture or surface access at a register offset";
                return Err(unsupported(what(), why));
            }
            Proxy::Texture | Proxy::Surface => {}
            Proxy::Constant => {
                return Err(unsupported(
                    what(),
                    crate::codegen::proxy::CONSTANT_UNWRITTEN,
                ))
            }
        }
        accessed.push(Access {
            loc: m.to_string(),
            view,
            proxy,
        });
    }
    Ok(accessed)
}

/// The state space through which `role` reaches location `l` with a generic access.
fn generic_space(layout: &Layout, l: &LocationLayout, role: usize) -> Result<PSpace, CodegenError> {
    let place = &layout.shape.roles[role];
    Ok(match l.space {
        Space::Global => PSpace::Global,
        Space::Shared { owner } => {
            let o = &layout.shape.roles[owner];
            if o.cluster != place.cluster {
                return Err(CodegenError::Invalid(format!(
                    "P{role} touches {}, shared memory of P{owner}'s CTA in another cluster",
                    l.name
                )));
            }
            if o.cta == place.cta {
                PSpace::SharedCta
            } else {
                PSpace::SharedCluster
            }
        }
    })
}

/// The location arguments of `role`, one per access in program order. A texture or surface
/// access's argument is the word index (in the memory buffer or the CUDA array), with no bias:
/// neither instruction has an immediate offset.
pub(super) fn location_args(
    test: &Test,
    layout: &Layout,
    role: usize,
) -> Result<Vec<LocArg>, CodegenError> {
    let accessed = accesses(test, layout, role)?;
    let mut touched: Vec<&Access> = Vec::new();
    let mut args = Vec::new();
    for m in &accessed {
        let l = layout
            .locations
            .iter()
            .find(|l| l.name == m.loc)
            .expect("an accessed location is a memory location");
        let object = match m.proxy {
            Proxy::Texture => Some(PSpace::Texture),
            Proxy::Surface => Some(PSpace::Surface),
            Proxy::Generic | Proxy::Constant => None,
        };
        if let Some(space) = object {
            args.push(LocArg {
                loc: l.name.clone(),
                space,
                view: 0,
                bias: 0,
            });
            continue;
        }
        let space = generic_space(layout, l, role)?;
        if !touched.contains(&m) {
            touched.push(m);
        }
        let slot = touched.iter().position(|t| *t == m).expect("touched");
        args.push(LocArg {
            loc: l.name.clone(),
            space,
            view: m.view,
            bias: arg_bias(slot),
        });
    }
    Ok(args)
}
