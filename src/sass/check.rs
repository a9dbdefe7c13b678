//! The optcheck: each role's memory operations, fences and barriers, as the PTX asked for
//! them, against the SASS of the role's function.
//!
//! Every PTX instruction expects a short sequence of SASS *events* (the mapping observed for
//! sm_90 with ptxas 13.x, see `expect`): the access itself with its strength and scope and the
//! immediate offset that names its location, a `MEMBAR` of at least the release scope before a
//! release, a `CCTL.IVALL` after an acquire wider than the CTA, and so on. The check demands
//! that the SASS accesses are exactly the test's accesses in program order, and that every
//! expected fence event appears between the right accesses. Extra fences are allowed (they only
//! strengthen); a missing, extra, weakened or reordered access is reported with the PTX
//! instruction it concerns.

use super::disasm::SassInstr;
use crate::codegen::ptx::{Order, POp, PSpace};
use crate::codegen::RoleCode;
use crate::litmus::ast::{AtomOp, FenceSem, Scope, Sem};
use serde::{Deserialize, Serialize};

/// Scope levels as SASS spells them: `SM`/`CTA` < `GPU` < `SYS`.
fn level(scope: Scope) -> u8 {
    match scope {
        Scope::Cta => 0,
        Scope::Cluster | Scope::Gpu => 1,
        Scope::Sys => 2,
    }
}

fn level_of(i: &SassInstr) -> Option<u8> {
    if i.has("SM") || i.has("CTA") {
        Some(0)
    } else if i.has("GPU") {
        Some(1)
    } else if i.has("SYS") {
        Some(2)
    } else {
        None
    }
}

/// One SASS event a PTX instruction must produce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The memory access itself.
    Access {
        /// Acceptable opcodes without modifiers.
        bases: &'static [&'static str],
        /// `None`: strength not visible (shared::cta); `Some(None)`: weak; `Some(Some(l))`:
        /// `.STRONG` at level `l`.
        strength: Option<Option<u8>>,
        /// The atomic operation modifier(s) accepted.
        ops: Vec<&'static str>,
        /// Immediate offset naming the location.
        offset: u64,
    },
    /// `MEMBAR` of at least level `min` (`.SC` when `sc`).
    Membar {
        /// Narrowest acceptable level.
        min: u8,
        /// Whether `MEMBAR.SC` is required.
        sc: bool,
    },
    /// `CCTL.IVALL`: invalidation of the L1 for an acquire.
    Cctl,
    /// `BAR.SYNC` or `BAR.ARV`.
    Bar(&'static str),
    /// `UCGABAR_ARV`.
    ClusterArrive,
    /// `UCGABAR_WAIT`.
    ClusterWait,
    /// `CALL`: a software barrier, checked in its own function.
    Call,
}

impl Event {
    /// Whether `i` is this event.
    pub fn matches(&self, i: &SassInstr) -> bool {
        match self {
            Event::Access {
                bases,
                strength,
                ops,
                offset,
            } => {
                bases.contains(&i.base())
                    && i.offset() == *offset
                    && (ops.is_empty() || ops.iter().any(|o| i.has(o)))
                    && match strength {
                        None => true,
                        Some(None) => !i.has("STRONG"),
                        Some(Some(l)) => i.has("STRONG") && level_of(i) == Some(*l),
                    }
            }
            Event::Membar { min, sc } => {
                i.base() == "MEMBAR"
                    && (!sc || i.has("SC"))
                    && level_of(i).is_some_and(|l| l >= *min)
            }
            Event::Cctl => i.base() == "CCTL" && i.has("IVALL"),
            Event::Bar(kind) => i.base() == "BAR" && i.has(kind),
            Event::ClusterArrive => i.base() == "UCGABAR_ARV",
            Event::ClusterWait => i.base() == "UCGABAR_WAIT",
            Event::Call => i.base() == "CALL",
        }
    }

