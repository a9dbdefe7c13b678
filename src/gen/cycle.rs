//! The cycle language, in the spirit of diy7 (herdtools7): a test is a cycle of relations
//! between events, each edge one of
//!
//! - communication: `Rfe`, `Fre`, `Coe` (between threads), `Rfi`, `Fri`, `Coi` (in one thread);
//! - program order: `PodXY` (different locations), `PosXY` (the same location), X and Y each
//!   `R` or `W`;
//! - a fence between the two accesses: `Fence(KIND)dXY`, KIND as in `fence.KIND` or
//!   `membar.LEVEL` (`Fence(sc.gpu)dWR`, `Fence(acq_rel)dRR`, `Fence(membar.gl)dWW`);
//! - dependencies from a read: `DpAddrdR`, `DpAddrdW`, `DpDatadW`, `DpCtrldR`, `DpCtrldW`;
//! - `Rmw`: from the read to the write of one atomic read-modify-write (diy7's `Rmw`), one
//!   `atom.exch` whose semantics join the two events' annotations (`acq Rmw rel` is
//!   `atom.acq_rel`); `Rmw(cas)` and `Rmw(add)` make it an `atom.cas` (expecting the value
//!   read) or an `atom.add` (of the difference between the values written and read).
//!
//! Events may carry annotations (see [`super::annot`]) written just before the edge that leaves
//! them: `rlx PodWW rel Rfe acq PodRR rlx Fre` is message passing with a release write and an
//! acquire read. An event left unannotated is `rlx`.

use super::annot::{Annot, Dir, FenceKind};
use super::GenError;
use crate::litmus::ast::{AtomOp, Placement, Scope};

/// Communication relations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Com {
    /// Reads-from: write to read.
    Rf,
    /// From-reads: read to a write coherence-after the one it read.
    Fr,
    /// Coherence: write to a later write.
    Co,
}

/// Dependencies a read can start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dep {
    /// The address of the later access depends on the value read.
    Addr,
    /// The value written depends on the value read.
    Data,
    /// The later access follows a branch on the value read.
    Ctrl,
}

/// What an edge relates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// A communication edge, between threads (`external`) or inside one.
    Com {
        /// Which relation.
        com: Com,
        /// Whether the two events are in different threads.
        external: bool,
    },
    /// Program order; `same_loc` for `Pos`.
    Po {
        /// Whether both accesses are to one location.
        same_loc: bool,
    },
    /// Program order with a fence between, different locations.
    Fenced(FenceKind),
    /// A dependency, different locations.
    Dp(Dep),
    /// The read and the write of one atomic read-modify-write (`exch`, `cas` or `add`), one
    /// location.
    Rmw(AtomOp),
}

/// One edge of a cycle: its kind and the directions of its two events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Edge {
    /// What the edge relates.
    pub kind: EdgeKind,
    /// Direction of the event it leaves.
    pub src: Dir,
    /// Direction of the event it reaches.
    pub dst: Dir,
}

/// An annotated cycle: `events[i]` is the annotation of the event that `edges[i]` leaves.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cycle {
    /// Per event, its annotation.
    pub events: Vec<Annot>,
    /// Per event, the edge leaving it; the last one returns to event 0.
    pub edges: Vec<Edge>,
}

fn dir(c: char) -> Option<Dir> {
    match c {
        'R' => Some(Dir::R),
        'W' => Some(Dir::W),
        _ => None,
    }
}

fn two_dirs(s: &str) -> Option<(Dir, Dir)> {
    let mut c = s.chars();
    let pair = (dir(c.next()?)?, dir(c.next()?)?);
    c.next().is_none().then_some(pair)
}

impl Edge {
    /// The edge inside an atomic read-modify-write, from its read to its write.
    pub const RMW: Edge = Edge::rmw(AtomOp::Exch);

    /// The edge inside an atomic read-modify-write `op`, from its read to its write.
    pub const fn rmw(op: AtomOp) -> Edge {
        Edge {
            kind: EdgeKind::Rmw(op),
            src: Dir::R,
            dst: Dir::W,
        }
    }

    /// Whether the edge joins the read and the write of one RMW.
    pub fn is_rmw(&self) -> bool {
        matches!(self.kind, EdgeKind::Rmw(_))
    }

