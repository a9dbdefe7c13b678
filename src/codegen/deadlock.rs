//! Barrier schedules that never complete on hardware. A hardware barrier (`bar.sync`,
//! `barrier.cluster.wait`) waits without bound, so a test whose threads would all end up waiting
//! (crossed named barriers, as the corpus's `PC-bar-sync-sync-3`/`-4`; a barrier that one of
//! its participants reaches fewer times than the others) hangs its kernel and, with it, the
//! GPU. Such a test is refused before launch with the reason.
//!
//! The check runs the barrier sequence of every thread as the kernel does: a CTA barrier's
//! participants are the threads of its CTA that use it (the harness counts their warps), a
//! cluster barrier's the threads of its cluster that use one. Each refusal rule is one
//! [`Rule`]; a new kind of barrier adds its operations to [`ops`] and, if it blocks in a new
//! way, a rule.
//! A barrier with a quorum (`bar.cta.sync I, A, Q`) completes in phases of `Q` role warps: a
//! test where the threads using it are not a multiple of `Q` (fewer than `Q` among them)
//! leaves some waiting, and is refused too.
//! CTA barriers whose id or count is loaded at run time run in software with bounded waits
//! (`soft_barrier.rs`) and cannot hang; they are left out.

use super::barrier_key::BarrierKey;
use super::domain::Analysis;
use crate::litmus::ast::{BarOp, Barrier, Instr, Test};
use std::collections::BTreeMap;

/// A hardware barrier of a test: where it synchronises and which one it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Bar {
    /// A CTA barrier: gpu, cluster, CTA, and its id and count values.
    Cta(u32, Option<u32>, u32, (i64, Option<i64>)),
    /// The cluster barrier: gpu and cluster (a CTA outside any cluster is its own).
    Cluster(u32, Option<u32>, Option<u32>),
}

/// One barrier operation of a thread.
#[derive(Clone, Copy, Debug)]
enum Op {
    /// Arrive and go on (`bar.cta.arrive`, `barrier.cluster.arrive`).
    Arrive(Bar),
    /// Arrive and wait for the barrier to complete (`bar.cta.sync`, `bar.cta.red`).
    Sync(Bar),
    /// Wait for the barrier this thread last arrived at to complete (`barrier.cluster.wait`).
    Wait(Bar),
}

/// Why a test cannot run on hardware.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Every thread that has not finished waits at a barrier that will never complete.
    NeverCompletes,
    /// A thread waits at a cluster barrier it has not arrived at.
    WaitWithoutArrive,
}

/// Refuses a test whose hardware barriers can never all complete; `Err` names the rule and the
/// threads left waiting.
pub fn check(test: &Test) -> Result<(), (Rule, String)> {
    let Ok(analysis) = Analysis::of(test) else {
        // A test the analysis refuses is refused by code generation with its own reason.
        return Ok(());
    };
    let Some(ops) = ops(test, &analysis) else {
        return Ok(());
    };
    let schedule = Schedule::new(ops);
    for (bar, q) in quorums(test, &analysis) {
        schedule.check_quorum(bar, q)?;
    }
    schedule.run()
}

/// The quorum of each CTA barrier that has one (`bar.cta.sync I, A, Q`): its hardware thread
/// count is `32 * Q`, so it completes in phases of `Q` role warps (`codegen/lower/sync.rs`).
fn quorums(test: &Test, analysis: &Analysis) -> BTreeMap<Bar, i64> {
    let mut out = BTreeMap::new();
    for t in &test.threads {
        let p = t.place;
        for i in &t.body {
            if let Instr::Barrier(Barrier::Cta {
                id,
                count,
                quorum: Some(q),
                ..
            }) = i
            {
                let key = BarrierKey::of(analysis, t.id, id, count).ok();
                if let (Some(key), Some(q)) = (key, analysis.constant(t.id, q)) {
                    out.insert(Bar::Cta(p.gpu, p.cluster, p.cta, value_key(&key)), q);
                }
            }
        }
    }
    out
}

/// The hardware barrier operations of each thread, in program order; `None` when the CTA
/// barriers run in software (some id or count is loaded at run time).
fn ops(test: &Test, analysis: &Analysis) -> Option<Vec<Vec<Op>>> {
    let mut out = Vec::new();
    for t in &test.threads {
        let p = t.place;
        let cluster = Bar::Cluster(p.gpu, p.cluster, p.cluster.is_none().then_some(p.cta));
        let mut seq = Vec::new();
        for i in &t.body {
            let Instr::Barrier(b) = i else { continue };
            seq.push(match b {
                Barrier::Cta { op, id, count, .. } => {
                    let key = BarrierKey::of(analysis, t.id, id, count).ok()?;
                    let bar = Bar::Cta(p.gpu, p.cluster, p.cta, value_key(&key));
                    match op {
                        BarOp::Arrive => Op::Arrive(bar),
                        BarOp::Sync | BarOp::Red { .. } => Op::Sync(bar),
                    }
                }
                Barrier::ClusterArrive { .. } => Op::Arrive(cluster),
                Barrier::ClusterWait => Op::Wait(cluster),
            });
        }
        out.push(seq);
    }
    Some(out)
}