    /// What the event looks for, for messages.
    pub fn describe(&self) -> String {
        let lv = |l: u8| ["SM", "GPU", "SYS"][l as usize];
        match self {
            Event::Access {
                bases,
                strength,
                ops,
                offset,
            } => {
                let mut s = bases.join("|");
                if !ops.is_empty() {
                    s.push('.');
                    s.push_str(&ops.join("|"));
                }
                match strength {
                    None => {}
                    Some(None) => s.push_str(" (weak)"),
                    Some(Some(l)) => s.push_str(&format!(".STRONG.{}", lv(*l))),
                }
                format!("{s} [+{offset:#x}]")
            }
            Event::Membar { min, sc } => format!(
                "MEMBAR.{}.{} or stronger",
                if *sc { "SC" } else { "ALL" },
                ["CTA", "GPU", "SYS"][*min as usize]
            ),
            Event::Cctl => "CCTL.IVALL".into(),
            Event::Bar(k) => format!("BAR.{k}"),
            Event::ClusterArrive => "UCGABAR_ARV".into(),
            Event::ClusterWait => "UCGABAR_WAIT".into(),
            Event::Call => "CALL".into(),
        }
    }

    fn is_access(&self) -> bool {
        matches!(self, Event::Access { .. })
    }
}

/// Whether a SASS instruction accesses memory the way a test instruction can.
pub fn is_access(i: &SassInstr) -> bool {
    matches!(
        i.base(),
        "LDG"
            | "STG"
            | "LDS"
            | "STS"
            | "LD"
            | "ST"
            | "ATOMG"
            | "ATOMS"
            | "ATOM"
            | "REDG"
            | "RED"
            | "TLD"
            | "TEX"
            | "SULD"
            | "SUST"
    )
}

/// Whether a SASS instruction is one the check looks at.
pub(crate) fn is_relevant(i: &SassInstr) -> bool {
    is_access(i)
        || matches!(
            i.base(),
            "MEMBAR" | "BAR" | "UCGABAR_ARV" | "UCGABAR_WAIT" | "CALL"
        )
        || (i.base() == "CCTL" && i.has("IVALL"))
}

fn atom_mod(op: AtomOp) -> &'static str {
    match op {
        AtomOp::Add | AtomOp::Sub => "ADD",
        AtomOp::Exch => "EXCH",
        AtomOp::Cas => "CAS",
        AtomOp::Inc => "INC",
        AtomOp::Dec => "DEC",
        AtomOp::And => "AND",
        AtomOp::Or => "OR",
        AtomOp::Xor => "XOR",
        AtomOp::Min => "MIN",
        AtomOp::Max => "MAX",
    }
}

/// The strength an access shows in SASS.
fn strength(order: &Order, space: PSpace, atomic: bool) -> Option<Option<u8>> {
    if space == PSpace::SharedCta {
        // LDS/STS/ATOMS carry no strength: shared memory is ordered inside the SM.
        return None;
    }
    match order.sem {
        Sem::Weak if !atomic => Some(None),
        Sem::Volatile => Some(Some(2)),
        _ => Some(Some(level(order.scope.unwrap_or(Scope::Gpu)))),
    }
}

fn releases(sem: Sem) -> bool {
    matches!(sem, Sem::Release | Sem::AcqRel)
}

fn acquires(sem: Sem) -> bool {
    matches!(sem, Sem::Acquire | Sem::AcqRel)
}

