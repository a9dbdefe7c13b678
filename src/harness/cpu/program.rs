//! Compiles a test to flat per-role programs over numbered registers and word offsets, so that
//! the hot loop never looks at the AST, allocates or hashes. Everything the CPU cannot run
//! faithfully is refused here with a reason, never approximated.

pub use super::barrier_plan::Candidate;
use super::barrier_plan::{cluster_barriers, cta_barriers, BarPlan};
use super::layout::Layout;
use super::resolve;
use crate::litmus::ast::{
    Addr, AluOp, AtomOp, BarRedOp, Barrier, CmpOp, Fence, FenceSem, Instr, LoadSem, LocationKind,
    Operand, Proxy, Reg, RmwSem, Spelled, StoreSem, Test, Thread, Value,
};
use crate::outcome::{observables, Observable};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

/// Registers one role may use (the interpreter keeps them in a fixed array).
pub const MAX_REGS: usize = 32;
/// Words per barrier slot in an instance: state, id, count, `bar.red` vote (see [`Bar`]).
pub const SLOT_WORDS: usize = 4;
/// Instructions executed by one role in one instance before the instance is given up (only a
/// backward branch can get there).
pub const MAX_STEPS: u32 = 4096;

/// A source operand with its register resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// An immediate.
    Imm(Value),
    /// A register index.
    Reg(u8),
}

/// One instruction of a compiled role; addresses are word offsets inside an instance block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `dst <- mem[addr]`, `dep` must hold 0 (an address dependency).
    Load {
        /// Destination register.
        dst: u8,
        /// Word offset of the location.
        addr: u32,
        /// Register added to the address (must be 0).
        dep: Option<u8>,
        /// Ordering of the Rust atomic load.
        ord: Ordering,
    },
    /// `mem[addr] <- src`.
    Store {
        /// Word offset of the location.
        addr: u32,
        /// Register added to the address (must be 0).
        dep: Option<u8>,
        /// Value stored.
        src: Src,
        /// Ordering of the Rust atomic store.
        ord: Ordering,
    },
    /// An atomic read-modify-write; `dst` receives the old value (`None` for `red`).
    Rmw {
        /// The operation.
        op: AtomOp,
        /// Destination register.
        dst: Option<u8>,
        /// Word offset of the location.
        addr: u32,
        /// Register added to the address (must be 0).
        dep: Option<u8>,
        /// Operand (compared value for `cas`).
        a: Src,
        /// Stored value for `cas`.
        b: Src,
        /// Ordering of the Rust atomic operation.
        ord: Ordering,
    },
    /// `std::sync::atomic::fence(ord)`.
    Fence(Ordering),
    /// `dst <- src`.
    Mov {
        /// Destination.
        dst: u8,
        /// Source.
        src: Src,
    },
    /// `dst <- a op b`.
    Alu {
        /// Operation.
        op: AluOp,
        /// Destination.
        dst: u8,
        /// First operand.
        a: Src,
        /// Second operand.
        b: Src,
    },
    /// Jump to `target` when `a op b` holds (always when `cond` is `None`).
    Branch {
        /// The comparison, if conditional.
        cond: Option<(CmpOp, Src, Src)>,
        /// Index of the next instruction when taken.
        target: u32,
    },
    /// A barrier instruction, run out of line (one arm for all kinds keeps the interpreter
    /// loop as small as it is for tests without barriers).
    Bar(BarStep),
}

/// What a barrier instruction ([`Op::Bar`]) does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarStep {
    /// A CTA barrier instruction: the `index`-th of [`Role::bars`].
    Cta(u16),
    /// `barrier.cluster.arrive`: the role's next arrival, published in its slot of
    /// [`Role::arrive_slots`] (a release store unless `.relaxed`).
    ClusterArrive {
        /// Whether the arrival releases (not `.relaxed`).
        release: bool,
    },
    /// `barrier.cluster.wait`: the role's `k`-th wait waits (acquire) for the `k`-th arrival
    /// of every other role of its cluster that has one ([`Role::wait_slots`]).
    ClusterWait,
}

