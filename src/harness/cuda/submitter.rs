//! Carries out a batch's plan ([`super::submit`]) on the run's stream: direct launches and graph
//! replays, capturing the graph the first time a plan has one. Should capture, instantiation
//! or a replay fail, the test goes on with direct launches and the reason is kept for its
//! provenance. The first [`BURST`] launches of each batch are timed as the host's own cost.

use super::graph::Graph;
use super::launch::{Args, Launcher};
use super::stats::{LaunchStats, BURST};
use super::submit::{LaunchMode, Submission};
use cudarc::driver::sys;
use std::time::Instant;

/// The launches of one test and how they are submitted.
pub struct Submitter<'a> {
    /// The test kernel's launcher.
    pub test: Launcher,
    /// The collect kernel's launcher.
    pub collect: Launcher,
    args: &'a Args,
    stream: sys::CUstream,
    /// The mode batches are planned in: the option's, or direct after a fallback.
    pub mode: LaunchMode,
    /// The option's mode.
    asked: LaunchMode,
    graph: Option<Graph>,
    /// Why graphs were given up, if they were.
    pub fallback: Option<String>,
    /// Whether a graph replay was submitted.
    pub replayed: bool,
}

impl<'a> Submitter<'a> {
    /// Submits `test` and `collect` with `args` on `stream` in `mode`.
    pub fn new(
        test: Launcher,
        collect: Launcher,
        args: &'a Args,
        stream: sys::CUstream,
        mode: LaunchMode,
    ) -> Submitter<'a> {
        Submitter {
            test,
            collect,
            args,
            stream,
            mode,
            asked: mode,
            graph: None,
            fallback: None,
            replayed: false,
        }
    }

    /// The mode's name as provenance records it: what was submitted.
    pub fn mode_name(&self) -> String {
        match self.asked {
            LaunchMode::Graph(_) if self.replayed => self.asked.name(),
            _ => LaunchMode::Direct.name(),
        }
    }

    /// Submits the launches of `plan` (its histogram read is the caller's), adding the calls,
    /// the enqueue time and the burst's time to `stats`.
    pub fn submit(&mut self, plan: &[Submission], stats: &mut LaunchStats) -> Result<(), String> {
        if plan.iter().any(|s| matches!(s, Submission::Graph { .. })) {
            self.ensure_graph();
        }
        let start = Instant::now();
        let mut done = 0u64;
        let mut timed = false;
        for step in plan {
            match *step {
                Submission::Direct { launches } => {
                    for _ in 0..launches {
                        self.pair(stats)?;
                        done += 1;
                        timed = timed || burst(stats, done, start);
                    }
                }
                Submission::Graph { launches } => {
                    if !self.replay(stats) {
                        for _ in 0..launches {
                            self.pair(stats)?;
                        }
                    }
                    done += launches;
                    timed = timed || burst(stats, done, start);
                }
                Submission::ReadHistogram => {}
            }
        }
        stats.enqueue_s += start.elapsed().as_secs_f64();
        stats.launches += done;
        Ok(())
    }

    /// One launch directly: the test kernel, then the collect kernel.
    fn pair(&self, stats: &mut LaunchStats) -> Result<(), String> {
        self.test.launch(self.args)?;
        self.collect.launch(self.args)?;
        stats.launch_calls += 2;
        Ok(())
    }

    /// One replay of the graph; `false` (and direct launches from now on) when there is no
    /// graph or the replay is refused.
    fn replay(&mut self, stats: &mut LaunchStats) -> bool {
        let Some(g) = &self.graph else {
            return false;
        };
        match g.launch(self.stream) {
            Ok(()) => {
                stats.launch_calls += 1;
                self.replayed = true;
                true
            }
            Err(e) => {
                self.give_up(e);
                false
            }
        }
    }

    /// Captures the graph of the mode's size unless it exists or graphs were given up.
    fn ensure_graph(&mut self) {
        let LaunchMode::Graph(k) = self.mode else {
            return;
        };
        if self.graph.is_some() {
            return;
        }
        match Graph::capture(self.stream, k, &self.test, &self.collect, self.args) {
            Ok(g) => self.graph = Some(g),
            Err(e) => self.give_up(e),
        }
    }

    /// Goes on with direct launches, keeping why.
    fn give_up(&mut self, why: String) {
        self.graph = None;
        self.mode = LaunchMode::Direct;
        self.fallback.get_or_insert(why);
    }
}

/// Times the batch's first [`BURST`] launches (or the first submission that reaches them) as
/// the host's own cost; returns whether it did.
fn burst(stats: &mut LaunchStats, done: u64, start: Instant) -> bool {
    if done < BURST {
        return false;
    }
    stats.burst_s += start.elapsed().as_secs_f64();
    stats.burst_launches += done;
    true
}
