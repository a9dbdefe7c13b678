//! Generated PTX: snapshots of the role functions of a handful of tests (the part of a kernel
//! that is the test itself), the exact PTX spelling of each kind of instruction, the launch
//! shape of cluster tests, and refusals of what the GPU cannot run faithfully.
//!
//! Snapshots live in `tests/snapshots/`; `UPDATE_SNAPSHOTS=1 cargo test --test codegen_emit`
//! rewrites them after an intended change (review the diff).

mod common;

use common::sass::*;
use common::*;
use ptx_litmus::codegen::{self, CodegenError, Kernel, Stress};
use ptx_litmus::litmus::ast::{Fence, Instr, LocationKind, Proxy, ProxyFenceKind, Test};

fn emit(rel: &str) -> Kernel {
    kernel(&load(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn snapshot(name: &str, k: &Kernel) {
    let mut text = String::new();
    for r in &k.roles {
        text.push_str(&r.ptx);
        text.push('\n');
    }
    for n in &k.notes {
        text.push_str(&format!("// note: {n}\n"));
    }
    let path = root().join("tests/snapshots").join(format!("{name}.ptx"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_SNAPSHOTS=1)", path.display()));
    assert!(
        want == text,
        "{name}: generated role functions differ from {}:\n{text}",
        path.display()
    );
}

#[test]
fn snapshots_of_role_functions() {
    for (name, rel) in [
        ("mp-rel-acq", "litmus/mp/MP+rel.gpu+acq.gpu.litmus"),
        (
            "sb-fence-sc-cta-shared",
            "litmus/shared/SB+fence.sc.cta+fence.sc.cta-shared.litmus",
        ),
        (
            "corr-dsmem",
            "litmus/shared/CoRR+rlx.cluster+rlx.cluster-dsmem.litmus",
        ),
        (
            "mp-bar-sync-shared",
            "litmus/shared/MP+bar.cta.sync-shared.litmus",
        ),
        (
            "mp-barrier-cluster",
            "litmus/cluster/MP+barrier.cluster-samecluster.litmus",
        ),
        (
            "mp-bar-arrive-loaded-id",
            "litmus/mp/MP+bar.cta.arrive-loaded-id+sync.litmus",
        ),
    ] {
        snapshot(name, &emit(rel));
    }
}

#[test]
fn emission_is_deterministic() {
    let a = emit("litmus/mp/MP+rel.gpu+acq.gpu.litmus");
    let b = emit("litmus/mp/MP+rel.gpu+acq.gpu.litmus");
    assert_eq!(a.ptx, b.ptx);
}

#[test]
fn instructions_keep_their_exact_ptx() {
    let k = emit("litmus/mp/MP+rel.gpu+acq.gpu.litmus");
    assert!(k.ptx.contains("\tst.release.gpu.global.u32 [%ga"));
    assert!(k.ptx.contains("\tld.acquire.gpu.global.u32 %t"));
    assert!(k.ptx.contains("\tld.weak.global.u32 %t"));
    // Every test operation is recorded, in program order, for the SASS check.
    let ops: Vec<String> = k.roles[1].ops.iter().map(|o| o.op.mnemonic()).collect();
    assert_eq!(ops, ["ld.acquire.gpu.global.u32", "ld.weak.global.u32"]);
    let k = emit("litmus/shared/SB+fence.sc.cta+fence.sc.cta-shared.litmus");
    assert!(k.ptx.contains("\tfence.sc.cta;"));
    assert!(k.ptx.contains(".shared::cta.u32"));
}

#[test]
fn a_cluster_test_with_distributed_shared_memory_launches_a_cluster() {
    let k = emit("litmus/shared/MP+rel.cluster+acq.cluster-dsmem.litmus");
    assert_eq!(k.layout.test_launch.cluster, Some([2, 1, 1]));
    assert!(k.ptx.contains(".reqnctapercluster 2, 1, 1"));
    assert!(k.ptx.contains("mapa.shared::cluster.u32"));
    assert!(k.ptx.contains(".shared::cluster.u32"));
    // The owner's CTA keeps its shared memory alive until the other CTA is done with it.
    assert!(k.ptx.matches("barrier.cluster.wait.acquire;").count() >= 2);
    if tools_present("a_cluster_test_with_distributed_shared_memory_launches_a_cluster") {
        let c = ptx_litmus::sass::check_kernel(&k, "sm_90").unwrap();
        assert!(c.ok(), "{:?}", c.errors());
    }
}

#[test]
fn stress_code_comes_from_the_fragments_and_is_counted() {
    let test = load("litmus/mp/MP+rel.gpu+acq.gpu.litmus");
    let k = codegen::build(&test, &Stress::full_stress()).unwrap();
    assert!(k.ptx.contains(codegen::fragments::STRESS_PTX));
    assert!(k.ptx.contains("call (s_ops), litmus_stress"));
    let counter = 8 * (k.layout.outcome_count + codegen::Counter::StressOps as u64);
    assert!(k.ptx.contains(&format!("[%hist+{counter}], %w64")));
    // The basic preset stresses nothing.
    let basic = codegen::build(&test, &Stress::basic()).unwrap();
    assert!(!basic.ptx.contains("call (s_ops), litmus_stress"));
    // Every fragment states its contract first.
    for f in [
        codegen::fragments::HASH_PTX,
        codegen::fragments::STRESS_PTX,
        codegen::fragments::SPIN_BARRIER_PTX,
    ] {
        assert!(f.starts_with("// ") && f.contains("Contract"), "{f}");
    }
}

/// Whether a name is a texture, surface or constant alias (generic aliases run on the GPU as
/// a second virtual mapping).
fn is_alias(test: &Test, name: &str) -> bool {
    test.location(name).is_some_and(
        |l| matches!(l.kind, LocationKind::Alias { proxy, .. } if proxy != Proxy::Generic),
    )
}

#[test]
fn proxies_are_refused_naming_the_construct() {
    let Some(corpus) = corpus() else {
        common::not_checked("../shared/corpus is absent");
        return;
    };
    let mut refused = 0;
    for (path, test) in ptx_litmus::litmus::load(&[corpus.join("Nvidia/proxy")]) {
        let test = test.unwrap();
        let uses_proxy = test.threads.iter().flat_map(|t| &t.body).any(|i| match i {
            Instr::Load { proxy, addr, .. } | Instr::Store { proxy, addr, .. } => {
                *proxy != Proxy::Generic || is_alias(&test, &addr.loc)
            }
            Instr::Atom { addr, .. } | Instr::Red { addr, .. } => is_alias(&test, &addr.loc),
            Instr::Fence(Fence::Proxy(k)) => *k != ProxyFenceKind::Alias,
            _ => false,
        });
        match kernel(&test) {
            Err(CodegenError::Unsupported { construct, reason }) => {
                refused += 1;
                assert!(
                    uses_proxy,
                    "{}: refused: {construct}: {reason}",
                    path.display()
                );
            }
            // A proxy test that emits reads through a texture object or accesses a surface.
            Ok(k) => assert!(
                !uses_proxy || k.layout.linear_texture || k.layout.array_words > 0,
                "{} emitted although it accesses memory through a proxy",
                path.display()
            ),
            Err(e) => panic!("{}: {e}", path.display()),
        }
    }
    assert!(refused > 50, "only {refused} proxy tests refused");
}

#[test]
fn partner_distances_sizes_the_cluster_multiplier_table_the_kernel_indexes() {
    let test = load("litmus/mp/MP+rel.gpu+acq.gpu.litmus");
    let with = |k: u32| {
        let stress = Stress {
            partner_distances: k,
            ..Stress::full_stress()
        };
        codegen::build(&test, &stress).unwrap()
    };
    let table = |ptx: &str| {
        let line = ptx
            .lines()
            .find(|l| l.contains("litmus_mul_cluster["))
            .expect("a cluster multiplier table")
            .to_string();
        let inner = &line[line.find('{').unwrap() + 1..line.find('}').unwrap()];
        inner.split(", ").count()
    };
    // The presets' 8: index and offset from the hash's low 3 bits and the rest.
    let eight = with(8);
    assert_eq!(table(&eight.ptx), 8);
    assert!(eight.ptx.contains("and.b32 %h2, %h, 7;"));
    let wide = with(40);
    assert_eq!(table(&wide.ptx), 40);
    assert!(wide.ptx.contains("rem.u32 %h2, %h, 40;"));
    assert!(wide.ptx.contains("div.u32 %h, %h, 40;"));
    // The warp permutation keeps its 8.
    assert!(wide.ptx.contains("litmus_mul_warp[8]"));
    assert_eq!(table(&with(1).ptx), 1);
    if tools_present("partner_distances_sizes_the_cluster_multiplier_table_the_kernel_indexes") {
        let c = ptx_litmus::sass::check_kernel(&wide, "sm_90").unwrap();
        assert!(c.ok(), "{:?}", c.errors());
    }
}

#[test]
fn spin_group_gives_each_group_of_ctas_a_counter_of_its_own() {
    use ptx_litmus::codegen::layout::{SYNC_LAUNCH_INDEX, SYNC_SPIN_COUNTERS};
    use ptx_litmus::codegen::{BufferKind, Layout};
    let test = load("litmus/mp/MP+rel.gpu+acq.gpu.litmus");
    let with = |g: u32| {
        let stress = Stress {
            spin_group: g,
            ..Stress::full_stress()
        };
        codegen::build(&test, &stress).unwrap()
    };
    // Every preset: one counter for all testing CTAs, at word 0.
    let one = with(0);
    assert_eq!(one.layout.spin_counters, 1);
    assert!(!one.ptx.contains("%sgc"));
    assert_eq!(
        one.layout.buffer_bytes(BufferKind::Sync),
        SYNC_SPIN_COUNTERS
    );
    let n = one.layout.testing_ctas;
    assert_eq!(with(n).layout.spin_counters, 1);
    // Groups of 50 of the stress preset's 198 testing CTAs: 4 counters, the last for 48.
    let k = with(50);
    assert_eq!((n, k.layout.spin_counters), (198, 4));
    assert!(k.ptx.contains("div.u32 %sg, %cx, 50;"));
    assert!(k.ptx.contains("min.u32 %sgw, %sgw, 50;"));
    assert!(k.ptx.contains("sub.u32 %sgw, 198, %sgw;"));
    assert!(
        k.ptx.contains("LITMUS_RESET_SPIN:"),
        "the collect kernel resets them"
    );
    // The counters are distinct words of the Sync buffer, clear of the launch index.
    let bytes = k.layout.buffer_bytes(BufferKind::Sync);
    let offsets: Vec<u64> = (0..4).map(Layout::spin_counter).collect();
    assert_eq!(offsets, [0, 16, 20, 24]);
    for o in &offsets {
        assert!(o + 4 <= bytes, "counter at {o} beyond {bytes} bytes");
        assert!(o + 4 <= SYNC_LAUNCH_INDEX || *o >= SYNC_LAUNCH_INDEX + 8);
    }
    if tools_present("spin_group_gives_each_group_of_ctas_a_counter_of_its_own") {
        let c = ptx_litmus::sass::check_kernel(&k, "sm_90").unwrap();
        assert!(c.ok(), "{:?}", c.errors());
    }
}