/// A CTA barrier instruction (`bar.cta.sync`, `bar.cta.arrive` or `bar.cta.red`) of a role.
///
/// Two CTA barrier events of different threads of one CTA synchronise (the model's
/// `bar_sync`) when their id values, count values (or both no count) and occurrence numbers
/// are equal and the later one in the relation waits (`sync`); an arrive only releases. At run
/// time each instruction that some `sync` may meet publishes, in its instance's `slot`, whether
/// it ran and with which key and occurrence; a `sync` waits for the publications of every
/// instruction that may take its key (`partners`). Roles execute their barrier instructions in
/// program order, each at most once (a barrier inside a loop is refused).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bar {
    /// The barrier id.
    pub id: Src,
    /// The thread count (Dat3M's resource), when given.
    pub count: Option<Src>,
    /// The quorum (Dat3M's third operand), when given: a `sync` with one waits only until
    /// that many threads, itself included, have met at its key and occurrence.
    pub quorum: Option<Src>,
    /// `bar.cta.sync` or `bar.cta.red` (waits for its partners) rather than `bar.cta.arrive`.
    pub waits: bool,
    /// For `bar.cta.red`: what it reduces, and where.
    pub red: Option<Red>,
    /// The slot this instruction publishes into, when some `sync` may meet it.
    pub slot: Option<u32>,
    /// For a `sync`: per other role of the CTA that may meet it, that role's barrier
    /// instructions that may take the same key, in program order.
    pub partners: Vec<Vec<Candidate>>,
}

/// The reduction of a `bar.cta.red`: `dst` receives `op` over the predicates of the `bar.cta.red`
/// events that meet it (its own included), as the model computes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Red {
    /// The reduction.
    pub op: BarRedOp,
    /// Destination register.
    pub dst: u8,
    /// The predicate (non-zero is true).
    pub pred: Src,
}

/// One role (test thread) ready to interpret.
#[derive(Clone, Debug)]
pub struct Role {
    /// Instructions in program order, labels removed.
    pub ops: Vec<Op>,
    /// Register values at the start of every instance.
    pub init: [Value; MAX_REGS],
    /// Registers whose final values are observed, in the order they are stored per instance.
    pub observed: Vec<u8>,
    /// The CTA barrier instructions, in program order ([`BarStep::Cta`] indexes them).
    pub bars: Vec<Bar>,
    /// Per cluster-barrier arrival `k` of the role (its `k`-th [`BarStep::ClusterArrive`] at run
    /// time), the slot it publishes into; only arrivals some other role may wait for.
    pub arrive_slots: Vec<u32>,
    /// Per cluster-barrier wait `k` of the role, the slots of the `k`-th arrivals of the other
    /// roles of its cluster.
    pub wait_slots: Vec<Vec<u32>>,
}

/// Where one observable's value comes from after a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The `index`-th observed register of role `role`.
    Reg {
        /// Role.
        role: usize,
        /// Index into that role's `observed`.
        index: usize,
    },
    /// The final value at a word offset of the instance block.
    Mem(u32),
}

/// A test compiled for the CPU backend.
#[derive(Clone, Debug)]
pub struct Program {
    /// One program per test thread.
    pub roles: Vec<Role>,
    /// Where each observable (in the order of [`observables`]) is read from.
    pub sources: Vec<Source>,
    /// Initial value per word offset of the instance block (unused words are 0).
    pub init_words: Vec<(u32, Value)>,
    /// Barrier slots per instance (each [`SLOT_WORDS`] words; 0 when no `sync` may meet
    /// another role's barrier and no cluster wait may wait for another role's arrival).
    pub barrier_slots: usize,
}

