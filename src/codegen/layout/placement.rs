//! Placement: which role of which instance each physical thread of the grid plays.
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
//!
//! The device code computes exactly these maps; the permutation draws are those of
//! [`super::hash`].

use super::hash::{chance, mix32, Salt};
use super::shape::WARP;
use super::Layout;
#[cfg(doc)]
use super::Shape;

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
        let k = u64::from(layout.partner_distances.max(1));
        Perms {
            cluster: (multiplier_table(nc, k)[(hc % k) as usize], (hc / k) % nc),
            rank: h(Salt::Rank) % u64::from(s.cluster_dim),
            warp: (
                multiplier_table(nw, WARP_MULTIPLIERS)[(hw & 7) as usize],
                (hw >> 3) % nw,
            ),
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

/// Multipliers a launch picks its warp permutation from (the device indexes them with 3 bits
/// of its hash).
pub const WARP_MULTIPLIERS: u64 = 8;

/// `k` multipliers co-prime with `n` from which a launch picks its permutation, spread over
/// the range so that permutations differ visibly. For the cluster permutation, the partner of
/// a test CTA lies `a⁻¹ mod n` clusters away under multiplier `a`, so `k` bounds the distinct
/// partner-CTA distances (fewer when `n` has fewer co-prime residues).
pub fn multiplier_table(n: u64, k: u64) -> Vec<u64> {
    let mut out = Vec::with_capacity(k as usize);
    let mut a = 1u64;
    for _ in 0..k {
        let m = coprime_at_least(a, n);
        out.push(m);
        a = m + n / k + 1;
    }
    out
}

impl Layout {
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
}
