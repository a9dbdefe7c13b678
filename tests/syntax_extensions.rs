//! Every extension of the dialect parses into the intended AST, prints in canonical spelling,
//! and survives `parse(print(t)) == t`.

use ptx_litmus::litmus::ast::*;
use ptx_litmus::litmus::{self, print_instr};
use std::path::Path;

fn parse(text: &str) -> Test {
    litmus::parse(text, Path::new("ext.litmus")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Parses, checks the round trip and that the canonical print contains each of `lines`.
fn round_trip(text: &str, lines: &[&str]) -> Test {
    let t = parse(text);
    let printed = litmus::print(&t);
    assert_eq!(parse(&printed), t, "round trip of\n{printed}");
    for l in lines {
        assert!(printed.contains(l), "`{l}` missing from\n{printed}");
    }
    t
}

/// A two-thread test with `p0`/`p1` as the one instruction of each thread.
fn two(header: &str, init: &str, p0: &str, p1: &str, cond: &str) -> String {
    format!("PTX t\n{{ {init} }}\n{header}\n {p0} | {p1} ;\nexists ({cond})\n")
}

const PLAIN: &str = "P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;";

fn instrs(t: &Test, thread: usize) -> &[Instr] {
    &t.threads[thread].body
}

#[test]
fn cluster_placement_and_scope() {
    let t = round_trip(
        &two(
            "P0@cta 0, cluster 1, gpu 0 | P1@gpu 0,cluster 1,cta 1 ;",
            "x=0;",
            "st.relaxed.cluster x, 1",
            "ld.acquire.cluster r0, x",
            "P1:r0 == 1",
        ),
        &[
            "P0@cta 0,cluster 1,gpu 0",
            "P1@cta 1,cluster 1,gpu 0",
            "st.relaxed.cluster x, 1",
        ],
    );
    assert_eq!(t.threads[1].place.cluster, Some(1));
    assert!(t.threads[0].place.same_cluster(&t.threads[1].place));
    assert!(!t.threads[0].place.same_cta(&t.threads[1].place));
    assert_eq!(litmus::scopes(&t), vec![Scope::Cluster]);
    assert!(litmus::features(&t).contains(&"cluster"));
}

#[test]
fn warp_hint_prints_innermost_first() {
    let t = round_trip(
        &two(
            "P0@cta 0,warp 1 | P1@warp 0,cta 0 ;",
            "",
            "st.weak x, 1",
            "ld.weak r0, x",
            "P1:r0 == 0",
        ),
        &["P0@warp 1,cta 0,gpu 0", "P1@warp 0,cta 0,gpu 0"],
    );
    assert_eq!(t.threads[0].place.warp, Some(1));
    assert!(t.threads[0].place.same_cta(&t.threads[1].place));
    assert!(litmus::features(&t).contains(&"warp"));
}

#[test]
fn header_without_placement_gives_each_thread_its_own_cta() {
    let t = round_trip(
        &two(
            "P0 | P1 ;",
            "",
            "st.weak x, 1",
            "ld.weak r0, x",
            "P1:r0 == 0",
        ),
        &["P1@cta 1,gpu 0"],
    );
    assert_eq!(
        t.threads[1].place,
        Placement {
            warp: None,
            cta: 1,
            cluster: None,
            gpu: 0
        }
    );
}

#[test]
fn shared_memory_of_a_cta_and_of_a_cluster() {
    let t = round_trip(
        &two(
            "P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;",
            "d @ shared(P0) = 5; x = 0;",
            "st.shared::cta.u32 d, 1",
            "ld.shared::cluster r0, [d]",
            "P1:r0 == 1 /\\ d == 1",
        ),
        &["d @ shared(P0) = 5;", "st.weak d, 1", "ld.weak r0, d"],
    );
    assert_eq!(
        t.location("d").unwrap().kind,
        LocationKind::Memory {
            init: 5,
            space: Space::Shared { owner: 0 }
        }
    );
    assert!(litmus::features(&t).contains(&"shared"));
}

#[test]
fn acquire_and_release_fences_and_membar() {
    let t = round_trip(
        "PTX f\n{}\n P0 ;\n fence.acquire.gpu ;\n fence.release.cta ;\n fence.gpu ;\n membar.gl ;\n membar.cta ;\n membar.sys ;\n fence.proxy.alias ;\nexists (true)\n",
        &["fence.acquire.gpu", "fence.release.cta", "fence.acq_rel.gpu", "membar.gl", "fence.proxy.alias"],
    );
    use Fence::*;
    assert_eq!(
        instrs(&t, 0),
        &[
            Instr::Fence(Memory {
                sem: FenceSem::Acquire,
                scope: Scope::Gpu
            }),
            Instr::Fence(Memory {
                sem: FenceSem::Release,
                scope: Scope::Cta
            }),
            Instr::Fence(Memory {
                sem: FenceSem::AcqRel,
                scope: Scope::Gpu
            }),
            Instr::Fence(Membar(MembarLevel::Gl)),
            Instr::Fence(Membar(MembarLevel::Cta)),
            Instr::Fence(Membar(MembarLevel::Sys)),
            Instr::Fence(Proxy(ProxyFenceKind::Alias)),
        ]
    );
    assert_eq!(litmus::scopes(&t), vec![Scope::Cta, Scope::Gpu, Scope::Sys]);
}

#[test]
fn cta_barriers_in_every_spelling() {
    let t = round_trip(
        "PTX b\n{}\n P0 ;\n bar.sync 0 ;\n barrier.sync 1, 2 ;\n barrier.cta.sync r1 ;\n bar.cta.arrive 0, 2 ;\n bar.cta.red.popc r2, 0, 2, r3 ;\n bar.red.and.pred r4, 1, 1 ;\nexists (true)\n",
        &[
            "bar.cta.sync 0 ",
            "bar.cta.sync 1, 2",
            "bar.cta.sync r1",
            "bar.cta.arrive 0, 2",
            "bar.cta.red.popc r2, 0, 2, r3",
            "bar.cta.red.and r4, 1, 1",
        ],
    );
    let reg = |s: &str| Operand::Reg(Reg(s.into()));
    assert_eq!(
        instrs(&t, 0)[4],
        Instr::Barrier(Barrier::Cta {
            op: BarOp::Red {
                op: BarRedOp::Popc,
                dst: Reg("r2".into()),
                pred: reg("r3")
            },
            id: Operand::Imm(0),
            count: Some(Operand::Imm(2)),
            quorum: None,
        })
    );
    assert_eq!(
        instrs(&t, 0)[5],
        Instr::Barrier(Barrier::Cta {
            op: BarOp::Red {
                op: BarRedOp::And,
                dst: Reg("r4".into()),
                pred: Operand::Imm(1)
            },
            id: Operand::Imm(1),
            count: None,
            quorum: None,
        })
    );
    assert!(litmus::features(&t).contains(&"bar.red"));
    assert!(!litmus::features(&t).contains(&"bar-quorum"));
}

#[test]
fn dat3m_barriers_with_instance_resource_and_quorum() {
    // Dat3M's `bar.cta.sync I, A, Q`: instance, resource (a register here) and quorum.
    let t = round_trip(
        "PTX q\n{ P0:r1=1; }\n P0 ;\n bar.cta.sync 1, 1, 3 ;\n bar.cta.arrive 2, r1, r1 ;\nexists (true)\n",
        &["bar.cta.sync 1, 1, 3", "bar.cta.arrive 2, r1, r1"],
    );
    let reg = |s: &str| Operand::Reg(Reg(s.into()));
    assert_eq!(
        instrs(&t, 0),
        &[
            Instr::Barrier(Barrier::Cta {
                op: BarOp::Sync,
                id: Operand::Imm(1),
                count: Some(Operand::Imm(1)),
                quorum: Some(Operand::Imm(3)),
            }),
            Instr::Barrier(Barrier::Cta {
                op: BarOp::Arrive,
                id: Operand::Imm(2),
                count: Some(reg("r1")),
                quorum: Some(reg("r1")),
            }),
        ]
    );
    assert!(litmus::features(&t).contains(&"bar-quorum"));
}

#[test]
fn cluster_barriers() {
    let t = round_trip(
        "PTX c\n{}\n P0@cta 0,cluster 0 ;\n barrier.cluster.arrive ;\n barrier.cluster.wait ;\n barrier.cluster.arrive.relaxed.aligned ;\n barrier.cluster.wait.acquire ;\nexists (true)\n",
        &["barrier.cluster.arrive.release", "barrier.cluster.arrive.relaxed", "barrier.cluster.wait.acquire"],
    );
    assert_eq!(
        instrs(&t, 0),
        &[
            Instr::Barrier(Barrier::ClusterArrive { relaxed: false }),
            Instr::Barrier(Barrier::ClusterWait),
            Instr::Barrier(Barrier::ClusterArrive { relaxed: true }),
            Instr::Barrier(Barrier::ClusterWait),
        ]
    );
    assert!(litmus::features(&t).contains(&"cluster-barrier"));
}

#[test]
fn address_offsets_make_dependencies() {
    let t = round_trip(
        &two(
            PLAIN,
            "",
            "ld.weak r0, x",
            "ld.weak r1, [y+r0]",
            "P1:r1 == 0",
        ),
        &["ld.weak r1, y+r0"],
    );
    match &instrs(&t, 1)[0] {
        Instr::Load { addr, .. } => assert_eq!(
            addr,
            &Addr {
                loc: "y".into(),
                offset: Some(Reg("r0".into()))
            }
        ),
        other => panic!("{other:?}"),
    }
    assert!(litmus::features(&t).contains(&"dep"));
}

#[test]
fn locations_clause_and_final_memory_values() {
    let t = round_trip(
        "PTX l\n{ x=0; }\n P0 | P1 ;\n st.weak x, 1 | st.weak x, 2 ;\nlocations [y; P1:r5; x;]\nexists (x == 2 /\\ 1:r5 = 0)\n",
        &["locations [y; P1:r5; x;]", "exists (x == 2 /\\ P1:r5 == 0)"],
    );
    assert_eq!(
        t.extra_observed,
        vec![
            Term::Loc("y".into()),
            Term::Reg {
                thread: 1,
                reg: Reg("r5".into())
            },
            Term::Loc("x".into())
        ]
    );
    assert_eq!(
        t.locations
            .iter()
            .map(|l| l.name.as_str())
            .collect::<Vec<_>>(),
        ["x", "y"]
    );
    assert!(litmus::features(&t).contains(&"final-memory"));
}

#[test]
fn aliases_and_proxy_accesses() {
    let t = round_trip(
        "PTX p\n{ x = 0; s @ surface aliases x; t @ texture aliases s; c @ constant aliases x; }\n P0 ;\n sust.weak s, 1 ;\n suld.weak r0, s ;\n tld.weak r1, t ;\n cold r2, c ;\nexists (true)\n",
        &["s @ surface aliases x;", "t @ texture aliases s;", "sust.weak s, 1", "tld.weak r1, t", "cold.weak r2, c"],
    );
    assert_eq!(t.resolve("t"), Some("x"));
    let f = litmus::features(&t);
    assert!(f.contains(&"alias") && f.contains(&"proxy"), "{f:?}");
}

#[test]
fn canonical_spellings_of_dat3m_variants() {
    let cases = [
        ("atom.add r0, x, 1", "atom.relaxed.add r0, x, 1"),
        (
            "atom.acq_rel.gpu.cas.b32 r0, [x], 0, -1",
            "atom.acq_rel.gpu.cas r0, x, 0, -1",
        ),
        (
            "red.release.sys.global.add.u64 x, r1",
            "red.release.sys.add x, r1",
        ),
        ("ld r0, x", "ld.weak r0, x"),
        ("ld r0, 7", "mov r0, 7"),
        ("st.volatile x, 1", "st.volatile x, 1"),
        ("mov.u32 r0, -3", "mov r0, -3"),
        ("mul.lo.s32 r0, r1, 2", "mul r0, r1, 2"),
    ];
    for (input, canonical) in cases {
        let t = parse(&format!("PTX v\n{{}}\n P0 ;\n {input} ;\nexists (true)\n"));
        assert_eq!(print_instr(&t.threads[0].body[0]), canonical, "{input}");
        round_trip(&litmus::print(&t), &[canonical]);
    }
}

#[test]
fn branches_labels_and_conditions() {
    let t = round_trip(
        "PTX br\n{ P0:r1 = -2; }\n P0 ;\n LC00: ld.weak r0, x ;\n beq r0,0,LC00 ;\n bra.uni LC01 ;\n add r1, r1, 1 ;\n LC01: ;\n~exists (~P0:r0 == 1 \\/ (P0:r1 != -1 /\\ (true \\/ false)) \\/ ~(x == 0 /\\ x != 1))\n",
        &["P0:r1 = -2;", "LC00:", "beq r0, 0, LC00", "goto LC01", "~exists ("],
    );
    assert_eq!(t.condition.quantifier, Quantifier::NotExists);
    assert_eq!(instrs(&t, 0).len(), 6);
    // Right-nested operators keep their parentheses through the round trip.
    let nested = round_trip(
        "PTX n\n{}\n P0 ;\n ld.weak r0, x ;\nforall (P0:r0 == 0 /\\ (P0:r0 == 1 /\\ P0:r0 == 2))\n",
        &["forall (P0:r0 == 0 /\\ (P0:r0 == 1 /\\ P0:r0 == 2))"],
    );
    assert!(matches!(&nested.condition.prop, Prop::And(_, b) if matches!(**b, Prop::And(..))));
}

#[test]
fn doc_strings_survive_exactly_including_unquoted_text() {
    let src = "PTX d\n\"first\nline\" \"second // not a comment\"\nCycle=Rfe Fre\n{ x=0; }\n P0 ;\n ld.weak r0, x ;\nexists (P0:r0 == 0)\n";
    let t = round_trip(src, &[]);
    assert_eq!(
        t.doc,
        vec!["first\nline", "second // not a comment", "Cycle=Rfe Fre"]
    );
}