/// The SASS events of one PTX instruction, in order.
pub fn expect(op: &POp) -> Vec<Event> {
    match op {
        POp::Ld {
            order, space, addr, ..
        } => load(order, *space, u64::from(addr.offset)),
        POp::St {
            order, space, addr, ..
        } => store(order, *space, u64::from(addr.offset)),
        POp::Atom {
            order,
            space,
            op,
            addr,
            ..
        } => rmw(order, *space, *op, u64::from(addr.offset), false),
        POp::Red {
            order,
            space,
            op,
            addr,
            ..
        } => rmw(order, *space, *op, u64::from(addr.offset), true),
        POp::Fence { sem, scope } => fence(*sem, *scope),
        POp::Membar(m) => fence(FenceSem::Sc, m.scope()),
        POp::FenceProxyAlias => vec![Event::Membar { min: 1, sc: true }, Event::Cctl],
        POp::BarrierSync { .. } => vec![Event::Bar("SYNC")],
        POp::BarrierArrive { .. } => vec![Event::Bar("ARV")],
        POp::ClusterArrive { relaxed: true } => vec![Event::ClusterArrive],
        POp::ClusterArrive { relaxed: false } => {
            vec![Event::Membar { min: 1, sc: false }, Event::ClusterArrive]
        }
        POp::ClusterWait => vec![Event::ClusterWait, Event::Cctl],
        POp::SoftBarrier { .. } => vec![Event::Call],
        // Surface accesses (`SULD.D.BA.2D`, `SUST.D.BA.2D` from ptxas 13 for sm_90) show
        // `.STRONG.SM` although PTX gives them no strength: stronger than the weak access asked
        // for, which only strengthens.
        POp::Suld { .. } => unordered(&["SULD"]),
        POp::Sust { .. } => unordered(&["SUST"]),
        // A texel fetch (`TLD.LZ` from ptxas 13 for sm_90): weak, with no scope.
        POp::Tld { .. } => unordered(&["TLD", "TEX"]),
    }
}

/// The scope an order names, `.gpu` where it names none.
fn scope_of(o: &Order) -> Scope {
    o.scope.unwrap_or(Scope::Gpu)
}

/// A load: the access, then an invalidation of the L1 when it acquires beyond the CTA.
fn load(order: &Order, space: PSpace, offset: u64) -> Vec<Event> {
    let mut ev = vec![Event::Access {
        bases: match space {
            PSpace::Global => &["LDG"],
            PSpace::SharedCta => &["LDS"],
            PSpace::SharedCluster => &["LD"],
            // Texture and surface accesses are `POp::Tld`, `Suld` and `Sust`.
            PSpace::Texture | PSpace::Surface => &[],
        },
        strength: strength(order, space, false),
        ops: vec![],
        offset,
    }];
    if acquires(order.sem) && scope_of(order) != Scope::Cta {
        ev.push(Event::Cctl);
    }
    ev
}

/// A store: a `MEMBAR` of its scope first when it releases, then the access.
fn store(order: &Order, space: PSpace, offset: u64) -> Vec<Event> {
    let mut ev = Vec::new();
    if releases(order.sem) {
        ev.push(Event::Membar {
            min: level(scope_of(order)),
            sc: false,
        });
    }
    ev.push(Event::Access {
        bases: match space {
            PSpace::Global => &["STG"],
            PSpace::SharedCta => &["STS"],
            PSpace::SharedCluster => &["ST"],
            // Surface stores are `POp::Sust`; nothing stores through a texture.
            PSpace::Texture | PSpace::Surface => &[],
        },
        strength: strength(order, space, false),
        ops: vec![],
        offset,
    });
    ev
}

/// A fence (and `membar`, a `fence.sc`): a `MEMBAR` of its scope unless it only acquires,
/// then an L1 invalidation unless it only releases or stays within the CTA.
fn fence(sem: FenceSem, scope: Scope) -> Vec<Event> {
    let l = level(scope);
    let mut ev = match sem {
        FenceSem::Sc => vec![Event::Membar { min: l, sc: true }],
        FenceSem::AcqRel | FenceSem::Release => vec![Event::Membar { min: l, sc: false }],
        FenceSem::Acquire => vec![],
    };
    if sem != FenceSem::Release && scope != Scope::Cta {
        ev.push(Event::Cctl);
    }
    ev
}

/// An access with no strength to check and no immediate offset (the element is addressed
/// by registers): texture and surface instructions.
fn unordered(bases: &'static [&'static str]) -> Vec<Event> {
    vec![Event::Access {
        bases,
        strength: None,
        ops: vec![],
        offset: 0,
    }]
}

