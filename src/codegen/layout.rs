//! Where everything of a generated kernel lives: the placement of roles in the grid, the
//! buffers and their sizes, the kernel parameters, the addresses of every location of every
//! instance, the per-instance result slots, and the encoding of outcomes as histogram indices.
//!
//! This is the single definition that the emitter, the CUDA backend and the tests share; the
//! device code the emitter writes computes exactly the formulas of this file.
//!
//! # Placement
//!
//! The test's scope tree is mapped onto the grid in four levels, each with a per-launch
//! permutation drawn from the launch seed (see [`Perms`]):
//!
//! - *test clusters* (distinct `cluster` ids; without clusters, every test CTA is its own) map to
//!   distinct physical clusters; `tiles` groups of [`Shape::clusters`] physical clusters each host
//!   one test cluster apiece;
//! - *test CTAs* of one test cluster map to distinct CTAs (ranks) of that physical cluster, whose
//!   size is [`Shape::cluster_dim`] (a cluster launch when it is above 1);
//! - *warp groups* (roles of one CTA that share a `warp` hint; a role without a hint is a group
//!   of its own) map to distinct warps of that CTA: warps come in `blocks` of
//!   [`Shape::groups_per_block`] warps;
//! - the roles of one group share a warp: lanes come in runs of [`Shape::group_size`] lanes, one
//!   run per instance, [`Shape::instances_per_warp`] runs per warp.
//!
//! An instance is identified by (tile, block, lane run): `instance = (tile * blocks + block) *
//! instances_per_warp + run`. Every physical thread decides its role and instance from its own
//! coordinates with the inverse maps of [`Layout::thread_role`]; threads whose coordinates fall
//! outside (spare CTAs, warps or lanes) run no role but still take part in CTA and cluster
//! barriers of the kernel. CTAs beyond the testing ones only run memory stress.

use super::stress::Stress;
use super::CodegenError;
use crate::litmus::ast::{LocationKind, Space, Test, Value};
use crate::outcome::{Histogram, Observable, Outcome};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Largest outcome space the device histogram holds.
pub const MAX_OUTCOMES: u64 = 1 << 20;

/// Threads in a warp.
pub const WARP: u32 = 32;

/// Launch dimensions of one kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchConfig {
    /// The kernel's entry name in the module.
    pub entry: String,
    /// Grid dimensions in CTAs.
    pub grid: [u32; 3],
    /// CTA dimensions in threads.
    pub block: [u32; 3],
    /// Cluster dimensions in CTAs, when the kernel needs a cluster launch (`cuLaunchKernelEx`
    /// with the cluster-dimension attribute; the PTX also states them with `.reqnctapercluster`).
    pub cluster: Option<[u32; 3]>,
    /// Dynamic shared memory bytes (the kernel declares its shared memory statically).
    pub dynamic_shared_bytes: u32,
}

/// What a kernel parameter carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Param {
    /// Device pointer to the [`BufferKind::Memory`] buffer.
    Memory,
    /// Device pointer to the [`BufferKind::Results`] buffer.
    Results,
    /// Device pointer to the [`BufferKind::Histogram`] buffer.
    Histogram,
    /// Device pointer to the [`BufferKind::Stress`] buffer.
    Stress,
    /// Device pointer to the [`BufferKind::Sync`] buffer.
    Sync,
    /// The launch's seed, a `u32` by value; a new one per launch re-randomises placement.
    Seed,
}

/// The parameters of both kernels (`litmus_test` and `litmus_collect`), in order. Every
/// pointer is a `u64` device address; `Seed` is a `u32`.
pub const PARAMS: [Param; 6] = [
    Param::Memory,
    Param::Results,
    Param::Histogram,
    Param::Stress,
    Param::Sync,
    Param::Seed,
];

impl Param {
    /// The parameter's name in the PTX.
    pub fn name(self) -> &'static str {
        match self {
            Param::Memory => "p_mem",
            Param::Results => "p_results",
            Param::Histogram => "p_hist",
            Param::Stress => "p_stress",
            Param::Sync => "p_sync",
            Param::Seed => "p_seed",
        }
    }
}

