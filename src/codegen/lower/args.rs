//! The location arguments of a role function: one per access, in program order. Separate
//! (equal-valued) pointers keep ptxas from proving two accesses hit one address, so it can
//! neither merge two loads nor drop a store; each location's bias names it in the SASS.

use super::unsupported;
use crate::codegen::layout::Layout;
use crate::codegen::proxy::NO_OBJECTS;
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
    /// `bias` back as an immediate offset that survives into the SASS).
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

/// The (location, view) of every access of `role`, in program order.
fn accesses(test: &Test, layout: &Layout, role: usize) -> Result<Vec<(String, u32)>, CodegenError> {
    let mut accessed = Vec::new();
    for i in &test.threads[role].body {
        let Some(a) = i.addr() else {
            continue;
        };
        if let Some(proxy) = i.proxy().filter(|p| *p != Proxy::Generic) {
            return Err(unsupported(
                format!(
                    "a {}-proxy access of P{role} to {}",
                    format!("{proxy:?}").to_lowercase(),
                    a.loc
                ),
                NO_OBJECTS,
            ));
        }
        let (m, view) = memory_of(test, layout, &a.loc, role)?;
        accessed.push((m.to_string(), view));
    }
    Ok(accessed)
}

/// The location arguments of `role`, one per access in program order.
pub(super) fn location_args(
    test: &Test,
    layout: &Layout,
    role: usize,
) -> Result<Vec<LocArg>, CodegenError> {
    let place = &layout.shape.roles[role];
    let accessed = accesses(test, layout, role)?;
    let mut touched: Vec<&(String, u32)> = Vec::new();
    let mut args = Vec::new();
    for m in &accessed {
        let (name, view) = m;
        let l = layout
            .locations
            .iter()
            .find(|l| l.name == *name)
            .expect("an accessed location is a memory location");
        let space = match l.space {
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
        };
        if !touched.contains(&m) {
            touched.push(m);
        }
        let slot = touched.iter().position(|t| *t == m).expect("touched");
        args.push(LocArg {
            loc: l.name.clone(),
            space,
            view: *view,
            bias: arg_bias(slot),
        });
    }
    Ok(args)
}
