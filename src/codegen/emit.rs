//! The PTX module of a test: the fragments of `ptx/`, one function per role, the test kernel
//! `litmus_test` that places roles and runs them, and the collect kernel `litmus_collect` that
//! counts each instance's outcome and resets its memory for the next launch.

use super::layout::{as_u32, multiplier_table, Counter, Layout, Salt};
use super::lower::{lower_role, sync_ptx, RoleCode, SyncOp};
use super::ptx::PSpace;
use super::stress::Stress;
use super::CodegenError;
use crate::litmus::ast::{Fence, FenceSem, Instr, Space, Test};
use crate::outcome::Observable;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The PTX fragment with the per-launch hash.
pub const HASH_PTX: &str = include_str!("../../ptx/hash.ptx");
/// The PTX fragment with the stress loop.
pub const STRESS_PTX: &str = include_str!("../../ptx/stress.ptx");
/// The PTX fragment with the bounded spin barrier.
pub const SPIN_BARRIER_PTX: &str = include_str!("../../ptx/spin_barrier.ptx");
/// The PTX fragment with the software CTA barrier.
pub const SOFT_BARRIER_PTX: &str = include_str!("../../ptx/soft_barrier.ptx");

/// Polls of the spin barrier before a thread gives up waiting.
pub const SPIN_BOUND: u32 = 20_000;

/// "No role" in the role table.
const NONE: u32 = u32::MAX;

/// A generated kernel and everything the runtime needs to run it.
///
/// Running it: allocate the [`Layout::buffers`] zero-filled, launch `litmus_collect` once (with
/// every status word 0 it counts nothing and only writes the initial values of the locations),
/// then for each launch `i` launch `litmus_test` and `litmus_collect`, both with the parameters
/// of [`super::PARAMS`] and a fresh seed; finally read the histogram buffer and decode it with
/// [`Layout::decode_histogram`], and check [`super::DeviceCounts::check_total`].
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

struct Out(String);

impl Out {
    fn l(&mut self, s: impl AsRef<str>) {
        self.0.push('\t');
        self.0.push_str(s.as_ref());
        self.0.push('\n');
    }
    fn label(&mut self, s: &str) {
        self.0.push_str(s);
        self.0.push_str(":\n");
    }
}

/// Emits `litmus_mix(seed, salt)` into `dst`.
fn mix(o: &mut Out, dst: &str, salt: Salt) {
    o.l(format!(
        "{{ .param .b32 m_out; .param .b32 m_seed; .param .b32 m_salt; st.param.b32 [m_seed], %seed; st.param.b32 [m_salt], {}; call.uni (m_out), litmus_mix, (m_seed, m_salt); ld.param.b32 {dst}, [m_out]; }}",
        salt as u32
    ));
}

/// Emits the percentage draw `pct` into predicate `pred`.
fn chance(o: &mut Out, pred: &str, salt: Salt, pct: u32) {
    mix(o, "%h", salt);
    o.l("rem.u32 %h, %h, 100;");
    o.l(format!("setp.lt.u32 {pred}, %h, {pct};"));
}

/// Emits a stress loop of `iters` iterations of `pattern` on this thread's stress word, then
/// adds the operations issued to the StressOps counter.
fn stress_call(o: &mut Out, layout: &Layout, stress: &Stress, iters: u32, pattern: u32) {
    let line_words = stress.stress_line_size;
    let lines = stress.stress_target_lines;
    o.l(format!("mad.lo.u32 %gt, %cx, {}, %tx;", stress.cta_size));
    o.l("rem.u32 %h2, %gt, 100;");
    o.l(format!(
        "setp.lt.u32 %q, %h2, {};",
        stress.stress_strategy_balance_pct
    ));
    mix(o, "%h", Salt::StressLine);
    o.l(format!("rem.u32 %h, %h, {lines};"));
    o.l(format!("rem.u32 %h2, %gt, {lines};"));
    o.l("selp.u32 %h, %h, %h2, %q;");
    o.l(format!("rem.u32 %h2, %gt, {line_words};"));
    o.l(format!("mad.lo.u32 %h, %h, {line_words}, %h2;"));
    o.l("mul.wide.u32 %w64, %h, 4;");
    o.l("add.u64 %w64, %stress, %w64;");
    o.l(format!(
        "{{ .param .b32 s_ops; .param .b64 s_addr; .param .b32 s_it; .param .b32 s_pat; st.param.b64 [s_addr], %w64; st.param.b32 [s_it], {iters}; st.param.b32 [s_pat], {pattern}; call (s_ops), litmus_stress, (s_addr, s_it, s_pat); ld.param.b32 %h, [s_ops]; }}"
    ));
    o.l("cvt.u64.u32 %w64, %h;");
    let off = 8 * (layout.outcome_count + Counter::StressOps as u64);
    o.l(format!(
        "red.relaxed.gpu.global.add.u64 [%hist+{off}], %w64;"
    ));
}

