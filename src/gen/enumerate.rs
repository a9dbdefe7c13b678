//! Every critical cycle up to a size over a pool of edges, in the spirit of diy7's `-size`,
//! `-relax` and `-safe`: the cycles a family's `cycles` line stands for.
//!
//! A cycle is kept when its edges chain (each reaches the direction the next leaves), it
//! crosses between two and `threads` threads, no thread holds more than two accesses (one edge
//! of program order or internal communication, as in Shasha and Snir's critical cycles; the
//! read and the write of an RMW, joined by `Rmw`, are one access), it
//! uses at least one `relax` edge, and it is a test as written ([`Skeleton::of`] accepts it).
//! A pool item is an edge (`PodWR`) or an annotation and an edge (`acq:PodRR`, `rel:Rfe`):
//! the annotation goes on the event the edge leaves, as in the cycle language; an edge alone
//! leaves an `rlx` one.
//! Rotations of one cycle are one cycle: the one kept is the least, comparing edges by their
//! text, of the rotations that start a thread, so a cycle is written (and named) the same
//! whatever the order of the pool; a cycle of a classic shape is then turned to start where
//! the shape does ([`shapes::aligned`]).

use super::annot::Annot;
use super::cycle::{Cycle, Edge};
use super::shapes;
use super::skeleton::Skeleton;
use super::GenError;

/// The longest cycle enumerated: beyond it the cycles of a useful pool run into millions.
pub const MAX_SIZE: usize = 8;
/// The most cycles one enumeration yields; more is refused with the count so far.
pub const MAX_CYCLES: usize = 10_000;

/// What to enumerate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pool {
    /// The most edges in a cycle.
    pub size: usize,
    /// The most threads in a cycle.
    pub threads: usize,
    /// Edges of which every cycle uses at least one (diy7's relaxations).
    pub relax: Vec<Step>,
    /// Edges a cycle may use besides.
    pub safe: Vec<Step>,
}

/// One item of a pool: an edge, and the annotation of the event it leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The annotation of the event the edge leaves.
    pub annot: Annot,
    /// The edge.
    pub edge: Edge,
}

impl Step {
    /// Parses `EDGE` or `ANNOT:EDGE`; the annotation must fit the event the edge leaves.
    fn parse(token: &str) -> Result<Step, GenError> {
        let (annot, edge_text) = match token.split_once(':') {
            Some((a, e)) => (Annot::parse(a)?, e),
            None => (Annot::default(), token),
        };
        let edge = Edge::parse(edge_text)
            .unwrap_or_else(|| Err(GenError::msg(format!("`{edge_text}` is not an edge"))))?;
        if !annot.access.fits(edge.src) {
            return Err(GenError::msg(format!(
                "`{token}`: `{}` cannot annotate the event `{}` leaves",
                annot.text(),
                edge.text()
            )));
        }
        if edge.is_rmw() {
            // Whatever write the RMW's read meets, this read cannot be one.
            Annot::rmw_of(annot, Annot::default())
                .map_err(|e| GenError::msg(format!("`{token}`: {}", e.msg)))?;
        }
        Ok(Step { annot, edge })
    }

    /// The step as cycle text: the annotation, then the edge.
    fn text(&self) -> String {
        format!("{} {}", self.annot.text(), self.edge.text())
    }
}

impl Pool {
    /// Parses `cycles SIZE [THREADS]`'s words and the edge tokens of the `relax` and `safe`
    /// lists.
    pub fn parse(
        size_words: &[String],
        relax: &[String],
        safe: &[String],
    ) -> Result<Pool, GenError> {
        let number = |w: &String, what: &str, lo: usize, hi: usize| {
            w.parse::<usize>()
                .ok()
                .filter(|n| (lo..=hi).contains(n))
                .ok_or_else(|| GenError::msg(format!("`{w}`: {what} is a number in {lo}..={hi}")))
        };
        let (size, threads) = match size_words {
            [s] => (number(s, "the size", 2, MAX_SIZE)?, 4),
            [s, t] => (
                number(s, "the size", 2, MAX_SIZE)?,
                number(t, "the thread count", 2, MAX_SIZE)?,
            ),
            _ => {
                return Err(GenError::msg(
                    "`cycles` takes a size and maybe a thread count",
                ))
            }
        };
        let relax = edges(relax)?;
        if relax.is_empty() {
            return Err(GenError::msg(
                "`cycles` needs a `relax` line: the edges of which every cycle uses one",
            ));
        }
        let safe = edges(safe)?
            .into_iter()
            .filter(|e| !relax.contains(e))
            .collect();
        Ok(Pool {
            size,
            threads,
            relax,
            safe,
        })
    }

