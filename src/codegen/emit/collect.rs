//! The collect kernel: one thread per instance. Each thread decides its instance's histogram
//! word (an outcome, or the unexpected, skipped or incomplete counter, or none for an
//! instance that did not run); the lanes of a warp that chose the same word add to it with one
//! atomic (`match.any`), and the checksum counter gets one atomic per warp (`vote.ballot`), so
//! a launch costs few atomics even when most instances end in one outcome. Then it resets the
//! instance's memory and result words for the next launch, and advances the launch index from
//! which the next test launch derives its seed.

use super::device::{array_coords, global_addr, load_params, signature};
use super::NONE;
use crate::codegen::func::Func;
use crate::codegen::layout::{as_u32, Counter, Layout, COLLECT_ENTRY, SYNC_LAUNCH_INDEX};
use crate::litmus::ast::{Space, Test};
use crate::outcome::Observable;

/// The histogram word of counter `c`.
fn word(layout: &Layout, c: Counter) -> u64 {
    layout.outcome_count + c as u64
}

/// The collect kernel's text.
pub fn render(test: &Test, layout: &Layout) -> String {
    let mut f = Func::new(signature(COLLECT_ENTRY, layout));
    load_params(&mut f, layout);
    f.section();
    f.decl(".reg .b32 %or, %done, %skip, %idx, %d, %st, %bucket, %peers, %count, %lead, %lane;");
    f.decl(".reg .pred %valid, %counted;");
    f.line("mov.u32 %tx, %tid.x;");
    f.line("mov.u32 %cx, %ctaid.x;");
    f.line("mov.u32 %h, %ntid.x;");
    f.line("mad.lo.u32 %inst, %cx, %h, %tx;");
    f.line(format!("mov.u32 %bucket, {NONE};"));
    f.line(format!("setp.lt.u32 %valid, %inst, {};", layout.instances));
    f.line("@!%valid bra LITMUS_TALLY;");
    f.line(format!(
        "mad.wide.u32 %res, %inst, {}, %results;",
        4 * layout.result_words
    ));
    statuses(&mut f, test.threads.len(), layout);
    outcome(&mut f, test, layout);
    f.label("LITMUS_TALLY");
    tally(&mut f, layout);
    reset(&mut f, layout);
    f.render()
}

/// Combines the roles' status words: an instance that did not run (the first, initialising
/// launch) gets no bucket, one with a skipped role the Skipped counter, one with a role that did
/// not report the Incomplete counter.
fn statuses(f: &mut Func, roles: usize, layout: &Layout) {
    f.line("mov.u32 %or, 0;");
    f.line("mov.u32 %done, 0;");
    f.line("mov.u32 %skip, 0;");
    for r in 0..roles {
        f.line(format!("ld.global.u32 %st, [%res+{}];", 4 * r));
        f.line("or.b32 %or, %or, %st;");
        f.line("setp.eq.u32 %p, %st, 1;");
        f.line("@%p add.u32 %done, %done, 1;");
        f.line("setp.eq.u32 %p, %st, 2;");
        f.line("@%p add.u32 %skip, %skip, 1;");
    }
    f.line("setp.eq.u32 %p, %or, 0;");
    f.line("@%p bra LITMUS_TALLY;");
    f.line(format!(
        "mov.u32 %bucket, {};",
        word(layout, Counter::Skipped)
    ));
    f.line("setp.ne.u32 %p, %skip, 0;");
    f.line("@%p bra LITMUS_TALLY;");
    f.line(format!(
        "mov.u32 %bucket, {};",
        word(layout, Counter::Incomplete)
    ));
    f.line(format!("setp.ne.u32 %p, %done, {roles};"));
    f.line("@%p bra LITMUS_TALLY;");
}

/// The outcome's index, digit by digit ([`Layout::encode`]); a value outside its domain
/// leaves the Unexpected counter as the bucket.
fn outcome(f: &mut Func, test: &Test, layout: &Layout) {
    f.line(format!(
        "mov.u32 %bucket, {};",
        word(layout, Counter::Unexpected)
    ));
    f.line("mov.u32 %idx, 0;");
    for (k, (obs, dom)) in layout.observables.iter().zip(&layout.domains).enumerate() {
        match layout.observable_words[k] {
            Some(w) => f.line(format!("ld.global.u32 %v, [%res+{}];", 4 * w)),
            None => {
                let Observable::Loc(name) = obs else {
                    unreachable!("only global locations lack a result word")
                };
                let loc = layout.location(test, name).expect("observed location");
                if loc.in_array {
                    let at = array_coords(f, layout, loc);
                    f.line(format!("suld.b.2d.b32.trap {{%v}}, {at};"));
                } else {
                    global_addr(f, layout, loc, "%ga");
                    f.line("ld.global.u32 %v, [%ga];");
                }
            }
        }
        f.line(format!("mov.u32 %d, {NONE};"));
        for (pos, value) in dom.iter().enumerate() {
            f.line(format!("setp.eq.u32 %p, %v, {};", as_u32(*value)));
            f.line(format!("@%p mov.u32 %d, {pos};"));
        }
        f.line(format!("setp.eq.u32 %p, %d, {NONE};"));
        f.line("@%p bra LITMUS_TALLY;");
        f.line(format!("mad.lo.u32 %idx, %idx, {}, %d;", dom.len()));
    }
    f.line("mov.u32 %bucket, %idx;");
}