/// A device buffer the host allocates once, zero-filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BufferKind {
    /// Global memory of the test's global locations, `u32` words.
    Memory,
    /// Per-instance result slots, `u32` words ([`Layout::result_words`] per instance).
    Results,
    /// The histogram and its counters, `u64` words (see [`Counter`]); the only buffer the host
    /// reads back.
    Histogram,
    /// Scratch lines that stress loops hammer, `u32` words.
    Stress,
    /// Words of the spin barrier, `u32`.
    Sync,
}

/// One buffer the host allocates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buffer {
    /// Which buffer.
    pub kind: BufferKind,
    /// Size in bytes.
    pub bytes: u64,
}

/// Counters after the outcome counts in the histogram buffer, by offset from
/// [`Layout::outcome_count`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Counter {
    /// Instances whose final state had a value outside the outcome space.
    Unexpected = 0,
    /// Instances skipped because a bounded loop of the test ran out of iterations.
    Skipped = 1,
    /// Instances the collect kernel examined (counted or skipped): the checksum.
    Checked = 2,
    /// Instances some of whose roles did not report (a harness fault; must stay 0).
    Incomplete = 3,
    /// Memory operations the stress loops issued (stress threads and pre-test stress).
    StressOps = 4,
}

/// Counters after the outcome counts.
pub const COUNTERS: u64 = 5;

/// Where one role runs: its place in the mapping of [`Shape`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolePlace {
    /// Test cluster index (0-based, in order of first appearance).
    pub cluster: u32,
    /// Test CTA index inside its test cluster.
    pub cta: u32,
    /// Warp group index inside its test CTA.
    pub group: u32,
    /// Lane offset inside its group's run of lanes.
    pub lane: u32,
}

/// The shape of the mapping from the test's scope tree to the grid.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Test clusters.
    pub clusters: u32,
    /// CTAs per physical cluster (the largest test cluster); 1 means no cluster launch.
    pub cluster_dim: u32,
    /// For each test cluster, for each test CTA, for each warp group, its roles in lane order.
    pub groups: Vec<Vec<Vec<Vec<usize>>>>,
    /// Per role, where it runs.
    pub roles: Vec<RolePlace>,
    /// Placement decisions a reader should know about (threads of other GPUs run on this one).
    pub notes: Vec<String>,
    /// Warps of one block (the most warp groups of any test CTA).
    pub groups_per_block: u32,
    /// Lanes of one instance's run (the largest warp group).
    pub group_size: u32,
    /// Instances per warp (`32 / group_size`).
    pub instances_per_warp: u32,
    /// Blocks of warps per CTA.
    pub blocks: u32,
    /// Tiles: groups of `clusters` physical clusters, each running a full set of instances.
    pub tiles: u32,
    /// CTA barriers the test uses, in order of first use; test barrier `barriers[k]` of block
    /// `b` is hardware barrier `1 + b * barriers.len() + k` (barrier 0 is the kernel's own).
    pub barriers: Vec<BarrierKey>,
    /// CTA barriers run in software (every CTA barrier of a test with a run-time key; see
    /// [`super::soft_barrier`]); then `barriers` is empty.
    #[serde(default)]
    pub soft_barriers: Vec<super::soft_barrier::SoftBarrier>,
}

/// What makes two CTA barrier instructions of a test the same barrier: the id and, when
/// given, the value of the thread-count operand (the Dat3M reading the corpus follows, where
/// `bar.cta.sync 1, 1` and `bar.cta.sync 1, 2` are different barriers). Both must be constants
/// (immediates, or registers that can hold only one value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BarrierKey {
    /// The barrier id.
    pub id: Value,
    /// The count operand's value, when there is one.
    pub count: Option<Value>,
}

impl BarrierKey {
    /// The key of a CTA barrier instruction of `thread`, or why it has none.
    pub fn of(
        analysis: &super::domain::Analysis,
        thread: usize,
        id: &crate::litmus::ast::Operand,
        count: &Option<crate::litmus::ast::Operand>,
    ) -> Result<BarrierKey, CodegenError> {
        let constant = |o: &crate::litmus::ast::Operand, what: &str| {
            analysis
                .constant(thread, o)
                .ok_or_else(|| CodegenError::Unsupported {
                    construct: format!(
                        "a barrier {what} of P{thread} that depends on a loaded value"
                    ),
                    reason: "the harness maps each test barrier to a hardware barrier before the \
                         launch, so ids and counts must be known then"
                        .into(),
                })
        };
        Ok(BarrierKey {
            id: constant(id, "id")?,
            count: count.as_ref().map(|c| constant(c, "count")).transpose()?,
        })
    }
}

