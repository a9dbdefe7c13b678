//! Code both kernels share: the entry's signature and parameter section, the addresses of a
//! location's slot, the per-launch random draws and the stress loop call.

use crate::codegen::func::Func;
use crate::codegen::layout::{
    Counter, Layout, LocationLayout, Param, Salt, SeedStep, GAMMA, SEED_STEPS, SYNC_LAUNCH_INDEX,
};
use crate::codegen::ptx::SURFACE_ROW;
use crate::codegen::stress::Stress;

/// The signature of entry `name`: the parameters of [`Layout::params`] in order.
pub fn signature(name: &str, layout: &Layout) -> String {
    let p: Vec<String> = layout
        .params()
        .iter()
        .map(|p| format!(".param .u64 {}", p.name()))
        .collect();
    format!(".visible .entry {name}({})\n", p.join(", "))
}

/// The register that holds the texture object in both entries.
pub const TEXTURE_OBJECT: &str = "%texobj";

/// The register that holds the surface object in both entries.
pub const SURFACE_OBJECT: &str = "%surfobj";

/// The registers both entries use and the loads of the parameters into them (pointers made
/// global; the texture object, a handle, as it is).
pub fn load_params(f: &mut Func, layout: &Layout) {
    f.decl(".reg .b64 %mem, %results, %hist, %stress, %sync, %res, %w64, %ga, %sbase;");
    f.decl(".reg .b32 %seed, %cx, %tx, %gt, %h, %h2, %inst, %slot, %v;");
    f.decl(".reg .pred %p, %q;");
    for (reg, p) in [
        ("%mem", Param::Memory),
        ("%results", Param::Results),
        ("%hist", Param::Histogram),
        ("%stress", Param::Stress),
        ("%sync", Param::Sync),
    ] {
        f.line(format!("ld.param.u64 {reg}, [{}];", p.name()));
        f.line(format!("cvta.to.global.u64 {reg}, {reg};"));
    }
    f.line(format!("ld.param.u64 %sbase, [{}];", Param::Seed.name()));
    if layout.linear_texture {
        f.decl(format!(".reg .b64 {TEXTURE_OBJECT};"));
        f.line(format!(
            "ld.param.u64 {TEXTURE_OBJECT}, [{}];",
            Param::Texture.name()
        ));
    }
    if layout.array_words > 0 {
        f.decl(format!(".reg .b64 {SURFACE_OBJECT};"));
        f.decl(".reg .b32 %sux, %suy;");
        f.line(format!(
            "ld.param.u64 {SURFACE_OBJECT}, [{}];",
            Param::Surface.name()
        ));
    }
}

/// Emits the coordinates (`%sux` in bytes, `%suy` in rows) of the CUDA-array location `loc`
/// for the instance in `%inst` ([`SURFACE_ROW`] words a row); returns the surface operand.
pub fn array_coords(f: &mut Func, layout: &Layout, loc: &LocationLayout) -> String {
    global_index(f, layout, loc, "%h");
    f.line(format!("rem.u32 %sux, %h, {SURFACE_ROW};"));
    f.line("shl.b32 %sux, %sux, 2;");
    f.line(format!("div.u32 %suy, %h, {SURFACE_ROW};"));
    format!("[{SURFACE_OBJECT}, {{%sux, %suy}}]")
}

/// Emits this launch's seed into `%seed`: the launch index read from the Sync buffer, then
/// [`crate::codegen::layout::launch_seed`] step by step, one instruction per [`SEED_STEPS`]
/// entry. Kernels on one stream run in order, so the index the previous collect launch left
/// is what every thread of this launch reads.
pub fn launch_seed(f: &mut Func) {
    f.decl(".reg .b64 %sz, %sk;");
    f.line(format!("ld.global.u64 %sz, [%sync+{SYNC_LAUNCH_INDEX}];"));
    f.line(format!("mad.lo.u64 %sz, %sz, {GAMMA:#x}U, %sbase;"));
    for step in SEED_STEPS {
        match step {
            SeedStep::XorShr(n) => {
                f.line(format!("shr.u64 %sk, %sz, {n};"));
                f.line("xor.b64 %sz, %sz, %sk;");
            }
            SeedStep::Mul(c) => f.line(format!("mul.lo.u64 %sz, %sz, {c:#x}U;")),
        }
    }
    f.line("shr.u64 %sz, %sz, 32;");
    f.line("cvt.u32.u64 %seed, %sz;");
}

