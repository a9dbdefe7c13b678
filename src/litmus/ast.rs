//! The typed form of a litmus test: what the parser produces and every later stage reads.
//!
//! No instruction text survives parsing: every instruction is one of the variants below, with
//! its semantics, scope, proxy and operands as fields. Spelling variants of the input (`bar.sync`
//! vs `bar.cta.sync`, `=` vs `==` in conditions) collapse here, so the canonical printer is the
//! inverse of the parser on this type.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A value held by a register or a memory location (PTX tests use 32-bit values; the model
/// computes with 64 bits so that arithmetic in tests never wraps silently).
pub type Value = i64;

/// A whole litmus test.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Test {
    /// The test's name (the word after `PTX`).
    pub name: String,
    /// The quoted strings between the name and the initial state, in order.
    pub doc: Vec<String>,
    /// Memory locations in declaration order (explicit ones first, then implicit ones in order
    /// of first use, each with initial value 0).
    pub locations: Vec<Location>,
    /// Register initialisations such as `P1:r0=0`.
    pub reg_init: Vec<RegInit>,
    /// The threads, `threads[i].id == i`.
    pub threads: Vec<Thread>,
    /// Extra observables from a herd `locations [..]` clause, in order.
    pub extra_observed: Vec<Term>,
    /// The final condition.
    pub condition: Condition,
}

/// A memory location of the test.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Location {
    /// The location's name as written in the test.
    pub name: String,
    /// Whether it is memory of its own or another name (proxy) for a location.
    pub kind: LocationKind,
}

/// What a location name stands for.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LocationKind {
    /// Memory of its own: `x=0;` (global), `x @ shared(P0) = 0;` (shared memory of P0's CTA).
    Memory {
        /// The initial value.
        init: Value,
        /// The state space that holds it.
        space: Space,
    },
    /// Another virtual address for the same memory: `s @ surface aliases x;`.
    Alias {
        /// The proxy through which this name is meant to be accessed.
        proxy: Proxy,
        /// The location (a `Memory` one, or another alias) it names again.
        target: String,
    },
}

/// The state space that holds a location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Space {
    /// Global memory (the default).
    Global,
    /// Shared memory of the CTA of thread `owner`; threads of that CTA access it as
    /// `.shared::cta`, threads of other CTAs of the same cluster as `.shared::cluster`
    /// (distributed shared memory).
    Shared {
        /// Index of the thread whose CTA owns the memory.
        owner: usize,
    },
}

/// `P1:r0=0` in the initial state.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RegInit {
    /// Thread index.
    pub thread: usize,
    /// Register name.
    pub reg: Reg,
    /// Initial value.
    pub value: Value,
}

/// One thread of the test.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Thread {
    /// Thread index, `P{id}`.
    pub id: usize,
    /// Where the thread runs in the scope tree.
    pub place: Placement,
    /// The thread's instructions (and labels) in program order.
    pub body: Vec<Instr>,
}

/// A thread's position in the thread hierarchy: `P0@cta 0,cluster 0,gpu 0`, innermost first.
///
/// Two threads are in the same CTA when `gpu`, `cluster` and `cta` agree. A test that names no
/// cluster runs each CTA in a cluster of its own (as a CUDA launch without cluster dimensions
/// does). `warp` is a placement hint that the model ignores and the GPU harness honours: threads
/// of one CTA with equal `warp` share a warp, with different `warp` they do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Placement {
    /// Warp hint inside the CTA.
    pub warp: Option<u32>,
    /// CTA id.
    pub cta: u32,
    /// Cluster id, when the test uses clusters.
    pub cluster: Option<u32>,
    /// GPU id.
    pub gpu: u32,
}

/// A register name such as `r0`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Reg(pub String);

/// A branch target such as `LC00`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Label(pub String);

/// The semantics of a memory operation, any kind (what the memory model reads; each instruction
/// holds the narrower type of the semantics it can have: [`LoadSem`], [`StoreSem`], [`RmwSem`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Sem {
    /// `.weak` (also a plain `ld`/`st` with no qualifier).
    Weak,
    /// `.relaxed`.
    Relaxed,
    /// `.acquire`.
    Acquire,
    /// `.release`.
    Release,
    /// `.acq_rel`.
    AcqRel,
    /// `.volatile`: the ISA treats it as `.relaxed.sys` for the memory model.
    Volatile,
}