/// Emits the address of global location `loc` for the instance in `%inst` into `dst`.
fn global_addr(o: &mut Out, layout: &Layout, loc: &super::layout::LocationLayout, dst: &str) {
    if layout.aliased {
        o.l(format!("add.u64 {dst}, %mem, {};", 4 * loc.base));
        return;
    }
    o.l(format!("mul.wide.u32 %w64, %inst, {};", loc.multiplier));
    o.l(format!("rem.u64 %w64, %w64, {};", layout.instances));
    o.l(format!(
        "mad.lo.u64 %w64, %w64, {}, {};",
        4 * loc.stride,
        4 * loc.base
    ));
    o.l(format!("add.u64 {dst}, %mem, %w64;"));
}

/// Emits the shared address (own CTA) of shared location `loc` for the instance in `%slot`.
fn shared_addr(o: &mut Out, layout: &Layout, loc: &super::layout::LocationLayout, dst: &str) {
    o.l(format!("mov.u32 {dst}, litmus_smem;"));
    if layout.aliased {
        o.l(format!("add.u32 {dst}, {dst}, {};", 4 * loc.base));
    } else {
        o.l(format!("mad.lo.u32 %h2, %slot, 4, {};", 4 * loc.base));
        o.l(format!("add.u32 {dst}, {dst}, %h2;"));
    }
}

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
    let shape = &layout.shape;
    let analysis = super::domain::Analysis::of(test)?;
    let roles: Vec<RoleCode> = (0..test.threads.len())
        .map(|r| lower_role(test, layout, &analysis, r))
        .collect::<Result<_, _>>()?;
    // Idle threads replay barrier sequences: all roles of a warp group must agree, and so must
    // the cluster barriers of all roles of a cluster.
    let mut group_seq: Vec<Vec<Vec<Option<Vec<SyncOp>>>>> = Vec::new();
    let mut cluster_seq: Vec<Vec<SyncOp>> = Vec::new();
    for (c, ctas) in shape.groups.iter().enumerate() {
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
        let _ = c;
        group_seq.push(per_cta);
        cluster_seq.push(cseq.unwrap_or_default());
    }
    let any_sync = roles.iter().any(|r| !r.syncs.is_empty());
    let has_shared = layout.shared_words > 0;
    let has_dsmem = roles
        .iter()
        .any(|r| r.args.iter().any(|a| a.space == PSpace::SharedCluster));
    let version = ptx_version(test);
    let mut notes: Vec<String> = shape.notes.clone();
    notes.extend(roles.iter().flat_map(|r| r.notes.clone()));
    if roles.iter().any(|r| r.loops) {
        notes.push(format!(
            "loops are bounded: a role that takes {} backward branches marks its instance \
             skipped",
            layout.loop_bound
        ));
    }

    let mut o = Out(String::new());
    let _ = writeln!(
        o.0,
        "// ptx-litmus kernel for test {}\n// stress: {}; instances per launch: {}\n.version {}.{}\n.target sm_90\n.address_size 64\n",
        test.name.replace(['\n', '\r'], " "),
        stress.name,
        layout.instances,
        version.0,
        version.1
    );
    o.0.push_str(HASH_PTX);
    o.0.push('\n');
    o.0.push_str(STRESS_PTX);
    o.0.push('\n');
    o.0.push_str(SPIN_BARRIER_PTX);
    o.0.push('\n');
    if layout.memory_views > 1 {
        notes.push(format!(
            "generic aliases reach their location through {} more virtual mapping(s) of the \
             same physical memory, {} bytes apart",
            layout.memory_views - 1,
            layout.view_bytes
        ));
    }
    if !shape.soft_barriers.is_empty() {
        o.0.push_str(SOFT_BARRIER_PTX);
        o.0.push('\n');
        notes.push(
            "CTA barriers run in software (a barrier id or count is loaded at run time): each \
             synchronises, by a fence-flag-fence handshake at CTA scope, only with the \
             partners that took the same id and count"
                .into(),
        );
    }
    // Tables.
    let qc = u64::from(shape.tiles * shape.clusters);
    let nw = u64::from(shape.blocks * shape.groups_per_block);
    let table = |name: &str, vals: &[u64]| {
        let v: Vec<String> = vals.iter().map(|x| x.to_string()).collect();
        format!(
            ".const .align 4 .u32 {name}[{}] = {{{}}};\n",
            vals.len(),
            v.join(", ")
        )
    };
    o.0.push_str(&table("litmus_mul_cluster", &multiplier_table(qc)));
    o.0.push_str(&table("litmus_mul_warp", &multiplier_table(nw)));
    let (k_dim, gpb, s) = (shape.cluster_dim, shape.groups_per_block, shape.group_size);
    let mut role_table = Vec::new();
    let mut skel_table = Vec::new();
    // Skeletons: 0 = none, 1 + c = cluster skeleton of c, 1 + C + n = group skeleton n.
    let mut group_skels: Vec<(usize, usize, usize)> = Vec::new();
    for c in 0..shape.clusters as usize {
        for j in 0..k_dim as usize {
            for g in 0..gpb as usize {
                let group = shape.groups[c].get(j).and_then(|gs| gs.get(g));
                for idx in 0..s as usize {
                    role_table.push(
                        group
                            .and_then(|gr| gr.get(idx))
                            .map_or(u64::from(NONE), |r| *r as u64),
                    );
                }
                let skel = match group_seq[c].get(j).and_then(|gs| gs.get(g)) {
                    Some(Some(_)) => {
                        group_skels.push((c, j, g));
                        (1 + shape.clusters as usize + group_skels.len() - 1) as u64
                    }
                    _ if !cluster_seq[c].is_empty() => 1 + c as u64,
                    _ => 0,
                };
                skel_table.push(skel);
            }
        }
    }
    o.0.push_str(&table("litmus_roles", &role_table));
    o.0.push_str(&table("litmus_skel", &skel_table));
    o.0.push('\n');
    for r in &roles {
        o.0.push_str(&r.ptx);
        o.0.push('\n');
    }
    // Skeleton functions for idle threads.
    if any_sync {
        for (c, seq) in cluster_seq.iter().enumerate() {
            let _ = writeln!(o.0, ".func litmus_skel_{}(.param .b32 litmus_bar)\n{{\n\t.reg .b32 %bar, %bid;\n\tld.param.b32 %bar, [litmus_bar];", 1 + c);
            for s in seq {
                sync_ptx(s, "%bar", &mut o.0);
            }
            o.0.push_str("\tret;\n}\n");
        }
        for (n, (c, j, g)) in group_skels.iter().enumerate() {
            let seq = group_seq[*c][*j][*g]
                .as_ref()
                .expect("a group with barriers");
            let _ = writeln!(o.0, ".func litmus_skel_{}(.param .b32 litmus_bar)\n{{\n\t.reg .b32 %bar, %bid;\n\tld.param.b32 %bar, [litmus_bar];", 1 + shape.clusters as usize + n);
            for s in seq {
                sync_ptx(s, "%bar", &mut o.0);
            }
            o.0.push_str("\tret;\n}\n");
        }
        o.0.push('\n');
    }
    test_entry(
        &mut o,
        test,
        layout,
        stress,
        &roles,
        any_sync,
        has_shared,
        has_dsmem,
        group_skels.len(),
    );
    collect_entry(&mut o, test, layout);
    Ok(Kernel {
        ptx: o.0,
        ptx_version: version,
        layout: layout.clone(),
        stress: stress.clone(),
        roles,
        notes,
    })
}