/// Emits `litmus_mix(seed, salt)` into `dst`.
pub fn mix(f: &mut Func, dst: &str, salt: Salt) {
    f.line(format!(
        "{{ .param .b32 m_out; .param .b32 m_seed; .param .b32 m_salt; st.param.b32 [m_seed], %seed; st.param.b32 [m_salt], {}; call.uni (m_out), litmus_mix, (m_seed, m_salt); ld.param.b32 {dst}, [m_out]; }}",
        salt as u32
    ));
}

/// Emits the percentage draw `pct` into predicate `pred`.
pub fn chance(f: &mut Func, pred: &str, salt: Salt, pct: u32) {
    mix(f, "%h", salt);
    f.line("rem.u32 %h, %h, 100;");
    f.line(format!("setp.lt.u32 {pred}, %h, {pct};"));
}

/// Emits a stress loop of `iters` iterations of `pattern` on this thread's stress word, then
/// adds the operations issued to the StressOps counter.
pub fn stress_call(f: &mut Func, layout: &Layout, stress: &Stress, iters: u32, pattern: u32) {
    let line_words = stress.stress_line_size;
    let lines = stress.stress_target_lines;
    f.line(format!("mad.lo.u32 %gt, %cx, {}, %tx;", stress.cta_size));
    f.line("rem.u32 %h2, %gt, 100;");
    f.line(format!(
        "setp.lt.u32 %q, %h2, {};",
        stress.stress_strategy_balance_pct
    ));
    mix(f, "%h", Salt::StressLine);
    f.line(format!("rem.u32 %h, %h, {lines};"));
    f.line(format!("rem.u32 %h2, %gt, {lines};"));
    f.line("selp.u32 %h, %h, %h2, %q;");
    f.line(format!("rem.u32 %h2, %gt, {line_words};"));
    f.line(format!("mad.lo.u32 %h, %h, {line_words}, %h2;"));
    f.line("mul.wide.u32 %w64, %h, 4;");
    f.line("add.u64 %w64, %stress, %w64;");
    f.line(format!(
        "{{ .param .b32 s_ops; .param .b64 s_addr; .param .b32 s_it; .param .b32 s_pat; st.param.b64 [s_addr], %w64; st.param.b32 [s_it], {iters}; st.param.b32 [s_pat], {pattern}; call (s_ops), litmus_stress, (s_addr, s_it, s_pat); ld.param.b32 %h, [s_ops]; }}"
    ));
    f.line("cvt.u64.u32 %w64, %h;");
    let off = 8 * (layout.outcome_count + Counter::StressOps as u64);
    f.line(format!(
        "red.relaxed.gpu.global.add.u64 [%hist+{off}], %w64;"
    ));
}

/// Emits the address of global location `loc` for the instance in `%inst` into `dst`.
pub fn global_addr(f: &mut Func, layout: &Layout, loc: &LocationLayout, dst: &str) {
    if layout.aliased {
        f.line(format!("add.u64 {dst}, %mem, {};", 4 * loc.base));
        return;
    }
    f.line(format!("mul.wide.u32 %w64, %inst, {};", loc.multiplier));
    f.line(format!("rem.u64 %w64, %w64, {};", layout.instances));
    f.line(format!(
        "mad.lo.u64 %w64, %w64, {}, {};",
        4 * loc.stride,
        4 * loc.base
    ));
    f.line(format!("add.u64 {dst}, %mem, %w64;"));
}

/// Emits the word index of global location `loc` for the instance in `%inst` into the 32-bit
/// `dst`: its element in the texture over the memory buffer, or its word of the CUDA array
/// (the formula of [`Layout::global_word`]).
pub fn global_index(f: &mut Func, layout: &Layout, loc: &LocationLayout, dst: &str) {
    if layout.aliased {
        f.line(format!("mov.u32 {dst}, {};", loc.base));
        return;
    }
    f.line(format!("mul.wide.u32 %w64, %inst, {};", loc.multiplier));
    f.line(format!("rem.u64 %w64, %w64, {};", layout.instances));
    f.line(format!(
        "mad.lo.u64 %w64, %w64, {}, {};",
        loc.stride, loc.base
    ));
    f.line(format!("cvt.u32.u64 {dst}, %w64;"));
}

/// Emits the shared address (own CTA) of shared location `loc` for the instance in `%slot`.
pub fn shared_addr(f: &mut Func, layout: &Layout, loc: &LocationLayout, dst: &str) {
    f.line(format!("mov.u32 {dst}, litmus_smem;"));
    if layout.aliased {
        f.line(format!("add.u32 {dst}, {dst}, {};", 4 * loc.base));
    } else {
        f.line(format!("mad.lo.u32 %h2, %slot, 4, {};", 4 * loc.base));
        f.line(format!("add.u32 {dst}, {dst}, %h2;"));
    }
}