    /// Every step, the relaxations first.
    fn all(&self) -> Vec<Step> {
        let mut all = self.relax.clone();
        all.extend(self.safe.iter().copied());
        all
    }

    /// The cycles, shortest first, then in the order of their edges' text.
    pub fn cycles(&self) -> Result<Vec<Cycle>, GenError> {
        let steps = self.all();
        let mut walk = Walk {
            pool: self,
            texts: steps.iter().map(Step::text).collect(),
            edges: steps.iter().map(|s| s.edge).collect(),
            seq: Vec::new(),
            out: Vec::new(),
        };
        for len in 2..=self.size {
            walk.extend(len)?;
        }
        let mut out = walk.out;
        out.sort_by_cached_key(|c| {
            (
                c.edges.len(),
                (c.events.iter().zip(&c.edges))
                    .map(|(a, e)| format!("{} {}", a.text(), e.text()))
                    .collect::<Vec<_>>(),
            )
        });
        Ok(out)
    }
}

/// The steps a list of tokens names, each once.
fn edges(tokens: &[String]) -> Result<Vec<Step>, GenError> {
    let mut out: Vec<Step> = Vec::new();
    for t in tokens {
        let e = Step::parse(t)?;
        if !out.contains(&e) {
            out.push(e);
        }
    }
    Ok(out)
}

/// A depth-first walk over sequences of pool positions.
struct Walk<'a> {
    pool: &'a Pool,
    edges: Vec<Edge>,
    /// Each step's text, by which rotations compare.
    texts: Vec<String>,
    seq: Vec<usize>,
    out: Vec<Cycle>,
}