/// One atomic per distinct bucket of the warp, and one per warp for the checksum.
fn tally(f: &mut Func, layout: &Layout) {
    // Every lane of the warp is here (none returned early), as the .sync forms require.
    f.line("mov.u32 %lane, %laneid;");
    f.line("match.any.sync.b32 %peers, %bucket, 0xffffffff;");
    f.line("popc.b32 %count, %peers;");
    f.line("bfind.u32 %lead, %peers;");
    f.line("setp.eq.u32 %p, %lead, %lane;");
    f.line(format!("setp.ne.and.u32 %p, %bucket, {NONE}, %p;"));
    f.line("@!%p bra LITMUS_COUNTED;");
    f.line("cvt.u64.u32 %w64, %count;");
    f.line("mul.wide.u32 %ga, %bucket, 8;");
    f.line("add.u64 %ga, %hist, %ga;");
    f.line("red.relaxed.gpu.global.add.u64 [%ga], %w64;");
    f.label("LITMUS_COUNTED");
    // Checksum: instances examined (counted, unexpected or skipped), one atomic per warp.
    // Outcomes, Unexpected and Skipped lie below the Checked word; Incomplete and "none" above.
    f.line(format!(
        "setp.lt.u32 %counted, %bucket, {};",
        word(layout, Counter::Checked)
    ));
    f.line("vote.sync.ballot.b32 %peers, %counted, 0xffffffff;");
    f.line("popc.b32 %count, %peers;");
    f.line("setp.eq.u32 %p, %lane, 0;");
    f.line("setp.ne.and.u32 %p, %count, 0, %p;");
    f.line("@!%p bra LITMUS_RESET;");
    f.line("cvt.u64.u32 %w64, %count;");
    f.line(format!(
        "red.relaxed.gpu.global.add.u64 [%hist+{}], %w64;",
        8 * word(layout, Counter::Checked)
    ));
    f.label("LITMUS_RESET");
}

/// Initial values back into the instance's global locations, zeros into its result words.
fn reset(f: &mut Func, layout: &Layout) {
    f.line("@!%valid ret;");
    for loc in &layout.locations {
        if loc.in_array {
            let at = array_coords(f, layout, loc);
            f.line(format!("mov.u32 %v, {};", as_u32(loc.init)));
            f.line(format!("sust.b.2d.b32.trap {at}, {{%v}};"));
        } else if loc.space == Space::Global {
            global_addr(f, layout, loc, "%ga");
            f.line(format!("mov.u32 %v, {};", as_u32(loc.init)));
            f.line("st.global.u32 [%ga], %v;");
        }
    }
    f.line("mov.u32 %v, 0;");
    for w in 0..layout.result_words {
        f.line(format!("st.global.u32 [%res+{}], %v;", 4 * w));
    }
    // One thread resets the spin barrier and advances the launch index: the test kernel that
    // read both has completed (kernels on one stream run in order) and no collect thread reads
    // them, so the next test launch sees the new values and derives its own seed.
    f.line("setp.eq.u32 %p, %inst, 0;");
    f.line("@%p st.global.u32 [%sync], %v;");
    f.line(format!(
        "@%p red.relaxed.gpu.global.add.u64 [%sync+{SYNC_LAUNCH_INDEX}], 1;"
    ));
    reset_spin_groups(f, layout);
    f.line("ret;");
}

/// The spin counters of groups after the first (`spin_group`), reset by the same thread in a
/// loop: a group per CTA at most, once per launch.
fn reset_spin_groups(f: &mut Func, layout: &Layout) {
    if layout.spin_counters < 2 {
        return;
    }
    f.decl(".reg .b64 %sgc, %sge;");
    f.line("@!%p ret;");
    f.line(format!("add.u64 %sgc, %sync, {};", Layout::spin_counter(1)));
    f.line(format!(
        "add.u64 %sge, %sync, {};",
        Layout::spin_counter(layout.spin_counters)
    ));
    f.label("LITMUS_RESET_SPIN");
    f.line("st.global.u32 [%sgc], %v;");
    f.line("add.u64 %sgc, %sgc, 4;");
    f.line("setp.lt.u64 %p, %sgc, %sge;");
    f.line("@%p bra LITMUS_RESET_SPIN;");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::layout::MAX_OUTCOMES;

    #[test]
    fn the_collect_kernel_checksum_relies_on_the_counter_order() {
        // `litmus_collect` counts an instance in the checksum when its bucket lies below the
        // Checked word: outcomes, Unexpected and Skipped must be below, Incomplete above.
        assert!((Counter::Unexpected as u64) < Counter::Checked as u64);
        assert!((Counter::Skipped as u64) < Counter::Checked as u64);
        assert!((Counter::Incomplete as u64) > Counter::Checked as u64);
        assert!(u64::from(NONE) > MAX_OUTCOMES + 8);
    }
}
