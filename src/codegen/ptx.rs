//! A typed representation of the PTX instructions a test lowers to, printed in exactly the
//! spelling the ISA gives them. Test instructions reach PTX text only through this type, so
//! their semantics, scopes and state spaces are decided by `match`, never by pasting text.

use crate::litmus::ast::{cluster_arrive_sem, AtomOp, FenceSem, MembarLevel, Scope, Sem, Spelled};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A PTX register name (`%t0`, `%ga1`, ...).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PReg(pub String);

/// An address operand: a register plus an immediate byte offset. Each location a role touches
/// gets its own offset (its argument is biased by the same amount), so the offset survives
/// into the SASS and tells which location an instruction accesses.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PAddr {
    /// Base register.
    pub base: PReg,
    /// Byte offset.
    pub offset: u32,
}

impl fmt::Display for PAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.offset == 0 {
            write!(f, "{}", self.base)
        } else {
            write!(f, "{}+{}", self.base, self.offset)
        }
    }
}

/// A source operand: a register or a 32-bit immediate.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Src {
    /// A register.
    Reg(PReg),
    /// An immediate.
    Imm(u32),
}

/// The state space of a memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PSpace {
    /// `.global` (64-bit address).
    Global,
    /// `.shared::cta` (32-bit address in the CTA's own shared memory).
    SharedCta,
    /// `.shared::cluster` (32-bit address from `mapa`, shared memory of another CTA).
    SharedCluster,
    /// The texture proxy: an element index (32-bit) of the texture object over the memory
    /// buffer, which the role reads with `tex` (no state space of its own).
    Texture,
    /// The surface proxy: a word index (32-bit) of the CUDA array under the surface object,
    /// which the role turns into coordinates for `suld`/`sust`.
    Surface,
}

/// Semantics and scope of a memory operation as PTX spells them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Order {
    /// `.weak`, `.relaxed`, `.acquire`, `.release`, `.acq_rel`, `.volatile`.
    pub sem: Sem,
    /// The scope, printed after the semantics when present.
    pub scope: Option<Scope>,
}

/// A memory operation, fence or barrier of a test, in PTX.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum POp {
    /// `ld{.sem}{.scope}.space.u32 dst, [addr];`
    Ld {
        /// Semantics and scope.
        order: Order,
        /// State space.
        space: PSpace,
        /// Destination.
        dst: PReg,
        /// Address.
        addr: PAddr,
    },
    /// `st{.sem}{.scope}.space.u32 [addr], src;`
    St {
        /// Semantics and scope.
        order: Order,
        /// State space.
        space: PSpace,
        /// Address.
        addr: PAddr,
        /// Value.
        src: PReg,
    },
    /// `atom{.sem}{.scope}.space.op.type dst, [addr], a{, b};`
    Atom {
        /// Semantics and scope.
        order: Order,
        /// State space.
        space: PSpace,
        /// Operation (never `Sub`: that lowers to `add` of the negation).
        op: AtomOp,
        /// Old value.
        dst: PReg,
        /// Address.
        addr: PAddr,
        /// Operand.
        a: Src,
        /// Second operand of `cas`.
        b: Option<Src>,
    },
    /// `red{.sem}{.scope}.space.op.type [addr], a;`
    Red {
        /// Semantics and scope.
        order: Order,
        /// State space.
        space: PSpace,
        /// Operation.
        op: AtomOp,
        /// Address.
        addr: PAddr,
        /// Operand.
        a: Src,
    },
    /// `fence.{sc,acq_rel,acquire,release}.scope;`
    Fence {
        /// Semantics.
        sem: FenceSem,
        /// Scope.
        scope: Scope,
    },
    /// `membar.{cta,gl,sys};`
    Membar(MembarLevel),
    /// `fence.proxy.alias;`
    FenceProxyAlias,
    /// `barrier.sync id, count;` (the non-`.aligned` form: lanes of a warp may reach it from
    /// different code).
    BarrierSync {
        /// Hardware barrier (register: it depends on the thread's block).
        id: PReg,
        /// Participating threads, a multiple of 32.
        count: u32,
    },
    /// `barrier.arrive id, count;`
    BarrierArrive {
        /// Hardware barrier.
        id: PReg,
        /// Participating threads, a multiple of 32.
        count: u32,
    },
    /// A call of the software barrier (`ptx/soft_barrier.ptx`) standing for a CTA barrier
    /// with a run-time key.
    SoftBarrier {
        /// `litmus_soft_arrive` rather than `litmus_soft_sync`.
        arrive: bool,
        /// Index in [`super::layout::Shape::soft_barriers`].
        barrier: u32,
    },
    /// `barrier.cluster.arrive.{release,relaxed};`
    ClusterArrive {
        /// `.relaxed` instead of `.release`.
        relaxed: bool,
    },
    /// `barrier.cluster.wait.acquire;`
    ClusterWait,
    /// `tex.1d.v4.u32.s32 {dst, _, _, _}, [TEXTURE, {index}];`: a texture fetch of element
    /// `index` of the role's texture object (register [`TEXTURE`]); the fetch returns four
    /// channels, of which a one-channel texture fills the first.
    Tld {
        /// Destination.
        dst: PReg,
        /// Element index (`.s32`).
        index: PReg,
    },
    /// `suld.b.2d.b32.trap {dst}, [SURFACE, {x, y}];`: a surface read of the word at byte `x`
    /// of row `y` (the coordinates in [`SURFACE`]).
    Suld {
        /// Destination.
        dst: PReg,
    },
    /// `sust.b.2d.b32.trap [SURFACE, {x, y}], {src};`: a surface write.
    Sust {
        /// Value.
        src: PReg,
    },
}

