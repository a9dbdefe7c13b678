//! The role frame: the function around a role's body. Its signature (the returned words, the
//! barrier base, the software barriers' words, the location arguments), its declarations and
//! parameter loads, and its end: the timed-out path, which still runs the barriers the role has
//! not reached so that no other thread waits for it forever, and the returned words.

use super::{is_cta_barrier, sync_lines, Ctx, LocArg};
use crate::codegen::func::Func;
use crate::codegen::layout::Layout;
use crate::codegen::ptx::{PSpace, SURFACE, TEXTURE, TEXTURE_SINK};
use crate::litmus::ast::{Instr, Reg, Test};
use std::fmt::Write;

/// The name of the function of `role`.
pub(super) fn name(role: usize) -> String {
    format!("litmus_role_{role}")
}

/// The PTX type and register of location argument `k`.
fn arg_reg(k: usize, a: &LocArg) -> (&'static str, String) {
    match a.space {
        PSpace::Global => ("b64", format!("%ga{k}")),
        PSpace::Texture => ("b32", format!("%xa{k}")),
        PSpace::Surface => ("b32", format!("%ya{k}")),
        PSpace::SharedCta | PSpace::SharedCluster => ("b32", format!("%sa{k}")),
    }
}

/// Whether a role reads through the texture object (and takes it as a parameter).
pub(super) fn reads_texture(args: &[LocArg]) -> bool {
    args.iter().any(|a| a.space == PSpace::Texture)
}

/// Whether a role accesses the surface object (and takes it as a parameter).
pub(super) fn uses_surface(args: &[LocArg]) -> bool {
    args.iter().any(|a| a.space == PSpace::Surface)
}

/// The function of `role` up to its body: signature, declarations, parameter loads and the
/// registers' initial zeros; `regs` registers `%t0..`, arguments `args`.
pub(super) fn open(
    test: &Test,
    layout: &Layout,
    role: usize,
    regs: usize,
    args: &[LocArg],
) -> Func {
    let soft = !layout.shape.soft_barriers.is_empty();
    let mut f = Func::new(signature(role, regs, args, soft));
    f.decl(format!(
        "// P{role} of {}",
        test.name.replace(['\n', '\r'], " ")
    ));
    if regs > 0 {
        f.decl(format!(".reg .b32 %t<{regs}>;"));
    }
    f.decl(".reg .b32 %bar, %bid, %nsync, %budget, %status, %v, %a32;");
    f.decl(".reg .b64 %a64, %o64;");
    f.decl(".reg .pred %pt, %pc;");
    for (k, a) in args.iter().enumerate() {
        let (ty, reg) = arg_reg(k, a);
        f.decl(format!(".reg .{ty} {reg};"));
    }
    f.line("ld.param.b32 %bar, [litmus_bar];");
    f.section();
    load_optional(&mut f, soft, args);
    for (k, a) in args.iter().enumerate() {
        let (ty, reg) = arg_reg(k, a);
        f.line(format!("ld.param.{ty} {reg}, [litmus_loc{k}];"));
    }
    for k in 0..regs {
        f.line(format!("mov.u32 %t{k}, 0;"));
    }
    f.line("mov.u32 %nsync, 0;");
    f.line(format!("mov.u32 %budget, {};", layout.loop_bound));
    f
}

/// The function's head: its returned words, the barrier parameter, the optional ones
/// (software barrier state, texture and surface objects) and one per location argument.
fn signature(role: usize, regs: usize, args: &[LocArg], soft: bool) -> String {
    let mut head = format!(
        ".func (.param .align 4 .b8 litmus_ret[{}]) {}(.param .b32 litmus_bar",
        4 * (1 + regs),
        name(role)
    );
    if soft {
        head.push_str(", .param .b64 litmus_sync");
    }
    if reads_texture(args) {
        head.push_str(", .param .b64 litmus_tex");
    }
    if uses_surface(args) {
        head.push_str(", .param .b64 litmus_surf");
    }
    for (k, a) in args.iter().enumerate() {
        let _ = write!(head, ", .param .{} litmus_loc{k}", arg_reg(k, a).0);
    }
    head.push_str(")\n");
    head
}

/// Declares and loads the optional parameters [`signature`] gave the function.
fn load_optional(f: &mut Func, soft: bool, args: &[LocArg]) {
    if soft {
        f.decl(".reg .b64 %sync;");
        f.decl(".reg .b32 %key;");
        f.decl(".reg .pred %pk;");
        f.line("ld.param.b64 %sync, [litmus_sync];");
    }
    if reads_texture(args) {
        f.decl(format!(".reg .b64 {TEXTURE};"));
        f.decl(format!(".reg .b32 {};", TEXTURE_SINK.join(", ")));
        f.line(format!("ld.param.b64 {TEXTURE}, [litmus_tex];"));
    }
    if uses_surface(args) {
        let [surf, x, y] = SURFACE;
        f.decl(format!(".reg .b64 {surf};"));
        f.decl(format!(".reg .b32 {x}, {y};"));
        f.line(format!("ld.param.b64 {surf}, [litmus_surf];"));
    }
}

/// Ends the function after the body: status 1 (done) or, on the timed-out path, 2 after the
/// barriers not yet passed; then the status and `returns` as the returned words.
pub(super) fn close(cx: &mut Ctx, returns: &[Reg]) {
    cx.line("mov.u32 %status, 1;");
    cx.line("bra.uni LITMUS_END;");
    cx.f.label("LITMUS_TIMEOUT");
    cx.line("mov.u32 %status, 2;");
    replay_barriers(cx);
    cx.f.label("LITMUS_END");
    cx.line("st.param.b32 [litmus_ret+0], %status;");
    for (k, r) in returns.iter().enumerate() {
        let reg = cx.reg(r);
        cx.line(format!("st.param.b32 [litmus_ret+{}], {reg};", 4 * (k + 1)));
    }
    cx.line("ret;");
}

/// On the timed-out path, every barrier the role has not passed (`%nsync` counts those it
/// has): a software barrier is abandoned, a hardware one is run.
fn replay_barriers(cx: &mut Ctx) {
    let test = cx.test;
    let steps = test.threads[cx.role]
        .body
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, Instr::Barrier(_)));
    let mut hard = cx.syncs.iter();
    for (k, (index, i)) in steps.enumerate() {
        cx.f.line(format!("setp.le.u32 %pt, %nsync, {k};"));
        if cx.soft && is_cta_barrier(i) {
            let n = soft_index(cx.layout, cx.role, index);
            cx.f.line(format!("@!%pt bra LITMUS_PASSED_{k};"));
            cx.f.line(format!(
                "{{ .param .b64 s_base; .param .b32 s_me; st.param.b64 [s_base], %sync; st.param.b32 [s_me], {n}; call litmus_soft_abandon, (s_base, s_me); }}"
            ));
            cx.f.label(format!("LITMUS_PASSED_{k}"));
            continue;
        }
        let s = hard
            .next()
            .expect("one hardware sequence entry per hardware barrier");
        for l in sync_lines(s, "%bar") {
            cx.f.line(format!("@%pt {l}"));
        }
    }
}

/// The index in the software barrier plan of instruction `index` of `role`.
pub(super) fn soft_index(layout: &Layout, role: usize, index: usize) -> usize {
    layout
        .shape
        .soft_barriers
        .iter()
        .position(|b| b.role == role && b.index == index)
        .expect("Shape::of plans every CTA barrier of a soft test")
}
