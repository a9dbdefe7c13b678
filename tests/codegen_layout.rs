//! The kernel layout: every role of every instance has exactly one thread, placed where the
//! test's scope tree says; instances never share a location unless aliased; the parameter and
//! buffer order is the one the runtime reads; outcome encoding round-trips and the checksum
//! catches lost counts.

use ptx_litmus::codegen::layout::{Assignment, Perms, Salt, WARP};
use ptx_litmus::codegen::{BufferKind, CodegenError, Counter, Layout, Param, Stress, PARAMS};
use ptx_litmus::litmus::ast::*;
use std::collections::{BTreeMap, BTreeSet};

fn place(cta: u32, cluster: Option<u32>, warp: Option<u32>) -> Placement {
    Placement {
        warp,
        cta,
        cluster,
        gpu: 0,
    }
}

fn ld(dst: &str, loc: &str) -> Instr {
    Instr::Load {
        sem: LoadSem::Weak,
        scope: None,
        proxy: Proxy::Generic,
        dst: Reg(dst.into()),
        addr: Addr {
            loc: loc.into(),
            offset: None,
        },
    }
}

fn st(loc: &str, v: Value) -> Instr {
    Instr::Store {
        sem: StoreSem::Weak,
        scope: None,
        proxy: Proxy::Generic,
        addr: Addr {
            loc: loc.into(),
            offset: None,
        },
        src: Operand::Imm(v),
    }
}

fn cond_regs(regs: &[(usize, &str)]) -> Condition {
    let mut prop = Prop::True;
    for (t, r) in regs {
        prop = Prop::And(
            Box::new(prop),
            Box::new(Prop::Cmp {
                lhs: Term::Reg {
                    thread: *t,
                    reg: Reg((*r).into()),
                },
                op: CmpOp::Eq,
                rhs: Term::Const(0),
            }),
        );
    }
    Condition {
        quantifier: Quantifier::Exists,
        prop,
    }
}

/// A test whose thread `i` runs at `places[i]`, each storing to its own location and loading
/// the next thread's location.
fn ring(places: &[Placement], shared: bool) -> Test {
    let n = places.len();
    let name = |i: usize| format!("x{i}");
    Test {
        name: "ring".into(),
        doc: vec![],
        locations: (0..n)
            .map(|i| Location {
                name: name(i),
                kind: LocationKind::Memory {
                    init: 0,
                    space: if shared && i == 0 {
                        Space::Shared { owner: 0 }
                    } else {
                        Space::Global
                    },
                },
            })
            .collect(),
        reg_init: vec![],
        threads: places
            .iter()
            .enumerate()
            .map(|(i, p)| Thread {
                id: i,
                place: *p,
                body: vec![st(&name(i), 1), ld("r0", &name((i + 1) % n))],
            })
            .collect(),
        extra_observed: vec![Term::Loc(name(0))],
        condition: cond_regs(&(0..n).map(|i| (i, "r0")).collect::<Vec<_>>()),
    }
}

fn layout(test: &Test, stress: &Stress) -> Layout {
    let domains = ptx_litmus::codegen::static_domains(test).unwrap();
    Layout::new(test, stress, &domains).unwrap()
}

/// Every (cta, thread) of the grid under `perms`, with its assignment.
fn assignments(l: &Layout, perms: &Perms) -> Vec<((u32, u32), Assignment)> {
    let mut out = Vec::new();
    for cta in 0..l.test_launch.grid[0] {
        for tid in 0..l.test_launch.block[0] {
            if let Some(a) = l.thread_role(perms, cta, tid) {
                out.push(((cta, tid), a));
            }
        }
    }
    out
}

fn small() -> Stress {
    Stress {
        testing_ctas: 12,
        max_ctas: 16,
        cta_size: 128,
        ..Stress::interleave()
    }
}

/// Checks that each role of each instance has exactly one thread and returns, per instance,
/// the (cta, tid) of each role.
fn bijection(l: &Layout, test: &Test, perms: &Perms) -> BTreeMap<u64, Vec<(u32, u32)>> {
    let mut seen: BTreeSet<(usize, u64)> = BTreeSet::new();
    let mut by_instance: BTreeMap<u64, Vec<(u32, u32)>> = BTreeMap::new();
    for (pos, a) in assignments(l, perms) {
        assert!(
            a.instance < l.instances,
            "instance {} out of range",
            a.instance
        );
        assert!(seen.insert((a.role, a.instance)), "{a:?} played twice");
        let v = by_instance
            .entry(a.instance)
            .or_insert_with(|| vec![(u32::MAX, 0); test.threads.len()]);
        v[a.role] = pos;
    }
    assert_eq!(seen.len() as u64, l.instances * test.threads.len() as u64);
    by_instance
}

