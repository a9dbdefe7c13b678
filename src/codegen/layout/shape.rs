//! The shape of a kernel: how the test's scope tree (clusters, CTAs, warp groups, lanes) maps
//! onto the grid, how many instances fit, and which barriers each block of warps uses.

use crate::codegen::barrier_key::BarrierKey;
use crate::codegen::domain::Analysis;
use crate::codegen::soft_barrier::{self, SoftBarrier};
use crate::codegen::stress::Stress;
use crate::codegen::CodegenError;
use crate::litmus::ast::{Barrier, Instr, Placement, Test};
use serde::{Deserialize, Serialize};

/// Threads in a warp.
pub const WARP: u32 = 32;

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
    /// `codegen::soft_barrier`); then `barriers` is empty.
    #[serde(default)]
    pub soft_barriers: Vec<SoftBarrier>,
}

/// Test clusters, each a list of test CTAs, each a list of warp groups, each its roles in lane
/// order.
type Groups = Vec<Vec<Vec<Vec<usize>>>>;

impl Shape {
    /// Computes the mapping of a test's scope tree.
    pub fn of(test: &Test, stress: &Stress) -> Result<Shape, CodegenError> {
        if test.threads.is_empty() {
            return Err(CodegenError::Invalid("the test has no threads".into()));
        }
        let (groups, roles) = scope_tree(test);
        let clusters = groups.len() as u32;
        let cluster_dim = groups.iter().map(|c| c.len()).max().unwrap_or(1) as u32;
        if cluster_dim > 8 {
            return Err(CodegenError::Unsupported {
                construct: format!("a cluster of {cluster_dim} CTAs"),
                reason: "portable clusters hold at most 8 CTAs".into(),
            });
        }
        let (groups_per_block, group_size) = warp_groups(&groups, stress)?;
        let (barriers, soft_barriers) = barriers(test, &roles)?;
        let blocks = blocks(stress.cta_size / WARP / groups_per_block, &barriers)?;
        let tiles = (stress.testing_ctas / (clusters * cluster_dim)).max(1);
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
            notes: other_gpus(test).into_iter().collect(),
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

/// The note for a test whose threads sit on several GPUs: they all run on this one.
fn other_gpus(test: &Test) -> Option<String> {
    let t = test
        .threads
        .iter()
        .find(|t| t.place.gpu != test.threads[0].place.gpu)?;
    Some(format!(
        "P{} is on gpu {} in the test but runs on the same GPU as P0, in another cluster: \
         .gpu-scoped operations then include each other, so the run can only show the outcomes \
         of a one-GPU placement (a subset of what the test allows)",
        t.id, t.place.gpu
    ))
}

/// The index of `key` in `keys`, appending it (and an empty entry to `items`) when new.
fn index_of<K: PartialEq, T: Default>(keys: &mut Vec<K>, items: &mut Vec<T>, key: K) -> usize {
    match keys.iter().position(|k| *k == key) {
        Some(i) => i,
        None => {
            keys.push(key);
            items.push(T::default());
            keys.len() - 1
        }
    }
}

/// Test clusters, CTAs and warp groups in order of first appearance, and where each role runs.
/// Without cluster ids every CTA is a cluster of its own; a role without a warp hint is a group
/// of its own.
fn scope_tree(test: &Test) -> (Groups, Vec<RolePlace>) {
    let cluster_key = |p: &Placement| match p.cluster {
        Some(c) => (p.gpu, 0u8, c, 0u32),
        None => (p.gpu, 1u8, 0, p.cta),
    };
    let mut cluster_keys = Vec::new();
    let mut cta_keys: Vec<Vec<u32>> = Vec::new();
    let mut group_keys: Vec<Vec<Vec<Option<u32>>>> = Vec::new();
    let mut groups: Groups = Vec::new();
    let mut roles = Vec::new();
    for t in &test.threads {
        let c = index_of(&mut cluster_keys, &mut groups, cluster_key(&t.place));
        cta_keys.resize_with(groups.len(), Vec::new);
        group_keys.resize_with(groups.len(), Vec::new);
        let j = index_of(&mut cta_keys[c], &mut groups[c], t.place.cta);
        group_keys[c].resize_with(groups[c].len(), Vec::new);
        let g = match t.place.warp {
            Some(w) => index_of(&mut group_keys[c][j], &mut groups[c][j], Some(w)),
            None => {
                group_keys[c][j].push(None);
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
    (groups, roles)
}

/// Warps one block of `test` takes: the most warp groups of any of its test CTAs.
pub fn warps_needed(test: &Test) -> u32 {
    let (groups, _) = scope_tree(test);
    groups.iter().flatten().map(|g| g.len()).max().unwrap_or(1) as u32
}

/// Warps of one block (the most warp groups of a test CTA) and lanes of one instance's run (the
/// largest warp group), checked against the warp and the CTA.
fn warp_groups(groups: &Groups, stress: &Stress) -> Result<(u32, u32), CodegenError> {
    let ctas = || groups.iter().flatten();
    let groups_per_block = ctas().map(|g| g.len()).max().unwrap_or(1) as u32;
    let group_size = ctas().flatten().map(|r| r.len()).max().unwrap_or(1) as u32;
    if group_size > WARP {
        return Err(CodegenError::Unsupported {
            construct: format!("{group_size} roles in one warp"),
            reason: "a warp has 32 lanes".into(),
        });
    }
    if groups_per_block > stress.cta_size / WARP {
        return Err(CodegenError::Invalid(format!(
            "a test CTA needs {groups_per_block} warps but cta_size is {}",
            stress.cta_size
        )));
    }
    Ok((groups_per_block, group_size))
}

/// The test's CTA barriers: hardware barriers by key, in order of first use, or, when some id or
/// count is loaded at run time, every CTA barrier in software.
fn barriers(
    test: &Test,
    roles: &[RolePlace],
) -> Result<(Vec<BarrierKey>, Vec<SoftBarrier>), CodegenError> {
    let analysis = Analysis::of(test)?;
    if soft_barrier::needed(test, &analysis) {
        let same_cta = |a: usize, b: usize| {
            let (p, q) = (&roles[a], &roles[b]);
            p.cluster == q.cluster && p.cta == q.cta
        };
        return Ok((Vec::new(), soft_barrier::plan(test, &analysis, same_cta)?));
    }
    let mut keys = Vec::new();
    for t in &test.threads {
        for i in &t.body {
            if let Instr::Barrier(Barrier::Cta { id, count, .. }) = i {
                let key = BarrierKey::of(&analysis, t.id, id, count)?;
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
    }
    Ok((keys, Vec::new()))
}

/// Blocks of warps per CTA: as many as fit, and no more than the hardware barriers allow (15
/// beside the kernel's own, `barriers.len()` per block).
fn blocks(fit: u32, barriers: &[BarrierKey]) -> Result<u32, CodegenError> {
    let per_block = barriers.len() as u32;
    if per_block == 0 {
        return Ok(fit);
    }
    if per_block > 15 {
        return Err(CodegenError::Unsupported {
            construct: format!("{per_block} distinct barrier ids"),
            reason: "a CTA has 15 barriers beside the kernel's own".into(),
        });
    }
    Ok(fit.min(15 / per_block))
}