/// The semantics a load can have (`ld{.sem}`): a load never releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum LoadSem {
    /// `.weak` (also a plain `ld` with no qualifier).
    Weak,
    /// `.relaxed`.
    Relaxed,
    /// `.acquire`.
    Acquire,
    /// `.volatile`.
    Volatile,
}

/// The semantics a store can have (`st{.sem}`): a store never acquires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum StoreSem {
    /// `.weak` (also a plain `st` with no qualifier).
    Weak,
    /// `.relaxed`.
    Relaxed,
    /// `.release`.
    Release,
    /// `.volatile`.
    Volatile,
}

/// The semantics a read-modify-write (`atom`, `red`) can have: always strong, `.relaxed` when
/// none is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum RmwSem {
    /// `.relaxed`.
    Relaxed,
    /// `.acquire`.
    Acquire,
    /// `.release`.
    Release,
    /// `.acq_rel`.
    AcqRel,
}

/// A scope, ordered by inclusion: `cta ⊂ cluster ⊂ gpu ⊂ sys`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Scope {
    /// `.cta`.
    Cta,
    /// `.cluster` (PTX 7.8+, sm_90).
    Cluster,
    /// `.gpu`.
    Gpu,
    /// `.sys`.
    Sys,
}

/// The proxy through which a memory operation accesses memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Proxy {
    /// The generic proxy (`ld`, `st`, `atom`, `red`).
    Generic,
    /// The texture proxy (`tld`).
    Texture,
    /// The surface proxy (`suld`, `sust`).
    Surface,
    /// The constant proxy (`cold`: a load through the constant cache).
    Constant,
}

/// A source operand.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand {
    /// An immediate.
    Imm(Value),
    /// A register.
    Reg(Reg),
}

/// A memory address: a location, optionally offset by a register that must hold 0 when the
/// access runs (`x+r3`). The offset is how a test writes an address dependency.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Addr {
    /// The location name.
    pub loc: String,
    /// The register whose value is added to the address.
    pub offset: Option<Reg>,
}

/// The operation of an `atom` or `red`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum AtomOp {
    /// `.add`.
    Add,
    /// `.sub` (accepted for Dat3M tests; PTX spells it as an add of the negation).
    Sub,
    /// `.exch`.
    Exch,
    /// `.cas`: compare with the first operand, store the second.
    Cas,
    /// `.inc`: `old >= b ? 0 : old + 1`.
    Inc,
    /// `.dec`: `old == 0 || old > b ? b : old - 1`.
    Dec,
    /// `.and`.
    And,
    /// `.or`.
    Or,
    /// `.xor`.
    Xor,
    /// `.min`.
    Min,
    /// `.max`.
    Max,
}

/// Register arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum AluOp {
    /// `add`.
    Add,
    /// `sub`.
    Sub,
    /// `mul`.
    Mul,
    /// `and`.
    And,
    /// `or`.
    Or,
    /// `xor`.
    Xor,
}

/// A comparison, in branches and conditions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CmpOp {
    /// `==` (`beq`).
    Eq,
    /// `!=` (`bne`).
    Ne,
    /// `<` (`blt`).
    Lt,
    /// `<=` (`ble`).
    Le,
    /// `>` (`bgt`).
    Gt,
    /// `>=` (`bge`).
    Ge,
}

/// The semantics of a memory fence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FenceSem {
    /// `fence.sc`: an acquire and release fence that is also ordered by Fence-SC order.
    Sc,
    /// `fence.acq_rel` (also plain `fence`).
    AcqRel,
    /// `fence.acquire` (PTX 8.6).
    Acquire,
    /// `fence.release` (PTX 8.6).
    Release,
}

/// The level of a `membar`; on sm_70+ `membar.cta`/`.gl`/`.sys` are `fence.sc.cta`/`.gpu`/`.sys`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MembarLevel {
    /// `membar.cta`.
    Cta,
    /// `membar.gl`.
    Gl,
    /// `membar.sys`.
    Sys,
}