fn params(o: &mut Out, name: &str) {
    let p: Vec<String> = super::PARAMS
        .iter()
        .map(|p| {
            let ty = if *p == super::Param::Seed {
                "u32"
            } else {
                "u64"
            };
            format!(".param .{ty} {}", p.name())
        })
        .collect();
    let _ = writeln!(o.0, ".visible .entry {name}({})", p.join(", "));
}

fn load_params(o: &mut Out) {
    o.l(".reg .b64 %mem, %results, %hist, %stress, %sync, %res, %w64, %ga;");
    o.l(".reg .b32 %seed, %cx, %tx, %gt, %h, %h2, %inst, %slot, %v;");
    o.l(".reg .pred %p, %q;");
    for (reg, p) in [
        ("%mem", "p_mem"),
        ("%results", "p_results"),
        ("%hist", "p_hist"),
        ("%stress", "p_stress"),
        ("%sync", "p_sync"),
    ] {
        o.l(format!("ld.param.u64 {reg}, [{p}];"));
        o.l(format!("cvta.to.global.u64 {reg}, {reg};"));
    }
    o.l("ld.param.u32 %seed, [p_seed];");
}

#[allow(clippy::too_many_arguments)]
fn test_entry(
    o: &mut Out,
    test: &Test,
    layout: &Layout,
    stress: &Stress,
    roles: &[RoleCode],
    any_sync: bool,
    has_shared: bool,
    has_dsmem: bool,
    group_skels: usize,
) {
    let shape = &layout.shape;
    let (k, c_n, gpb, s, ipw) = (
        shape.cluster_dim,
        shape.clusters,
        shape.groups_per_block,
        shape.group_size,
        shape.instances_per_warp,
    );
    let qc = shape.tiles * shape.clusters;
    let nw = shape.blocks * gpb;
    params(o, "litmus_test");
    let _ = writeln!(o.0, ".reqntid {}, 1, 1", stress.cta_size);
    if k > 1 {
        let _ = writeln!(o.0, ".explicitcluster\n.reqnctapercluster {k}, 1, 1");
    }
    o.0.push_str("{\n");
    load_params(o);
    o.l(".reg .b32 %pcl, %rank, %x, %tile, %c, %j, %warp, %wk, %block, %g, %lane, %ll, %run, %idx, %role, %am, %bm, %rot, %aw, %bw, %al, %bl, %bar, %st, %skel, %sa;");
    o.l(".reg .pred %shuf;");
    if has_shared {
        o.l(format!(
            ".shared .align 4 .b32 litmus_smem[{}];",
            layout.shared_words
        ));
    }
    o.l("mov.u32 %cx, %ctaid.x;");
    o.l("mov.u32 %tx, %tid.x;");
    o.l(format!("div.u32 %pcl, %cx, {k};"));
    o.l(format!("rem.u32 %rank, %cx, {k};"));
    o.l(format!("setp.ge.u32 %p, %pcl, {qc};"));
    o.l("@%p bra LITMUS_STRESS_CTA;");
    // Per-launch permutations.
    for (r, v) in [
        ("%am", 1),
        ("%bm", 0),
        ("%rot", 0),
        ("%aw", 1),
        ("%bw", 0),
        ("%al", 1),
        ("%bl", 0),
    ] {
        o.l(format!("mov.u32 {r}, {v};"));
    }
    if stress.shuffle_pct > 0 {
        chance(o, "%shuf", Salt::Shuffle, stress.shuffle_pct);
        o.l("@!%shuf bra LITMUS_PLACED;");
        for (salt, table, a, b, n) in [
            (Salt::Cluster, "litmus_mul_cluster", "%am", "%bm", qc),
            (Salt::Warp, "litmus_mul_warp", "%aw", "%bw", nw),
        ] {
            mix(o, "%h", salt);
            o.l("and.b32 %h2, %h, 7;");
            o.l(format!("mov.u64 %w64, {table};"));
            o.l("mad.wide.u32 %w64, %h2, 4, %w64;");
            o.l(format!("ld.const.u32 {a}, [%w64];"));
            o.l("shr.u32 %h, %h, 3;");
            o.l(format!("rem.u32 {b}, %h, {n};"));
        }
        mix(o, "%h", Salt::Rank);
        o.l(format!("rem.u32 %rot, %h, {k};"));
        mix(o, "%h", Salt::Lane);
        o.l("and.b32 %h2, %h, 15;");
        o.l("mad.lo.u32 %al, %h2, 2, 1;");
        o.l("shr.u32 %h2, %h, 4;");
        o.l("and.b32 %bl, %h2, 31;");
    }
    o.label("LITMUS_PLACED");
    o.l("mad.lo.u32 %x, %am, %pcl, %bm;");
    o.l(format!("rem.u32 %x, %x, {qc};"));
    o.l(format!("div.u32 %tile, %x, {c_n};"));
    o.l(format!("rem.u32 %c, %x, {c_n};"));
    o.l("add.u32 %j, %rank, %rot;");
    o.l(format!("rem.u32 %j, %j, {k};"));
    o.l("shr.u32 %warp, %tx, 5;");
    o.l("and.b32 %lane, %tx, 31;");
    o.l(format!("mov.u32 %role, {NONE};"));
    o.l("mov.u32 %skel, 0;");
    o.l("mov.u32 %block, 0;");
    o.l("mov.u32 %run, 0;");
    // Threads outside every block replay only their cluster's barrier.cluster sequence
    // (skeleton 1 + c); threads of a block look their skeleton up below.
    if any_sync {
        o.l("add.u32 %skel, %c, 1;");
    }
    o.l(format!("setp.ge.u32 %p, %warp, {nw};"));
    o.l("@%p bra LITMUS_ASSIGNED;");
    o.l("mad.lo.u32 %wk, %aw, %warp, %bw;");
    o.l(format!("rem.u32 %wk, %wk, {nw};"));
    o.l(format!("div.u32 %block, %wk, {gpb};"));
    o.l(format!("rem.u32 %g, %wk, {gpb};"));
    o.l(format!("mad.lo.u32 %h, %c, {k}, %j;"));
    o.l(format!("mad.lo.u32 %h, %h, {gpb}, %g;"));
    o.l("mov.u64 %w64, litmus_skel;");
    o.l("mad.wide.u32 %w64, %h, 4, %w64;");
    o.l("ld.const.u32 %skel, [%w64];");
    o.l("mad.lo.u32 %ll, %al, %lane, %bl;");
    o.l("and.b32 %ll, %ll, 31;");
    o.l(format!("div.u32 %run, %ll, {s};"));
    o.l(format!("rem.u32 %idx, %ll, {s};"));
    o.l(format!("setp.ge.u32 %p, %run, {ipw};"));
    o.l("@%p bra LITMUS_ASSIGNED;");
    o.l(format!("mad.lo.u32 %h, %h, {s}, %idx;"));
    o.l("mov.u64 %w64, litmus_roles;");
    o.l("mad.wide.u32 %w64, %h, 4, %w64;");
    o.l("ld.const.u32 %role, [%w64];");
    o.label("LITMUS_ASSIGNED");
    o.l(format!("mad.lo.u32 %slot, %block, {ipw}, %run;"));
    o.l(format!(
        "mad.lo.u32 %inst, %tile, {}, %slot;",
        u64::from(shape.blocks) * u64::from(ipw)
    ));
    o.l(format!(
        "mad.lo.u32 %bar, %block, {}, 1;",
        shape.barriers.len().max(1)
    ));
    o.l(format!(
        "mad.wide.u32 %res, %inst, {}, %results;",
        4 * layout.result_words
    ));
    o.l(format!("setp.eq.u32 %q, %role, {NONE};"));
    // Pre-test stress by the test threads.
    if stress.pre_stress_pct > 0 && stress.pre_stress_iterations > 0 {
        o.l("@%q bra LITMUS_PRE_DONE;");
        chance(o, "%p", Salt::PreStress, stress.pre_stress_pct);
        o.l("@!%p bra LITMUS_PRE_DONE;");
        stress_call(
            o,
            layout,
            stress,
            stress.pre_stress_iterations,
            stress.pre_stress_pattern.code(),
        );
        o.label("LITMUS_PRE_DONE");
        o.l(format!("setp.eq.u32 %q, %role, {NONE};"));
    }
    // Initial values of shared locations, written by their owners.
    if has_shared {
        for loc in &layout.locations {
            if let Space::Shared { owner } = loc.space {
                o.l(format!("setp.eq.u32 %p, %role, {owner};"));
                o.l(format!("@!%p bra LITMUS_INIT_{owner}_{};", loc.base));
                shared_addr(o, layout, loc, "%sa");
                o.l(format!("mov.u32 %v, {};", as_u32(loc.init)));
                o.l("st.shared::cta.u32 [%sa], %v;");
                o.label(&format!("LITMUS_INIT_{owner}_{}", loc.base));
            }
        }
        o.l("barrier.sync 0;");
    }
    if has_dsmem {
        o.l("barrier.cluster.arrive.release;");
        o.l("barrier.cluster.wait.acquire;");
    }
    if stress.barrier_pct > 0 {
        chance(o, "%p", Salt::Barrier, stress.barrier_pct);
        o.l("@!%p bra LITMUS_SPUN;");
        o.l(format!(
            "{{ .param .b64 b_ctr; .param .b32 b_want; .param .b32 b_bound; st.param.b64 [b_ctr], %sync; st.param.b32 [b_want], {}; st.param.b32 [b_bound], {SPIN_BOUND}; call litmus_spin_barrier, (b_ctr, b_want, b_bound); }}",
            layout.testing_ctas * stress.cta_size
        ));
        o.label("LITMUS_SPUN");
    }
    // Dispatch.
    for r in roles {
        o.l(format!("setp.eq.u32 %p, %role, {};", r.role));
        o.l(format!("@%p bra LITMUS_ROLE_{};", r.role));
    }
    if any_sync {
        for n in 1..=(shape.clusters as usize + group_skels) {
            o.l(format!("setp.ne.u32 %p, %skel, {n};"));
            o.l(format!("@%p bra LITMUS_NOT_SKEL_{n};"));
            o.l(format!(
                "{{ .param .b32 k_bar; st.param.b32 [k_bar], %bar; call litmus_skel_{n}, (k_bar); }}"
            ));
            o.l("bra.uni LITMUS_JOIN;");
            o.label(&format!("LITMUS_NOT_SKEL_{n}"));
        }
    }
    o.l("bra.uni LITMUS_JOIN;");
    for r in roles {
        o.label(&format!("LITMUS_ROLE_{}", r.role));
        let place = &shape.roles[r.role];
        let mut decl = vec![
            format!(".param .align 4 .b8 r_ret[{}]", 4 * (1 + r.returns.len())),
            ".param .b32 r_bar".to_string(),
        ];
        let mut stores = vec!["st.param.b32 [r_bar], %bar;".to_string()];
        let mut names = vec!["r_bar".to_string()];
        if !shape.soft_barriers.is_empty() {
            o.l(format!(
                "add.u64 %sy, %res, {};",
                4 * u64::from(layout.soft_barrier_word)
            ));
            decl.push(".param .b64 r_sync".into());
            stores.push("st.param.b64 [r_sync], %sy;".into());
            names.push("r_sync".into());
        }
        for (n, a) in r.args.iter().enumerate() {
            let loc = layout
                .locations
                .iter()
                .find(|l| l.name == a.loc)
                .expect("argument locations are memory locations");
            match a.space {
                PSpace::Global => {
                    global_addr(o, layout, loc, "%ga");
                    if a.view > 0 {
                        // The alias's own virtual address of the same physical word.
                        o.l(format!(
                            "add.u64 %ga, %ga, {};",
                            u64::from(a.view) * layout.view_bytes
                        ));
                    }
                    o.l(format!("sub.u64 %ga, %ga, {};", a.bias));
                    decl.push(format!(".param .b64 r_a{n}"));
                    stores.push(format!("st.param.b64 [r_a{n}], %ga;"));
                }
                PSpace::SharedCta | PSpace::SharedCluster => {
                    shared_addr(o, layout, loc, "%sa");
                    if a.space == PSpace::SharedCluster {
                        let Space::Shared { owner } = loc.space else {
                            unreachable!("a shared argument has a shared location")
                        };
                        let owner_cta = shape.roles[owner].cta;
                        let _ = place;
                        o.l(format!("mov.u32 %h, {};", owner_cta + k));
                        o.l("sub.u32 %h, %h, %rot;");
                        o.l(format!("rem.u32 %h, %h, {k};"));
                        o.l("mapa.shared::cluster.u32 %sa, %sa, %h;");
                    }
                    o.l(format!("sub.u32 %sa, %sa, {};", a.bias));
                    decl.push(format!(".param .b32 r_a{n}"));
                    stores.push(format!("st.param.b32 [r_a{n}], %sa_{n};"));
                    o.l(format!("mov.u32 %sa_{n}, %sa;"));
                }
            }
            if a.space == PSpace::Global {
                o.l(format!("mov.u64 %ga_{n}, %ga;"));
                let last = stores.len() - 1;
                stores[last] = format!("st.param.b64 [r_a{n}], %ga_{n};");
            }
            names.push(format!("r_a{n}"));
        }
        let mut call = String::from("{ ");
        for d in &decl {
            let _ = write!(call, "{d}; ");
        }
        for s in &stores {
            let _ = write!(call, "{s} ");
        }
        let _ = write!(
            call,
            "call (r_ret), litmus_role_{}, ({}); ld.param.b32 %st, [r_ret+0]; st.global.u32 [%res+{}], %st; ",
            r.role,
            names.join(", "),
            4 * r.role
        );
        for (n, reg) in r.returns.iter().enumerate() {
            let w = layout.register_words[r.role]
                .iter()
                .find(|(x, _)| *x == reg.0)
                .map(|(_, w)| *w)
                .expect("every register has a result word");
            let _ = write!(
                call,
                "ld.param.b32 %v, [r_ret+{}]; st.global.u32 [%res+{}], %v; ",
                4 * (n + 1),
                4 * w
            );
        }
        call.push('}');
        o.l(call);
        o.l("bra.uni LITMUS_JOIN;");
    }
    o.label("LITMUS_JOIN");
    if has_shared {
        o.l("barrier.sync 0;");
    }
    if has_dsmem {
        o.l("barrier.cluster.arrive.release;");
        o.l("barrier.cluster.wait.acquire;");
    }
    // Final values of shared locations, copied out by their owners.
    for loc in &layout.locations {
        if let (Space::Shared { owner }, Some(w)) = (loc.space, loc.result_word) {
            o.l(format!("setp.eq.u32 %p, %role, {owner};"));
            o.l(format!("@!%p bra LITMUS_FINAL_{owner}_{};", loc.base));
            shared_addr(o, layout, loc, "%sa");
            o.l("ld.shared::cta.u32 %v, [%sa];");
            o.l(format!("st.global.u32 [%res+{}], %v;", 4 * w));
            o.label(&format!("LITMUS_FINAL_{owner}_{}", loc.base));
        }
    }
    o.l("ret;");
    o.label("LITMUS_STRESS_CTA");
    if stress.mem_stress_pct > 0 && stress.mem_stress_iterations > 0 {
        chance(o, "%p", Salt::MemStress, stress.mem_stress_pct);
        o.l("@!%p bra LITMUS_STRESS_DONE;");
        stress_call(
            o,
            layout,
            stress,
            stress.mem_stress_iterations,
            stress.mem_stress_pattern.code(),
        );
        o.label("LITMUS_STRESS_DONE");
    }
    o.l("ret;");
    o.0.push_str("}\n\n");
    // Per-argument registers are declared at the top of the entry; patch them in.
    let mut extra = String::new();
    let max_args = roles.iter().map(|r| r.args.len()).max().unwrap_or(0);
    for n in 0..max_args {
        let _ = writeln!(extra, "\t.reg .b64 %ga_{n};\n\t.reg .b32 %sa_{n};");
    }
    if !shape.soft_barriers.is_empty() {
        extra.push_str("\t.reg .b64 %sy;\n");
    }
    let at =
        o.0.rfind(".visible .entry litmus_test")
            .expect("entry just written");
    let body = o.0[at..].find("{\n").expect("entry body") + at + 2;
    o.0.insert_str(body, &extra);
    let _ = test;
}