fn perms_for(l: &Layout) -> Vec<Perms> {
    let mut out = vec![Perms::IDENTITY];
    out.extend((0..20).map(|seed| Perms::from_seed(l, 100, seed)));
    out
}

#[test]
fn roles_in_different_ctas_land_in_different_ctas() {
    let test = ring(&[place(0, None, None), place(1, None, None)], false);
    let l = layout(&test, &small());
    assert_eq!(l.test_launch.cluster, None);
    for perms in perms_for(&l) {
        for (_, pos) in bijection(&l, &test, &perms) {
            assert_ne!(pos[0].0, pos[1].0, "P0 and P1 share CTA {}", pos[0].0);
        }
    }
}

#[test]
fn warp_hints_decide_same_or_different_warps_in_one_cta() {
    for (w1, same_warp) in [(Some(0), true), (Some(1), false)] {
        let test = ring(
            &[
                place(0, None, Some(0)),
                place(0, None, w1),
                place(1, None, None),
            ],
            false,
        );
        let l = layout(&test, &small());
        for perms in perms_for(&l) {
            for (_, pos) in bijection(&l, &test, &perms) {
                assert_eq!(pos[0].0, pos[1].0, "P0 and P1 must share a CTA");
                assert_eq!(pos[0].1 / WARP == pos[1].1 / WARP, same_warp);
                assert_ne!(pos[0].0, pos[2].0, "P2 must be in another CTA");
            }
        }
    }
}

#[test]
fn cluster_roles_share_a_cluster_and_other_clusters_do_not() {
    let test = ring(
        &[
            place(0, Some(0), None),
            place(1, Some(0), None),
            place(2, Some(1), None),
        ],
        true,
    );
    let l = layout(&test, &small());
    assert_eq!(l.test_launch.cluster, Some([2, 1, 1]));
    assert_eq!(l.test_launch.grid[0] % 2, 0, "grid is whole clusters");
    let dim = 2;
    for perms in perms_for(&l) {
        for (_, pos) in bijection(&l, &test, &perms) {
            assert_eq!(pos[0].0 / dim, pos[1].0 / dim, "P0 and P1 share a cluster");
            assert_ne!(pos[0].0, pos[1].0, "P0 and P1 are different CTAs");
            assert_ne!(pos[0].0 / dim, pos[2].0 / dim, "P2 is in another cluster");
            // The owner of the shared location x0 is found where rank_of says.
            assert_eq!(pos[0].0 % dim, l.rank_of(&perms, 0));
            assert_eq!(pos[1].0 % dim, l.rank_of(&perms, 1));
        }
    }
}

#[test]
fn placement_changes_with_the_seed() {
    let test = ring(&[place(0, None, None), place(1, None, None)], false);
    let l = layout(&test, &small());
    let a = assignments(&l, &Perms::from_seed(&l, 100, 1));
    let b = assignments(&l, &Perms::from_seed(&l, 100, 2));
    assert_ne!(a, b);
    // With shuffle_pct 0 the placement never moves.
    assert_eq!(Perms::from_seed(&l, 0, 1), Perms::IDENTITY);
    assert!(ptx_litmus::codegen::layout::chance(3, Salt::Shuffle, 100));
}

#[test]
fn no_two_instances_share_a_location_unless_aliased() {
    let test = ring(
        &[
            place(0, None, None),
            place(1, None, None),
            place(2, None, None),
        ],
        false,
    );
    for aliased in [false, true] {
        let stress = Stress {
            aliased_memory: aliased,
            mem_stride: 3,
            ..small()
        };
        let l = layout(&test, &stress);
        let words = l.buffer_bytes(BufferKind::Memory) / 4;
        let mut used: BTreeMap<u64, (String, u64)> = BTreeMap::new();
        for loc in &l.locations {
            for i in 0..l.instances {
                let w = l.global_word(loc, i);
                assert!(
                    w < words,
                    "{} of instance {i} at word {w} beyond {words}",
                    loc.name
                );
                if let Some((other, j)) = used.insert(w, (loc.name.clone(), i)) {
                    assert!(
                        aliased && other == loc.name,
                        "{}#{i} and {other}#{j} share word {w}",
                        loc.name
                    );
                }
            }
        }
    }
}