/// Where one memory location of the test lives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocationLayout {
    /// The location's name (a `Memory` location; aliases resolve to one of these).
    pub name: String,
    /// Initial value.
    pub init: Value,
    /// State space.
    pub space: Space,
    /// For global locations: first word of the location's segment in the memory buffer; for
    /// shared ones: first word of its segment in the owner CTA's shared array.
    pub base: u64,
    /// Words between neighbouring instance slots.
    pub stride: u64,
    /// Multiplier co-prime with the slot count: instance `i` uses slot `i * multiplier mod
    /// slots` (always slot 0 with aliased memory).
    pub multiplier: u64,
    /// For shared locations: the result word that receives its final value.
    pub result_word: Option<u32>,
}

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
}

fn one_view() -> u32 {
    1
}

/// Alignment of the memory views: the granularity of the driver's virtual memory mappings
/// (2 MiB for device memory on every GPU the harness supports; the runtime checks it).
pub const VIEW_ALIGN: u64 = 2 << 20;

/// Per-launch permutations, drawn from the launch seed (identity when the launch does not
/// shuffle). Each maps a physical coordinate to a logical one: `logical = (a * physical + b) mod
/// n`, with `a` co-prime to `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Perms {
    /// Physical cluster → (tile, test cluster) slot, over `tiles * clusters`.
    pub cluster: (u64, u64),
    /// Rank in cluster → test CTA, a rotation over `cluster_dim`.
    pub rank: u64,
    /// Warp → (block, group) slot, over `blocks * groups_per_block`.
    pub warp: (u64, u64),
    /// Lane → lane slot, over 32 (`a` odd).
    pub lane: (u64, u64),
}

impl Perms {
    /// No shuffling.
    pub const IDENTITY: Perms = Perms {
        cluster: (1, 0),
        rank: 0,
        warp: (1, 0),
        lane: (1, 0),
    };
}

/// The per-launch hash of the device: a 32-bit integer finaliser. `salt` picks one of the
/// independent draws of a launch (see [`Salt`]).
pub fn mix32(seed: u32, salt: Salt) -> u32 {
    let mut x = seed ^ (salt as u32).wrapping_mul(0x9E37_79B9);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^= x >> 16;
    x
}

/// The independent draws a launch makes from its seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Salt {
    /// Whether this launch shuffles placement (`shuffle_pct`).
    Shuffle = 1,
    /// The cluster permutation.
    Cluster = 2,
    /// The rank rotation.
    Rank = 3,
    /// The warp permutation.
    Warp = 4,
    /// The lane permutation.
    Lane = 5,
    /// Whether test threads meet at the spin barrier (`barrier_pct`).
    Barrier = 6,
    /// Whether stress CTAs stress memory (`mem_stress_pct`).
    MemStress = 7,
    /// Whether test threads stress memory before the test (`pre_stress_pct`).
    PreStress = 8,
    /// The line all balanced stress threads hit.
    StressLine = 9,
}

/// Whether a launch with `seed` takes a `pct`-percent chance drawn with `salt`.
pub fn chance(seed: u32, salt: Salt, pct: u32) -> bool {
    mix32(seed, salt) % 100 < pct
}

impl Perms {
    /// The permutations the device computes for a launch with `seed`.
    pub fn from_seed(layout: &Layout, shuffle_pct: u32, seed: u32) -> Perms {
        if !chance(seed, Salt::Shuffle, shuffle_pct) {
            return Perms::IDENTITY;
        }
        let s = &layout.shape;
        let nc = u64::from(s.tiles * s.clusters);
        let nw = u64::from(s.blocks * s.groups_per_block);
        let h = |salt| u64::from(mix32(seed, salt));
        let (hc, hw, hl) = (h(Salt::Cluster), h(Salt::Warp), h(Salt::Lane));
        Perms {
            cluster: (multiplier_table(nc)[(hc & 7) as usize], (hc >> 3) % nc),
            rank: h(Salt::Rank) % u64::from(s.cluster_dim),
            warp: (multiplier_table(nw)[(hw & 7) as usize], (hw >> 3) % nw),
            lane: (2 * (hl & 15) + 1, (hl >> 4) & 31),
        }
    }
}