/// The collect kernel: one thread per instance. Each thread decides its instance's histogram
/// word (an outcome, or the unexpected, skipped or incomplete counter, or none for an
/// instance that did not run); the lanes of a warp that chose the same word add to it with one
/// atomic (`match.any`), and the checksum counter gets one atomic per warp (`vote.ballot`), so
/// a launch costs few atomics even when most instances end in one outcome.
fn collect_entry(o: &mut Out, test: &Test, layout: &Layout) {
    let roles = test.threads.len();
    let n = layout.outcome_count;
    let word = |c: Counter| n + c as u64;
    params(o, "litmus_collect");
    o.0.push_str("{\n");
    load_params(o);
    o.l(".reg .b32 %or, %done, %skip, %idx, %d, %st, %bucket, %peers, %count, %lead, %lane;");
    o.l(".reg .pred %valid, %counted;");
    o.l("mov.u32 %tx, %tid.x;");
    o.l("mov.u32 %cx, %ctaid.x;");
    o.l("mov.u32 %h, %ntid.x;");
    o.l("mad.lo.u32 %inst, %cx, %h, %tx;");
    o.l(format!("mov.u32 %bucket, {NONE};"));
    o.l(format!("setp.lt.u32 %valid, %inst, {};", layout.instances));
    o.l("@!%valid bra LITMUS_TALLY;");
    o.l(format!(
        "mad.wide.u32 %res, %inst, {}, %results;",
        4 * layout.result_words
    ));
    o.l("mov.u32 %or, 0;");
    o.l("mov.u32 %done, 0;");
    o.l("mov.u32 %skip, 0;");
    for r in 0..roles {
        o.l(format!("ld.global.u32 %st, [%res+{}];", 4 * r));
        o.l("or.b32 %or, %or, %st;");
        o.l("setp.eq.u32 %p, %st, 1;");
        o.l("@%p add.u32 %done, %done, 1;");
        o.l("setp.eq.u32 %p, %st, 2;");
        o.l("@%p add.u32 %skip, %skip, 1;");
    }
    // Not run (the first, initialising launch): no bucket.
    o.l("setp.eq.u32 %p, %or, 0;");
    o.l("@%p bra LITMUS_TALLY;");
    o.l(format!("mov.u32 %bucket, {};", word(Counter::Skipped)));
    o.l("setp.ne.u32 %p, %skip, 0;");
    o.l("@%p bra LITMUS_TALLY;");
    o.l(format!("mov.u32 %bucket, {};", word(Counter::Incomplete)));
    o.l(format!("setp.ne.u32 %p, %done, {roles};"));
    o.l("@%p bra LITMUS_TALLY;");
    o.l(format!("mov.u32 %bucket, {};", word(Counter::Unexpected)));
    o.l("mov.u32 %idx, 0;");
    for (k, (obs, dom)) in layout.observables.iter().zip(&layout.domains).enumerate() {
        match layout.observable_words[k] {
            Some(w) => o.l(format!("ld.global.u32 %v, [%res+{}];", 4 * w)),
            None => {
                let Observable::Loc(name) = obs else {
                    unreachable!("only global locations lack a result word")
                };
                let loc = layout.location(test, name).expect("observed location");
                global_addr(o, layout, loc, "%ga");
                o.l("ld.global.u32 %v, [%ga];");
            }
        }
        o.l(format!("mov.u32 %d, {NONE};"));
        for (pos, value) in dom.iter().enumerate() {
            o.l(format!("setp.eq.u32 %p, %v, {};", as_u32(*value)));
            o.l(format!("@%p mov.u32 %d, {pos};"));
        }
        o.l(format!("setp.eq.u32 %p, %d, {NONE};"));
        o.l("@%p bra LITMUS_TALLY;");
        o.l(format!("mad.lo.u32 %idx, %idx, {}, %d;", dom.len()));
    }
    o.l("mov.u32 %bucket, %idx;");
    o.label("LITMUS_TALLY");
    // Every lane of the warp is here (none returned early), as the .sync forms require.
    o.l("mov.u32 %lane, %laneid;");
    o.l("match.any.sync.b32 %peers, %bucket, 0xffffffff;");
    o.l("popc.b32 %count, %peers;");
    o.l("bfind.u32 %lead, %peers;");
    o.l("setp.eq.u32 %p, %lead, %lane;");
    o.l(format!("setp.ne.and.u32 %p, %bucket, {NONE}, %p;"));
    o.l("@!%p bra LITMUS_COUNTED;");
    o.l("cvt.u64.u32 %w64, %count;");
    o.l("mul.wide.u32 %ga, %bucket, 8;");
    o.l("add.u64 %ga, %hist, %ga;");
    o.l("red.relaxed.gpu.global.add.u64 [%ga], %w64;");
    o.label("LITMUS_COUNTED");
    // Checksum: instances examined (counted, unexpected or skipped), one atomic per warp.
    // Outcomes, Unexpected and Skipped lie below the Checked word; Incomplete and "none" above.
    o.l(format!(
        "setp.lt.u32 %counted, %bucket, {};",
        word(Counter::Checked)
    ));
    o.l("vote.sync.ballot.b32 %peers, %counted, 0xffffffff;");
    o.l("popc.b32 %count, %peers;");
    o.l("setp.eq.u32 %p, %lane, 0;");
    o.l("setp.ne.and.u32 %p, %count, 0, %p;");
    o.l("@!%p bra LITMUS_RESET;");
    o.l("cvt.u64.u32 %w64, %count;");
    o.l(format!(
        "red.relaxed.gpu.global.add.u64 [%hist+{}], %w64;",
        8 * word(Counter::Checked)
    ));
    o.label("LITMUS_RESET");
    o.l("@!%valid ret;");
    for loc in &layout.locations {
        if loc.space == Space::Global {
            global_addr(o, layout, loc, "%ga");
            o.l(format!("mov.u32 %v, {};", as_u32(loc.init)));
            o.l("st.global.u32 [%ga], %v;");
        }
    }
    o.l("mov.u32 %v, 0;");
    for w in 0..layout.result_words {
        o.l(format!("st.global.u32 [%res+{}], %v;", 4 * w));
    }
    o.l("setp.eq.u32 %p, %inst, 0;");
    o.l("@%p st.global.u32 [%sync], %v;");
    o.l("ret;");
    o.0.push_str("}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collect_kernel_checksum_relies_on_the_counter_order() {
        // `litmus_collect` counts an instance in the checksum when its bucket lies below the
        // Checked word: outcomes, Unexpected and Skipped must be below, Incomplete above.
        assert!((Counter::Unexpected as u64) < Counter::Checked as u64);
        assert!((Counter::Skipped as u64) < Counter::Checked as u64);
        assert!((Counter::Incomplete as u64) > Counter::Checked as u64);
        assert!(u64::from(NONE) > super::super::layout::MAX_OUTCOMES + 8);
    }
}
