//! Where everything of a generated kernel lives: the single definition that the emitter, the
//! CUDA backend and the tests share; the device code the emitter writes computes exactly the
//! formulas of this module.
//!
//! `abi` is what the CUDA backend reads to launch a kernel (parameters, buffers, launch
//! shapes, the histogram); [`Shape`] maps the test's scope tree onto the grid; placement
//! decides which role of which instance each thread plays; memory places every location and
//! result word of every instance; `hash` is the host's copy of the device's per-launch hash;
//! `launch_seed` the formula by which the device derives each launch's seed.

mod abi;
mod hash;
mod launch_seed;
mod memory;
mod placement;
mod shape;

pub use abi::{
    as_u32, Buffer, BufferKind, Counter, DeviceCounts, LaunchConfig, Param, COLLECT_ENTRY,
    COUNTERS, MAX_OUTCOMES, MAX_TEXTURE_ELEMENTS, MEMORY_ZERO_BITS, PARAMS, TEST_ENTRY, VIEW_ALIGN,
};
pub use hash::{chance, mix32, Salt};
pub use launch_seed::{launch_seed, SeedStep, GAMMA, SEED_STEPS, SYNC_LAUNCH_INDEX};
pub use memory::LocationLayout;
pub use placement::{multiplier_table, Assignment, Perms, WARP_MULTIPLIERS};
pub use shape::{warps_needed, RolePlace, Shape, WARP};

use super::ptx::SURFACE_ROW;
use super::stress::Stress;
use super::CodegenError;
use crate::litmus::ast::{LocationKind, Proxy, Test, Value};
use crate::outcome::Observable;
use memory::{Memory, ResultWords};
use serde::{Deserialize, Serialize};

/// Everything the emitter and the runtime agree on for one kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// The test's name.
    pub test: String,
    /// Placement mapping.
    pub shape: Shape,
    /// Test instances per launch.
    pub instances: u64,
    /// CTAs that run instances (`tiles * clusters * cluster_dim`).
    pub testing_ctas: u32,
    /// The test kernel's launch.
    pub test_launch: LaunchConfig,
    /// The collect kernel's launch: one thread per instance.
    pub collect_launch: LaunchConfig,
    /// Buffers, in the order of the pointer parameters.
    pub buffers: Vec<Buffer>,
    /// Memory locations.
    pub locations: Vec<LocationLayout>,
    /// Words of shared memory each CTA declares.
    pub shared_words: u64,
    /// Observables, the order of outcome values.
    pub observables: Vec<Observable>,
    /// Per observable, the values it can take, in the order of their digits.
    pub domains: Vec<Vec<Value>>,
    /// Result words per instance: one status word per role, then every register of every
    /// thread, then final values of observed shared locations, then software barrier words.
    pub result_words: u32,
    /// First result word of the software barriers' words (two per
    /// [`Shape::soft_barriers`] entry: the published key, then the passed flag).
    #[serde(default)]
    pub soft_barrier_word: u32,
    /// Per observable, the result word holding it (`None` for a global location, read from
    /// memory).
    pub observable_words: Vec<Option<u32>>,
    /// Per thread, the result word of each of its registers (observed or not).
    pub register_words: Vec<Vec<(String, u32)>>,
    /// Size of the outcome space, the product of the domain sizes.
    pub outcome_count: u64,
    /// Whether instances share memory (`aliased_memory`).
    pub aliased: bool,
    /// Bound on backward branches one role takes before its instance counts as skipped.
    pub loop_bound: u32,
    /// Virtual views of the memory buffer: 1, or more when the test has generic aliases, each
    /// of which reaches its location through a view of its own (another virtual address of the
    /// same physical memory, mapped by the runtime [`Layout::view_bytes`] apart).
    #[serde(default = "one_view")]
    pub memory_views: u32,
    /// Bytes between neighbouring views (a multiple of [`VIEW_ALIGN`]); 0 with one view.
    #[serde(default)]
    pub view_bytes: u64,
    /// Per generic alias of a global location, its view (1, 2, ...; views of different
    /// locations are independent).
    #[serde(default)]
    pub alias_views: Vec<(String, u32)>,
    /// Whether the kernels take a texture object over the memory buffer ([`Param::Texture`]):
    /// the test reads a global location through the texture proxy.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub linear_texture: bool,
    /// Words of the CUDA array behind the surface object ([`Param::Surface`]), 0 when the
    /// test accesses nothing through surfaces: 32-bit unsigned, one channel, rows of
    /// [`SURFACE_ROW`] words ([`Layout::array_extent`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub array_words: u64,
    /// Multipliers a shuffled launch picks its cluster permutation from, and so the most
    /// distinct partner-CTA distances it can draw (`partner_distances`).
    #[serde(default = "eight")]
    pub partner_distances: u32,
    /// Spin-barrier counters: testing CTAs `g * spin_group ..` meet at counter `g`
    /// ([`Layout::spin_counter`]); 1 when every testing CTA shares one.
    #[serde(default = "one_view")]
    pub spin_counters: u32,
    /// Testing CTAs per spin-barrier counter (`spin_group`; the testing CTAs when one).
    #[serde(default)]
    pub spin_group: u32,
}