#[test]
fn parameters_and_buffers_come_in_the_documented_order() {
    let names: Vec<&str> = PARAMS.iter().map(|p| p.name()).collect();
    assert_eq!(
        names,
        [
            "p_mem",
            "p_results",
            "p_hist",
            "p_stress",
            "p_sync",
            "p_seed"
        ]
    );
    let test = ring(&[place(0, None, None), place(1, None, None)], false);
    let l = layout(&test, &small());
    let kinds: Vec<BufferKind> = l.buffers.iter().map(|b| b.kind).collect();
    let pointer_params: Vec<Param> = PARAMS
        .iter()
        .copied()
        .filter(|p| *p != Param::Seed)
        .collect();
    assert_eq!(kinds.len(), pointer_params.len());
    for (k, p) in kinds.iter().zip(&pointer_params) {
        assert_eq!(format!("{k:?}"), format!("{p:?}"));
    }
    assert_eq!(
        l.buffer_bytes(BufferKind::Results),
        l.instances * u64::from(l.result_words) * 4
    );
    assert_eq!(
        l.buffer_bytes(BufferKind::Histogram),
        (l.outcome_count + 5) * 8
    );
    assert!(u64::from(l.collect_launch.grid[0] * l.collect_launch.block[0]) >= l.instances);
}

#[test]
fn outcomes_round_trip_and_out_of_domain_values_are_unexpected() {
    let test = ring(&[place(0, None, None), place(1, None, None)], false);
    let l = layout(&test, &small());
    assert_eq!(l.outcome_count, 8);
    let mut seen = BTreeSet::new();
    for i in 0..l.outcome_count {
        let o = l.decode(i);
        assert_eq!(l.encode(&o.0), Some(i));
        assert!(seen.insert(o));
    }
    assert_eq!(l.encode(&[0, 2, 0]), None);
}

#[test]
fn the_checksum_catches_lost_counts() {
    let test = ring(&[place(0, None, None), place(1, None, None)], false);
    let l = layout(&test, &small());
    let n = l.outcome_count as usize;
    let mut words = vec![0u64; n + 5];
    words[3] = 10;
    words[n + Counter::Unexpected as usize] = 1;
    words[n + Counter::Skipped as usize] = 2;
    words[n + Counter::Checked as usize] = 13;
    words[n + Counter::StressOps as usize] = 77;
    let c = l.decode_histogram(&words).unwrap();
    assert_eq!(c.histogram.counts[&l.decode(3)], 10);
    assert_eq!(c.histogram.unexpected, 1);
    assert_eq!(c.stress_ops, 77);
    assert!(c.check_total(&l, 13 / l.instances.max(1) + 1).is_err());
    words[n + Counter::Checked as usize] = 14;
    assert!(matches!(
        l.decode_histogram(&words),
        Err(CodegenError::Checksum(_))
    ));
}

#[test]
fn threads_on_two_gpus_run_apart_on_one_gpu_with_a_note() {
    let mut p1 = place(0, None, None);
    p1.gpu = 1;
    let test = ring(&[place(0, None, None), p1], false);
    let l = layout(&test, &small());
    assert!(
        l.shape.notes.iter().any(|n| n.contains("gpu 1")),
        "{:?}",
        l.shape.notes
    );
    // Same CTA id on two GPUs: different clusters here, never one CTA.
    for perms in perms_for(&l) {
        for (_, pos) in bijection(&l, &test, &perms) {
            assert_ne!(pos[0].0, pos[1].0);
        }
    }
}

#[test]
fn software_barrier_words_follow_every_other_result_word() {
    let src = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("litmus/sb/SB+bar.cta.sync-loaded-id-same.litmus"),
    )
    .expect("the own test exists");
    let test = ptx_litmus::litmus::parse(&src, std::path::Path::new("t.litmus")).expect("parses");
    let l = layout(&test, &small());
    let soft = &l.shape.soft_barriers;
    assert_eq!(soft.len(), 2, "one barrier for P0 and one for P1");
    assert!(l.shape.barriers.is_empty(), "no hardware barrier is used");
    // Two words per software barrier, after statuses, registers and shared final values, so
    // that the collect kernel's reset of the result words also resets the barriers.
    let used: Vec<u32> = l
        .register_words
        .iter()
        .flatten()
        .map(|(_, w)| *w)
        .chain(l.observable_words.iter().flatten().copied())
        .collect();
    assert!(used.iter().all(|w| *w < l.soft_barrier_word));
    assert_eq!(l.result_words, l.soft_barrier_word + 2 * soft.len() as u32);
    // P0 and P1 are each other's partners (same CTA, key (1, none) possible for both).
    assert_eq!(soft[0].partners, 1 << 1);
    assert_eq!(soft[1].partners, 1 << 0);
}

