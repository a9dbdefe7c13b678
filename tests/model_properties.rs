//! Properties of the checker on small random tests from a deterministic generator: every SC
//! outcome is allowed; strengthening an access or adding a fence never enlarges the allowed
//! set; checking is deterministic. The two SC oracles (interleavings, axiomatic) also agree
//! on every test with CTA barriers of `litmus/` and the corpus, and on random barrier tests;
//! random tests with spin waits keep every SC outcome allowed, and where a fair SC
//! interleaving of one never ends the checker names a loop that may spin for ever.

mod common;

use ptx_litmus::gen::random::{test_text, Stream};
use ptx_litmus::litmus::{self, ast::*};
use ptx_litmus::model::{check, sc_outcomes, sc_outcomes_axiomatic, sc_spins_for_ever};
use ptx_litmus::rng::Rng;

const LOCS: [&str; 2] = ["x", "y"];
const SCOPES: [Scope; 3] = [Scope::Cta, Scope::Gpu, Scope::Sys];

fn addr(l: &str) -> Addr {
    Addr {
        loc: l.into(),
        offset: None,
    }
}

fn random_instr(rng: &mut Rng, next_reg: &mut usize, value: &mut Value) -> Instr {
    let loc = rng.pick(&LOCS);
    let scope = Some(rng.pick(&SCOPES));
    match rng.below(10) {
        0..=2 => {
            let dst = Reg(format!("r{next_reg}"));
            *next_reg += 1;
            Instr::Load {
                sem: rng.pick(&[LoadSem::Weak, LoadSem::Relaxed, LoadSem::Acquire]),
                scope,
                proxy: Proxy::Generic,
                dst,
                addr: addr(loc),
            }
        }
        3..=5 => {
            *value += 1;
            Instr::Store {
                sem: rng.pick(&[StoreSem::Weak, StoreSem::Relaxed, StoreSem::Release]),
                scope,
                proxy: Proxy::Generic,
                addr: addr(loc),
                src: Operand::Imm(*value),
            }
        }
        6 | 7 => {
            let dst = Reg(format!("r{next_reg}"));
            *next_reg += 1;
            *value += 1;
            let op = rng.pick(&[AtomOp::Add, AtomOp::Exch, AtomOp::Cas]);
            Instr::Atom {
                sem: rng.pick(&[
                    RmwSem::Relaxed,
                    RmwSem::Acquire,
                    RmwSem::Release,
                    RmwSem::AcqRel,
                ]),
                scope,
                op,
                dst,
                addr: addr(loc),
                src: Operand::Imm(if op == AtomOp::Cas { 0 } else { *value }),
                src2: (op == AtomOp::Cas).then_some(Operand::Imm(*value)),
            }
        }
        _ => Instr::Fence(Fence::Memory {
            sem: rng.pick(&[
                FenceSem::Sc,
                FenceSem::AcqRel,
                FenceSem::Acquire,
                FenceSem::Release,
            ]),
            scope: rng.pick(&SCOPES),
        }),
    }
}

fn random_test(seed: u64) -> Test {
    let mut rng = Rng::new(seed);
    let nthreads = 2 + rng.below(2);
    let mut value = 0;
    let mut threads = Vec::new();
    let mut regs = Vec::new();
    for t in 0..nthreads {
        let mut next_reg = 0;
        let len = 1 + rng.below(3);
        let body = (0..len)
            .map(|_| random_instr(&mut rng, &mut next_reg, &mut value))
            .collect();
        for r in 0..next_reg {
            regs.push((t, format!("r{r}")));
        }
        threads.push(Thread {
            id: t,
            place: Placement {
                warp: None,
                cta: rng.below(2) as u32,
                cluster: None,
                gpu: 0,
            },
            body,
        });
    }
    // Observe every register and every final memory value.
    let mut prop = Prop::True;
    let mut add = |term: Term| {
        let c = Prop::Cmp {
            lhs: term.clone(),
            op: CmpOp::Eq,
            rhs: term,
        };
        prop = Prop::And(Box::new(prop.clone()), Box::new(c));
    };
    for (t, r) in &regs {
        add(Term::Reg {
            thread: *t,
            reg: Reg(r.clone()),
        });
    }
    for l in LOCS {
        add(Term::Loc(l.into()));
    }
    Test {
        name: format!("random-{seed}"),
        doc: vec![],
        locations: LOCS
            .iter()
            .map(|l| Location {
                name: (*l).into(),
                kind: LocationKind::Memory {
                    init: 0,
                    space: Space::Global,
                },
            })
            .collect(),
        reg_init: vec![],
        threads,
        extra_observed: vec![],
        condition: Condition {
            quantifier: Quantifier::Exists,
            prop,
        },
    }
}

