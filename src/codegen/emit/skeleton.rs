//! Skeletons: the barrier sequences threads without a role replay, so that every barrier of the
//! kernel sees all of its participants. A thread of a warp group replays its group's sequence
//! (all roles of a warp group must run the same one); any other thread of a test cluster
//! replays the cluster's `barrier.cluster` sequence (all roles of a cluster must agree on it).
//!
//! Skeleton numbers: 0 none, `1 + c` the cluster skeleton of test cluster `c`, `1 + clusters +
//! n` the `n`-th group skeleton.

use crate::codegen::func::Func;
use crate::codegen::layout::Shape;
use crate::codegen::lower::{sync_lines, RoleCode, SyncOp};
use crate::codegen::CodegenError;

/// The skeletons of a kernel.
pub struct Skeletons {
    /// Whether any role synchronises (otherwise no skeleton runs).
    pub any: bool,
    /// Per test cluster, its `barrier.cluster` sequence.
    clusters: Vec<Vec<SyncOp>>,
    /// The group skeletons, in numbering order.
    groups: Vec<Vec<SyncOp>>,
    /// The skeleton of each warp slot, indexed by `(cluster * cluster_dim + cta) *
    /// groups_per_block + group` (the `litmus_skel` table).
    pub table: Vec<u64>,
}

/// The barrier sequence of each warp group that has one (`None`: no barriers), by test
/// cluster, CTA and group, and each cluster's `barrier.cluster` sequence.
type Sequences = (Vec<Vec<Vec<Option<Vec<SyncOp>>>>>, Vec<Vec<SyncOp>>);

/// The sequences of the warp groups and clusters of `shape`, refusing a warp or a cluster whose
/// roles disagree.
fn sequences(shape: &Shape, roles: &[RoleCode]) -> Result<Sequences, CodegenError> {
    let mut group_seq = Vec::new();
    let mut cluster_seq = Vec::new();
    for ctas in &shape.groups {
        let mut per_cta = Vec::new();
        let mut cseq: Option<Vec<SyncOp>> = None;
        for groups in ctas {
            let mut per_group = Vec::new();
            for g in groups {
                let first = &roles[g[0]].syncs;
                if let Some(r) = g.iter().find(|r| roles[**r].syncs != *first) {
                    return Err(CodegenError::Unsupported {
                        construct: format!("P{} and P{} share a warp", g[0], r),
                        reason: "threads of one warp must run the same barrier sequence".into(),
                    });
                }
                for r in g {
                    let cl: Vec<SyncOp> = roles[*r]
                        .syncs
                        .iter()
                        .filter(|s| s.is_cluster())
                        .cloned()
                        .collect();
                    match &cseq {
                        None => cseq = Some(cl),
                        Some(prev) if *prev != cl => {
                            return Err(CodegenError::Unsupported {
                                construct: format!("the cluster barriers of P{r}"),
                                reason: "every thread of a cluster must run the same sequence \
                                         of barrier.cluster arrives and waits"
                                    .into(),
                            })
                        }
                        Some(_) => {}
                    }
                }
                per_group.push((!first.is_empty()).then(|| first.clone()));
            }
            per_cta.push(per_group);
        }
        group_seq.push(per_cta);
        cluster_seq.push(cseq.unwrap_or_default());
    }
    Ok((group_seq, cluster_seq))
}

impl Skeletons {
    /// The skeletons of the roles `roles` placed by `shape`.
    pub fn of(shape: &Shape, roles: &[RoleCode]) -> Result<Skeletons, CodegenError> {
        let (group_seq, clusters) = sequences(shape, roles)?;
        let mut groups = Vec::new();
        let mut table = Vec::new();
        for c in 0..shape.clusters as usize {
            for j in 0..shape.cluster_dim as usize {
                for g in 0..shape.groups_per_block as usize {
                    let skel = match group_seq[c].get(j).and_then(|gs| gs.get(g)) {
                        Some(Some(seq)) => {
                            groups.push(seq.clone());
                            (clusters.len() + groups.len()) as u64
                        }
                        _ if !clusters[c].is_empty() => 1 + c as u64,
                        _ => 0,
                    };
                    table.push(skel);
                }
            }
        }
        Ok(Skeletons {
            any: roles.iter().any(|r| !r.syncs.is_empty()),
            clusters,
            groups,
            table,
        })
    }

    /// How many skeletons there are (numbered from 1).
    pub fn count(&self) -> usize {
        self.clusters.len() + self.groups.len()
    }

    /// The skeleton functions `litmus_skel_<n>`, when any role synchronises.
    pub fn render(&self) -> String {
        if !self.any {
            return String::new();
        }
        let mut out = String::new();
        for (n, seq) in self.clusters.iter().chain(&self.groups).enumerate() {
            let mut f = Func::new(format!(
                ".func litmus_skel_{}(.param .b32 litmus_bar)\n",
                n + 1
            ));
            f.decl(".reg .b32 %bar, %bid;");
            f.line("ld.param.b32 %bar, [litmus_bar];");
            for s in seq {
                for l in sync_lines(s, "%bar") {
                    f.line(l);
                }
            }
            f.line("ret;");
            out.push_str(&f.render());
        }
        out.push('\n');
        out
    }
}