/// What a proxy fence orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ProxyFenceKind {
    /// `fence.proxy.alias`: orders accesses through different virtual addresses of one location.
    Alias,
    /// `fence.proxy.texture`.
    Texture,
    /// `fence.proxy.surface`.
    Surface,
    /// `fence.proxy.constant`.
    Constant,
}

/// A fence instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Fence {
    /// `fence.{sc,acq_rel,acquire,release}.{scope}`.
    Memory {
        /// The fence's semantics.
        sem: FenceSem,
        /// The fence's scope.
        scope: Scope,
    },
    /// `membar.{cta,gl,sys}`.
    Membar(MembarLevel),
    /// `fence.proxy.{alias,texture,surface,constant}`.
    Proxy(ProxyFenceKind),
}

/// The reduction of a `bar.red`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum BarRedOp {
    /// `.popc`: how many participating threads had a non-zero predicate.
    Popc,
    /// `.and`: 1 when every participating thread had a non-zero predicate.
    And,
    /// `.or`: 1 when some participating thread had a non-zero predicate.
    Or,
}

/// What a CTA barrier instruction does.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BarOp {
    /// `bar.cta.sync` (also `bar.sync`, `barrier.sync`): arrive and wait.
    Sync,
    /// `bar.cta.arrive`: arrive without waiting.
    Arrive,
    /// `bar.cta.red.{popc,and,or} d, id, pred`: arrive, wait, and reduce `pred` into `d`.
    Red {
        /// The reduction.
        op: BarRedOp,
        /// Destination register.
        dst: Reg,
        /// The predicate operand (non-zero is true).
        pred: Operand,
    },
}

/// A barrier instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Barrier {
    /// `bar.cta.{sync,arrive,red}` in Dat3M's form `I[, A[, Q]]`: barriers meet per CTA,
    /// instance `id`, resource `count` and occurrence (`docs/barriers.md`).
    Cta {
        /// What the instruction does.
        op: BarOp,
        /// The barrier instance `I` (PTX's `a` in the one-operand form; immediate or register).
        id: Operand,
        /// The second operand: Dat3M's barrier resource `A` (PTX's thread count `b` in the
        /// two-operand form, which the corpus reads as a resource: different values are
        /// different barriers).
        count: Option<Operand>,
        /// The quorum `Q`: how many same-barrier threads must synchronise (Dat3M's third
        /// operand; never with `bar.red`).
        quorum: Option<Operand>,
    },
    /// `barrier.cluster.arrive` with its semantics (release by default, or relaxed).
    ClusterArrive {
        /// `true` for `.relaxed`.
        relaxed: bool,
    },
    /// `barrier.cluster.wait` (acquire semantics).
    ClusterWait,
}

/// One instruction or label of a thread.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Instr {
    /// `ld`, `tld` (texture), `suld` (surface), `cold` (constant): `dst <- [addr]`.
    Load {
        /// Semantics.
        sem: LoadSem,
        /// Scope, when given.
        scope: Option<Scope>,
        /// Proxy, from the mnemonic.
        proxy: Proxy,
        /// Destination register.
        dst: Reg,
        /// Address read.
        addr: Addr,
    },
    /// `st`, `sust` (surface): `[addr] <- src`.
    Store {
        /// Semantics.
        sem: StoreSem,
        /// Scope, when given.
        scope: Option<Scope>,
        /// Proxy, from the mnemonic.
        proxy: Proxy,
        /// Address written.
        addr: Addr,
        /// Value stored.
        src: Operand,
    },
    /// `atom.{sem}.{scope}.{op} dst, addr, src[, src2]`: read-modify-write returning the old value.
    Atom {
        /// Semantics.
        sem: RmwSem,
        /// Scope, when given.
        scope: Option<Scope>,
        /// Operation.
        op: AtomOp,
        /// Receives the old value.
        dst: Reg,
        /// Address.
        addr: Addr,
        /// Operand (for `cas`, the value compared with).
        src: Operand,
        /// Second operand: for `cas`, the value stored.
        src2: Option<Operand>,
    },
    /// `red.{sem}.{scope}.{op} addr, src`: read-modify-write with no result.
    Red {
        /// Semantics.
        sem: RmwSem,
        /// Scope, when given.
        scope: Option<Scope>,
        /// Operation.
        op: AtomOp,
        /// Address.
        addr: Addr,
        /// Operand.
        src: Operand,
    },
    /// A fence.
    Fence(Fence),
    /// A barrier.
    Barrier(Barrier),
    /// `mov dst, src` (Dat3M also spells it `ld dst, imm`).
    Mov {
        /// Destination.
        dst: Reg,
        /// Source.
        src: Operand,
    },
    /// `op dst, a, b`.
    Alu {
        /// Operation.
        op: AluOp,
        /// Destination.
        dst: Reg,
        /// First operand.
        a: Operand,
        /// Second operand.
        b: Operand,
    },
    /// `beq a, b, L` and friends, or `goto L` when `cond` is `None`.
    Branch {
        /// The comparison that takes the branch.
        cond: Option<BranchCond>,
        /// Where to go.
        target: Label,
    },
    /// `L:`.
    Label(Label),
}