/// The test with one access made stronger (weak -> relaxed -> acquire/release, or a wider
/// scope), or `None` when the chosen instruction cannot be strengthened.
fn strengthen(test: &Test, rng: &mut Rng) -> Option<Test> {
    let mut t = test.clone();
    let th = rng.below(t.threads.len());
    let i = rng.below(t.threads[th].body.len());
    let wider = |s: Option<Scope>| match s {
        Some(Scope::Cta) => Some(Scope::Gpu),
        Some(Scope::Gpu) => Some(Scope::Sys),
        _ => None,
    };
    match &mut t.threads[th].body[i] {
        Instr::Load { sem, scope, .. } => match *sem {
            LoadSem::Weak => *sem = LoadSem::Relaxed,
            LoadSem::Relaxed => *sem = LoadSem::Acquire,
            _ => *scope = Some(wider(*scope)?),
        },
        Instr::Store { sem, scope, .. } => match *sem {
            StoreSem::Weak => *sem = StoreSem::Relaxed,
            StoreSem::Relaxed => *sem = StoreSem::Release,
            _ => *scope = Some(wider(*scope)?),
        },
        Instr::Atom { sem, scope, .. } => match *sem {
            RmwSem::Relaxed | RmwSem::Acquire | RmwSem::Release => *sem = RmwSem::AcqRel,
            _ => *scope = Some(wider(*scope)?),
        },
        Instr::Fence(Fence::Memory { sem, scope }) => match *sem {
            FenceSem::Acquire | FenceSem::Release => *sem = FenceSem::AcqRel,
            FenceSem::AcqRel => *sem = FenceSem::Sc,
            FenceSem::Sc => *scope = wider(Some(*scope))?,
        },
        _ => return None,
    }
    Some(t)
}

const CASES: u64 = 150;

#[test]
fn every_sc_outcome_is_allowed() {
    for seed in 0..CASES {
        let t = random_test(seed);
        let v = check(&t).unwrap_or_else(|e| panic!("{}: {e}", t.name));
        let sc = sc_outcomes(&t).expect("SC enumeration");
        assert!(!sc.is_empty(), "{}: no SC outcome", t.name);
        for o in &sc {
            assert!(
                v.allowed.contains(o),
                "{}: SC outcome {} is not PTX-allowed\n{t:#?}",
                t.name,
                o.display(&v.observables)
            );
        }
        assert_eq!(v.sc, sc, "{}: the SC label must be the SC outcomes", t.name);
    }
}

/// Random tests with spin waits checked (fast: each has a few paths).
const SPIN_CASES: u64 = 3000;

/// `random_test(seed)` with, in about half the threads, a spin wait put at a random place:
/// `L: ld rS, loc; beq rS, 0, L` on a random location (every write writes a value above 0, so
/// any write ends a wait; a wait no write can end leaves no outcome).
fn random_spin_test(seed: u64) -> Test {
    let mut t = random_test(seed);
    t.name = format!("random-spin-{seed}");
    let mut rng = Rng::new(seed ^ 0x5eed_5917);
    for th in &mut t.threads {
        if rng.below(2) == 0 {
            continue;
        }
        let label = Label(format!("L{}", th.id));
        let reg = Reg("rs".into());
        let spin = [
            Instr::Label(label.clone()),
            Instr::Load {
                sem: rng.pick(&[LoadSem::Relaxed, LoadSem::Acquire]),
                scope: Some(Scope::Gpu),
                proxy: Proxy::Generic,
                dst: reg.clone(),
                addr: addr(rng.pick(&LOCS)),
            },
            Instr::Branch {
                cond: Some(BranchCond {
                    op: CmpOp::Eq,
                    a: Operand::Reg(reg),
                    b: Operand::Imm(0),
                }),
                target: label,
            },
        ];
        let at = rng.below(th.body.len() + 1);
        th.body.splice(at..at, spin);
    }
    t
}