impl Walk<'_> {
    /// Extends the sequence to `len` edges, keeping each complete cycle.
    fn extend(&mut self, len: usize) -> Result<(), GenError> {
        if self.seq.len() == len {
            return self.keep();
        }
        for i in 0..self.edges.len() {
            if self.fits(i, len) {
                self.seq.push(i);
                self.extend(len)?;
                self.seq.pop();
            }
        }
        Ok(())
    }

    /// Whether edge `i` may come next in a cycle of `len` edges: it leaves what the last one
    /// reaches, a thread gets no second edge of its own besides `Rmw`, threads stay within the bound, and
    /// the last edge leaves its thread (so the cycle starts a thread).
    fn fits(&self, i: usize, len: usize) -> bool {
        let e = self.edges[i];
        let last = self.seq.last().map(|&j| self.edges[j]);
        if last.is_some_and(|l| l.dst != e.src) {
            return false;
        }
        let ordered = |x: &Edge| !x.external() && !x.is_rmw();
        let thread = self.seq.iter().rev().map(|&j| self.edges[j]);
        if ordered(&e) && thread.take_while(|x| !x.external()).any(|x| ordered(&x)) {
            return false;
        }
        let threads = self
            .seq
            .iter()
            .filter(|&&j| self.edges[j].external())
            .count()
            + usize::from(e.external());
        let closing = self.seq.len() + 1 == len;
        threads <= self.pool.threads && (!closing || e.external())
    }

    /// Keeps the complete sequence when it is a cycle to test and the least of its rotations.
    fn keep(&mut self) -> Result<(), GenError> {
        let e: Vec<Edge> = self.seq.iter().map(|&i| self.edges[i]).collect();
        let closes = e[e.len() - 1].dst == e[0].src;
        let relaxed = self.seq.iter().any(|&i| i < self.pool.relax.len());
        if !closes || !relaxed || e.iter().filter(|x| x.external()).count() < 2 || !self.least() {
            return Ok(());
        }
        let text: Vec<&str> = self.seq.iter().map(|&i| self.texts[i].as_str()).collect();
        // A cycle the language refuses (an RMW whose write is `vol`) or that no test can make
        // happen is left out, like any other that is not a test as written.
        let Ok(cycle) = Cycle::parse(&text.join(" ")) else {
            return Ok(());
        };
        if Skeleton::of(&cycle).is_err() {
            return Ok(());
        }
        if self.out.len() == MAX_CYCLES {
            return Err(GenError::msg(format!(
                "more than {MAX_CYCLES} cycles of at most {} edges: lower the size or the pool",
                self.pool.size
            )));
        }
        self.out.push(shapes::aligned(&cycle));
        Ok(())
    }

    /// Whether the sequence is the least of its rotations that end with an external edge.
    fn least(&self) -> bool {
        let n = self.seq.len();
        let text = |i: &usize| &self.texts[*i];
        (1..n)
            .filter(|k| self.edges[self.seq[k - 1]].external())
            .all(|k| {
                let rotated = self.seq[k..].iter().chain(&self.seq[..k]).map(text);
                rotated.cmp(self.seq.iter().map(text)) != std::cmp::Ordering::Less
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn names(size: &str, relax: &str, safe: &str) -> Vec<String> {
        let pool = Pool::parse(&words(size), &words(relax), &words(safe)).unwrap();
        pool.cycles().unwrap().iter().map(shapes::name).collect()
    }

    #[test]
    fn program_order_and_communication_give_the_classic_shapes() {
        let all = names("4 2", "PodWR PodWW PodRR PodRW", "Rfe Fre Coe");
        for shape in ["MP", "SB", "LB", "S", "R", "2+2W"] {
            assert_eq!(
                all.iter().filter(|n| *n == shape).count(),
                1,
                "{shape}: {all:?}"
            );
        }
        assert_eq!(all.len(), 6, "{all:?}");
        let three = names("6 3", "PodWR PodWW PodRR PodRW", "Rfe Fre Coe");
        for shape in [
            "WRC", "RWC", "ISA2", "Z6.3", "WWC", "WRW+2W", "3.SB", "3.LB", "3.2W",
        ] {
            assert!(three.iter().any(|n| n == shape), "{shape}: {three:?}");
        }
        assert_eq!(names("6", "PodRR", "Rfe Fre"), ["IRIW"]);
    }

    #[test]
    fn every_cycle_uses_a_relaxation_and_is_counted_once() {
        let pool = Pool::parse(&words("4"), &words("PodWR"), &words("Rfe Fre Coe PodWW")).unwrap();
        let cycles = pool.cycles().unwrap();
        let texts: Vec<String> = cycles.iter().map(Cycle::text).collect();
        assert!(texts.iter().all(|t| t.contains("PodWR")), "{texts:?}");
        let mut unique = texts.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), texts.len(), "{texts:?}");
        assert_eq!(names("4", "PodWR", "Rfe Fre Coe PodWW"), ["SB", "R"]);
    }

    #[test]
    fn one_location_cycles_come_from_pos_edges() {
        let all = names("3", "PosRR PosWR", "Rfe Fre Coe");
        assert_eq!(all, ["CoWR", "CoRR"], "{all:?}");
    }

    #[test]
    fn variants_of_one_shape_get_names_of_their_own() {
        // MP with each fence on each side: the names must tell which thread has which.
        let pool = Pool::parse(
            &words("4"),
            &words("Fence(acq_rel.cta)dWW Fence(acq_rel.gpu)dWW"),
            &words("Rfe Fre Fence(acq_rel.cta)dRR Fence(acq_rel.gpu)dRR"),
        )
        .unwrap();
        let texts: Vec<String> = pool.cycles().unwrap().iter().map(Cycle::text).collect();
        assert_eq!(texts.len(), 4, "{texts:?}");
        assert!(
            texts.iter().all(|t| t.starts_with("rlx Fence(acq_rel.")),
            "{texts:?}"
        );
        assert!(texts.iter().all(|t| t.contains("dWW rlx Rfe")), "{texts:?}");
    }

    #[test]
    fn the_order_of_the_pool_changes_nothing() {
        let texts = |relax: &str, safe: &str| {
            let pool = Pool::parse(&words("6"), &words(relax), &words(safe)).unwrap();
            pool.cycles()
                .unwrap()
                .iter()
                .map(Cycle::text)
                .collect::<Vec<_>>()
        };
        let a = texts("PodWR Fence(sc)dWR PosRR DpAddrdR", "Rfe Fre Coe Rfi");
        let b = texts("DpAddrdR PosRR Fence(sc)dWR PodWR", "Rfi Coe Fre Rfe");
        assert!(a.len() > 30, "{}", a.len());
        assert_eq!(a, b);
    }

    #[test]
    fn pool_items_may_annotate_the_event_their_edge_leaves() {
        let pool = Pool::parse(
            &words("4 2"),
            &words("PodWW acq:PodRR"),
            &words("Rfe rel:Rfe Fre"),
        )
        .unwrap();
        let texts: Vec<String> = pool.cycles().unwrap().iter().map(Cycle::text).collect();
        // MP with an acquire read, with and without a release write.
        assert_eq!(
            texts,
            [
                "rlx PodWW rel Rfe acq PodRR rlx Fre",
                "rlx PodWW rlx Rfe acq PodRR rlx Fre"
            ]
        );
        // An RMW's write meets annotations of its own: those that cannot be one leave the
        // cycle out, while a read that can never be an RMW's is refused.
        let pool = Pool::parse(&words("4 2"), &words("Rmw"), &words("Rfe vol:Rfe")).unwrap();
        let texts: Vec<String> = pool.cycles().unwrap().iter().map(Cycle::text).collect();
        assert!(
            texts.contains(&"rlx Rmw rlx Rfe rlx Rmw rlx Rfe".to_string()),
            "{texts:?}"
        );
        assert!(texts.iter().all(|t| !t.contains("Rmw vol")), "{texts:?}");
        let e = Pool::parse(&words("4"), &words("tex:Rmw"), &[]).unwrap_err();
        assert!(
            e.to_string().contains("`tex:Rmw`: `tex Rmw rlx`: the read"),
            "{e}"
        );
        let e = Pool::parse(&words("4"), &words("acq:PodWR"), &[]).unwrap_err();
        assert!(
            e.to_string()
                .contains("`acq` cannot annotate the event `PodWR` leaves"),
            "{e}"
        );
    }

    #[test]
    fn an_rmw_is_one_access_of_its_thread() {
        let texts = |size: &str, relax: &str, safe: &str| {
            let pool = Pool::parse(&words(size), &words(relax), &words(safe)).unwrap();
            let cycles = pool.cycles().unwrap();
            cycles.iter().map(Cycle::text).collect::<Vec<_>>()
        };
        let m4 = texts("4 2", "Rmw", "Rfe Fre Coe");
        assert_eq!(
            m4,
            ["rlx Rfe rlx Rmw rlx Coe", "rlx Rmw rlx Rfe rlx Rmw rlx Rfe"]
        );
        // Besides its RMW, a thread holds one more access at most.
        let sb = texts("6 2", "Rmw", "Fre Coe Rfe PodWR PodRW");
        assert!(
            sb.contains(&"rlx PodWR rlx Rmw rlx Coe rlx PodWR rlx Rmw rlx Coe".to_string()),
            "{sb:?}"
        );
        assert!(sb.iter().all(|t| !t.contains("PodWR rlx PodRW")), "{sb:?}");
    }

    #[test]
    fn bad_pools_say_why() {
        let e = |s: &str, r: &str| {
            Pool::parse(&words(s), &words(r), &[])
                .unwrap_err()
                .to_string()
        };
        assert!(e("9", "PodWR").contains("the size is a number in 2..=8"));
        assert!(e("4", "").contains("needs a `relax` line"));
        assert!(e("4", "Bogus").contains("`Bogus` is not an edge"));
        assert!(e("4 1", "PodWR").contains("thread count"));
    }

    #[test]
    fn an_enumeration_past_its_bound_is_refused() {
        let pool = |size: &str| {
            Pool::parse(
                &words(size),
                &words("PodWR PodWW PodRR PodRW Fence(sc)dWR Fence(sc)dWW Fence(sc)dRR"),
                &words(
                    "Rfe Fre Coe Rfi Fri Coi PosWR PosRW PosRR PosWW Fence(sc)dRW \
                     Fence(acq_rel)dRW Fence(acq_rel)dWW Fence(acq_rel)dRR Fence(acq_rel)dWR",
                ),
            )
            .unwrap()
        };
        let e = pool("8 4").cycles().map(|c| c.len()).unwrap_err();
        assert!(e.to_string().contains("more than 10000 cycles"), "{e}");
        assert!(pool("4").cycles().is_ok_and(|c| c.len() > 20));
    }
}