/// Compiles `test` for memory laid out by `layout`, or says why the CPU cannot run it. A test
/// with aliases or proxies runs as its resolved form when that is sound (see [`resolve`]);
/// its outcomes keep the observables of `test`.
pub fn compile(test: &Test, layout: &Layout) -> Result<Program, String> {
    let original = test;
    let resolved;
    let test = if resolve::needed(test) {
        resolved = resolve::resolve_soundly(test)?;
        &resolved
    } else {
        test
    };
    let locs = memory_locations(test)?;
    let addr_of = |name: &str| -> Result<u32, String> {
        locs.get(name)
            .map(|&i| layout.word(i))
            .ok_or_else(|| format!("location `{name}` is not declared"))
    };
    let mut init_words = Vec::new();
    for l in &test.locations {
        if let LocationKind::Memory { init, .. } = l.kind {
            init_words.push((addr_of(&l.name)?, init));
        }
    }

    let (mut bar_plans, cta_slots) = cta_barriers(test, &cta_indices(test))?;
    let (mut arrive_slots, mut wait_slots, barrier_slots) = cluster_barriers(test, cta_slots);

    let mut regs: Vec<RegMap> = test.threads.iter().map(|_| RegMap::default()).collect();
    let mut roles = Vec::with_capacity(test.threads.len());
    for t in &test.threads {
        let mut role = compile_role(t, test, &mut regs[t.id], &addr_of, &mut bar_plans[t.id])?;
        role.arrive_slots = std::mem::take(&mut arrive_slots[t.id]);
        role.wait_slots = std::mem::take(&mut wait_slots[t.id]);
        roles.push(role);
    }
    let mut sources = Vec::new();
    for o in &observables(original) {
        sources.push(match o {
            Observable::Reg { thread, reg } => observe(&mut roles, &mut regs, *thread, reg)?,
            Observable::Loc(name) => Source::Mem(addr_of(
                original
                    .resolve(name)
                    .ok_or_else(|| format!("location `{name}` names no memory"))?,
            )?),
        });
    }
    Ok(Program {
        roles,
        sources,
        init_words,
        barrier_slots,
    })
}

/// Thread `t`'s role: its instructions, its CTA barriers (taken from `bars`) with their
/// operands resolved, and its registers' initial values; no observed registers or cluster
/// barrier slots yet.
fn compile_role(
    t: &Thread,
    test: &Test,
    map: &mut RegMap,
    addr_of: &dyn Fn(&str) -> Result<u32, String>,
    bars: &mut Vec<BarPlan>,
) -> Result<Role, String> {
    let (labels, n) = labels_of(&t.body);
    let mut ops = Vec::with_capacity(n as usize);
    let mut next_bar = 0u16;
    for i in &t.body {
        if let Some(op) = compile_instr(i, map, addr_of, &labels, &mut next_bar)? {
            ops.push(op);
        }
    }
    refuse_barriers_in_loops(&ops)?;
    let bars = std::mem::take(bars)
        .into_iter()
        .map(|b| compile_bar(b, map))
        .collect::<Result<Vec<Bar>, String>>()?;
    let mut init = [0; MAX_REGS];
    for ri in test.reg_init.iter().filter(|r| r.thread == t.id) {
        init[map.index(&ri.reg)? as usize] = ri.value;
    }
    Ok(Role {
        ops,
        init,
        observed: Vec::new(),
        bars,
        arrive_slots: Vec::new(),
        wait_slots: Vec::new(),
    })
}

/// Each thread's CTA, numbered in order of first appearance (barriers are per CTA).
fn cta_indices(test: &Test) -> Vec<usize> {
    let mut ctas: Vec<usize> = Vec::new();
    let mut index = |t: &crate::litmus::ast::Thread| {
        let same = |&c: &usize| test.threads[c].place.same_cta(&t.place);
        ctas.iter().position(same).unwrap_or_else(|| {
            ctas.push(t.id);
            ctas.len() - 1
        })
    };
    test.threads.iter().map(&mut index).collect()
}

/// The instruction index of each label of `body`, and how many instructions it has.
fn labels_of(body: &[Instr]) -> (BTreeMap<String, u32>, u32) {
    let mut labels = BTreeMap::new();
    let mut n = 0u32;
    for i in body {
        match i {
            Instr::Label(l) => {
                labels.insert(l.0.clone(), n);
            }
            _ => n += 1,
        }
    }
    (labels, n)
}