/// A role and instance that a physical thread plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Assignment {
    /// The test thread (role) index.
    pub role: usize,
    /// The instance index in `0..instances`.
    pub instance: u64,
}

/// Greatest common divisor.
pub fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The smallest multiplier at or above `want` (taken mod `n`) that is co-prime with `n`.
pub fn coprime_at_least(want: u64, n: u64) -> u64 {
    if n <= 1 {
        return 1;
    }
    let mut a = want % n;
    loop {
        if a != 0 && gcd(a, n) == 1 {
            return a;
        }
        a = (a + 1) % n;
    }
}

/// Multipliers co-prime with `n` from which a launch picks its permutation (8 entries, so the
/// device indexes them with 3 bits of its hash).
pub fn multiplier_table(n: u64) -> [u64; 8] {
    let mut out = [1u64; 8];
    let mut a = 1u64;
    for slot in out.iter_mut() {
        *slot = coprime_at_least(a, n);
        // Spread the picks over the range so permutations differ visibly.
        a = *slot + n / 8 + 1;
    }
    out
}

impl Shape {
    /// Computes the mapping of a test's scope tree.
    pub fn of(test: &Test, stress: &Stress) -> Result<Shape, CodegenError> {
        if test.threads.is_empty() {
            return Err(CodegenError::Invalid("the test has no threads".into()));
        }
        let mut notes = Vec::new();
        if let Some(t) = test
            .threads
            .iter()
            .find(|t| t.place.gpu != test.threads[0].place.gpu)
        {
            notes.push(format!(
                "P{} is on gpu {} in the test but runs on the same GPU as P0, in another \
                 cluster: .gpu-scoped operations then include each other, so the run can only \
                 show the outcomes of a one-GPU placement (a subset of what the test allows)",
                t.id, t.place.gpu
            ));
        }
        // Test clusters in order of first appearance; without cluster ids, every CTA is one.
        let cluster_key = |p: &crate::litmus::ast::Placement| match p.cluster {
            Some(c) => (p.gpu, 0u8, c, 0u32),
            None => (p.gpu, 1u8, 0, p.cta),
        };
        let mut cluster_keys = Vec::new();
        let mut groups: Vec<Vec<Vec<Vec<usize>>>> = Vec::new();
        let mut cta_keys: Vec<Vec<u32>> = Vec::new();
        let mut group_keys: Vec<Vec<Vec<Option<u32>>>> = Vec::new();
        let mut roles = Vec::new();
        for t in &test.threads {
            let ck = cluster_key(&t.place);
            let c = match cluster_keys.iter().position(|k| *k == ck) {
                Some(c) => c,
                None => {
                    cluster_keys.push(ck);
                    groups.push(Vec::new());
                    cta_keys.push(Vec::new());
                    group_keys.push(Vec::new());
                    cluster_keys.len() - 1
                }
            };
            let j = match cta_keys[c].iter().position(|k| *k == t.place.cta) {
                Some(j) => j,
                None => {
                    cta_keys[c].push(t.place.cta);
                    groups[c].push(Vec::new());
                    group_keys[c].push(Vec::new());
                    cta_keys[c].len() - 1
                }
            };
            // A role without a warp hint is a group of its own.
            let g = match t
                .place
                .warp
                .and_then(|w| group_keys[c][j].iter().position(|k| *k == Some(w)))
            {
                Some(g) => g,
                None => {
                    group_keys[c][j].push(t.place.warp);
                    groups[c][j].push(Vec::new());
                    groups[c][j].len() - 1
                }
            };
            groups[c][j][g].push(t.id);
            roles.push(RolePlace {
                cluster: c as u32,
                cta: j as u32,
                group: g as u32,
                lane: (groups[c][j][g].len() - 1) as u32,
            });
        }
        let clusters = groups.len() as u32;
        let cluster_dim = groups.iter().map(|c| c.len()).max().unwrap_or(1) as u32;
        if cluster_dim > 8 {
            return Err(CodegenError::Unsupported {
                construct: format!("a cluster of {cluster_dim} CTAs"),
                reason: "portable clusters hold at most 8 CTAs".into(),
            });
        }
        let groups_per_block = groups
            .iter()
            .flat_map(|c| c.iter().map(|g| g.len()))
            .max()
            .unwrap_or(1) as u32;
        let group_size = groups
            .iter()
            .flat_map(|c| c.iter().flat_map(|g| g.iter().map(|r| r.len())))
            .max()
            .unwrap_or(1) as u32;
        if group_size > WARP {
            return Err(CodegenError::Unsupported {
                construct: format!("{group_size} roles in one warp"),
                reason: "a warp has 32 lanes".into(),
            });
        }
        let warps = stress.cta_size / WARP;
        if groups_per_block > warps {
            return Err(CodegenError::Invalid(format!(
                "a test CTA needs {groups_per_block} warps but cta_size is {}",
                stress.cta_size
            )));
        }
        let analysis = super::domain::Analysis::of(test)?;
        let soft = super::soft_barrier::needed(test, &analysis);
        let soft_barriers = if soft {
            super::soft_barrier::plan(test, &analysis, &roles)?
        } else {
            Vec::new()
        };
        let mut barriers = Vec::new();
        for t in test.threads.iter().filter(|_| !soft) {
            for i in &t.body {
                if let crate::litmus::ast::Instr::Barrier(crate::litmus::ast::Barrier::Cta {
                    id,
                    count,
                    ..
                }) = i
                {
                    let key = BarrierKey::of(&analysis, t.id, id, count)?;
                    if !barriers.contains(&key) {
                        barriers.push(key);
                    }
                }
            }
        }
        let mut blocks = warps / groups_per_block;
        if !barriers.is_empty() {
            let per_block = barriers.len() as u32;
            if per_block > 15 {
                return Err(CodegenError::Unsupported {
                    construct: format!("{per_block} distinct barrier ids"),
                    reason: "a CTA has 15 barriers beside the kernel's own".into(),
                });
            }
            blocks = blocks.min(15 / per_block);
        }
        let per_tile = clusters * cluster_dim;
        let tiles = (stress.testing_ctas / per_tile).max(1);
        Ok(Shape {
            clusters,
            cluster_dim,
            groups,
            roles,
            groups_per_block,
            group_size,
            instances_per_warp: WARP / group_size,
            blocks,
            tiles,
            barriers,
            soft_barriers,
            notes,
        })
    }