/// The comparison of a conditional branch.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BranchCond {
    /// Comparison.
    pub op: CmpOp,
    /// Left operand.
    pub a: Operand,
    /// Right operand.
    pub b: Operand,
}

/// How a condition is quantified over executions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Quantifier {
    /// `exists P`.
    Exists,
    /// `~exists P`.
    NotExists,
    /// `forall P`.
    Forall,
}

/// The final condition of a test.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Condition {
    /// Quantifier.
    pub quantifier: Quantifier,
    /// Proposition over final register and memory values.
    pub prop: Prop,
}

/// A proposition over final values.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Prop {
    /// `true`.
    True,
    /// `false`.
    False,
    /// `lhs op rhs`.
    Cmp {
        /// Left term.
        lhs: Term,
        /// Comparison.
        op: CmpOp,
        /// Right term.
        rhs: Term,
    },
    /// `~p`.
    Not(Box<Prop>),
    /// `p /\ q`.
    And(Box<Prop>, Box<Prop>),
    /// `p \/ q`.
    Or(Box<Prop>, Box<Prop>),
}

/// A term of a condition.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Term {
    /// `P1:r0`: a register's final value.
    Reg {
        /// Thread index.
        thread: usize,
        /// Register.
        reg: Reg,
    },
    /// `x`: a location's final value.
    Loc(String),
    /// A constant.
    Const(Value),
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Scope {
    /// Every scope, narrowest first.
    pub const ALL: [Scope; 4] = [Scope::Cta, Scope::Cluster, Scope::Gpu, Scope::Sys];

    /// The PTX spelling without the dot: `cta`, `cluster`, `gpu`, `sys`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Cluster => "cluster",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
}

/// What is spelled one way in PTX: the instruction parts without their dot.
pub trait Spelled: Copy + 'static {
    /// Every value, in declaration order.
    const ALL: &'static [Self];

    /// The PTX spelling without the dot.
    fn as_str(self) -> &'static str;

    /// The value spelled `word`, if any.
    fn spelled(word: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.as_str() == word)
    }
}

/// Implements [`Spelled`] for an enum from its variants and their spellings.
macro_rules! spelled {
    ($t:ident: $($v:ident => $s:literal),+ $(,)?) => {
        impl Spelled for $t {
            const ALL: &'static [$t] = &[$($t::$v),+];

            fn as_str(self) -> &'static str {
                match self {
                    $($t::$v => $s,)+
                }
            }
        }
    };
}

spelled!(FenceSem: Sc => "sc", AcqRel => "acq_rel", Acquire => "acquire", Release => "release");
spelled!(MembarLevel: Cta => "cta", Gl => "gl", Sys => "sys");
spelled!(BarRedOp: Popc => "popc", And => "and", Or => "or");
spelled!(AluOp: Add => "add", Sub => "sub", Mul => "mul", And => "and", Or => "or", Xor => "xor");
// A proxy's word is how a test declares a location's proxy (`x @ texture aliases y`) and how
// the model and the reports name it.
spelled!(Proxy: Generic => "generic", Texture => "texture", Surface => "surface", Constant => "constant");

