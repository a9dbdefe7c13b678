//! The SASS check catches planted faults: a kernel whose PTX lost a test load, or had two
//! test loads swapped, is reported, naming the instruction.

mod common;

use common::sass::*;
use common::*;
use ptx_litmus::sass;

/// The kernel of an MP test and the text of its reader's role function.
fn mp() -> (ptx_litmus::codegen::Kernel, String) {
    let test = load("litmus/mp/MP+rel.gpu+acq.gpu.litmus");
    let k = kernel(&test).expect("MP generates");
    let role = k.roles[1].ptx.clone();
    (k, role)
}

#[test]
fn the_unmodified_kernel_passes() {
    if !tools_present("the_unmodified_kernel_passes") {
        return;
    }
    let (k, _) = mp();
    let c = sass::check_kernel(&k, "sm_90").unwrap();
    assert!(c.ok(), "{:?}", c.errors());
}

#[test]
fn a_removed_load_is_reported_by_name() {
    if !tools_present("a_removed_load_is_reported_by_name") {
        return;
    }
    let (k, role) = mp();
    let load = k.roles[1].ops[1].op.to_string();
    assert!(load.starts_with("ld.weak.global.u32"), "{load}");
    let broken_role = role.replacen(&format!("\t{load}\n"), "\n", 1);
    assert_ne!(broken_role, role, "the load is in the role's PTX");
    let ptx = k.ptx.replacen(&role, &broken_role, 1);
    let c = sass::check_ptx(&k, &ptx, "sm_90").unwrap();
    let errors = c.errors().join("\n");
    assert!(!c.ok());
    assert!(errors.contains(&load), "{errors}");
    assert!(errors.contains("P1"), "{errors}");
}

#[test]
fn swapped_loads_are_reported_by_name() {
    if !tools_present("swapped_loads_are_reported_by_name") {
        return;
    }
    let (k, role) = mp();
    let first = k.roles[1].ops[0].op.to_string();
    let second = k.roles[1].ops[1].op.to_string();
    assert!(first.starts_with("ld.acquire.gpu.global.u32"), "{first}");
    // Swap the flag load and the data load, keeping each one's qualifiers and registers.
    let broken_role = role
        .replacen(&first, "@@FIRST@@", 1)
        .replacen(&second, &first, 1)
        .replacen("@@FIRST@@", &second, 1);
    assert_ne!(broken_role, role);
    let ptx = k.ptx.replacen(&role, &broken_role, 1);
    let c = sass::check_ptx(&k, &ptx, "sm_90").unwrap();
    let errors = c.errors().join("\n");
    assert!(!c.ok());
    assert!(errors.contains(&first), "{errors}");
}

#[test]
fn a_weakened_store_is_reported_by_name() {
    if !tools_present("a_weakened_store_is_reported_by_name") {
        return;
    }
    let (k, _) = mp();
    let store = k.roles[0].ops[1].op.to_string();
    assert!(store.starts_with("st.release.gpu.global.u32"), "{store}");
    let weak = store.replacen("st.release.gpu", "st.relaxed.gpu", 1);
    let ptx = k.ptx.replacen(&store, &weak, 1);
    let c = sass::check_ptx(&k, &ptx, "sm_90").unwrap();
    let errors = c.errors().join("\n");
    assert!(
        errors.contains(&store) && errors.contains("MEMBAR"),
        "{errors}"
    );
}

/// The kernel of an own test whose barrier id is loaded at run time (a software barrier).
fn soft() -> ptx_litmus::codegen::Kernel {
    let test = load("litmus/sb/SB+bar.cta.sync-loaded-id-same.litmus");
    let k = kernel(&test).expect("the test generates");
    assert!(!k.layout.shape.soft_barriers.is_empty());
    k
}

#[test]
fn a_software_barrier_kernel_passes_and_calls_its_barrier_in_program_order() {
    if !tools_present("a_software_barrier_kernel_passes_and_calls_its_barrier_in_program_order") {
        return;
    }
    let k = soft();
    let c = sass::check_kernel(&k, "sm_90").unwrap();
    assert!(c.ok(), "{:?}", c.errors());
    // P0: st x, ld z, the barrier's call, ld y.
    let p0 = &c.roles[0].mappings;
    assert_eq!(p0.len(), 4, "{p0:?}");
    assert!(p0[2].mnemonic.contains("litmus_soft_sync"), "{p0:?}");
    assert!(p0[2].sass[0].starts_with("CALL"), "{p0:?}");
}

#[test]
fn a_software_barrier_without_its_acquire_fence_is_reported() {
    if !tools_present("a_software_barrier_without_its_acquire_fence_is_reported") {
        return;
    }
    let k = soft();
    // The second fence of litmus_soft_sync is its acquire half.
    let fence = "\tfence.acq_rel.cta;\nLITMUS_SOFT_DONE:";
    assert!(k.ptx.contains(fence));
    let ptx = k.ptx.replacen(fence, "\nLITMUS_SOFT_DONE:", 1);
    let c = sass::check_ptx(&k, &ptx, "sm_90").unwrap();
    let errors = c.errors().join("\n");
    assert!(
        errors.contains("litmus_soft_sync") && errors.contains("MEMBAR"),
        "{errors}"
    );
}

#[test]
fn a_software_barrier_with_a_weak_poll_is_reported() {
    if !tools_present("a_software_barrier_with_a_weak_poll_is_reported") {
        return;
    }
    let k = soft();
    let poll = "ld.relaxed.cta.global.u32 %seen, [%a];";
    assert!(k.ptx.contains(poll));
    let ptx = k.ptx.replacen(poll, "ld.weak.global.u32 %seen, [%a];", 1);
    let c = sass::check_ptx(&k, &ptx, "sm_90").unwrap();
    let errors = c.errors().join("\n");
    assert!(
        errors.contains("litmus_soft_sync") && errors.contains("weak access"),
        "{errors}"
    );
}

#[test]
fn a_kernel_ptxas_rejects_is_named_by_file_and_line_without_the_scratch_folder() {
    let name = "a_kernel_ptxas_rejects_is_named_by_file_and_line_without_the_scratch_folder";
    if !tools_present(name) {
        return;
    }
    let (k, _) = mp();
    let bad = k.ptx.replacen("ret;", "fence.bogus.gpu;\n\tret;", 1);
    let err = sass::tools::assemble(&bad, "sm_90")
        .unwrap_err()
        .to_string();
    assert!(err.contains("ptxas failed:"), "{err}");
    assert!(err.contains("kernel.ptx, line "), "{err}");
    let scratch = std::env::temp_dir().display().to_string();
    assert!(!err.contains(&scratch), "{err}");
}