/// The source of a register the condition reads: the role keeps it among its observed
/// registers. Registers referenced only by the condition were never written: they keep their
/// initial value, which the role's `init` already holds.
fn observe(
    roles: &mut [Role],
    regs: &mut [RegMap],
    thread: usize,
    reg: &Reg,
) -> Result<Source, String> {
    let role = roles
        .get_mut(thread)
        .ok_or_else(|| format!("the condition names thread P{thread}, not in the test"))?;
    role.observed.push(regs[thread].index(reg)?);
    Ok(Source::Reg {
        role: thread,
        index: role.observed.len() - 1,
    })
}

/// Memory locations by name, numbered in declaration order (aliases are resolved before).
fn memory_locations(test: &Test) -> Result<BTreeMap<String, usize>, String> {
    let mut out = BTreeMap::new();
    for l in &test.locations {
        match &l.kind {
            LocationKind::Memory { .. } => {
                let n = out.len();
                out.insert(l.name.clone(), n);
            }
            LocationKind::Alias { proxy, target } => {
                return Err(format!(
                    "location `{}` is a {} alias of `{target}`: the CPU has one address per \
                     location and no proxies, so aliasing cannot be reproduced",
                    l.name,
                    proxy.as_str()
                ))
            }
        }
    }
    Ok(out)
}

/// The barrier `b` as the interpreter runs it, its operands resolved in `map`.
fn compile_bar(b: BarPlan, map: &mut RegMap) -> Result<Bar, String> {
    let red = match &b.red {
        Some((op, dst, pred)) => Some(Red {
            op: *op,
            dst: map.index(dst)?,
            pred: map.src(pred)?,
        }),
        None => None,
    };
    Ok(Bar {
        id: map.src(&b.id)?,
        count: b.count.as_ref().map(|c| map.src(c)).transpose()?,
        quorum: b.quorum.as_ref().map(|q| map.src(q)).transpose()?,
        waits: b.waits,
        red,
        slot: b.slot,
        partners: b.partners,
    })
}

#[derive(Default)]
struct RegMap {
    names: Vec<Reg>,
}

impl RegMap {
    fn index(&mut self, r: &Reg) -> Result<u8, String> {
        if let Some(i) = self.names.iter().position(|n| n == r) {
            return Ok(i as u8);
        }
        if self.names.len() == MAX_REGS {
            return Err(format!("more than {MAX_REGS} registers in one thread"));
        }
        self.names.push(r.clone());
        Ok((self.names.len() - 1) as u8)
    }

    fn src(&mut self, o: &Operand) -> Result<Src, String> {
        Ok(match o {
            Operand::Imm(v) => Src::Imm(*v),
            Operand::Reg(r) => Src::Reg(self.index(r)?),
        })
    }

    /// The register an address depends on (its offset), if it names one.
    fn dep(&mut self, addr: &Addr) -> Result<Option<u8>, String> {
        addr.offset.as_ref().map(|r| self.index(r)).transpose()
    }
}

/// The ordering of a fence on the CPU; a proxy fence is refused (the CPU has no proxies).
fn fence_ordering(f: &Fence) -> Result<Ordering, String> {
    Ok(match f {
        Fence::Memory { sem, .. } => match sem {
            FenceSem::Sc => Ordering::SeqCst,
            FenceSem::AcqRel => Ordering::AcqRel,
            FenceSem::Acquire => Ordering::Acquire,
            FenceSem::Release => Ordering::Release,
        },
        // On sm_70+ every membar is a fence.sc of the matching scope.
        Fence::Membar(_) => Ordering::SeqCst,
        Fence::Proxy(_) => {
            return Err(
                "proxy fences (fence.proxy.*) order proxies the CPU does not have; \
                 the test is not run rather than run without its point"
                    .into(),
            )
        }
    })
}