impl Proxy {
    /// The load instruction through this proxy: `ld`, `tld`, `suld`, `cold`.
    pub fn load_mnemonic(self) -> &'static str {
        match self {
            Proxy::Generic => "ld",
            Proxy::Texture => "tld",
            Proxy::Surface => "suld",
            Proxy::Constant => "cold",
        }
    }

    /// The store instruction through this proxy: `st`, `sust`; none through the read-only
    /// texture and constant proxies.
    pub fn store_mnemonic(self) -> Option<&'static str> {
        match self {
            Proxy::Generic => Some("st"),
            Proxy::Surface => Some("sust"),
            Proxy::Texture | Proxy::Constant => None,
        }
    }

    /// The proxy whose load or store instruction is `mnemonic`, if any.
    pub fn of_mnemonic(mnemonic: &str) -> Option<Proxy> {
        <Proxy as Spelled>::ALL
            .iter()
            .copied()
            .find(|p| p.load_mnemonic() == mnemonic || p.store_mnemonic() == Some(mnemonic))
    }
}

/// The semantics `barrier.cluster.arrive` is spelled with: `.relaxed`, or its default
/// `.release`.
pub fn cluster_arrive_sem(relaxed: bool) -> &'static str {
    if relaxed {
        "relaxed"
    } else {
        "release"
    }
}

impl ProxyFenceKind {
    /// Every proxy fence, in the ISA's order.
    pub const ALL: [ProxyFenceKind; 4] = [
        ProxyFenceKind::Alias,
        ProxyFenceKind::Texture,
        ProxyFenceKind::Surface,
        ProxyFenceKind::Constant,
    ];

    /// The PTX spelling after `fence.proxy.`: `alias`, `texture`, `surface`, `constant`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyFenceKind::Alias => "alias",
            ProxyFenceKind::Texture => "texture",
            ProxyFenceKind::Surface => "surface",
            ProxyFenceKind::Constant => "constant",
        }
    }
}

impl Sem {
    /// The PTX spelling without the dot.
    pub fn as_str(self) -> &'static str {
        match self {
            Sem::Weak => "weak",
            Sem::Relaxed => "relaxed",
            Sem::Acquire => "acquire",
            Sem::Release => "release",
            Sem::AcqRel => "acq_rel",
            Sem::Volatile => "volatile",
        }
    }
}

/// The narrower semantics types widen to [`Sem`] and are spelled as it is.
macro_rules! narrower_sem {
    ($t:ident: $($v:ident),+) => {
        impl From<$t> for Sem {
            fn from(s: $t) -> Sem {
                match s {
                    $($t::$v => Sem::$v,)+
                }
            }
        }

        impl TryFrom<Sem> for $t {
            type Error = Sem;

            /// The semantics as this kind of instruction has it, or back when it cannot.
            fn try_from(s: Sem) -> Result<$t, Sem> {
                match s {
                    $(Sem::$v => Ok($t::$v),)+
                    #[allow(unreachable_patterns)]
                    _ => Err(s),
                }
            }
        }

        impl $t {
            /// Every value, in declaration order.
            pub const ALL: &'static [$t] = &[$($t::$v),+];

            /// The PTX spelling without the dot.
            pub fn as_str(self) -> &'static str {
                Sem::from(self).as_str()
            }
        }
    };
}

narrower_sem!(LoadSem: Weak, Relaxed, Acquire, Volatile);
narrower_sem!(StoreSem: Weak, Relaxed, Release, Volatile);
narrower_sem!(RmwSem: Relaxed, Acquire, Release, AcqRel);

impl AtomOp {
    /// The PTX spelling without the dot.
    pub fn as_str(self) -> &'static str {
        match self {
            AtomOp::Add => "add",
            AtomOp::Sub => "sub",
            AtomOp::Exch => "exch",
            AtomOp::Cas => "cas",
            AtomOp::Inc => "inc",
            AtomOp::Dec => "dec",
            AtomOp::And => "and",
            AtomOp::Or => "or",
            AtomOp::Xor => "xor",
            AtomOp::Min => "min",
            AtomOp::Max => "max",
        }
    }
}