    /// Parses an edge token, or `None` when the token is not an edge (an annotation).
    pub fn parse(token: &str) -> Option<Result<Edge, GenError>> {
        if let Some(e) = com_edge(token) {
            return Some(Ok(e));
        }
        if let Some(r) = token.strip_prefix("Rmw") {
            return Some(rmw_edge(token, r));
        }
        if let Some(r) = token.strip_prefix("Pod") {
            return Some(po_edge(token, false, r));
        }
        if let Some(r) = token.strip_prefix("Pos") {
            return Some(po_edge(token, true, r));
        }
        if let Some(r) = token.strip_prefix("Fence(") {
            let (kind, dirs) = r.split_once(")d")?;
            return Some(fence_edge(token, kind, dirs));
        }
        for (word, d) in [
            ("DpAddr", Dep::Addr),
            ("DpData", Dep::Data),
            ("DpCtrl", Dep::Ctrl),
        ] {
            if let Some(r) = token.strip_prefix(word) {
                return Some(dep_edge(token, d, r));
            }
        }
        None
    }

    /// Whether the edge leaves its thread.
    pub fn external(&self) -> bool {
        matches!(self.kind, EdgeKind::Com { external: true, .. })
    }

    /// Whether the edge is a communication edge (`Rf`, `Fr`, `Co`), not program order.
    pub fn is_com(&self) -> bool {
        matches!(self.kind, EdgeKind::Com { .. })
    }

    /// Whether the two events access different locations.
    pub fn changes_location(&self) -> bool {
        matches!(
            self.kind,
            EdgeKind::Po { same_loc: false } | EdgeKind::Fenced(_) | EdgeKind::Dp(_)
        )
    }

    /// The token that parses back to this edge.
    pub fn text(&self) -> String {
        let d = |x: Dir| if x == Dir::R { "R" } else { "W" };
        let dirs = format!("{}{}", d(self.src), d(self.dst));
        match self.kind {
            EdgeKind::Com { com, external } => {
                let c = match com {
                    Com::Rf => "Rf",
                    Com::Fr => "Fr",
                    Com::Co => "Co",
                };
                format!("{c}{}", if external { "e" } else { "i" })
            }
            EdgeKind::Po { same_loc } => format!("Po{}{dirs}", if same_loc { "s" } else { "d" }),
            EdgeKind::Fenced(f) => format!("Fence({})d{dirs}", f.text()),
            EdgeKind::Rmw(AtomOp::Exch) => "Rmw".into(),
            EdgeKind::Rmw(op) => format!("Rmw({})", op.as_str()),
            EdgeKind::Dp(dep) => {
                let w = match dep {
                    Dep::Addr => "Addr",
                    Dep::Data => "Data",
                    Dep::Ctrl => "Ctrl",
                };
                format!("Dp{w}d{}", d(self.dst))
            }
        }
    }
}

impl Cycle {
    /// Parses a cycle: edges separated by spaces, each optionally preceded by the annotation of
    /// the event it leaves. The cycle is checked (directions meet, at least two threads) and
    /// turned so that it starts with a thread's first event.
    pub fn parse(text: &str) -> Result<Cycle, GenError> {
        let mut events = Vec::new();
        let mut edges = Vec::new();
        let mut pending: Option<Annot> = None;
        for token in text.split_whitespace() {
            match Edge::parse(token) {
                Some(edge) => {
                    edges.push(edge?);
                    events.push(pending.take().unwrap_or_default());
                }
                None if pending.is_some() => {
                    return Err(GenError::msg(format!(
                        "`{token}`: two annotations for one event"
                    )))
                }
                None => pending = Some(Annot::parse(token)?),
            }
        }
        if pending.is_some() {
            return Err(GenError::msg("the cycle ends with an annotation: annotations go before the edge leaving their event"));
        }
        let cycle = Cycle { events, edges };
        cycle.check()?;
        Ok(cycle.rotated())
    }

    fn check(&self) -> Result<(), GenError> {
        let n = self.edges.len();
        if n < 2 {
            return Err(GenError::msg("a cycle needs at least two edges"));
        }
        for i in 0..n {
            let (a, b) = (self.edges[i], self.edges[(i + 1) % n]);
            if a.dst != b.src {
                return Err(GenError::msg(format!(
                    "`{}` then `{}`: the first reaches a {} and the second leaves a {}",
                    a.text(),
                    b.text(),
                    dir_word(a.dst),
                    dir_word(b.src)
                )));
            }
            if !self.events[i].access.fits(a.src) {
                return Err(GenError::msg(format!(
                    "`{}` cannot annotate a {}",
                    self.events[i].text(),
                    dir_word(a.src)
                )));
            }
            if a.is_rmw() {
                Annot::rmw_of(self.events[i], self.events[(i + 1) % n])?;
            }
        }
        if self.edges.iter().filter(|e| e.external()).count() < 2 {
            return Err(GenError::msg(
                "a cycle needs at least two external edges (two threads)",
            ));
        }
        Ok(())
    }