/// A barrier key as plain numbers (for ordering).
fn value_key(k: &BarrierKey) -> (i64, Option<i64>) {
    (k.id, k.count)
}

/// The threads' progress through their barrier operations.
struct Schedule {
    ops: Vec<Vec<Op>>,
    /// Next operation of each thread.
    pos: Vec<usize>,
    /// Arrivals of each thread at each barrier so far.
    arrivals: BTreeMap<(usize, Bar), u32>,
    /// Threads that use each barrier.
    users: BTreeMap<Bar, u32>,
}

impl Schedule {
    fn new(ops: Vec<Vec<Op>>) -> Schedule {
        let mut users = BTreeMap::new();
        for seq in &ops {
            let mut mine: Vec<Bar> = seq.iter().map(|o| bar_of(*o)).collect();
            mine.sort();
            mine.dedup();
            for b in mine {
                *users.entry(b).or_insert(0) += 1;
            }
        }
        Schedule {
            pos: vec![0; ops.len()],
            ops,
            arrivals: BTreeMap::new(),
            users,
        }
    }

    /// Whether generation `g` (0-based) of barrier `b` has had all its arrivals.
    fn complete(&self, b: Bar, g: u32) -> bool {
        let arrived = self
            .arrivals
            .iter()
            .filter(|((_, x), n)| *x == b && **n > g)
            .count() as u32;
        arrived >= self.users[&b]
    }

    /// Refuses a barrier whose phases of `q` arrivals cannot take every thread that uses it:
    /// those left over (or all, when fewer than `q` use it) wait for ever.
    fn check_quorum(&self, bar: Bar, q: i64) -> Result<(), (Rule, String)> {
        let users = i64::from(self.users.get(&bar).copied().unwrap_or(0));
        if q >= 1 && users % q == 0 {
            return Ok(());
        }
        let Bar::Cta(.., (id, resource)) = bar else {
            return Ok(());
        };
        let name = match resource {
            Some(r) => format!("bar.cta.sync {id}, {r}, {q}"),
            None => format!("bar.cta.sync {id}"),
        };
        Err((
            Rule::NeverCompletes,
            format!(
                "its barrier {name} never completes on hardware: it needs {q} threads per \
                 phase and {users} arrive, so {} would wait for ever and the kernel would hang",
                if users < q { users } else { users % q.max(1) }
            ),
        ))
    }

    /// Moves thread `t` as far as it can go; whether it moved. A `Sync` arrives once (its
    /// arrival is counted when the thread first reaches it) and passes when its generation is
    /// complete.
    fn advance(&mut self, t: usize, arrived_at_pos: &mut [bool]) -> Result<bool, (Rule, String)> {
        let mut moved = false;
        while let Some(&op) = self.ops[t].get(self.pos[t]) {
            let b = bar_of(op);
            if !matches!(op, Op::Wait(_)) && !arrived_at_pos[t] {
                *self.arrivals.entry((t, b)).or_insert(0) += 1;
                arrived_at_pos[t] = true;
                moved = true;
            }
            let mine = self.arrivals.get(&(t, b)).copied().unwrap_or(0);
            if matches!(op, Op::Wait(_)) && mine == 0 {
                return Err((
                    Rule::WaitWithoutArrive,
                    format!("P{t} waits at barrier.cluster.wait before any barrier.cluster.arrive"),
                ));
            }
            if matches!(op, Op::Arrive(_)) || self.complete(b, mine - 1) {
                self.pos[t] += 1;
                arrived_at_pos[t] = false;
                moved = true;
            } else {
                break;
            }
        }
        Ok(moved)
    }

    /// Runs every thread until none can move; `Err` when some are left waiting.
    fn run(mut self) -> Result<(), (Rule, String)> {
        let mut arrived = vec![false; self.ops.len()];
        loop {
            let mut any = false;
            for t in 0..self.ops.len() {
                any |= self.advance(t, &mut arrived)?;
            }
            if !any {
                break;
            }
        }
        let stuck: Vec<String> = (0..self.ops.len())
            .filter_map(|t| self.ops[t].get(self.pos[t]).map(|op| self.describe(t, *op)))
            .collect();
        if stuck.is_empty() {
            return Ok(());
        }
        Err((
            Rule::NeverCompletes,
            format!(
                "its barriers never complete on hardware ({}), so the kernel would hang",
                stuck.join("; ")
            ),
        ))
    }

    /// "P0 waits at bar.cta.sync 1 (arrival 1 of 2 needed)".
    fn describe(&self, t: usize, op: Op) -> String {
        let b = bar_of(op);
        let g = self.arrivals.get(&(t, b)).copied().unwrap_or(1).max(1) - 1;
        let arrived = self
            .arrivals
            .iter()
            .filter(|((_, x), n)| *x == b && **n > g)
            .count();
        let name = match b {
            Bar::Cta(.., (id, None)) => format!("bar.cta.sync {id}"),
            Bar::Cta(.., (id, Some(c))) => format!("bar.cta.sync {id}, {c}"),
            Bar::Cluster(..) => "barrier.cluster.wait".to_string(),
        };
        format!(
            "P{t} waits at {name} with {arrived} of its {} threads arrived",
            self.users[&b]
        )
    }
}