/// The events of an `atom` or `red`.
fn rmw(order: &Order, space: PSpace, op: AtomOp, offset: u64, red: bool) -> Vec<Event> {
    let scope = scope_of(order);
    let mut ev = Vec::new();
    if releases(order.sem) {
        ev.push(Event::Membar {
            min: level(scope),
            sc: false,
        });
    }
    let mut ops = vec![atom_mod(op)];
    let bases: &'static [&'static str] = match (space, red) {
        (PSpace::Global, true) => &["REDG"],
        (PSpace::Global, false) => &["ATOMG"],
        (PSpace::SharedCta, _) => &["ATOMS"],
        // A red on another CTA's shared memory is issued as an ATOM.
        (PSpace::SharedCluster, _) => &["ATOM", "RED"],
        (PSpace::Texture | PSpace::Surface, _) => &[],
    };
    if space == PSpace::SharedCta && op == AtomOp::Add && red {
        // ptxas turns a shared red.add of a constant into ATOMS.POPC.INC.
        ops.push("POPC");
    }
    ev.push(Event::Access {
        bases,
        strength: strength(order, space, true),
        ops,
        offset,
    });
    if acquires(order.sem) && scope != Scope::Cta {
        ev.push(Event::Cctl);
    }
    ev
}

/// What the check found for one PTX instruction of a role.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mapping {
    /// Index of the instruction in the test thread's body.
    pub index: usize,
    /// The PTX instruction.
    pub ptx: String,
    /// Its mnemonic without operands (`ld.acquire.gpu.global.u32`), the key of the mapping
    /// table.
    pub mnemonic: String,
    /// The SASS instructions matched to its events, in order.
    pub sass: Vec<String>,
}

/// The verdict for one role.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleCheck {
    /// The test thread.
    pub role: usize,
    /// Its function in the SASS.
    pub func: String,
    /// The PTX instructions and their SASS, as far as matched.
    pub mappings: Vec<Mapping>,
    /// The first problem, naming the PTX instruction; `None` when every operation survived.
    pub error: Option<String>,
}

/// Checks one role against the SASS of its function.
pub fn check_role(role: &RoleCode, sass: Option<&[SassInstr]>) -> RoleCheck {
    let mut out = RoleCheck {
        role: role.role,
        func: role.func.clone(),
        mappings: Vec::new(),
        error: None,
    };
    let Some(sass) = sass else {
        out.error = Some(format!(
            "P{}: function {} is not in the SASS (was it inlined?)",
            role.role, role.func
        ));
        return out;
    };
    let tokens = main_path(sass);
    let checked = accesses_one_for_one(role, &tokens)
        .and_then(|()| events_in_order(role, &tokens, &mut out.mappings));
    out.error = checked.err();
    out
}

/// The role's relevant instructions on its main path: ptxas lays the role out in program
/// order up to its return; code after the first RET is out-of-line (e.g. the divergent-warp
/// copy of a barrier region), which repeats instructions of the main path.
fn main_path(sass: &[SassInstr]) -> Vec<&SassInstr> {
    sass.iter()
        .take_while(|i| i.base() != "RET")
        .filter(|i| is_relevant(i))
        .collect()
}

/// The first check: the SASS's memory accesses are the role's, one for one, in order.
fn accesses_one_for_one(role: &RoleCode, tokens: &[&SassInstr]) -> Result<(), String> {
    let found: Vec<&SassInstr> = tokens.iter().copied().filter(|i| is_access(i)).collect();
    let expected: Vec<_> = role
        .ops
        .iter()
        .flat_map(|op| expect(&op.op).into_iter().map(move |ev| (op, ev)))
        .filter(|(_, ev)| ev.is_access())
        .collect();
    for (k, (op, ev)) in expected.iter().enumerate() {
        match found.get(k) {
            Some(i) if ev.matches(i) => {}
            Some(i) => {
                return Err(format!(
                    "P{}: `{}` (instruction {} of the thread) expects {} as memory access #{} of \
                     the role, but the SASS has `{} {}` there",
                    role.role,
                    op.op,
                    op.index,
                    ev.describe(),
                    k + 1,
                    i.opcode,
                    i.operands
                ))
            }
            None => {
                return Err(format!(
                    "P{}: `{}` (instruction {} of the thread) is missing: the SASS has only {} \
                     memory accesses, expected {}",
                    role.role,
                    op.op,
                    op.index,
                    found.len(),
                    expected.len()
                ))
            }
        }
    }
    match found.get(expected.len()) {
        Some(extra) => Err(format!(
            "P{}: the SASS has a memory access the test does not: `{} {}`",
            role.role, extra.opcode, extra.operands
        )),
        None => Ok(()),
    }
}

