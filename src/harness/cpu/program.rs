//! Compiles a test to flat per-role programs over numbered registers and word offsets, so that
//! the hot loop never looks at the AST, allocates or hashes. Everything the CPU cannot run
//! faithfully is refused here with a reason, never approximated.

use super::layout::Layout;
use crate::litmus::ast::{
    AluOp, AtomOp, BarOp, Barrier, CmpOp, Fence, FenceSem, Instr, LocationKind, Operand, Proxy,
    Reg, Sem, Test, Value,
};
use crate::outcome::{observables, Observable};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

/// Registers one role may use (the interpreter keeps them in a fixed array).
pub const MAX_REGS: usize = 32;
/// Barrier ids per CTA (PTX has 16 named barriers).
pub const BARRIER_IDS: usize = 16;
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

/// A read-modify-write operation (`atom`/`red`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rmw {
    /// `add`.
    Add,
    /// `sub`.
    Sub,
    /// `exch`.
    Exch,
    /// `cas`.
    Cas,
    /// `inc`.
    Inc,
    /// `dec`.
    Dec,
    /// `and`.
    And,
    /// `or`.
    Or,
    /// `xor`.
    Xor,
    /// `min`.
    Min,
    /// `max`.
    Max,
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
        op: Rmw,
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
    /// A CTA barrier among the roles of one CTA of one instance.
    Bar {
        /// Index of this barrier's counter inside an instance (`cta * BARRIER_IDS + id`).
        slot: u16,
        /// Number of arrivals that complete one phase.
        participants: u32,
        /// Wait for the phase to complete (`sync`) or not (`arrive`).
        wait: bool,
    },
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
    /// Barrier counters per instance (`ctas * BARRIER_IDS`, 0 when the test has no barrier).
    pub barrier_slots: usize,
}

/// Compiles `test` for memory laid out by `layout`, or says why the CPU cannot run it.
pub fn compile(test: &Test, layout: &Layout) -> Result<Program, String> {
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

    // CTAs in order of first appearance; barriers are per CTA.
    let mut ctas: Vec<usize> = Vec::new();
    let cta_of: Vec<usize> = test
        .threads
        .iter()
        .map(|t| {
            match ctas
                .iter()
                .position(|&c| test.threads[c].place.same_cta(&t.place))
            {
                Some(i) => i,
                None => {
                    ctas.push(t.id);
                    ctas.len() - 1
                }
            }
        })
        .collect();
    let participants = barrier_participants(test, &cta_of)?;
    let barrier_slots = if participants.is_empty() {
        0
    } else {
        ctas.len() * BARRIER_IDS
    };

    let obs = observables(test);
    let mut regs: Vec<RegMap> = test.threads.iter().map(|_| RegMap::default()).collect();
    let mut roles = Vec::with_capacity(test.threads.len());
    for t in &test.threads {
        let map = &mut regs[t.id];
        let mut labels = BTreeMap::new();
        let mut n = 0u32;
        for i in &t.body {
            match i {
                Instr::Label(l) => {
                    labels.insert(l.0.clone(), n);
                }
                _ => n += 1,
            }
        }
        let mut ops = Vec::with_capacity(n as usize);
        for i in &t.body {
            if let Some(op) = compile_instr(i, map, &addr_of, &labels, cta_of[t.id], &participants)?
            {
                ops.push(op);
            }
        }
        let mut init = [0; MAX_REGS];
        for ri in test.reg_init.iter().filter(|r| r.thread == t.id) {
            init[map.index(&ri.reg)? as usize] = ri.value;
        }
        roles.push(Role {
            ops,
            init,
            observed: Vec::new(),
        });
    }
    let mut sources = Vec::with_capacity(obs.len());
    for o in &obs {
        sources.push(match o {
            Observable::Reg { thread, reg } => {
                let role = roles.get_mut(*thread).ok_or_else(|| {
                    format!("the condition names thread P{thread}, not in the test")
                })?;
                let r = regs[*thread].index(reg)?;
                // Registers referenced only by the condition were never written: they keep
                // their initial value, which `init` already holds.
                role.observed.push(r);
                Source::Reg {
                    role: *thread,
                    index: role.observed.len() - 1,
                }
            }
            Observable::Loc(name) => Source::Mem(addr_of(name)?),
        });
    }
    Ok(Program {
        roles,
        sources,
        init_words,
        barrier_slots,
    })
}

/// Memory locations by name, numbered in declaration order; refuses aliases and proxies.
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
                    proxy_name(*proxy)
                ))
            }
        }
    }
    Ok(out)
}

fn proxy_name(p: Proxy) -> &'static str {
    match p {
        Proxy::Generic => "generic",
        Proxy::Texture => "texture",
        Proxy::Surface => "surface",
        Proxy::Constant => "constant",
    }
}

