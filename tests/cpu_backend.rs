//! The CPU backend on real threads: counts add up, SB's store buffering shows, release/acquire
//! and fence.sc forbid what they must, unsupported constructs are refused.

use ptx_litmus::harness::Options;
use ptx_litmus::harness::{cpu, Backend, Budget, Control, RunError, RunParams, TestRun};
use ptx_litmus::litmus::ast::*;
use ptx_litmus::outcome::{observables, Outcome};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

/// Each run uses every core; one at a time, so that runs do not starve each other.
static SERIAL: Mutex<()> = Mutex::new(());

fn reg(r: &str) -> Reg {
    Reg(r.into())
}

fn at(loc: &str) -> Addr {
    Addr {
        loc: loc.into(),
        offset: None,
    }
}

fn st(sem: StoreSem, loc: &str, v: Value) -> Instr {
    Instr::Store {
        sem,
        scope: Some(Scope::Gpu),
        proxy: Proxy::Generic,
        addr: at(loc),
        src: Operand::Imm(v),
    }
}

fn ld(sem: LoadSem, r: &str, loc: &str) -> Instr {
    Instr::Load {
        sem,
        scope: Some(Scope::Gpu),
        proxy: Proxy::Generic,
        dst: reg(r),
        addr: at(loc),
    }
}

fn fence_sc() -> Instr {
    Instr::Fence(Fence::Memory {
        sem: FenceSem::Sc,
        scope: Scope::Gpu,
    })
}

fn eq(thread: usize, r: &str, v: Value) -> Prop {
    Prop::Cmp {
        lhs: Term::Reg {
            thread,
            reg: reg(r),
        },
        op: CmpOp::Eq,
        rhs: Term::Const(v),
    }
}

fn test(name: &str, locs: &[&str], bodies: Vec<Vec<Instr>>, prop: Prop) -> Test {
    Test {
        name: name.into(),
        doc: vec![],
        locations: locs
            .iter()
            .map(|l| Location {
                name: l.to_string(),
                kind: LocationKind::Memory {
                    init: 0,
                    space: Space::Global,
                },
            })
            .collect(),
        reg_init: vec![],
        threads: bodies
            .into_iter()
            .enumerate()
            .map(|(id, body)| Thread {
                id,
                place: Placement {
                    warp: None,
                    cta: id as u32,
                    cluster: None,
                    gpu: 0,
                },
                body,
            })
            .collect(),
        extra_observed: vec![],
        condition: Condition {
            quantifier: Quantifier::Exists,
            prop,
        },
    }
}

/// SB: `x=1; r0=y || y=1; r1=x`, weak outcome r0=r1=0.
fn sb(sem_st: StoreSem, sem_ld: LoadSem, fenced: bool) -> Test {
    let mut p0 = vec![st(sem_st, "x", 1), ld(sem_ld, "r0", "y")];
    let mut p1 = vec![st(sem_st, "y", 1), ld(sem_ld, "r1", "x")];
    if fenced {
        p0.insert(1, fence_sc());
        p1.insert(1, fence_sc());
    }
    test(
        "SB",
        &["x", "y"],
        vec![p0, p1],
        Prop::And(Box::new(eq(0, "r0", 0)), Box::new(eq(1, "r1", 0))),
    )
}

fn run(t: &Test, budget: Budget, options: &[(&str, &str)]) -> Result<TestRun, RunError> {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut params = RunParams::new(budget, 42);
    let map = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    params.options = Options::parse(Backend::Cpu, &map).map_err(RunError::Failed)?;
    let cancel = AtomicBool::new(false);
    let mut ticks = 0;
    cpu::run(
        t,
        &params,
        Control {
            cancel: &cancel,
            progress: &mut |_| ticks += 1,
        },
    )
}

fn count(r: &TestRun, values: &[Value]) -> u64 {
    r.histogram
        .counts
        .get(&Outcome(values.to_vec()))
        .copied()
        .unwrap_or(0)
}

#[test]
fn counts_add_up_to_the_instances_run() {
    let t = sb(StoreSem::Relaxed, LoadSem::Relaxed, false);
    let r = run(&t, Budget::Instances(10_007), &[("batch", "1000")]).unwrap();
    assert_eq!(r.info.instances, 10_007);
    assert_eq!(r.histogram.total() + r.info.skipped, 10_007);
    assert_eq!(r.histogram.unexpected, 0);
    assert!(!r.info.partial);
    assert_eq!(r.info.backend, "cpu");
    assert!(r.info.provenance.contains_key("cpu"));
    // Every observed SB outcome has registers in {0, 1}.
    for o in r.histogram.counts.keys() {
        assert!(o.0.iter().all(|v| *v == 0 || *v == 1), "{o:?}");
    }
}

#[test]
fn sb_relaxed_shows_store_buffering() {
    let t = sb(StoreSem::Relaxed, LoadSem::Relaxed, false);
    assert_eq!(observables(&t).len(), 2);
    let mut weak = 0;
    // Up to ~10 s on a loaded machine; usually the first run suffices.
    for _ in 0..20 {
        let r = run(&t, Budget::Seconds(0.5), &[]).unwrap();
        weak += count(&r, &[0, 0]);
        if weak > 0 {
            break;
        }
    }
    assert!(weak > 0, "SB's weak outcome never showed");
}

#[test]
fn sb_with_fence_sc_never_shows_the_weak_outcome() {
    let t = sb(StoreSem::Relaxed, LoadSem::Relaxed, true);
    let r = run(&t, Budget::Seconds(1.0), &[]).unwrap();
    assert!(r.histogram.total() > 1000);
    assert_eq!(count(&r, &[0, 0]), 0);
}