    /// The same cycle started right after an external edge, so that event 0 opens thread 0.
    fn rotated(mut self) -> Cycle {
        let n = self.edges.len();
        if !self.edges[n - 1].external() {
            let first = self.edges.iter().position(Edge::external).expect("checked");
            self.edges.rotate_left(first + 1);
            self.events.rotate_left(first + 1);
        }
        self
    }

    /// The cycle as text that parses back to it.
    pub fn text(&self) -> String {
        let parts: Vec<String> = self
            .events
            .iter()
            .zip(&self.edges)
            .map(|(a, e)| format!("{} {}", a.text(), e.text()))
            .collect();
        parts.join(" ")
    }

    /// The cycle with every access scope left out filled with `scope` and every fence scope
    /// left out with `fence_scope`.
    pub fn with_scopes(&self, scope: Scope, fence_scope: Scope) -> Cycle {
        let mut c = self.clone();
        let n = c.edges.len();
        // The two halves of an RMW are one instruction: a scope named on one is the other's.
        for i in (0..n).filter(|&i| c.edges[i].is_rmw()) {
            let named = c.events[i].scope.or(c.events[(i + 1) % n].scope);
            c.events[i].scope = named;
            c.events[(i + 1) % n].scope = named;
        }
        for a in &mut c.events {
            *a = a.with_scopes(scope, fence_scope);
        }
        for e in &mut c.edges {
            if let EdgeKind::Fenced(f) = e.kind {
                e.kind = EdgeKind::Fenced(f.with_scope(fence_scope));
            }
        }
        c
    }
}

impl Cycle {
    /// The cycle as the model sees it with its threads at `places`: scopes narrowed to the
    /// narrowest that include the same threads, `vol` as `rlx.sys`, `membar` as `fence.sc`.
    pub fn normalised(&self, places: &[Placement]) -> Cycle {
        let mut c = self.clone();
        let mut thread = 0;
        for i in 0..c.edges.len() {
            let at = &places[thread];
            c.events[i] = c.events[i].normalised(at, places);
            if let EdgeKind::Fenced(f) = c.edges[i].kind {
                c.edges[i].kind = EdgeKind::Fenced(f.normalised(at, places));
            }
            thread += usize::from(c.edges[i].external());
        }
        c
    }

    /// Number of threads.
    pub fn threads(&self) -> usize {
        self.edges.iter().filter(|e| e.external()).count()
    }
}

fn dir_word(d: Dir) -> &'static str {
    match d {
        Dir::R => "read",
        Dir::W => "write",
    }
}

/// Why edge `token` is malformed.
fn bad_edge(token: &str, why: &str) -> GenError {
    GenError::msg(format!("edge `{token}`: {why}"))
}

/// The communication edge `token` names (`Rfe`, `Fri`, `Coe`, ...), if it is one.
fn com_edge(token: &str) -> Option<Edge> {
    let (com, external, src, dst) = match token {
        "Rfe" => (Com::Rf, true, Dir::W, Dir::R),
        "Rfi" => (Com::Rf, false, Dir::W, Dir::R),
        "Fre" => (Com::Fr, true, Dir::R, Dir::W),
        "Fri" => (Com::Fr, false, Dir::R, Dir::W),
        "Coe" => (Com::Co, true, Dir::W, Dir::W),
        "Coi" => (Com::Co, false, Dir::W, Dir::W),
        _ => return None,
    };
    Some(Edge {
        kind: EdgeKind::Com { com, external },
        src,
        dst,
    })
}

/// The operations an `Rmw` edge can be: those whose write a cycle's values fix.
const RMW_OPS: [AtomOp; 3] = [AtomOp::Exch, AtomOp::Cas, AtomOp::Add];

/// An RMW edge: `Rmw` (an exchange), or `Rmw(OP)` with `rest` holding `(OP)`.
fn rmw_edge(token: &str, rest: &str) -> Result<Edge, GenError> {
    if rest.is_empty() {
        return Ok(Edge::RMW);
    }
    rest.strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .and_then(|op| RMW_OPS.into_iter().find(|o| o.as_str() == op))
        .map(Edge::rmw)
        .ok_or_else(|| {
            bad_edge(
                token,
                "expected `Rmw`, `Rmw(exch)`, `Rmw(cas)` or `Rmw(add)`",
            )
        })
}

/// A program-order edge (`PodWR`, `PosRR`): `rest` holds its two directions.
fn po_edge(token: &str, same_loc: bool, rest: &str) -> Result<Edge, GenError> {
    let (src, dst) = two_dirs(rest)
        .ok_or_else(|| bad_edge(token, "expected two directions, R or W (`PodWR`)"))?;
    Ok(Edge {
        kind: EdgeKind::Po { same_loc },
        src,
        dst,
    })
}

