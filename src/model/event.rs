//! The events of an execution: what each read, write, fence and barrier did, with the attributes
//! the relations of PTX ISA §8 look at (thread, strength, scope, location, proxy).

use crate::litmus::ast::{Proxy, Scope, Spelled, Value};
use std::sync::Arc;

/// Which kind of fence a fence event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenceKind {
    /// `fence.sc` (and `membar`): release and acquire, ordered by Fence-SC order.
    Sc,
    /// `fence.acq_rel`: release and acquire.
    AcqRel,
    /// `fence.acquire`.
    Acquire,
    /// `fence.release`.
    Release,
    /// `fence.proxy.alias`.
    ProxyAlias,
    /// `fence.proxy.{texture,surface,constant}`: orders the given proxy with the generic one.
    Proxy(Proxy),
}

/// What a barrier event is, with the values of its operands in this execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierKind {
    /// `bar.cta.sync`/`bar.cta.red` (waits) or `bar.cta.arrive` (does not).
    Cta {
        /// Whether the thread waits (`sync`, `red`) rather than only arrives.
        waits: bool,
        /// The barrier id.
        id: Value,
        /// The second operand (Dat3M's barrier resource), when given.
        count: Option<Value>,
        /// The quorum (Dat3M's third operand), when given.
        quorum: Option<Value>,
        /// How many earlier barrier events of the thread used the same id and count.
        instance: u32,
    },
    /// `barrier.cluster.arrive` (`relaxed`: no memory ordering).
    ClusterArrive {
        /// `.relaxed`.
        relaxed: bool,
        /// How many earlier cluster arrivals the thread made.
        instance: u32,
    },
    /// `barrier.cluster.wait`.
    ClusterWait {
        /// How many earlier cluster waits the thread made.
        instance: u32,
    },
}

/// The kind of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A read (a load, or the read half of an `atom`/`red`).
    Read,
    /// A write (a store, the write half of an `atom`/`red`, or an initial write).
    Write,
    /// A fence.
    Fence(FenceKind),
    /// A barrier.
    Barrier(BarrierKind),
}

/// One event of an execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The thread, `None` for an initial write.
    pub thread: Option<usize>,
    /// The instruction of the thread's body that produced it (0 for initial writes).
    pub instr: usize,
    /// What it is.
    pub kind: Kind,
    /// Physical location (index into the test's memory locations) for memory events.
    pub loc: usize,
    /// Virtual address (one per generic name; a texture/surface/constant alias shares its
    /// target's) for memory events.
    pub vaddr: usize,
    /// The location name the instruction used (shared: events are copied into every
    /// combination of traces).
    pub loc_name: Arc<str>,
    /// The value read or written.
    pub value: Value,
    /// Strong (relaxed, acquire, release, acq_rel, volatile) rather than weak.
    pub strong: bool,
    /// Has acquire semantics (a read of `ld.acquire`, `atom.acquire`, `atom.acq_rel`).
    pub acquire: bool,
    /// Has release semantics (a write of `st.release`, `atom.release`, `atom.acq_rel`).
    pub release: bool,
    /// The scope (weak accesses: `sys`, never used).
    pub scope: Scope,
    /// The proxy of a memory access.
    pub proxy: Proxy,
    /// The read half of a `red`: never part of an acquire pattern.
    pub from_red: bool,
    /// Part of an `atom`/`red` (the read or the write half).
    pub atomic: bool,
}

impl Event {
    /// Whether it reads memory.
    pub fn is_read(&self) -> bool {
        // `matches!` rather than `==`: the derived comparison of the whole `Kind` (barrier
        // operands included) is a call in the model's innermost loops.
        matches!(self.kind, Kind::Read)
    }

    /// Whether it writes memory.
    pub fn is_write(&self) -> bool {
        matches!(self.kind, Kind::Write)
    }

    /// Whether it accesses memory.
    pub fn is_memory(&self) -> bool {
        matches!(self.kind, Kind::Read | Kind::Write)
    }

    /// Whether it is an initial write.
    pub fn is_init(&self) -> bool {
        self.thread.is_none()
    }

    /// Whether it is a `fence.sc` (or `membar`).
    pub fn is_sc_fence(&self) -> bool {
        matches!(self.kind, Kind::Fence(FenceKind::Sc))
    }

    /// Whether it can start a release pattern as a fence (`fence.sc`, `.acq_rel`, `.release`).
    pub fn is_release_fence(&self) -> bool {
        matches!(
            self.kind,
            Kind::Fence(FenceKind::Sc | FenceKind::AcqRel | FenceKind::Release)
        )
    }

    /// Whether it can end an acquire pattern as a fence (`fence.sc`, `.acq_rel`, `.acquire`).
    pub fn is_acquire_fence(&self) -> bool {
        matches!(
            self.kind,
            Kind::Fence(FenceKind::Sc | FenceKind::AcqRel | FenceKind::Acquire)
        )
    }

    /// Whether the event counts as strong for moral strength: strong memory accesses, and every
    /// fence and barrier.
    pub fn strong_op(&self) -> bool {
        !self.is_memory() || self.strong
    }

    /// A memory access's semantics in its label: `.weak`, or its order and scope
    /// (`.acq.gpu`), then its proxy unless generic (`.tex`).
    fn sem_label(&self) -> String {
        let mut s = String::new();
        if !self.strong {
            s.push_str(".weak");
        } else {
            if self.acquire {
                s.push_str(".acq");
            }
            if self.release {
                s.push_str(".rel");
            }
            if !self.acquire && !self.release {
                s.push_str(".rlx");
            }
            s.push('.');
            s.push_str(self.scope.as_str());
        }
        s.push_str(match self.proxy {
            Proxy::Texture => ".tex",
            Proxy::Surface => ".sur",
            Proxy::Constant => ".const",
            Proxy::Generic => "",
        });
        s
    }

    /// A short herd-like label, e.g. `W.rel.gpu x=1` or `F.sc.cta`.
    pub fn label(&self) -> String {
        match self.kind {
            Kind::Read => format!("R{} {}={}", self.sem_label(), self.loc_name, self.value),
            Kind::Write if self.is_init() => format!("Winit {}={}", self.loc_name, self.value),
            Kind::Write => format!("W{} {}={}", self.sem_label(), self.loc_name, self.value),
            Kind::Fence(f) => match f {
                FenceKind::Sc => format!("F.sc.{}", self.scope.as_str()),
                FenceKind::AcqRel => format!("F.acq_rel.{}", self.scope.as_str()),
                FenceKind::Acquire => format!("F.acquire.{}", self.scope.as_str()),
                FenceKind::Release => format!("F.release.{}", self.scope.as_str()),
                FenceKind::ProxyAlias => "F.proxy.alias".to_string(),
                FenceKind::Proxy(p) => format!("F.proxy.{}", p.as_str()),
            },
            Kind::Barrier(b) => match b {
                BarrierKind::Cta {
                    waits,
                    id,
                    count,
                    quorum,
                    ..
                } => {
                    let rest: String = count
                        .iter()
                        .chain(&quorum)
                        .map(|v| format!(",{v}"))
                        .collect();
                    format!("B.{} {id}{rest}", if waits { "sync" } else { "arrive" })
                }
                BarrierKind::ClusterArrive { relaxed, .. } => {
                    format!("B.cluster.arrive{}", if relaxed { ".relaxed" } else { "" })
                }
                BarrierKind::ClusterWait { .. } => "B.cluster.wait".to_string(),
            },
        }
    }
}