/// Words in a row of the CUDA array behind the surface object: a word's coordinates are
/// `(4 * (w % SURFACE_ROW)` bytes, `w / SURFACE_ROW)`.
pub const SURFACE_ROW: u64 = 8192;

/// The register of a role that holds its surface object, and those of a surface access's
/// coordinates (x in bytes, y in rows).
pub const SURFACE: [&str; 3] = ["%surf", "%sux", "%suy"];

/// The register of a role that holds its texture object.
pub const TEXTURE: &str = "%tex";

/// The registers that receive the texture fetch's unused channels.
pub const TEXTURE_SINK: [&str; 3] = ["%txs0", "%txs1", "%txs2"];

impl PSpace {
    /// The PTX state-space qualifier.
    pub fn as_str(self) -> &'static str {
        match self {
            PSpace::Global => ".global",
            PSpace::SharedCta => ".shared::cta",
            PSpace::SharedCluster => ".shared::cluster",
            PSpace::Texture | PSpace::Surface => "",
        }
    }
}

impl fmt::Display for PReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Src {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Src::Reg(r) => write!(f, "{r}"),
            Src::Imm(v) => write!(f, "{v}"),
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ".{}", self.sem.as_str())?;
        if let Some(s) = self.scope {
            write!(f, ".{}", s.as_str())?;
        }
        Ok(())
    }
}

impl POp {
    /// The instruction without operands (`ld.acquire.gpu.global.u32`, `barrier.sync`).
    pub fn mnemonic(&self) -> String {
        let text = self.to_string();
        if let POp::SoftBarrier { .. } = self {
            // The callee names the operation, not the `call` mnemonic.
            return text.split(',').next().unwrap_or("").to_string();
        }
        let head = text.split_whitespace().next().unwrap_or("");
        head.trim_end_matches(';').to_string()
    }
}

/// The type suffix an atomic operation takes.
fn atom_type(op: AtomOp) -> &'static str {
    match op {
        AtomOp::Exch | AtomOp::Cas | AtomOp::And | AtomOp::Or | AtomOp::Xor => ".b32",
        AtomOp::Add | AtomOp::Sub | AtomOp::Inc | AtomOp::Dec | AtomOp::Min | AtomOp::Max => ".u32",
    }
}