/// One instruction as the interpreter runs it (`None` for a label); `next_bar` counts the CTA
/// barrier instructions so far, in the order `cta_barriers` planned them.
fn compile_instr(
    i: &Instr,
    regs: &mut RegMap,
    addr_of: &dyn Fn(&str) -> Result<u32, String>,
    labels: &BTreeMap<String, u32>,
    next_bar: &mut u16,
) -> Result<Option<Op>, String> {
    Ok(Some(match i {
        Instr::Label(_) => return Ok(None),
        Instr::Load { .. } | Instr::Store { .. } => compile_load_store(i, regs, addr_of)?,
        Instr::Atom { .. } | Instr::Red { .. } => compile_rmw(i, regs, addr_of)?,
        Instr::Fence(f) => Op::Fence(fence_ordering(f)?),
        Instr::Barrier(Barrier::ClusterArrive { relaxed }) => {
            Op::Bar(BarStep::ClusterArrive { release: !relaxed })
        }
        Instr::Barrier(Barrier::ClusterWait) => Op::Bar(BarStep::ClusterWait),
        Instr::Barrier(Barrier::Cta { .. }) => {
            // `cta_barriers` has checked the barrier and planned it as this index.
            *next_bar += 1;
            Op::Bar(BarStep::Cta(*next_bar - 1))
        }
        Instr::Mov { dst, src } => Op::Mov {
            dst: regs.index(dst)?,
            src: regs.src(src)?,
        },
        Instr::Alu { op, dst, a, b } => Op::Alu {
            op: *op,
            dst: regs.index(dst)?,
            a: regs.src(a)?,
            b: regs.src(b)?,
        },
        Instr::Branch { cond, target } => Op::Branch {
            cond: match cond {
                None => None,
                Some(c) => Some((c.op, regs.src(&c.a)?, regs.src(&c.b)?)),
            },
            target: *labels
                .get(&target.0)
                .ok_or_else(|| format!("branch to missing label `{}`", target.0))?,
        },
    }))
}

/// A load or a store as a Rust atomic access of its ordering; one through a proxy other than
/// the generic one is refused.
fn compile_load_store(
    i: &Instr,
    regs: &mut RegMap,
    addr_of: &dyn Fn(&str) -> Result<u32, String>,
) -> Result<Op, String> {
    let generic = |p: Proxy, what: &str| {
        if p == Proxy::Generic {
            Ok(())
        } else {
            Err(format!(
                "{what} through the {} proxy: the CPU has no such proxy",
                p.as_str()
            ))
        }
    };
    Ok(match i {
        Instr::Load {
            sem,
            proxy,
            dst,
            addr,
            ..
        } => {
            generic(*proxy, "a load")?;
            let ord = match sem {
                LoadSem::Weak | LoadSem::Relaxed | LoadSem::Volatile => Ordering::Relaxed,
                LoadSem::Acquire => Ordering::Acquire,
            };
            Op::Load {
                dst: regs.index(dst)?,
                addr: addr_of(&addr.loc)?,
                dep: regs.dep(addr)?,
                ord,
            }
        }
        Instr::Store {
            sem,
            proxy,
            addr,
            src,
            ..
        } => {
            generic(*proxy, "a store")?;
            let ord = match sem {
                StoreSem::Weak | StoreSem::Relaxed | StoreSem::Volatile => Ordering::Relaxed,
                StoreSem::Release => Ordering::Release,
            };
            Op::Store {
                addr: addr_of(&addr.loc)?,
                dep: regs.dep(addr)?,
                src: regs.src(src)?,
                ord,
            }
        }
        other => unreachable!("not a load or a store: {other:?}"),
    })
}

/// An `atom` (its old value into `dst`) or a `red` (none) as a Rust read-modify-write.
fn compile_rmw(
    i: &Instr,
    regs: &mut RegMap,
    addr_of: &dyn Fn(&str) -> Result<u32, String>,
) -> Result<Op, String> {
    let (op, sem, dst, addr, src, b) = match i {
        Instr::Atom {
            sem,
            op,
            dst,
            addr,
            src,
            src2,
            ..
        } => {
            let b = match (op, src2) {
                (AtomOp::Cas, Some(b)) => regs.src(b)?,
                (AtomOp::Cas, None) => return Err("atom.cas without a value to store".into()),
                _ => Src::Imm(0),
            };
            (op, sem, Some(regs.index(dst)?), addr, src, b)
        }
        Instr::Red {
            sem, op, addr, src, ..
        } => {
            if *op == AtomOp::Cas {
                return Err("red.cas is not a PTX reduction".into());
            }
            (op, sem, None, addr, src, Src::Imm(0))
        }
        other => unreachable!("not a read-modify-write: {other:?}"),
    };
    Ok(Op::Rmw {
        op: *op,
        dst,
        addr: addr_of(&addr.loc)?,
        dep: regs.dep(addr)?,
        a: regs.src(src)?,
        b,
        ord: rmw_ordering(*sem),
    })
}

