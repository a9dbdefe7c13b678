//! The PTX module of a test: the fragments of `ptx/`, one function per role, the test kernel
//! `litmus_test` that places roles and runs them, and the collect kernel `litmus_collect` that
//! counts each instance's outcome and resets its memory for the next launch.
//!
//! `skeleton` holds the barrier sequences idle threads replay, `tables` the constant tables the
//! kernels index, `test_entry` and `collect` the two kernels, `device` the code both share
//! (parameters, addresses, random draws, stress loops).

mod collect;
mod device;
mod skeleton;
mod tables;
mod test_entry;

use super::domain::Analysis;
use super::fragments::{HASH_PTX, SOFT_BARRIER_PTX, SPIN_BARRIER_PTX, STRESS_PTX};
use super::layout::Layout;
use super::lower::{lower_role, RoleCode};
use super::stress::Stress;
use super::CodegenError;
use crate::litmus::ast::{Fence, FenceSem, Instr, Test};
use serde::{Deserialize, Serialize};
use skeleton::Skeletons;

/// "No role" in the role table.
const NONE: u32 = u32::MAX;

/// A generated kernel and everything the runtime needs to run it.
///
/// Running it: allocate the [`Layout::buffers`] zero-filled, launch `litmus_collect` once (with
/// every status word 0 it counts nothing and only writes the initial values of the locations),
/// then for each launch launch `litmus_test` and `litmus_collect`, all with the same parameters
/// of [`crate::codegen::layout::PARAMS`] (the test kernel derives a new seed per launch from the
/// seed state and the launch index the collect kernel advances); finally read the histogram
/// buffer, decode it with [`Layout::decode_histogram`], and check
/// [`crate::codegen::layout::DeviceCounts::check_total`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    /// The PTX module text.
    pub ptx: String,
    /// PTX ISA version the module declares (`.version major.minor`).
    pub ptx_version: (u32, u32),
    /// The layout the module was generated for.
    pub layout: Layout,
    /// The incantations compiled into the module.
    pub stress: Stress,
    /// Each role's lowered code (function name, expected operations).
    pub roles: Vec<RoleCode>,
    /// Lowering decisions a reader should know about.
    pub notes: Vec<String>,
}

/// The PTX ISA version a test needs: 8.6 for `fence.acquire`/`fence.release`, else 8.0.
fn ptx_version(test: &Test) -> (u32, u32) {
    let new_fences = test.threads.iter().flat_map(|t| &t.body).any(|i| {
        matches!(
            i,
            Instr::Fence(Fence::Memory {
                sem: FenceSem::Acquire | FenceSem::Release,
                ..
            })
        )
    });
    if new_fences {
        (8, 6)
    } else {
        (8, 0)
    }
}

/// Generates the kernel of `test` for `layout` (made by [`Layout::new`] with the same `stress`).
pub fn emit(test: &Test, layout: &Layout, stress: &Stress) -> Result<Kernel, CodegenError> {
    stress.validate().map_err(CodegenError::Invalid)?;
    if layout.test_launch.block[0] != stress.cta_size || layout.test != test.name {
        return Err(CodegenError::Invalid(
            "the layout was made for another test or configuration".into(),
        ));
    }
    let analysis = Analysis::of(test)?;
    let roles: Vec<RoleCode> = (0..test.threads.len())
        .map(|r| lower_role(test, layout, &analysis, r))
        .collect::<Result<_, _>>()?;
    let skeletons = Skeletons::of(&layout.shape, &roles)?;
    let version = ptx_version(test);
    let mut ptx = header(test, layout, stress, version);
    ptx.push_str(&tables::render(layout, &skeletons));
    ptx.push('\n');
    for r in &roles {
        ptx.push_str(&r.ptx);
        ptx.push('\n');
    }
    ptx.push_str(&skeletons.render());
    ptx.push_str(&test_entry::render(layout, stress, &roles, &skeletons));
    ptx.push('\n');
    ptx.push_str(&collect::render(test, layout));
    Ok(Kernel {
        ptx,
        ptx_version: version,
        notes: notes(layout, &roles),
        layout: layout.clone(),
        stress: stress.clone(),
        roles,
    })
}

/// The module's opening comment, directives and fragments.
fn header(test: &Test, layout: &Layout, stress: &Stress, version: (u32, u32)) -> String {
    let mut out = format!(
        "// ptx-litmus kernel for test {}\n// stress: {}\n{}.version {}.{}\n.target sm_90\n.address_size 64\n\n",
        test.name.replace(['\n', '\r'], " "),
        stress.describe(),
        layout.abi_comment(stress),
        version.0,
        version.1
    );
    let soft = !layout.shape.soft_barriers.is_empty();
    for f in [HASH_PTX, STRESS_PTX, SPIN_BARRIER_PTX] {
        out.push_str(f);
        out.push('\n');
    }
    if soft {
        out.push_str(SOFT_BARRIER_PTX);
        out.push('\n');
    }
    out
}

/// The lowering and placement decisions a reader of the kernel should know about.
fn notes(layout: &Layout, roles: &[RoleCode]) -> Vec<String> {
    let mut notes: Vec<String> = layout.shape.notes.clone();
    notes.extend(roles.iter().flat_map(|r| r.notes.clone()));
    if roles.iter().any(|r| r.loops) {
        notes.push(format!(
            "loops are bounded: a role that takes {} backward branches marks its instance \
             skipped",
            layout.loop_bound
        ));
    }
    if layout.memory_views > 1 {
        notes.push(format!(
            "generic aliases reach their location through {} more virtual mapping(s) of the \
             same physical memory, {} bytes apart",
            layout.memory_views - 1,
            layout.view_bytes
        ));
    }
    if !layout.shape.soft_barriers.is_empty() {
        notes.push(
            "CTA barriers run in software (a barrier id or count is loaded at run time): each \
             synchronises, by a fence-flag-fence handshake at CTA scope, only with the \
             partners that took the same id and count"
                .into(),
        );
    }
    notes
}