fn eight() -> u32 {
    8
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Byte offset in the Sync buffer of the second spin-barrier counter (the first is at 0, the
/// launch index at [`SYNC_LAUNCH_INDEX`]).
pub const SYNC_SPIN_COUNTERS: u64 = SYNC_LAUNCH_INDEX + 8;

/// Most rows of the CUDA array (CUDA's 2D surface height limit on every GPU the harness
/// supports).
pub const MAX_ARRAY_ROWS: u64 = 65536;

fn one_view() -> u32 {
    1
}

/// Refuses a CUDA array of `array_words` words, or a linear texture over `global_words`
/// words, beyond what the driver can make.
fn proxy_objects_fit(
    array_words: u64,
    linear_texture: bool,
    global_words: u64,
) -> Result<(), CodegenError> {
    if array_words.div_ceil(SURFACE_ROW) > MAX_ARRAY_ROWS {
        return Err(CodegenError::Unsupported {
            construct: format!("a CUDA array of {array_words} words"),
            reason: format!(
                "a 2D surface has at most {MAX_ARRAY_ROWS} rows of {SURFACE_ROW} words; \
                 lower the instances"
            ),
        });
    }
    if linear_texture && global_words > MAX_TEXTURE_ELEMENTS {
        return Err(CodegenError::Unsupported {
            construct: format!("a texture over {global_words} words"),
            reason: format!(
                "a linear texture spans at most {MAX_TEXTURE_ELEMENTS} elements; lower the \
                 instances"
            ),
        });
    }
    Ok(())
}

/// The testing CTAs that meet at one spin-barrier counter (the stress's `spin_group`, 0 for
/// all of them) and the counters `testing_ctas` CTAs then need: a group starts together
/// without waiting for the whole grid.
fn spin_groups(group: u32, testing_ctas: u32) -> (u32, u32) {
    let group = match group {
        0 => testing_ctas,
        g => g.min(testing_ctas),
    };
    (group, testing_ctas.div_ceil(group))
}

impl Layout {
    /// Lays out `test` under `stress`, with `domains[k]` the values observable `k` (of
    /// [`crate::outcome::observables`]) can take.
    pub fn new(
        test: &Test,
        stress: &Stress,
        domains: &[Vec<Value>],
    ) -> Result<Layout, CodegenError> {
        stress.validate().map_err(CodegenError::Invalid)?;
        if let Some(refused) = super::proxy::refusal(test) {
            return Err(refused);
        }
        let shape = Shape::of(test, stress)?;
        let observables = crate::outcome::observables(test);
        let outcome_count = outcome_space(&observables, domains)?;
        let instances = shape.instances();
        let in_array = super::proxy::array_locations(test);
        let mut memory = Memory::place(test, stress, &shape, &in_array)?;
        let soft = shape.soft_barriers.len();
        let words = ResultWords::assign(test, &observables, &mut memory.locations, soft)?;
        let (memory_views, view_bytes, alias_views) = memory.views(test);
        let linear_texture = super::proxy::location_proxies(test)
            .values()
            .any(|u| u.texture);
        let array_words = memory.array_words;
        proxy_objects_fit(array_words, linear_texture, memory.global_words)?;
        let testing_ctas = shape.tiles * shape.clusters * shape.cluster_dim;
        let (spin_group, spin_counters) = spin_groups(stress.spin_group, testing_ctas);
        let buffers = abi::buffers(
            stress,
            memory.global_words,
            instances,
            words.total,
            outcome_count,
            spin_counters,
        );
        Ok(Layout {
            test: test.name.clone(),
            instances,
            testing_ctas,
            test_launch: abi::test_launch(stress, &shape, testing_ctas),
            collect_launch: abi::collect_launch(instances),
            shape,
            buffers,
            locations: memory.locations,
            shared_words: memory.shared_words,
            observables,
            domains: domains.to_vec(),
            result_words: words.total,
            soft_barrier_word: words.soft_barriers,
            observable_words: words.observables,
            register_words: words.registers,
            outcome_count,
            aliased: stress.aliased_memory,
            loop_bound: 4096,
            memory_views,
            view_bytes,
            alias_views,
            linear_texture,
            array_words,
            partner_distances: stress.partner_distances,
            spin_counters,
            spin_group,
        })
    }

    /// Byte offset in the Sync buffer of spin-barrier counter `g`: the first at 0, the others
    /// after the launch index ([`SYNC_SPIN_COUNTERS`] on).
    pub fn spin_counter(g: u32) -> u64 {
        match g {
            0 => 0,
            g => SYNC_SPIN_COUNTERS + 4 * u64::from(g - 1),
        }
    }

    /// The CUDA array's width and height in 32-bit elements (`None` without surfaces): rows of
    /// [`SURFACE_ROW`] words, as many as the array's words need.
    pub fn array_extent(&self) -> Option<(u64, u64)> {
        (self.array_words > 0).then(|| (SURFACE_ROW, self.array_words.div_ceil(SURFACE_ROW)))
    }

    /// The size of a buffer in bytes.
    pub fn buffer_bytes(&self, kind: BufferKind) -> u64 {
        self.buffers
            .iter()
            .find(|b| b.kind == kind)
            .map_or(0, |b| b.bytes)
    }

    /// The memory view a name reaches its location through: 0 for the location itself, the
    /// alias's view for a generic alias of a global location, its target's for a texture,
    /// surface or constant alias (which, as in the model, shares its target's address), `None`
    /// for a generic alias of shared memory.
    pub fn view_of(&self, test: &Test, name: &str) -> Option<u32> {
        let mut name = name;
        // An alias chain longer than the number of locations is a cycle.
        for _ in 0..=test.locations.len() {
            match &test.location(name)?.kind {
                LocationKind::Memory { .. } => return Some(0),
                LocationKind::Alias {
                    proxy: Proxy::Generic,
                    ..
                } => {
                    return self
                        .alias_views
                        .iter()
                        .find(|(a, _)| a == name)
                        .map(|(_, v)| *v)
                }
                LocationKind::Alias { target, .. } => name = target,
            }
        }
        None
    }

    /// The memory location a (possibly aliased) name refers to.
    pub fn location(&self, test: &Test, name: &str) -> Option<&LocationLayout> {
        let target = test.resolve(name)?;
        self.locations.iter().find(|l| l.name == target)
    }
}

/// The size of the outcome space, the product of the domain sizes, checked against the
/// observables and the device histogram.
fn outcome_space(observables: &[Observable], domains: &[Vec<Value>]) -> Result<u64, CodegenError> {
    if domains.len() != observables.len() {
        return Err(CodegenError::Invalid(format!(
            "{} domains given for {} observables",
            domains.len(),
            observables.len()
        )));
    }
    let mut outcome_count: u64 = 1;
    for (o, d) in observables.iter().zip(domains) {
        if d.is_empty() {
            return Err(CodegenError::Invalid(format!(
                "observable {o} has no values"
            )));
        }
        outcome_count = outcome_count.saturating_mul(d.len() as u64);
    }
    if outcome_count > MAX_OUTCOMES {
        return Err(CodegenError::Unsupported {
            construct: format!("an outcome space of {outcome_count} outcomes"),
            reason: format!("the device histogram holds at most {MAX_OUTCOMES}"),
        });
    }
    Ok(outcome_count)
}