/// The second check: every event of every operation in program order, where only fences
/// and barriers may be skipped; each operation's mapping goes into `mappings` as it is
/// found, so a failure keeps the mappings before it.
fn events_in_order(
    role: &RoleCode,
    tokens: &[&SassInstr],
    mappings: &mut Vec<Mapping>,
) -> Result<(), String> {
    let mut j = 0;
    for op in &role.ops {
        let mut matched = Vec::new();
        for ev in expect(&op.op) {
            loop {
                let Some(t) = tokens.get(j) else {
                    return Err(format!(
                        "P{}: `{}` (instruction {} of the thread) expects {}, not found after \
                         the instructions before it",
                        role.role,
                        op.op,
                        op.index,
                        ev.describe()
                    ));
                };
                j += 1;
                if ev.matches(t) {
                    matched.push(t.short());
                    break;
                }
                if is_access(t) {
                    return Err(format!(
                        "P{}: `{}` (instruction {} of the thread) expects {} before the access \
                         `{}`, which comes first in the SASS",
                        role.role,
                        op.op,
                        op.index,
                        ev.describe(),
                        t.short()
                    ));
                }
            }
        }
        mappings.push(Mapping {
            index: op.index,
            ptx: op.op.to_string(),
            mnemonic: op.op.mnemonic(),
            sass: matched,
        });
    }
    Ok(())
}

/// The events a software barrier function must show, in order (`ptx/soft_barrier.ptx`): its
/// key store, a poll of a partner's key, the release fence, its passed flag, a poll of a
/// partner's flag and the acquire fence for `litmus_soft_sync`; the fence, key and flag for
/// `litmus_soft_arrive`. All its accesses are `.relaxed.cta`, hence `.STRONG.SM`.
fn soft_barrier_events(arrive: bool) -> Vec<Event> {
    let access = |base: &'static [&'static str], offset| Event::Access {
        bases: base,
        strength: Some(Some(0)),
        ops: vec![],
        offset,
    };
    let fence = || Event::Membar { min: 0, sc: false };
    if arrive {
        vec![fence(), access(&["STG"], 0), access(&["STG"], 4)]
    } else {
        vec![
            access(&["STG"], 0),
            access(&["LDG"], 0),
            fence(),
            access(&["STG"], 4),
            access(&["LDG"], 4),
            fence(),
        ]
    }
}

/// Checks the SASS of a software barrier function: its fences and strong accesses in order
/// (the poll loops may be laid out anywhere around them) and no weak access (a weak poll could
/// be hoisted out of its loop). `None` when it passes.
pub fn check_soft_barrier(func: &str, arrive: bool, sass: Option<&[SassInstr]>) -> Option<String> {
    let Some(sass) = sass else {
        return Some(format!("function {func} is not in the SASS"));
    };
    if let Some(weak) = sass.iter().find(|i| is_access(i) && !i.has("STRONG")) {
        return Some(format!(
            "{func}: a weak access `{} {}`; the software barrier's accesses must be strong",
            weak.opcode, weak.operands
        ));
    }
    let mut at = sass.iter();
    for ev in soft_barrier_events(arrive) {
        if !at.any(|i| ev.matches(i)) {
            return Some(format!(
                "{func}: {} is missing or out of order",
                ev.describe()
            ));
        }
    }
    None
}