#[test]
fn mp_release_acquire_never_shows_the_forbidden_outcome() {
    let t = test(
        "MP+rel+acq",
        &["x", "y"],
        vec![
            vec![st(StoreSem::Weak, "x", 1), st(StoreSem::Release, "y", 1)],
            vec![
                ld(LoadSem::Acquire, "r0", "y"),
                ld(LoadSem::Weak, "r1", "x"),
            ],
        ],
        Prop::And(Box::new(eq(1, "r0", 1)), Box::new(eq(1, "r1", 0))),
    );
    for pack in ["false", "true"] {
        let r = run(&t, Budget::Seconds(0.5), &[("pack", pack)]).unwrap();
        assert!(r.histogram.total() > 1000);
        assert_eq!(count(&r, &[1, 0]), 0, "pack={pack}");
    }
}

#[test]
fn cas_and_barriers_run_and_synchronise() {
    // Two threads of one CTA: each stores, meets at bar.cta.sync 0, then reads the other's
    // location, so both must see 1; a CAS on z lets exactly one of them win.
    let bar = Instr::Barrier(Barrier::Cta {
        op: BarOp::Sync,
        id: Operand::Imm(0),
        count: None,
        quorum: None,
    });
    let cas = |r: &str| Instr::Atom {
        sem: RmwSem::Relaxed,
        scope: Some(Scope::Gpu),
        op: AtomOp::Cas,
        dst: reg(r),
        addr: at("z"),
        src: Operand::Imm(0),
        src2: Some(Operand::Imm(1)),
    };
    let mut t = test(
        "SB+bar+cas",
        &["x", "y", "z"],
        vec![
            vec![
                st(StoreSem::Weak, "x", 1),
                cas("r2"),
                bar.clone(),
                ld(LoadSem::Weak, "r0", "y"),
            ],
            vec![
                st(StoreSem::Weak, "y", 1),
                cas("r3"),
                bar,
                ld(LoadSem::Weak, "r1", "x"),
            ],
        ],
        Prop::And(Box::new(eq(0, "r0", 0)), Box::new(eq(1, "r1", 0))),
    );
    for th in &mut t.threads {
        th.place.cta = 0;
    }
    t.extra_observed = vec![
        Term::Reg {
            thread: 0,
            reg: reg("r2"),
        },
        Term::Reg {
            thread: 1,
            reg: reg("r3"),
        },
        Term::Loc("z".into()),
    ];
    let r = run(&t, Budget::Instances(20_000), &[]).unwrap();
    assert_eq!(r.histogram.total() + r.info.skipped, 20_000);
    assert!(r.histogram.total() > 0);
    // Observables: P0:r0, P0:r2, P1:r1, P1:r3, z.
    for o in r.histogram.counts.keys() {
        let [r0, r2, r1, r3, z] = o.0[..] else {
            panic!("{o:?}")
        };
        assert_eq!((r0, r1), (1, 1), "barrier did not order: {o:?}");
        assert_eq!(r2 + r3, 1, "both or neither CAS won: {o:?}");
        assert_eq!(z, 1);
    }
}

#[test]
fn refuses_what_it_cannot_run_faithfully() {
    let mut t = sb(StoreSem::Relaxed, LoadSem::Relaxed, false);
    t.threads[0].body[1] = Instr::Load {
        sem: LoadSem::Weak,
        scope: None,
        proxy: Proxy::Texture,
        dst: reg("r0"),
        addr: at("y"),
    };
    // A texture load runs as a generic one: SB's outcomes stay allowed with it.
    let r = run(&t, Budget::Instances(10), &[]).unwrap();
    assert_eq!(r.histogram.total() + r.info.skipped, 10);
    let mut t = sb(StoreSem::Relaxed, LoadSem::Relaxed, false);
    let body = &mut t.threads[0].body;
    body.insert(0, Instr::Label(Label("L".into())));
    body.push(Instr::Barrier(Barrier::Cta {
        op: BarOp::Sync,
        id: Operand::Imm(1),
        count: None,
        quorum: None,
    }));
    body.push(Instr::Branch {
        cond: Some(BranchCond {
            op: CmpOp::Eq,
            a: Operand::Reg(reg("r0")),
            b: Operand::Imm(7),
        }),
        target: Label("L".into()),
    });
    match run(&t, Budget::Instances(10), &[]) {
        Err(RunError::Unsupported(why)) => assert!(why.contains("loop"), "{why}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    let t = sb(StoreSem::Relaxed, LoadSem::Relaxed, false);
    match run(&t, Budget::Instances(10), &[("bogus", "1")]) {
        Err(RunError::Failed(why)) => assert!(why.contains("bogus")),
        other => panic!("expected an option error, got {other:?}"),
    }
}

#[test]
fn cancel_stops_early_and_marks_the_run_partial() {
    let t = sb(StoreSem::Relaxed, LoadSem::Relaxed, false);
    let cancel = AtomicBool::new(true);
    let r = cpu::run(
        &t,
        &RunParams::new(Budget::Seconds(60.0), 1),
        Control {
            cancel: &cancel,
            progress: &mut |_| {},
        },
    )
    .unwrap();
    assert!(r.info.partial);
    assert!(r.info.elapsed_s < 30.0);
    assert_eq!(r.histogram.total() + r.info.skipped, r.info.instances);
}