/// Spin waits, whose iterations the model cuts: every outcome of an SC interleaving is
/// allowed, and the outcomes labelled SC (found from the model's traces) are exactly those;
/// and where a fair SC interleaving never ends, the checker names a loop that may spin for
/// ever (an SC execution is a consistent one, and its spinning reads see the last writes).
#[test]
fn every_sc_outcome_of_a_test_with_spin_waits_is_allowed() {
    let (mut waiting, mut stuck) = (0, 0);
    for seed in 0..SPIN_CASES {
        let t = random_spin_test(seed);
        // A few plain tests whose adds make millions of outcomes pass the checker's budgets.
        let v = match check(&t) {
            Err(ptx_litmus::model::ModelError::TooLarge { .. }) => continue,
            v => v.unwrap_or_else(|e| panic!("{}: {e}", t.name)),
        };
        let sc = sc_outcomes(&t).expect("SC enumeration");
        for o in &sc {
            assert!(
                v.allowed.contains(o),
                "{}: SC outcome {} is not PTX-allowed\n{}",
                t.name,
                o.display(&v.observables),
                litmus::print(&t)
            );
        }
        assert_eq!(v.sc, sc, "{}: SC labels\n{}", t.name, litmus::print(&t));
        if sc_spins_for_ever(&t).expect("SC exploration") {
            stuck += 1;
            assert!(
                v.hangs
                    .iter()
                    .any(|h| h.contains(" may spin for ever in the loop back to ")),
                "{}: an SC interleaving spins for ever, the checker says {:?}\n{}",
                t.name,
                v.hangs,
                litmus::print(&t)
            );
        }
        let mut body = t.threads.iter().flat_map(|th| &th.body);
        let spins = body.any(|i| matches!(i, Instr::Label(_)));
        waiting += usize::from(spins && !sc.is_empty());
    }
    // Enough of the tests wait and still finish for the property to say something.
    assert!(
        waiting > CASES as usize / 4,
        "{waiting} tests wait and finish"
    );
    assert!(
        stuck > 100,
        "only {stuck} tests have an SC interleaving that spins for ever"
    );
    eprintln!(
        "{waiting} tests wait and finish; {stuck} have an SC interleaving that spins for ever"
    );
}

#[test]
fn strengthening_an_access_never_enlarges_the_allowed_set() {
    let mut rng = Rng::new(7);
    let mut compared = 0;
    for seed in 0..CASES {
        let t = random_test(seed);
        let Some(s) = strengthen(&t, &mut rng) else {
            continue;
        };
        let weak = check(&t).expect("weaker test checks").allowed;
        let strong = check(&s).expect("stronger test checks").allowed;
        assert!(
            strong.is_subset(&weak),
            "{}: strengthening allowed new outcomes {:?}",
            t.name,
            strong.difference(&weak).collect::<Vec<_>>()
        );
        compared += 1;
    }
    assert!(compared > CASES / 2, "only {compared} tests strengthened");
}

#[test]
fn adding_a_fence_never_enlarges_the_allowed_set() {
    let mut rng = Rng::new(11);
    for seed in 0..CASES {
        let t = random_test(seed);
        let mut f = t.clone();
        let th = rng.below(f.threads.len());
        let at = rng.below(f.threads[th].body.len() + 1);
        let sem = rng.pick(&[
            FenceSem::Sc,
            FenceSem::AcqRel,
            FenceSem::Acquire,
            FenceSem::Release,
        ]);
        f.threads[th].body.insert(
            at,
            Instr::Fence(Fence::Memory {
                sem,
                scope: rng.pick(&SCOPES),
            }),
        );
        let before = check(&t).expect("test checks").allowed;
        let after = check(&f).expect("fenced test checks").allowed;
        assert!(
            after.is_subset(&before),
            "{}: a fence allowed new outcomes {:?}",
            t.name,
            after.difference(&before).collect::<Vec<_>>()
        );
    }
}