#[test]
fn a_generic_alias_reaches_its_location_through_a_view_of_its_own() {
    let src = "PTX alias\n{ x=0; y @ generic aliases x; z @ generic aliases x; w=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak x, 1 | ld.weak r0, y ;\n st.weak w, 1 | ld.weak r1, z ;\nexists (P1:r0 == 0)\n";
    let test = ptx_litmus::litmus::parse(src, std::path::Path::new("t.litmus")).expect("parses");
    let l = layout(&test, &small());
    // Two aliases of x: three views of the memory, each at least as large as the memory and a
    // multiple of the mapping granularity.
    assert_eq!(l.memory_views, 3);
    assert!(l.view_bytes >= l.buffer_bytes(BufferKind::Memory));
    assert_eq!(l.view_bytes % ptx_litmus::codegen::layout::VIEW_ALIGN, 0);
    assert_eq!(l.view_of(&test, "x"), Some(0));
    assert_eq!(l.view_of(&test, "y"), Some(1));
    assert_eq!(l.view_of(&test, "z"), Some(2));
    // The reader's accesses name x through views 1 and 2, with biases of their own, and the
    // kernel offsets each argument by its view.
    let k = ptx_litmus::codegen::emit(&test, &l, &small()).expect("emits");
    let args: Vec<(String, u32)> = k.roles[1]
        .args
        .iter()
        .map(|a| (a.loc.clone(), a.view))
        .collect();
    assert_eq!(args, [("x".to_string(), 1), ("x".to_string(), 2)]);
    assert_ne!(k.roles[1].args[0].bias, k.roles[1].args[1].bias);
    for v in [1, 2] {
        let add = format!("add.u64 %ga, %ga, {};", v * l.view_bytes);
        assert!(k.ptx.contains(&add), "no `{add}` in the kernel");
    }
}

#[test]
fn a_generic_alias_of_shared_memory_is_refused() {
    let src = "PTX alias\n{ x @ shared(P0) = 0; y @ generic aliases x; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak x, 1 | ld.weak r0, y ;\nexists (P1:r0 == 0)\n";
    let test = ptx_litmus::litmus::parse(src, std::path::Path::new("t.litmus")).expect("parses");
    let l = layout(&test, &small());
    assert_eq!(l.memory_views, 1);
    let e = ptx_litmus::codegen::emit(&test, &l, &small()).expect_err("refused");
    assert!(matches!(e, CodegenError::Unsupported { .. }), "{e}");
    assert!(
        e.to_string().contains("generic alias of shared memory"),
        "{e}"
    );
}

/// The CTA distances between P0 and P1 of every instance over 200 shuffled launches of a
/// test whose two roles are in different CTAs, with `partner_distances = k`.
fn partner_distances(k: u32) -> BTreeSet<u32> {
    let test = ring(&[place(0, None, None), place(1, None, None)], false);
    let stress = Stress {
        testing_ctas: 64,
        max_ctas: 64,
        partner_distances: k,
        ..small()
    };
    let l = layout(&test, &stress);
    let n = l.testing_ctas;
    let mut out = BTreeSet::new();
    for seed in 0..200 {
        for (_, pos) in bijection(&l, &test, &Perms::from_seed(&l, 100, seed)) {
            out.insert((pos[1].0 + n - pos[0].0) % n);
        }
    }
    out
}

#[test]
fn partner_distances_bounds_the_distinct_cta_distances_a_launch_draws() {
    // One multiplier: the same neighbour in every launch.
    assert_eq!(partner_distances(1), BTreeSet::from([1]));
    let eight = partner_distances(8);
    assert!(eight.len() <= 8 && eight.len() > 1, "{eight:?}");
    // 32 co-prime multipliers of 32 testing clusters' worth: every odd distance.
    let many = partner_distances(32);
    assert!(many.len() > 8, "{many:?}");
    assert!(many.iter().all(|d| d % 2 == 1), "{many:?}");
    for bad in [0, 65] {
        let e = Stress {
            partner_distances: bad,
            ..small()
        }
        .validate()
        .unwrap_err();
        assert!(e.contains(&format!("partner_distances = {bad}")), "{e}");
    }
}

#[test]
fn a_drawn_cta_too_small_for_the_test_rises_and_one_set_by_hand_is_refused() {
    let warps = [0, 1, 2].map(|w| place(0, None, Some(w)));
    let test = ring(&warps, false);
    let drawn = Stress::random(3);
    assert_eq!(drawn.cta_size, 2 * WARP, "the draw this test is about");
    let kernel = ptx_litmus::codegen::build(&test, &drawn).unwrap();
    assert_eq!(kernel.layout.test_launch.block[0], 3 * WARP);
    assert_eq!(kernel.stress.describe(), "random-3 with cta_size=96");
    assert!(
        kernel
            .notes
            .iter()
            .any(|n| n.contains("rather than the 64")),
        "{:?}",
        kernel.notes
    );
    let mut by_hand = Stress::basic();
    by_hand.set("cta_size", "64").unwrap();
    let e = ptx_litmus::codegen::build(&test, &by_hand).unwrap_err();
    assert!(
        matches!(&e, CodegenError::Invalid(m) if m.contains("needs 3 warps")),
        "{e}"
    );
}