impl CmpOp {
    /// Every comparison.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];

    /// The spelling in conditions: `==`, `!=`, `<`, `<=`, `>`, `>=`.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// The PTX comparison (`setp.eq`; a branch on it is `beq`): `eq`, `ne`, `lt`, `le`, `gt`,
    /// `ge`.
    pub fn suffix(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
        }
    }

    /// The branch that takes this comparison: `beq`, `bne`, `blt`, `ble`, `bgt`, `bge`.
    pub fn branch(self) -> String {
        format!("b{}", self.suffix())
    }

    /// Applies the comparison.
    pub fn eval(self, a: Value, b: Value) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

impl Placement {
    /// Whether two threads run in the same CTA.
    pub fn same_cta(&self, other: &Placement) -> bool {
        self.gpu == other.gpu && self.cluster == other.cluster && self.cta == other.cta
    }

    /// Whether two threads run in the same cluster (a test without clusters gives each CTA its
    /// own).
    pub fn same_cluster(&self, other: &Placement) -> bool {
        match (self.cluster, other.cluster) {
            (Some(a), Some(b)) => self.gpu == other.gpu && a == b,
            _ => self.same_cta(other),
        }
    }

    /// Whether two threads run on the same GPU.
    pub fn same_gpu(&self, other: &Placement) -> bool {
        self.gpu == other.gpu
    }

    /// Whether a `scope` operation of a thread placed at `self` includes a thread at `other`.
    pub fn scope_includes(&self, scope: Scope, other: &Placement) -> bool {
        match scope {
            Scope::Cta => self.same_cta(other),
            Scope::Cluster => self.same_cluster(other),
            Scope::Gpu => self.same_gpu(other),
            Scope::Sys => true,
        }
    }
}

impl Test {
    /// The location declared under `name`, if any.
    pub fn location(&self, name: &str) -> Option<&Location> {
        self.locations.iter().find(|l| l.name == name)
    }

    /// The name of the memory a location name finally refers to, following aliases.
    pub fn resolve(&self, name: &str) -> Option<&str> {
        let mut current = name;
        // An alias chain longer than the number of locations is a cycle.
        for _ in 0..=self.locations.len() {
            match &self.location(current)?.kind {
                LocationKind::Memory { .. } => return Some(&self.location(current)?.name),
                LocationKind::Alias { target, .. } => current = target,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spelling reads back as its value, and no two values of a type share one.
    fn reads_back<T: Spelled + PartialEq + std::fmt::Debug>() {
        for &v in T::ALL {
            assert_eq!(T::spelled(v.as_str()), Some(v));
        }
        let mut words: Vec<&str> = T::ALL.iter().map(|v| v.as_str()).collect();
        words.sort();
        words.dedup();
        assert_eq!(words.len(), T::ALL.len());
        assert_eq!(T::spelled("no-such-word"), None);
    }

    #[test]
    fn each_spelling_is_one_value_and_reads_back() {
        reads_back::<FenceSem>();
        reads_back::<MembarLevel>();
        reads_back::<BarRedOp>();
        reads_back::<AluOp>();
        reads_back::<Proxy>();
    }

    #[test]
    fn each_access_instruction_names_its_proxy_and_only_generic_and_surface_store() {
        for &p in <Proxy as Spelled>::ALL {
            assert_eq!(Proxy::of_mnemonic(p.load_mnemonic()), Some(p));
            if let Some(st) = p.store_mnemonic() {
                assert_eq!(Proxy::of_mnemonic(st), Some(p));
            }
        }
        let stores: Vec<Proxy> = <Proxy as Spelled>::ALL
            .iter()
            .copied()
            .filter(|p| p.store_mnemonic().is_some())
            .collect();
        assert_eq!(stores, [Proxy::Generic, Proxy::Surface]);
        assert_eq!(Proxy::of_mnemonic("atom"), None);
    }
}
