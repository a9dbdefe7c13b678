//! The test kernel `litmus_test`: each thread finds the role and instance it plays under this
//! launch's permutations (the device side of [`Layout::thread_role`]), optionally stresses
//! memory first, meets the other test threads, calls its role's function with the addresses of
//! its instance's locations, and stores the returned words in its instance's result slots. A
//! thread without a role replays its skeleton; CTAs beyond the testing ones only stress memory.

use super::device::{
    chance, global_addr, global_index, launch_seed, load_params, mix, shared_addr, signature,
    stress_call, SURFACE_OBJECT, TEXTURE_OBJECT,
};
use super::skeleton::Skeletons;
use super::NONE;
use crate::codegen::fragments::SPIN_BOUND;
use crate::codegen::func::Func;
use crate::codegen::layout::{
    as_u32, Layout, Salt, MEMORY_ZERO_BITS, TEST_ENTRY, WARP_MULTIPLIERS,
};
use crate::codegen::lower::{LocArg, RoleCode};
use crate::codegen::ptx::PSpace;
use crate::codegen::stress::Stress;
use crate::litmus::ast::Space;
use std::fmt::Write;

/// What the test kernel is written from.
struct Entry<'a> {
    layout: &'a Layout,
    stress: &'a Stress,
    roles: &'a [RoleCode],
    skeletons: &'a Skeletons,
    /// Whether the test has shared memory (written and read back by its owners).
    shared: bool,
    /// Whether a role reaches another CTA's shared memory (the cluster then starts and ends
    /// together, so that the memory outlives its readers).
    dsmem: bool,
    /// Whether CTA barriers run in software.
    soft: bool,
}

/// The parameters of a role function's call, in order: each declared, stored and named.
#[derive(Default)]
struct CallParams {
    decl: Vec<String>,
    stores: Vec<String>,
    names: Vec<String>,
}

impl CallParams {
    /// Adds parameter `name` of PTX type `ty` (`b32`, `b64`), holding `value`.
    fn add(&mut self, name: &str, ty: &str, value: &str) {
        self.decl.push(format!(".param .{ty} {name}"));
        self.stores
            .push(format!("st.param.{ty} [{name}], {value};"));
        self.names.push(name.to_string());
    }
}

/// Draws an affine permutation `x -> a*x + b mod n` from the hash of `salt`: the multiplier
/// `a` from the first `k` entries of the constant table `table`, the offset `b` below `n`. The
/// table index is the hash mod k, the offset what is left of it (`and` and `shr` when k is 8),
/// as `Perms::from_seed` computes.
fn affine(f: &mut Func, salt: Salt, table: &str, (a, b): (&str, &str), n: u32, k: u32) {
    mix(f, "%h", salt);
    if k == 8 {
        f.line("and.b32 %h2, %h, 7;");
    } else {
        f.line(format!("rem.u32 %h2, %h, {k};"));
    }
    f.line(format!("mov.u64 %w64, {table};"));
    f.line("mad.wide.u32 %w64, %h2, 4, %w64;");
    f.line(format!("ld.const.u32 {a}, [%w64];"));
    if k == 8 {
        f.line("shr.u32 %h, %h, 3;");
    } else {
        f.line(format!("div.u32 %h, %h, {k};"));
    }
    f.line(format!("rem.u32 {b}, %h, {n};"));
}

/// The test kernel's text.
pub fn render(
    layout: &Layout,
    stress: &Stress,
    roles: &[RoleCode],
    skeletons: &Skeletons,
) -> String {
    let e = Entry {
        layout,
        stress,
        roles,
        skeletons,
        shared: layout.shared_words > 0,
        dsmem: roles
            .iter()
            .any(|r| r.args.iter().any(|a| a.space == PSpace::SharedCluster)),
        soft: !layout.shape.soft_barriers.is_empty(),
    };
    let mut f = e.open();
    e.permutations(&mut f);
    e.assign(&mut f);
    e.pre_stress(&mut f);
    e.start(&mut f);
    e.dispatch(&mut f);
    for r in roles {
        e.role_call(&mut f, r);
    }
    e.finish(&mut f);
    e.stress_ctas(&mut f);
    f.render()
}