    /// Instances per launch.
    pub fn instances(&self) -> u64 {
        u64::from(self.tiles) * u64::from(self.blocks) * u64::from(self.instances_per_warp)
    }

    /// Instance slots per CTA (used to size per-CTA shared memory).
    pub fn slots_per_cta(&self) -> u64 {
        u64::from(self.blocks) * u64::from(self.instances_per_warp)
    }

    /// Hardware barrier of test barrier `key` in `block`.
    pub fn hardware_barrier(&self, key: &BarrierKey, block: u32) -> Option<u32> {
        let k = self.barriers.iter().position(|b| b == key)? as u32;
        Some(1 + block * self.barriers.len() as u32 + k)
    }
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
        let shape = Shape::of(test, stress)?;
        let observables = crate::outcome::observables(test);
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
        let instances = shape.instances();
        let aliased = stress.aliased_memory;
        let stride = u64::from(stress.mem_stride);
        // Memory locations and their segments.
        let mut locations = Vec::new();
        let mut global_words = 0u64;
        let mut shared_words = 0u64;
        let mut global_index = 0u64;
        let slots_per_cta = shape.slots_per_cta();
        for l in &test.locations {
            if let LocationKind::Memory { init, space } = l.kind {
                let (base, stride_l, multiplier) = match space {
                    Space::Global => {
                        let want = if global_index == 0 {
                            stress.permute_first
                        } else {
                            stress.permute_second.wrapping_pow(global_index as u32)
                        };
                        let m = coprime_at_least(u64::from(want), instances);
                        let base = global_words;
                        // Segments start on 128-byte lines so the first slots of two locations
                        // never share a line.
                        let seg = if aliased { 1 } else { instances } * stride;
                        global_words += seg.div_ceil(32) * 32;
                        global_index += 1;
                        (base, stride, m)
                    }
                    Space::Shared { owner } => {
                        if owner >= test.threads.len() {
                            return Err(CodegenError::Invalid(format!(
                                "location {} is shared memory of P{owner}, which does not exist",
                                l.name
                            )));
                        }
                        let base = shared_words;
                        shared_words += if aliased { 1 } else { slots_per_cta };
                        (base, 1, 1)
                    }
                };
                locations.push(LocationLayout {
                    name: l.name.clone(),
                    init,
                    space,
                    base,
                    stride: stride_l,
                    multiplier,
                    result_word: None,
                });
            }
        }
        if shared_words * 4 > 48 * 1024 {
            return Err(CodegenError::Unsupported {
                construct: format!("{} bytes of shared memory per CTA", shared_words * 4),
                reason: "static shared memory is limited to 48 KiB; lower cta_size".into(),
            });
        }
        // Result words: statuses, observed registers, final values of shared locations.
        let roles = test.threads.len() as u32;
        let mut next = roles;
        // Every register of every thread has a word, so that the test kernel stores each one
        // and ptxas cannot treat any test load or atom as dead.
        let mut register_words = Vec::new();
        for t in 0..test.threads.len() {
            let regs = super::lower::thread_registers(test, &observables, t);
            register_words.push(
                regs.into_iter()
                    .map(|r| {
                        next += 1;
                        (r, next - 1)
                    })
                    .collect::<Vec<_>>(),
            );
        }
        let mut observable_words = Vec::new();
        for o in &observables {
            match o {
                Observable::Reg { thread, reg } => {
                    let w = register_words
                        .get(*thread)
                        .and_then(|rs| rs.iter().find(|(r, _)| *r == reg.0))
                        .map(|(_, w)| *w)
                        .ok_or_else(|| {
                            CodegenError::Invalid(format!(
                                "observable {o} names a thread that does not exist"
                            ))
                        })?;
                    observable_words.push(Some(w));
                }
                Observable::Loc(name) => {
                    let target = test.resolve(name).ok_or_else(|| {
                        CodegenError::Invalid(format!("observable {o} is not a location"))
                    })?;
                    let loc = locations
                        .iter_mut()
                        .find(|l| l.name == target)
                        .expect("resolve returns a memory location");
                    match loc.space {
                        Space::Global => observable_words.push(None),
                        Space::Shared { .. } => {
                            let w = *loc.result_word.get_or_insert_with(|| {
                                next += 1;
                                next - 1
                            });
                            observable_words.push(Some(w));
                        }
                    }
                }
            }
        }
        // Last, two words (key, passed) per software barrier: zeroed with the results after
        // every launch, which is the "not yet published" state the barrier needs.
        let soft_barrier_word = next;
        let result_words = next + 2 * shape.soft_barriers.len() as u32;
        let testing_ctas = shape.tiles * shape.clusters * shape.cluster_dim;
        let dim = shape.cluster_dim;
        let grid_ctas = stress.max_ctas.max(testing_ctas).div_ceil(dim) * dim;
        let cluster = (dim > 1).then_some([dim, 1, 1]);
        let stress_words =
            u64::from(stress.stress_line_size) * u64::from(stress.stress_target_lines);
        let buffers = vec![
            Buffer {
                kind: BufferKind::Memory,
                bytes: global_words.max(1) * 4,
            },
            Buffer {
                kind: BufferKind::Results,
                bytes: instances * u64::from(result_words) * 4,
            },
            Buffer {
                kind: BufferKind::Histogram,
                bytes: (outcome_count + COUNTERS) * 8,
            },
            Buffer {
                kind: BufferKind::Stress,
                bytes: stress_words * 4,
            },
            Buffer {
                kind: BufferKind::Sync,
                bytes: 4 * 4,
            },
        ];
        // Generic aliases of global locations: the k-th alias of a location is view k.
        let mut alias_views: Vec<(String, u32)> = Vec::new();
        let mut per_target: BTreeMap<String, u32> = BTreeMap::new();
        for l in &test.locations {
            if let LocationKind::Alias {
                proxy: crate::litmus::ast::Proxy::Generic,
                ..
            } = l.kind
            {
                let global = test.resolve(&l.name).is_some_and(|t| {
                    locations
                        .iter()
                        .any(|m| m.name == t && m.space == Space::Global)
                });
                if let (true, Some(t)) = (global, test.resolve(&l.name)) {
                    let k = per_target.entry(t.to_string()).or_insert(0);
                    *k += 1;
                    alias_views.push((l.name.clone(), *k));
                }
            }
        }
        let memory_views = 1 + per_target.values().copied().max().unwrap_or(0);
        let view_bytes = if memory_views > 1 {
            (global_words.max(1) * 4).div_ceil(VIEW_ALIGN) * VIEW_ALIGN
        } else {
            0
        };
        let collect_block = 256u32;
        Ok(Layout {
            test: test.name.clone(),
            instances,
            testing_ctas,
            test_launch: LaunchConfig {
                entry: "litmus_test".into(),
                grid: [grid_ctas, 1, 1],
                block: [stress.cta_size, 1, 1],
                cluster,
                dynamic_shared_bytes: 0,
            },
            collect_launch: LaunchConfig {
                entry: "litmus_collect".into(),
                grid: [(instances as u32).div_ceil(collect_block), 1, 1],
                block: [collect_block, 1, 1],
                cluster: None,
                dynamic_shared_bytes: 0,
            },
            shape,
            buffers,
            locations,
            shared_words,
            observables,
            domains: domains.to_vec(),
            result_words,
            soft_barrier_word,
            observable_words,
            register_words,
            outcome_count,
            aliased,
            loop_bound: 4096,
            memory_views,
            view_bytes,
            alias_views,
        })
    }

    /// The size of a buffer in bytes.
    pub fn buffer_bytes(&self, kind: BufferKind) -> u64 {
        self.buffers
            .iter()
            .find(|b| b.kind == kind)
            .map_or(0, |b| b.bytes)
    }

    /// The memory view a name reaches its location through: 0 for the location itself, the
    /// alias's view for a generic alias of a global location, `None` for other aliases.
    pub fn view_of(&self, test: &Test, name: &str) -> Option<u32> {
        match &test.location(name)?.kind {
            LocationKind::Memory { .. } => Some(0),
            LocationKind::Alias { .. } => self
                .alias_views
                .iter()
                .find(|(a, _)| a == name)
                .map(|(_, v)| *v),
        }
    }

    /// The memory location a (possibly aliased) name refers to.
    pub fn location(&self, test: &Test, name: &str) -> Option<&LocationLayout> {
        let target = test.resolve(name)?;
        self.locations.iter().find(|l| l.name == target)
    }

    /// Word index of a global location's slot for `instance` in the memory buffer.
    pub fn global_word(&self, loc: &LocationLayout, instance: u64) -> u64 {
        let slot = if self.aliased {
            0
        } else {
            instance * loc.multiplier % self.instances
        };
        loc.base + slot * loc.stride
    }

    /// Word index of a shared location's slot for the instance in `slot` of its CTA (`slot =
    /// block * instances_per_warp + run`), in the owner CTA's shared array.
    pub fn shared_word(&self, loc: &LocationLayout, slot: u64) -> u64 {
        loc.base + if self.aliased { 0 } else { slot }
    }

    /// The role and instance that the thread `tid` of CTA `cta` plays under `perms`, or `None`
    /// for a thread that runs no role. This is the map the device code computes.
    pub fn thread_role(&self, perms: &Perms, cta: u32, tid: u32) -> Option<Assignment> {
        let s = &self.shape;
        let testing_clusters = u64::from(s.tiles * s.clusters);
        let phys_cluster = u64::from(cta / s.cluster_dim);
        if phys_cluster >= testing_clusters {
            return None;
        }
        let rank = u64::from(cta % s.cluster_dim);
        let x = (perms.cluster.0 * phys_cluster + perms.cluster.1) % testing_clusters;
        let (tile, c) = (
            x / u64::from(s.clusters),
            (x % u64::from(s.clusters)) as usize,
        );
        let j = ((rank + perms.rank) % u64::from(s.cluster_dim)) as usize;
        let ctas = s.groups.get(c)?;
        let groups = ctas.get(j)?;
        let warp = u64::from(tid / WARP);
        let warp_slots = u64::from(s.blocks * s.groups_per_block);
        if warp >= warp_slots {
            return None;
        }
        let wk = (perms.warp.0 * warp + perms.warp.1) % warp_slots;
        let (block, g) = (
            wk / u64::from(s.groups_per_block),
            (wk % u64::from(s.groups_per_block)) as usize,
        );
        let group = groups.get(g)?;
        let lane = u64::from(tid % WARP);
        let ll = (perms.lane.0 * lane + perms.lane.1) % u64::from(WARP);
        let run = ll / u64::from(s.group_size);
        let idx = (ll % u64::from(s.group_size)) as usize;
        if run >= u64::from(s.instances_per_warp) {
            return None;
        }
        let role = *group.get(idx)?;
        let instance = (tile * u64::from(s.blocks) + block) * u64::from(s.instances_per_warp) + run;
        Some(Assignment { role, instance })
    }

    /// The physical rank, in its cluster, of the CTA that runs test CTA `cta` under `perms`
    /// (the inverse of the rotation in [`Layout::thread_role`]).
    pub fn rank_of(&self, perms: &Perms, cta: u32) -> u32 {
        let k = u64::from(self.shape.cluster_dim);
        ((u64::from(cta) + k - perms.rank % k) % k) as u32
    }

    /// Index of the histogram word that counts `outcome`, or `None` when a value lies outside
    /// its domain (the unexpected bucket).
    pub fn encode(&self, outcome: &[Value]) -> Option<u64> {
        let mut index = 0u64;
        for (v, d) in outcome.iter().zip(&self.domains) {
            let digit = d.iter().position(|x| as_u32(*x) == as_u32(*v))? as u64;
            index = index * d.len() as u64 + digit;
        }
        Some(index)
    }

    /// The outcome counted by histogram word `index` (the inverse of [`Layout::encode`]).
    pub fn decode(&self, mut index: u64) -> Outcome {
        let mut values = vec![0; self.domains.len()];
        for (k, d) in self.domains.iter().enumerate().rev() {
            let n = d.len() as u64;
            values[k] = d[(index % n) as usize];
            index /= n;
        }
        Outcome(values)
    }

    /// Turns the device histogram buffer (read back as `u64` words) into a [`Histogram`] and
    /// its counters, checking the checksum: every examined instance was counted exactly once.
    pub fn decode_histogram(&self, words: &[u64]) -> Result<DeviceCounts, CodegenError> {
        let n = self.outcome_count as usize;
        if words.len() < n + COUNTERS as usize {
            return Err(CodegenError::Invalid(format!(
                "histogram buffer has {} words, expected {}",
                words.len(),
                n + COUNTERS as usize
            )));
        }
        let counter = |c: Counter| words[n + c as usize];
        let mut histogram = Histogram::default();
        for (i, &count) in words[..n].iter().enumerate() {
            if count > 0 {
                histogram.counts.insert(self.decode(i as u64), count);
            }
        }
        histogram.unexpected = counter(Counter::Unexpected);
        let counts = DeviceCounts {
            histogram,
            skipped: counter(Counter::Skipped),
            checked: counter(Counter::Checked),
            incomplete: counter(Counter::Incomplete),
            stress_ops: counter(Counter::StressOps),
        };
        if counts.histogram.total() + counts.skipped != counts.checked {
            return Err(CodegenError::Checksum(format!(
                "{} counted + {} skipped != {} instances examined",
                counts.histogram.total(),
                counts.skipped,
                counts.checked
            )));
        }
        Ok(counts)
    }
}

/// What the device counted, decoded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceCounts {
    /// Outcomes and the unexpected bucket.
    pub histogram: Histogram,
    /// Instances skipped (a bounded loop ran out).
    pub skipped: u64,
    /// Instances examined by the collect kernel: counted plus skipped.
    pub checked: u64,
    /// Instances with roles that never reported (must be 0).
    pub incomplete: u64,
    /// Stress memory operations issued.
    pub stress_ops: u64,
}

impl DeviceCounts {
    /// Checks the totals against the launches run: every instance of every launch was examined
    /// and none was incomplete.
    pub fn check_total(&self, layout: &Layout, launches: u64) -> Result<(), CodegenError> {
        let expected = layout.instances * launches;
        if self.checked != expected || self.incomplete != 0 {
            return Err(CodegenError::Checksum(format!(
                "{} instances examined and {} incomplete after {launches} launches of {} \
                 instances (expected {expected} and 0)",
                self.checked, self.incomplete, layout.instances
            )));
        }
        Ok(())
    }
}

/// A value as the device holds it (32 bits, two's complement).
pub fn as_u32(v: Value) -> u32 {
    v as u32
}