impl fmt::Display for POp {
    // One arm per PTX instruction: the spellings read best side by side.
    #[allow(clippy::too_many_lines)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            POp::Ld {
                order,
                space,
                dst,
                addr,
            } => write!(f, "ld{order}{}.u32 {dst}, [{addr}];", space.as_str()),
            POp::St {
                order,
                space,
                addr,
                src,
            } => write!(f, "st{order}{}.u32 [{addr}], {src};", space.as_str()),
            POp::Atom {
                order,
                space,
                op,
                dst,
                addr,
                a,
                b,
            } => {
                write!(
                    f,
                    "atom{order}{}.{}{} {dst}, [{addr}], {a}",
                    space.as_str(),
                    op.as_str(),
                    atom_type(*op)
                )?;
                if let Some(b) = b {
                    write!(f, ", {b}")?;
                }
                f.write_str(";")
            }
            POp::Red {
                order,
                space,
                op,
                addr,
                a,
            } => write!(
                f,
                "red{order}{}.{}{} [{addr}], {a};",
                space.as_str(),
                op.as_str(),
                atom_type(*op)
            ),
            POp::Fence { sem, scope } => {
                write!(f, "fence.{}.{};", sem.as_str(), scope.as_str())
            }
            POp::Membar(l) => write!(f, "membar.{};", l.as_str()),
            POp::FenceProxyAlias => f.write_str("fence.proxy.alias;"),
            POp::BarrierSync { id, count } => write!(f, "barrier.sync {id}, {count};"),
            POp::BarrierArrive { id, count } => write!(f, "barrier.arrive {id}, {count};"),
            POp::ClusterArrive { relaxed } => {
                write!(
                    f,
                    "barrier.cluster.arrive.{};",
                    cluster_arrive_sem(*relaxed)
                )
            }
            POp::ClusterWait => f.write_str("barrier.cluster.wait.acquire;"),
            POp::Suld { dst } => {
                let [s, x, y] = SURFACE;
                write!(f, "suld.b.2d.b32.trap {{{dst}}}, [{s}, {{{x}, {y}}}];")
            }
            POp::Sust { src } => {
                let [s, x, y] = SURFACE;
                write!(f, "sust.b.2d.b32.trap [{s}, {{{x}, {y}}}], {{{src}}};")
            }
            POp::Tld { dst, index } => {
                let [a, b, c] = TEXTURE_SINK;
                write!(
                    f,
                    "tex.1d.v4.u32.s32 {{{dst}, {a}, {b}, {c}}}, [{TEXTURE}, {{{index}}}];"
                )
            }
            POp::SoftBarrier { arrive, barrier } => write!(
                f,
                "call litmus_soft_{}, (software barrier {barrier});",
                if *arrive { "arrive" } else { "sync" }
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> PReg {
        PReg(s.into())
    }

    fn a(s: &str) -> PAddr {
        PAddr {
            base: r(s),
            offset: 0,
        }
    }

    #[test]
    fn instructions_print_in_isa_spelling() {
        let acq = Order {
            sem: Sem::Acquire,
            scope: Some(Scope::Gpu),
        };
        let ld = POp::Ld {
            order: acq,
            space: PSpace::Global,
            dst: r("%t0"),
            addr: PAddr {
                base: r("%ga0"),
                offset: 16,
            },
        };
        assert_eq!(ld.to_string(), "ld.acquire.gpu.global.u32 %t0, [%ga0+16];");
        let red = POp::Red {
            order: Order {
                sem: Sem::Release,
                scope: Some(Scope::Gpu),
            },
            space: PSpace::Global,
            op: AtomOp::Add,
            addr: a("%ga0"),
            a: Src::Imm(1),
        };
        assert_eq!(red.to_string(), "red.release.gpu.global.add.u32 [%ga0], 1;");
        let cas = POp::Atom {
            order: Order {
                sem: Sem::Relaxed,
                scope: None,
            },
            space: PSpace::SharedCluster,
            op: AtomOp::Cas,
            dst: r("%t1"),
            addr: a("%sa0"),
            a: Src::Imm(0),
            b: Some(Src::Imm(1)),
        };
        assert_eq!(
            cas.to_string(),
            "atom.relaxed.shared::cluster.cas.b32 %t1, [%sa0], 0, 1;"
        );
        assert_eq!(
            POp::Fence {
                sem: FenceSem::Sc,
                scope: Scope::Cta
            }
            .to_string(),
            "fence.sc.cta;"
        );
        assert_eq!(
            POp::ClusterWait.to_string(),
            "barrier.cluster.wait.acquire;"
        );
    }
}