impl Entry<'_> {
    /// The entry up to its first instruction: signature, launch directives, the registers that
    /// carry role arguments, the parameters, the registers of the body; then the split of the
    /// grid into testing and stress CTAs.
    fn open(&self) -> Func {
        let k = self.layout.shape.cluster_dim;
        let mut head = signature(TEST_ENTRY, self.layout);
        let _ = writeln!(head, ".reqntid {}, 1, 1", self.stress.cta_size);
        if k > 1 {
            let _ = writeln!(head, ".explicitcluster\n.reqnctapercluster {k}, 1, 1");
        }
        let mut f = Func::new(head);
        let max_args = self.roles.iter().map(|r| r.args.len()).max().unwrap_or(0);
        for n in 0..max_args {
            f.decl(format!(".reg .b64 %ga_{n};"));
            f.decl(format!(".reg .b32 %sa_{n};"));
            if self.layout.linear_texture {
                f.decl(format!(".reg .b32 %xa_{n};"));
            }
            if self.layout.array_words > 0 {
                f.decl(format!(".reg .b32 %ya_{n};"));
            }
        }
        if self.soft {
            f.decl(".reg .b64 %sy;");
        }
        load_params(&mut f, self.layout);
        opaque_zero(&mut f);
        launch_seed(&mut f);
        f.section();
        f.decl(".reg .b32 %pcl, %rank, %x, %tile, %c, %j, %warp, %wk, %block, %g, %lane, %ll, %run, %idx, %role, %am, %bm, %rot, %aw, %bw, %al, %bl, %bar, %st, %skel, %sa;");
        f.decl(".reg .pred %shuf;");
        if self.shared {
            f.decl(format!(
                ".shared .align 4 .b32 litmus_smem[{}];",
                self.layout.shared_words
            ));
        }
        f.line("mov.u32 %cx, %ctaid.x;");
        f.line("mov.u32 %tx, %tid.x;");
        f.line(format!("div.u32 %pcl, %cx, {k};"));
        f.line(format!("rem.u32 %rank, %cx, {k};"));
        f.line(format!(
            "setp.ge.u32 %p, %pcl, {};",
            self.testing_clusters()
        ));
        f.line("@%p bra LITMUS_STRESS_CTA;");
        f
    }

    /// Physical clusters that run instances.
    fn testing_clusters(&self) -> u32 {
        self.layout.shape.tiles * self.layout.shape.clusters
    }

    /// Warp slots of a CTA.
    fn warp_slots(&self) -> u32 {
        self.layout.shape.blocks * self.layout.shape.groups_per_block
    }

    /// This launch's permutations ([`crate::codegen::layout::Perms::from_seed`]): identity, or
    /// drawn from the seed when the launch shuffles.
    fn permutations(&self, f: &mut Func) {
        for (r, v) in [
            ("%am", 1),
            ("%bm", 0),
            ("%rot", 0),
            ("%aw", 1),
            ("%bw", 0),
            ("%al", 1),
            ("%bl", 0),
        ] {
            f.line(format!("mov.u32 {r}, {v};"));
        }
        if self.stress.shuffle_pct > 0 {
            chance(f, "%shuf", Salt::Shuffle, self.stress.shuffle_pct);
            f.line("@!%shuf bra LITMUS_PLACED;");
            let k = self.layout.partner_distances.max(1);
            for (salt, table, a, b, n, k) in [
                (
                    Salt::Cluster,
                    "litmus_mul_cluster",
                    "%am",
                    "%bm",
                    self.testing_clusters(),
                    k,
                ),
                (
                    Salt::Warp,
                    "litmus_mul_warp",
                    "%aw",
                    "%bw",
                    self.warp_slots(),
                    WARP_MULTIPLIERS as u32,
                ),
            ] {
                affine(f, salt, table, (a, b), n, k);
            }
            mix(f, "%h", Salt::Rank);
            f.line(format!(
                "rem.u32 %rot, %h, {};",
                self.layout.shape.cluster_dim
            ));
            mix(f, "%h", Salt::Lane);
            f.line("and.b32 %h2, %h, 15;");
            f.line("mad.lo.u32 %al, %h2, 2, 1;");
            f.line("shr.u32 %h2, %h, 4;");
            f.line("and.b32 %bl, %h2, 31;");
        }
        f.label("LITMUS_PLACED");
    }

    /// The thread's role (or none), skeleton, instance, instance slot in the CTA, first hardware
    /// barrier and result slots.
    fn assign(&self, f: &mut Func) {
        self.coordinates(f);
        self.look_up(f);
        f.label("LITMUS_ASSIGNED");
        self.slots(f);
    }

    /// The thread's permuted place: tile and cluster (`%tile`, `%c`), rank in the cluster
    /// (`%j`), warp and lane; no role, skeleton, block or run yet.
    fn coordinates(&self, f: &mut Func) {
        let c_n = self.layout.shape.clusters;
        let k = self.layout.shape.cluster_dim;
        f.line("mad.lo.u32 %x, %am, %pcl, %bm;");
        f.line(format!("rem.u32 %x, %x, {};", self.testing_clusters()));
        f.line(format!("div.u32 %tile, %x, {c_n};"));
        f.line(format!("rem.u32 %c, %x, {c_n};"));
        f.line("add.u32 %j, %rank, %rot;");
        f.line(format!("rem.u32 %j, %j, {k};"));
        f.line("shr.u32 %warp, %tx, 5;");
        f.line("and.b32 %lane, %tx, 31;");
        f.line(format!("mov.u32 %role, {NONE};"));
        f.line("mov.u32 %skel, 0;");
        f.line("mov.u32 %block, 0;");
        f.line("mov.u32 %run, 0;");
        // Threads outside every block replay only their cluster's barrier.cluster sequence
        // (skeleton 1 + c); threads of a block look their skeleton up below.
        if self.skeletons.any {
            f.line("add.u32 %skel, %c, 1;");
        }
    }

    /// For a thread of a block: its block and skeleton from its permuted warp, then its run
    /// and role from its permuted lane (branching to `LITMUS_ASSIGNED` when it has none).
    fn look_up(&self, f: &mut Func) {
        let shape = &self.layout.shape;
        let (k, gpb, s, ipw) = (
            shape.cluster_dim,
            shape.groups_per_block,
            shape.group_size,
            shape.instances_per_warp,
        );
        let nw = self.warp_slots();
        f.line(format!("setp.ge.u32 %p, %warp, {nw};"));
        f.line("@%p bra LITMUS_ASSIGNED;");
        f.line("mad.lo.u32 %wk, %aw, %warp, %bw;");
        f.line(format!("rem.u32 %wk, %wk, {nw};"));
        f.line(format!("div.u32 %block, %wk, {gpb};"));
        f.line(format!("rem.u32 %g, %wk, {gpb};"));
        f.line(format!("mad.lo.u32 %h, %c, {k}, %j;"));
        f.line(format!("mad.lo.u32 %h, %h, {gpb}, %g;"));
        f.line("mov.u64 %w64, litmus_skel;");
        f.line("mad.wide.u32 %w64, %h, 4, %w64;");
        f.line("ld.const.u32 %skel, [%w64];");
        f.line("mad.lo.u32 %ll, %al, %lane, %bl;");
        f.line("and.b32 %ll, %ll, 31;");
        f.line(format!("div.u32 %run, %ll, {s};"));
        f.line(format!("rem.u32 %idx, %ll, {s};"));
        f.line(format!("setp.ge.u32 %p, %run, {ipw};"));
        f.line("@%p bra LITMUS_ASSIGNED;");
        f.line(format!("mad.lo.u32 %h, %h, {s}, %idx;"));
        f.line("mov.u64 %w64, litmus_roles;");
        f.line("mad.wide.u32 %w64, %h, 4, %w64;");
        f.line("ld.const.u32 %role, [%w64];");
    }

    /// From block and run: the instance slot in the CTA, the instance, the first hardware
    /// barrier and the result slots; `%q` says whether the thread has no role.
    fn slots(&self, f: &mut Func) {
        let shape = &self.layout.shape;
        let ipw = shape.instances_per_warp;
        f.line(format!("mad.lo.u32 %slot, %block, {ipw}, %run;"));
        f.line(format!(
            "mad.lo.u32 %inst, %tile, {}, %slot;",
            u64::from(shape.blocks) * u64::from(ipw)
        ));
        f.line(format!(
            "mad.lo.u32 %bar, %block, {}, 1;",
            shape.barriers.len().max(1)
        ));
        f.line(format!(
            "mad.wide.u32 %res, %inst, {}, %results;",
            4 * self.layout.result_words
        ));
        f.line(format!("setp.eq.u32 %q, %role, {NONE};"));
    }

    /// Pre-test stress by the test threads, in the launches that draw it.
    fn pre_stress(&self, f: &mut Func) {
        let stress = self.stress;
        if stress.pre_stress_pct == 0 || stress.pre_stress_iterations == 0 {
            return;
        }
        f.line("@%q bra LITMUS_PRE_DONE;");
        chance(f, "%p", Salt::PreStress, stress.pre_stress_pct);
        f.line("@!%p bra LITMUS_PRE_DONE;");
        stress_call(
            f,
            self.layout,
            stress,
            stress.pre_stress_iterations,
            stress.pre_stress_pattern.code(),
        );
        f.label("LITMUS_PRE_DONE");
        f.line(format!("setp.eq.u32 %q, %role, {NONE};"));
    }

    /// Before the roles run: the owners write the initial values of shared locations, the
    /// CTA (and cluster, with distributed shared memory) waits for them, and in the launches
    /// that draw it the testing CTAs meet at the spin barrier.
    fn start(&self, f: &mut Func) {
        let layout = self.layout;
        if self.shared {
            for loc in &layout.locations {
                if let Space::Shared { owner } = loc.space {
                    f.line(format!("setp.eq.u32 %p, %role, {owner};"));
                    f.line(format!("@!%p bra LITMUS_INIT_{owner}_{};", loc.base));
                    shared_addr(f, layout, loc, "%sa");
                    f.line(format!("mov.u32 %v, {};", as_u32(loc.init)));
                    f.line("st.shared::cta.u32 [%sa], %v;");
                    f.label(format!("LITMUS_INIT_{owner}_{}", loc.base));
                }
            }
            f.line("barrier.sync 0;");
        }
        if self.dsmem {
            f.line("barrier.cluster.arrive.release;");
            f.line("barrier.cluster.wait.acquire;");
        }
        if self.stress.barrier_pct > 0 {
            self.spin(f);
        }
    }

    /// The spin barrier of the testing CTAs, one arrival per CTA: the CTA's threads meet at
    /// a hardware barrier, its thread 0 alone adds to the global counter and polls it, and the
    /// CTA's threads leave together once it has seen every testing CTA (or given up). A full
    /// GPU's hundreds of thousands of threads would otherwise all add to and poll one line.
    fn spin(&self, f: &mut Func) {
        chance(f, "%p", Salt::Barrier, self.stress.barrier_pct);
        f.line("@!%p bra LITMUS_SPUN;");
        f.line("barrier.sync 0;");
        f.line("setp.ne.u32 %p, %tx, 0;");
        f.line("@%p bra LITMUS_SPIN_JOIN;");
        let (ctr, want) = if self.layout.spin_counters > 1 {
            self.spin_counter(f);
            ("%sgc", "%sgw".to_string())
        } else {
            ("%sync", self.layout.testing_ctas.to_string())
        };
        f.line(format!(
            "{{ .param .b64 b_ctr; .param .b32 b_want; .param .b32 b_bound; st.param.b64 [b_ctr], {ctr}; st.param.b32 [b_want], {want}; st.param.b32 [b_bound], {SPIN_BOUND}; call litmus_spin_barrier, (b_ctr, b_want, b_bound); }}"
        ));
        f.label("LITMUS_SPIN_JOIN");
        f.line("barrier.sync 0;");
        f.label("LITMUS_SPUN");
    }

    /// The spin counter of this CTA's group (`%sgc`, [`Layout::spin_counter`] of `ctaid /
    /// spin_group`) and the CTAs that meet there (`%sgw`: `spin_group`, fewer in the last
    /// group).
    fn spin_counter(&self, f: &mut Func) {
        let (g, n) = (self.layout.spin_group, self.layout.testing_ctas);
        f.decl(".reg .b32 %sg, %sgw;");
        f.decl(".reg .b64 %sgc;");
        f.line(format!("div.u32 %sg, %cx, {g};"));
        f.line(format!(
            "mad.lo.u32 %sgw, %sg, 4, {};",
            Layout::spin_counter(1) - 4
        ));
        f.line("setp.eq.u32 %p, %sg, 0;");
        f.line("selp.u32 %sgw, 0, %sgw, %p;");
        f.line("cvt.u64.u32 %sgc, %sgw;");
        f.line("add.u64 %sgc, %sync, %sgc;");
        f.line(format!("mul.lo.u32 %sgw, %sg, {g};"));
        f.line(format!("sub.u32 %sgw, {n}, %sgw;"));
        f.line(format!("min.u32 %sgw, %sgw, {g};"));
    }

    /// A branch to the thread's role, or its skeleton call.
    fn dispatch(&self, f: &mut Func) {
        for r in self.roles {
            f.line(format!("setp.eq.u32 %p, %role, {};", r.role));
            f.line(format!("@%p bra LITMUS_ROLE_{};", r.role));
        }
        if self.skeletons.any {
            for n in 1..=self.skeletons.count() {
                f.line(format!("setp.ne.u32 %p, %skel, {n};"));
                f.line(format!("@%p bra LITMUS_NOT_SKEL_{n};"));
                f.line(format!(
                    "{{ .param .b32 k_bar; st.param.b32 [k_bar], %bar; call litmus_skel_{n}, (k_bar); }}"
                ));
                f.line("bra.uni LITMUS_JOIN;");
                f.label(format!("LITMUS_NOT_SKEL_{n}"));
            }
        }
        f.line("bra.uni LITMUS_JOIN;");
    }

    /// Computes argument `n` of a role call (`a`: its location, space, view and bias) into
    /// `%ga_n`, `%sa_n`, `%xa_n` or `%ya_n`; returns its PTX type and that register.
    fn role_arg(&self, f: &mut Func, n: usize, a: &LocArg) -> (&'static str, String) {
        let layout = self.layout;
        let loc = layout
            .locations
            .iter()
            .find(|l| l.name == a.loc)
            .expect("argument locations are memory locations");
        let object = match a.space {
            PSpace::Texture => Some("xa"),
            PSpace::Surface => Some("ya"),
            _ => None,
        };
        if let Some(reg) = object {
            global_index(f, layout, loc, &format!("%{reg}_{n}"));
            return ("b32", format!("%{reg}_{n}"));
        }
        if a.space == PSpace::Global {
            global_addr(f, layout, loc, "%ga");
            if a.view > 0 {
                // The alias's own virtual address of the same physical word.
                f.line(format!(
                    "add.u64 %ga, %ga, {};",
                    u64::from(a.view) * layout.view_bytes
                ));
            }
            opaque_bias(f, a.bias);
            f.line("cvt.u64.u32 %bias64, %bias;");
            f.line("sub.u64 %ga, %ga, %bias64;");
            f.line(format!("mov.u64 %ga_{n}, %ga;"));
            return ("b64", format!("%ga_{n}"));
        }
        shared_addr(f, layout, loc, "%sa");
        if a.space == PSpace::SharedCluster {
            let Space::Shared { owner } = loc.space else {
                unreachable!("a shared argument has a shared location")
            };
            let k = layout.shape.cluster_dim;
            let owner_cta = layout.shape.roles[owner].cta;
            f.line(format!("mov.u32 %h, {};", owner_cta + k));
            f.line("sub.u32 %h, %h, %rot;");
            f.line(format!("rem.u32 %h, %h, {k};"));
            f.line("mapa.shared::cluster.u32 %sa, %sa, %h;");
        }
        opaque_bias(f, a.bias);
        f.line("sub.u32 %sa, %sa, %bias;");
        f.line(format!("mov.u32 %sa_{n}, %sa;"));
        ("b32", format!("%sa_{n}"))
    }

    /// The call of role `r`'s function and the stores of its returned words.
    fn role_call(&self, f: &mut Func, r: &RoleCode) {
        f.label(format!("LITMUS_ROLE_{}", r.role));
        let params = self.role_params(f, r);
        f.line(self.call_text(r, &params));
        f.line("bra.uni LITMUS_JOIN;");
    }

    /// The parameters role `r`'s function takes after its barrier id: the soft barrier's word,
    /// the proxy objects it reads through and its locations' addresses, each computed into
    /// a register by lines added to `f`.
    fn role_params(&self, f: &mut Func, r: &RoleCode) -> CallParams {
        let mut p = CallParams::default();
        p.add("r_bar", "b32", "%bar");
        if self.soft {
            f.line(format!(
                "add.u64 %sy, %res, {};",
                4 * u64::from(self.layout.soft_barrier_word)
            ));
            p.add("r_sync", "b64", "%sy");
        }
        if r.args.iter().any(|a| a.space == PSpace::Texture) {
            p.add("r_tex", "b64", TEXTURE_OBJECT);
        }
        if r.args.iter().any(|a| a.space == PSpace::Surface) {
            p.add("r_surf", "b64", SURFACE_OBJECT);
        }
        for (n, a) in r.args.iter().enumerate() {
            let (ty, value) = self.role_arg(f, n, a);
            p.add(&format!("r_a{n}"), ty, &value);
        }
        p
    }

    /// The call of role `r`'s function with `params`, in a block of its own, and the stores of
    /// its status word and returned registers into the instance's result slots.
    fn call_text(&self, r: &RoleCode, params: &CallParams) -> String {
        let mut call = format!(
            "{{ .param .align 4 .b8 r_ret[{}]; ",
            4 * (1 + r.returns.len())
        );
        for d in &params.decl {
            let _ = write!(call, "{d}; ");
        }
        for s in &params.stores {
            let _ = write!(call, "{s} ");
        }
        let _ = write!(
            call,
            "call (r_ret), litmus_role_{}, ({}); ld.param.b32 %st, [r_ret+0]; st.global.u32 [%res+{}], %st; ",
            r.role,
            params.names.join(", "),
            4 * r.role
        );
        for (n, reg) in r.returns.iter().enumerate() {
            let w = self.layout.register_words[r.role]
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
        call
    }

    /// After the roles: the CTA (and cluster) waits for every role, and the owners copy the
    /// final values of observed shared locations into the result slots.
    fn finish(&self, f: &mut Func) {
        let layout = self.layout;
        f.label("LITMUS_JOIN");
        if self.shared {
            f.line("barrier.sync 0;");
        }
        if self.dsmem {
            f.line("barrier.cluster.arrive.release;");
            f.line("barrier.cluster.wait.acquire;");
        }
        for loc in &layout.locations {
            if let (Space::Shared { owner }, Some(w)) = (loc.space, loc.result_word) {
                f.line(format!("setp.eq.u32 %p, %role, {owner};"));
                f.line(format!("@!%p bra LITMUS_FINAL_{owner}_{};", loc.base));
                shared_addr(f, layout, loc, "%sa");
                f.line("ld.shared::cta.u32 %v, [%sa];");
                f.line(format!("st.global.u32 [%res+{}], %v;", 4 * w));
                f.label(format!("LITMUS_FINAL_{owner}_{}", loc.base));
            }
        }
        f.line("ret;");
    }

    /// The stress CTAs: memory stress in the launches that draw it.
    fn stress_ctas(&self, f: &mut Func) {
        let stress = self.stress;
        f.label("LITMUS_STRESS_CTA");
        if stress.mem_stress_pct > 0 && stress.mem_stress_iterations > 0 {
            chance(f, "%p", Salt::MemStress, stress.mem_stress_pct);
            f.line("@!%p bra LITMUS_STRESS_DONE;");
            stress_call(
                f,
                self.layout,
                stress,
                stress.mem_stress_iterations,
                stress.mem_stress_pattern.code(),
            );
            f.label("LITMUS_STRESS_DONE");
        }
        f.line("ret;");
    }
}

/// Declares `%opq`, a zero ptxas cannot see: the low bits of the memory buffer's address
/// ([`MEMORY_ZERO_BITS`]), which the host places at an aligned address and checks.
fn opaque_zero(f: &mut Func) {
    f.decl(".reg .b32 %opq, %bias;");
    f.decl(".reg .b64 %bias64;");
    f.line("cvt.u32.u64 %opq, %mem;");
    f.line(format!("and.b32 %opq, %opq, {MEMORY_ZERO_BITS};"));
}

/// Puts a location argument's bias into `%bias` as `bias xor %opq`: the same value, but not
/// a constant to ptxas, so it cannot cancel the bias against the role's immediate offset
/// (when a role has one caller, ptxas propagates across the call: the `basic` preset's
/// `STS [R6]` where `STS [R6+0x10]` was asked) and the offset still names the location.
fn opaque_bias(f: &mut Func, bias: u32) {
    f.line(format!("xor.b32 %bias, %opq, {bias};"));
}