fn bar_of(op: Op) -> Bar {
    match op {
        Op::Arrive(b) | Op::Sync(b) | Op::Wait(b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn test(body: &str) -> Test {
        crate::litmus::parse(body, Path::new("t.litmus")).unwrap()
    }

    const CROSSED: &str = "PTX crossed
{ x=0; P0:r0=0 }
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
 ld.weak r0, x  | bar.cta.sync 1 ;
 bar.cta.sync 0 | st.weak x, 1   ;
 bar.cta.sync 1 | bar.cta.sync 0 ;
exists (P0:r0 == 1)
";

    #[test]
    fn crossed_named_barriers_are_refused_with_the_waiting_threads() {
        let (rule, why) = check(&test(CROSSED)).unwrap_err();
        assert_eq!(rule, Rule::NeverCompletes);
        assert!(
            why.contains("P0 waits at bar.cta.sync 0 with 1 of its 2"),
            "{why}"
        );
        assert!(
            why.contains("P1 waits at bar.cta.sync 1 with 1 of its 2"),
            "{why}"
        );
    }

    #[test]
    fn barriers_taken_in_the_same_order_pass() {
        let same = CROSSED
            .replace("| bar.cta.sync 1 ;", "| bar.cta.sync X ;")
            .replace("| bar.cta.sync 0 ;", "| bar.cta.sync 1 ;")
            .replace("| bar.cta.sync X ;", "| bar.cta.sync 0 ;");
        // Now P1 takes 0 then 1, as P0 does.
        assert_eq!(check(&test(&same)), Ok(()), "{same}");
        // Different CTAs never meet at a CTA barrier: each completes alone.
        let apart = CROSSED.replace("P1@cta 0", "P1@cta 1");
        assert_eq!(check(&test(&apart)), Ok(()));
        // An arrive does not wait, so a producer may arrive at 1 and then sync at 0.
        let arrive = CROSSED.replacen("| bar.cta.sync 1 ;", "| bar.cta.arrive 1 ;", 1);
        assert_eq!(check(&test(&arrive)), Ok(()), "{arrive}");
    }

    #[test]
    fn a_barrier_one_participant_reaches_fewer_times_is_refused() {
        let t = test(
            "PTX twice
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
 bar.cta.sync 0 | bar.cta.sync 0 ;
 bar.cta.sync 0 | st.weak x, 1   ;
exists (x == 1)
",
        );
        let (rule, why) = check(&t).unwrap_err();
        assert_eq!(rule, Rule::NeverCompletes);
        assert!(
            why.contains("P0 waits at bar.cta.sync 0 with 1 of its 2"),
            "{why}"
        );
    }

    #[test]
    fn a_quorum_completes_only_in_whole_phases() {
        let with = |threads: usize, q: u32| {
            let header: Vec<String> = (0..threads).map(|t| format!("P{t}@cta 0,gpu 0")).collect();
            let row: Vec<String> = (0..threads)
                .map(|_| format!("bar.cta.sync 1, 1, {q}"))
                .collect();
            test(&format!(
                "PTX q\n{{ x=0; }}\n {} ;\n {} ;\nexists (x == 0)\n",
                header.join(" | "),
                row.join(" | ")
            ))
        };
        assert_eq!(check(&with(4, 2)), Ok(()));
        assert_eq!(check(&with(3, 3)), Ok(()));
        let (rule, why) = check(&with(3, 4)).unwrap_err();
        assert_eq!(rule, Rule::NeverCompletes);
        assert!(
            why.contains("bar.cta.sync 1, 1, 4 never completes on hardware: it needs 4 threads per phase and 3 arrive"),
            "{why}"
        );
        // Three threads, quorum 2: the third waits for a second phase nobody joins.
        let (_, why) = check(&with(3, 2)).unwrap_err();
        assert!(why.contains("so 1 would wait for ever"), "{why}");
    }

    #[test]
    fn cluster_barriers_are_followed_across_ctas() {
        let base = "PTX cl
{ x=0; }
 P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;
 barrier.cluster.arrive   | barrier.cluster.arrive   ;
 barrier.cluster.wait     | barrier.cluster.wait     ;
exists (x == 1)
";
        assert_eq!(check(&test(base)), Ok(()));
        let early = base.replacen(
            "barrier.cluster.arrive   | barrier.cluster.arrive   ;\n barrier.cluster.wait     | barrier.cluster.wait     ;",
            "barrier.cluster.wait     | barrier.cluster.arrive   ;\n barrier.cluster.arrive   | barrier.cluster.wait     ;",
            1,
        );
        assert_eq!(check(&test(&early)).unwrap_err().0, Rule::WaitWithoutArrive);
    }
}
