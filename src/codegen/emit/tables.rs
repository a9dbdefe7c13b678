//! The constant tables the test kernel indexes: the multipliers a launch picks its cluster and
//! warp permutations from, the role of each lane of each warp slot, and each warp slot's
//! skeleton.

use super::skeleton::Skeletons;
use super::NONE;
use crate::codegen::layout::{multiplier_table, Layout, Shape, WARP_MULTIPLIERS};

/// `.const .u32 name[] = {vals}`.
fn table(name: &str, vals: &[u64]) -> String {
    let v: Vec<String> = vals.iter().map(|x| x.to_string()).collect();
    format!(
        ".const .align 4 .u32 {name}[{}] = {{{}}};\n",
        vals.len(),
        v.join(", ")
    )
}

/// The role of each lane of each warp slot, indexed by `((cluster * cluster_dim + cta) *
/// groups_per_block + group) * group_size + lane`; [`NONE`] where no role runs.
fn roles(shape: &Shape) -> Vec<u64> {
    let mut out = Vec::new();
    for c in 0..shape.clusters as usize {
        for j in 0..shape.cluster_dim as usize {
            for g in 0..shape.groups_per_block as usize {
                let group = shape.groups[c].get(j).and_then(|gs| gs.get(g));
                for idx in 0..shape.group_size as usize {
                    let role = group.and_then(|gr| gr.get(idx));
                    out.push(role.map_or(u64::from(NONE), |r| *r as u64));
                }
            }
        }
    }
    out
}

/// The tables of a kernel.
pub fn render(layout: &Layout, skeletons: &Skeletons) -> String {
    let shape = &layout.shape;
    let qc = u64::from(shape.tiles * shape.clusters);
    let nw = u64::from(shape.blocks * shape.groups_per_block);
    let k = u64::from(layout.partner_distances.max(1));
    let mut out = table("litmus_mul_cluster", &multiplier_table(qc, k));
    out.push_str(&table(
        "litmus_mul_warp",
        &multiplier_table(nw, WARP_MULTIPLIERS),
    ));
    out.push_str(&table("litmus_roles", &roles(shape)));
    out.push_str(&table("litmus_skel", &skeletons.table));
    out
}