/// Refuses a barrier inside a loop: the run-time protocol gives each barrier instruction (each
/// cluster arrival) one slot per instance, so it may execute at most once.
fn refuse_barriers_in_loops(ops: &[Op]) -> Result<(), String> {
    for (pc, op) in ops.iter().enumerate() {
        if let Op::Branch { target, .. } = *op {
            let target = target as usize;
            for o in &ops[target.min(pc + 1)..=pc] {
                let what = match o {
                    Op::Bar(BarStep::Cta(_)) => "CTA",
                    Op::Bar(_) => "cluster",
                    _ => continue,
                };
                return Err(format!(
                    "a {what} barrier inside a loop (it could run more than once per instance) \
                     is not run on the CPU backend"
                ));
            }
        }
    }
    Ok(())
}

fn rmw_ordering(sem: RmwSem) -> Ordering {
    match sem {
        RmwSem::Relaxed => Ordering::Relaxed,
        RmwSem::Acquire => Ordering::Acquire,
        RmwSem::Release => Ordering::Release,
        RmwSem::AcqRel => Ordering::AcqRel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Compiles the test `text` for the unpacked layout.
    fn compile_text(text: &str) -> Result<Program, String> {
        let test = crate::litmus::parse(text, Path::new("t.litmus")).expect("test parses");
        compile(&test, &Layout::new(test.locations.len(), false))
    }

    /// Per barrier of `role`, per partner role, the candidates' slots.
    fn partners(p: &Program, role: usize) -> Vec<Vec<Vec<u32>>> {
        p.roles[role]
            .bars
            .iter()
            .map(|b| {
                b.partners
                    .iter()
                    .map(|g| g.iter().map(|c| c.slot).collect())
                    .collect()
            })
            .collect()
    }

    fn slots(p: &Program, role: usize) -> Vec<Option<u32>> {
        p.roles[role].bars.iter().map(|b| b.slot).collect()
    }

    const DYN: &str = "PTX dyn
{ x=0; y=0; z=0; P0:r0=0; P0:r2=0; P1:r1=0; }
 P0@cta 0,gpu 0     | P1@cta 0,gpu 0    | P2@cta 0,gpu 0 ;
 st.weak x, 1       | st.weak y, 1      | st.weak z, 1   ;
 ld.weak r2, z      | bar.cta.sync 1, 1 |                ;
 bar.cta.sync 1, r2 | ld.weak r1, x     |                ;
 ld.weak r0, y      |                   |                ;
forall (P0:r0 == 1 \\/ P1:r1 == 1)";

    #[test]
    fn a_loaded_count_may_meet_any_count() {
        let p = compile_text(DYN).unwrap();
        assert_eq!(p.barrier_slots, 2);
        assert_eq!(slots(&p, 0), vec![Some(0)]);
        assert_eq!(slots(&p, 1), vec![Some(1)]);
        assert_eq!(partners(&p, 0), vec![vec![vec![1]]]);
        assert_eq!(partners(&p, 1), vec![vec![vec![0]]]);
        // P1's key is fixed, so P0 can tell at run time that a loaded 0 will not meet it.
        assert_eq!(p.roles[0].bars[0].partners[0][0].key, Some((1, Some(1))));
        assert_eq!(p.roles[1].bars[0].partners[0][0].key, None);
        assert!(p.roles[2].bars.is_empty());
    }

    fn two_threads(a: &str, b: &str, init: &str) -> Program {
        compile_text(&format!(
            "PTX t
{{ x=0; {init} }}
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
 {a} | {b} ;
exists (x == 0)"
        ))
        .unwrap()
    }

    #[test]
    fn keys_that_cannot_be_equal_never_wait() {
        for (a, b, init) in [
            ("bar.cta.sync 0", "bar.cta.sync 1", ""),
            ("bar.cta.sync 1, 1", "bar.cta.sync 1, 2", ""),
            // A count given and none: different keys in the model.
            ("bar.cta.sync 1, 2", "bar.cta.sync 1", ""),
            // Registers never written hold their initial value in every execution.
            (
                "bar.cta.sync 1, r2",
                "bar.cta.sync 1, r3",
                "P0:r2=1; P1:r3=2;",
            ),
            ("bar.cta.sync r2", "bar.cta.sync 1", ""),
        ] {
            let p = two_threads(a, b, init);
            assert_eq!(p.barrier_slots, 0, "{a} | {b}");
            assert_eq!(partners(&p, 0), vec![Vec::<Vec<u32>>::new()], "{a} | {b}");
        }
        for (a, b, init) in [
            ("bar.cta.sync 1, r2", "bar.cta.sync 1, r3", ""),
            ("bar.cta.sync r2", "bar.cta.sync 0", ""),
            ("bar.cta.sync 3, 2", "bar.cta.sync 3, 2", ""),
        ] {
            let p = two_threads(a, b, init);
            assert_eq!(p.barrier_slots, 2, "{a} | {b}");
            assert_eq!(partners(&p, 0), vec![vec![vec![1]]], "{a} | {b}");
            assert_eq!(partners(&p, 1), vec![vec![vec![0]]], "{a} | {b}");
        }
    }

    #[test]
    fn an_arrive_waits_for_nobody_and_is_waited_for_by_syncs() {
        let p = two_threads("bar.cta.arrive 1", "bar.cta.sync 1", "");
        assert_eq!(slots(&p, 0), vec![Some(0)]);
        assert_eq!(partners(&p, 0), vec![Vec::<Vec<u32>>::new()]);
        assert_eq!(slots(&p, 1), vec![None]);
        assert_eq!(partners(&p, 1), vec![vec![vec![0]]]);
        let p = two_threads("bar.cta.arrive 1", "bar.cta.arrive 1", "");
        assert_eq!(p.barrier_slots, 0);
    }

    #[test]
    fn other_ctas_and_other_keys_are_not_partners() {
        let p = compile_text(
            "PTX t
{ x=0; }
 P0@cta 0,gpu 0    | P1@cta 0,gpu 0    | P2@cta 0,gpu 0    | P3@cta 1,gpu 0 ;
 bar.cta.sync 1, 1 | bar.cta.sync 1, 1 | bar.cta.sync 1, 2 | bar.cta.sync 1, 1 ;
 bar.cta.sync 2    | bar.cta.sync 1, 1 | bar.cta.sync 2    | bar.cta.sync 2 ;
exists (x == 0)",
        )
        .unwrap();
        // P0's first meets both of P1's (in P1's program order); its second only P2's second.
        // Slots are numbered by role, then program order: P0's two, then P1's.
        assert_eq!(slots(&p, 1), vec![Some(2), Some(3)]);
        assert_eq!(partners(&p, 0), vec![vec![vec![2, 3]], vec![vec![4]]]);
        assert_eq!(slots(&p, 2), vec![None, Some(4)]);
        assert!(p.roles[3].bars.iter().all(|b| b.partners.is_empty()));
    }

    #[test]
    fn a_barrier_inside_a_loop_is_refused_but_one_after_a_loop_runs() {
        let test = |p0: &str| {
            compile_text(&format!(
                "PTX t
{{ x=0; P0:r0=0; }}
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
 {p0}
exists (x == 0)"
            ))
        };
        let inside = test(
            "L:             | bar.cta.sync 1 ;
 bar.cta.sync 1 |                ;
 ld.weak r0, x  |                ;
 bne r0, 1, L   |                ;",
        );
        assert!(inside.unwrap_err().contains("loop"));
        let after = test(
            "L:             | bar.cta.sync 1 ;
 ld.weak r0, x  |                ;
 bne r0, 1, L   |                ;
 bar.cta.sync 1 |                ;",
        );
        assert_eq!(after.unwrap().barrier_slots, 2);
    }
}