/// For every (CTA, barrier id) used, the number of roles of that CTA that use it.
fn barrier_participants(
    test: &Test,
    cta_of: &[usize],
) -> Result<BTreeMap<(usize, u32), u32>, String> {
    let mut users: BTreeMap<(usize, u32), Vec<usize>> = BTreeMap::new();
    let mut counts: BTreeMap<(usize, u32), Value> = BTreeMap::new();
    for t in &test.threads {
        for i in &t.body {
            let Instr::Barrier(b) = i else { continue };
            let Barrier::Cta { op, id, count } = b else {
                return Err(
                    "cluster barriers (barrier.cluster.*) are not run on the CPU: it \
                            has no clusters"
                        .into(),
                );
            };
            if let BarOp::Red { .. } = op {
                return Err("bar.cta.red is not run on the CPU backend".into());
            }
            let Operand::Imm(id) = *id else {
                return Err("a barrier id held in a register is not run on the CPU backend".into());
            };
            if !(0..BARRIER_IDS as Value).contains(&id) {
                return Err(format!("barrier id {id} is out of range 0..16"));
            }
            let key = (cta_of[t.id], id as u32);
            let u = users.entry(key).or_default();
            if !u.contains(&t.id) {
                u.push(t.id);
            }
            match count {
                None => {}
                Some(Operand::Imm(c)) => {
                    counts.insert(key, *c);
                }
                Some(Operand::Reg(_)) => {
                    return Err(
                        "a barrier thread count held in a register is not run on the CPU \
                         backend"
                            .into(),
                    )
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    for (key, u) in users {
        let n = u.len() as u32;
        if let Some(&c) = counts.get(&key) {
            if c != n as Value {
                return Err(format!(
                    "barrier {} is given a thread count of {c} but {n} roles of the CTA use it; \
                     the CPU backend runs only barriers that all their users complete",
                    key.1
                ));
            }
        }
        out.insert(key, n);
    }
    Ok(out)
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
}

fn compile_instr(
    i: &Instr,
    regs: &mut RegMap,
    addr_of: &dyn Fn(&str) -> Result<u32, String>,
    labels: &BTreeMap<String, u32>,
    cta: usize,
    participants: &BTreeMap<(usize, u32), u32>,
) -> Result<Option<Op>, String> {
    let generic = |p: Proxy, what: &str| {
        if p == Proxy::Generic {
            Ok(())
        } else {
            Err(format!(
                "{what} through the {} proxy: the CPU has no such proxy",
                proxy_name(p)
            ))
        }
    };
    Ok(Some(match i {
        Instr::Label(_) => return Ok(None),
        Instr::Load {
            sem,
            proxy,
            dst,
            addr,
            ..
        } => {
            generic(*proxy, "a load")?;
            let ord = match sem {
                Sem::Weak | Sem::Relaxed | Sem::Volatile => Ordering::Relaxed,
                Sem::Acquire => Ordering::Acquire,
                Sem::Release | Sem::AcqRel => {
                    return Err(format!("ld.{} is not a PTX load", sem.as_str()))
                }
            };
            Op::Load {
                dst: regs.index(dst)?,
                addr: addr_of(&addr.loc)?,
                dep: addr.offset.as_ref().map(|r| regs.index(r)).transpose()?,
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
                Sem::Weak | Sem::Relaxed | Sem::Volatile => Ordering::Relaxed,
                Sem::Release => Ordering::Release,
                Sem::Acquire | Sem::AcqRel => {
                    return Err(format!("st.{} is not a PTX store", sem.as_str()))
                }
            };
            Op::Store {
                addr: addr_of(&addr.loc)?,
                dep: addr.offset.as_ref().map(|r| regs.index(r)).transpose()?,
                src: regs.src(src)?,
                ord,
            }
        }
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
            Op::Rmw {
                op: rmw(*op),
                dst: Some(regs.index(dst)?),
                addr: addr_of(&addr.loc)?,
                dep: addr.offset.as_ref().map(|r| regs.index(r)).transpose()?,
                a: regs.src(src)?,
                b,
                ord: rmw_ordering(*sem),
            }
        }
        Instr::Red {
            sem, op, addr, src, ..
        } => {
            if *op == AtomOp::Cas {
                return Err("red.cas is not a PTX reduction".into());
            }
            Op::Rmw {
                op: rmw(*op),
                dst: None,
                addr: addr_of(&addr.loc)?,
                dep: addr.offset.as_ref().map(|r| regs.index(r)).transpose()?,
                a: regs.src(src)?,
                b: Src::Imm(0),
                ord: rmw_ordering(*sem),
            }
        }
        Instr::Fence(f) => Op::Fence(match f {
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
        }),
        Instr::Barrier(b) => {
            let Barrier::Cta {
                op,
                id: Operand::Imm(id),
                ..
            } = b
            else {
                return Err("unsupported barrier".into());
            };
            let id = *id as u32;
            Op::Bar {
                slot: (cta * BARRIER_IDS + id as usize) as u16,
                participants: participants[&(cta, id)],
                wait: matches!(op, BarOp::Sync),
            }
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

fn rmw(op: AtomOp) -> Rmw {
    match op {
        AtomOp::Add => Rmw::Add,
        AtomOp::Sub => Rmw::Sub,
        AtomOp::Exch => Rmw::Exch,
        AtomOp::Cas => Rmw::Cas,
        AtomOp::Inc => Rmw::Inc,
        AtomOp::Dec => Rmw::Dec,
        AtomOp::And => Rmw::And,
        AtomOp::Or => Rmw::Or,
        AtomOp::Xor => Rmw::Xor,
        AtomOp::Min => Rmw::Min,
        AtomOp::Max => Rmw::Max,
    }
}

fn rmw_ordering(sem: Sem) -> Ordering {
    match sem {
        Sem::Weak | Sem::Relaxed | Sem::Volatile => Ordering::Relaxed,
        Sem::Acquire => Ordering::Acquire,
        Sem::Release => Ordering::Release,
        Sem::AcqRel => Ordering::AcqRel,
    }
}