#[test]
fn interleavings_and_the_axiomatic_sc_check_agree() {
    for seed in 0..CASES {
        let t = random_test(seed);
        let a = sc_outcomes(&t).expect("interleavings");
        let b = sc_outcomes_axiomatic(&t).expect("axiomatic SC");
        assert_eq!(a, b, "{}: SC outcome sets differ\n{t:#?}", t.name);
    }
}

/// Whether `t` has a barrier, and whether one of them is a cluster barrier.
fn barriers(t: &Test) -> (bool, bool) {
    let bars: Vec<&Barrier> = t
        .threads
        .iter()
        .flat_map(|th| &th.body)
        .filter_map(|i| match i {
            Instr::Barrier(b) => Some(b),
            _ => None,
        })
        .collect();
    let cluster = bars.iter().any(|b| !matches!(b, Barrier::Cta { .. }));
    (!bars.is_empty(), cluster)
}

/// Both SC oracles on `t`; `false` when the interleavings pass their state budget.
fn sc_oracles_agree_on(t: &Test) -> bool {
    let a = match sc_outcomes(t) {
        Ok(a) => a,
        Err(ptx_litmus::model::ModelError::TooLarge { .. }) => return false,
        Err(e) => panic!("{}: interleavings: {e}", t.name),
    };
    let b = sc_outcomes_axiomatic(t).expect("axiomatic SC");
    assert_eq!(a, b, "{}: SC outcome sets differ", t.name);
    true
}

/// The oracle property on the suite: every outcome of an SC interleaving of a test of
/// `litmus/` or the corpus is one the model allows (a barrier that hangs in the model hangs
/// in the interleavings too).
#[test]
fn every_sc_outcome_of_the_suite_is_allowed() {
    let mut compared = 0;
    for (p, t, _) in common::all_tests() {
        let Ok(sc) = sc_outcomes(&t) else {
            continue;
        };
        let allowed = check(&t).expect("checks").allowed;
        let extra: Vec<_> = sc.difference(&allowed).collect();
        assert!(
            extra.is_empty(),
            "{}: SC but not allowed: {extra:?}",
            p.display()
        );
        compared += 1;
    }
    assert!(compared >= 200, "only {compared} tests compared");
}

#[test]
fn both_sc_oracles_agree_on_tests_with_cta_barriers() {
    let mut compared = 0;
    for (p, t, _) in common::all_tests() {
        let (any, cluster) = barriers(&t);
        if any && !cluster {
            assert!(sc_oracles_agree_on(&t), "{}: too large", p.display());
            compared += 1;
        }
    }
    assert!(compared >= 40, "only {compared} tests with CTA barriers");
    let mut random = 0;
    for i in 0..120 {
        let text = test_text(5, i, Stream::Barriers);
        let t = litmus::parse(&text, std::path::Path::new("random.litmus")).expect("parses");
        random += usize::from(sc_oracles_agree_on(&t));
    }
    assert!(
        random >= 100,
        "only {random} of 120 random barrier tests compared"
    );
}

#[test]
fn check_is_deterministic() {
    for seed in 0..40 {
        let t = random_test(seed);
        assert_eq!(check(&t), check(&t), "{}", t.name);
    }
}

#[test]
fn the_generator_makes_weak_behaviour_appear() {
    // Guards the other properties against a generator that only makes trivial tests.
    let weak = (0..CASES)
        .filter(|&s| {
            let v = check(&random_test(s)).expect("checks");
            v.allowed.len() > v.sc.len()
        })
        .count();
    assert!(weak > 10, "only {weak} random tests show weak outcomes");
}