/// A fenced edge (`Fence(sc.gpu)dWR`): its fence `kind` and two directions `dirs`.
fn fence_edge(token: &str, kind: &str, dirs: &str) -> Result<Edge, GenError> {
    let f = FenceKind::parse(kind)?;
    let (src, dst) = two_dirs(dirs).ok_or_else(|| {
        bad_edge(
            token,
            "expected `Fence(KIND)d` and two directions (`Fence(sc.gpu)dWR`)",
        )
    })?;
    Ok(Edge {
        kind: EdgeKind::Fenced(f),
        src,
        dst,
    })
}

/// A dependency edge from a read (`DpAddrdW`): `rest` is `dR` or `dW`.
fn dep_edge(token: &str, d: Dep, rest: &str) -> Result<Edge, GenError> {
    let dst = rest.strip_prefix('d').and_then(|r| {
        let mut c = r.chars();
        let t = dir(c.next()?)?;
        c.next().is_none().then_some(t)
    });
    match dst {
        Some(Dir::R) if d == Dep::Data => Err(bad_edge(token, "a data dependency ends at a write")),
        Some(dst) => Ok(Edge {
            kind: EdgeKind::Dp(d),
            src: Dir::R,
            dst,
        }),
        None => Err(bad_edge(
            token,
            "expected `dR` or `dW` after the dependency",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_round_trip_and_start_at_a_thread() {
        let c = Cycle::parse("PodWW Rfe acq PodRR Fre").unwrap();
        assert_eq!(c.text(), "rlx PodWW rlx Rfe acq PodRR rlx Fre");
        let sb = Cycle::parse("Fre PodWR Fre PodWR").unwrap();
        assert_eq!(sb.text(), "rlx PodWR rlx Fre rlx PodWR rlx Fre");
        for t in [
            "DpAddrdW Rfe DpDatadW Rfe",
            "Fence(sc.gpu)dWR Fre Fence(membar.gl)dWR Fre",
        ] {
            let c = Cycle::parse(t).unwrap();
            assert_eq!(Cycle::parse(&c.text()).unwrap(), c);
        }
    }

    #[test]
    fn an_rmw_joins_a_read_and_a_write_of_one_instruction() {
        let c = Cycle::parse("Rmw Rfe Rmw Rfe").unwrap();
        assert_eq!(c.edges[0], Edge::RMW);
        assert!(!Edge::RMW.changes_location() && !Edge::RMW.is_com());
        assert_eq!(Cycle::parse(&c.text()).unwrap(), c);
        let e = |t: &str| Cycle::parse(t).unwrap_err().to_string();
        assert!(e("wk Rmw Rfe Rmw Rfe").contains("the read of an RMW is `rlx` or `acq`"));
        assert!(e("Rmw vol Rfe Rmw Rfe").contains("the write of an RMW is"));
        assert!(e("rlx.cta Rmw rlx.gpu Rfe Rmw Rfe").contains("two scopes"));
        assert!(e("Rmw Fence(sc)+rlx Rfe Rmw Rfe").contains("no fence can come between"));
        let cas = Cycle::parse("Rmw(cas) Rfe Rmw(add) Rfe").unwrap();
        assert_eq!(cas.text(), "rlx Rmw(cas) rlx Rfe rlx Rmw(add) rlx Rfe");
        assert_eq!(Cycle::parse("Rmw(exch) Rfe Rmw Rfe").unwrap(), c);
        assert!(e("Rmw(inc) Rfe Rmw Rfe").contains("expected `Rmw`, `Rmw(exch)`, `Rmw(cas)`"));
        // A scope named on one half is the other's before the family fills in its own.
        let c = Cycle::parse("rlx.cta Rmw Rfe Rmw Rfe").unwrap();
        let filled = c.with_scopes(Scope::Gpu, Scope::Gpu);
        assert_eq!(filled.events[1].scope, Some(Scope::Cta));
        assert_eq!(filled.events[3].scope, Some(Scope::Gpu));
    }

    #[test]
    fn bad_cycles_say_why() {
        let e = |t: &str| Cycle::parse(t).unwrap_err().to_string();
        assert!(
            e("PodWW Fre").contains("reaches a write"),
            "{}",
            e("PodWW Fre")
        );
        assert!(e("PodWR PodRW").contains("two external edges"));
        assert!(e("acq PodWW Rfe PodRR Fre").contains("cannot annotate a write"));
        assert!(e("PodWW Rfe PodRR Fre rlx").contains("ends with an annotation"));
        assert!(e("PodXW Rfe").contains("two directions"));
        assert!(e("DpDatadR Rfe").contains("ends at a write"));
    }
}
