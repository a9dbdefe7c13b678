//! Carries out a batch's plan ([`super::submit`]) on the run's stream: direct launches and graph
//! replays, capturing the graph the first time a plan has one. Should capture, instantiation
//! or a replay fail, the test goes on with direct launches and the reason is kept for its
//! provenance. The first [`BURST`] launches of each batch are timed as the host's own cost.
//! The driver sits behind [`Submit`], so the fallbacks and counts are tested with a double.

use super::graph::Graph;
use super::launch::{Args, Launcher};
use super::stats::{LaunchStats, BURST};
use super::submit::{LaunchMode, Submission};
use cudarc::driver::sys;
use std::time::Instant;

/// The driver calls a batch is made of.
pub trait Submit {
    /// One launch directly: the test kernel, then the collect kernel.
    fn pair(&mut self) -> Result<(), String>;
    /// Captures and instantiates a graph of `launches` launches, replacing none.
    fn capture(&mut self, launches: u32) -> Result<(), String>;
    /// Enqueues one replay of the graph.
    fn replay(&mut self) -> Result<(), String>;
    /// Destroys the graph, if any.
    fn drop_graph(&mut self);
}

/// The run's stream with the test's two launchers and its constant arguments.
pub struct Stream<'a> {
    /// The test kernel's launcher.
    pub test: Launcher,
    /// The collect kernel's launcher.
    pub collect: Launcher,
    /// The arguments of every launch.
    pub args: &'a Args,
    /// The run's stream.
    pub stream: sys::CUstream,
    graph: Option<Graph>,
}

impl<'a> Stream<'a> {
    /// Launches of `test` and `collect` with `args` on `stream`.
    pub fn new(
        test: Launcher,
        collect: Launcher,
        args: &'a Args,
        stream: sys::CUstream,
    ) -> Stream<'a> {
        Stream {
            test,
            collect,
            args,
            stream,
            graph: None,
        }
    }
}

impl Submit for Stream<'_> {
    fn pair(&mut self) -> Result<(), String> {
        self.test.launch(self.args)?;
        self.collect.launch(self.args)
    }

    fn capture(&mut self, launches: u32) -> Result<(), String> {
        let g = Graph::capture(self.stream, launches, &self.test, &self.collect, self.args)?;
        self.graph = Some(g);
        Ok(())
    }

    fn replay(&mut self) -> Result<(), String> {
        match &self.graph {
            Some(g) => g.launch(self.stream),
            None => Err("no graph was captured".into()),
        }
    }

    fn drop_graph(&mut self) {
        self.graph = None;
    }
}

/// The launches of one test and how they are submitted.
pub struct Submitter<D> {
    /// Where the launches go.
    pub device: D,
    /// The mode batches are planned in: the option's, or direct after a fallback.
    pub mode: LaunchMode,
    /// The option's mode.
    asked: LaunchMode,
    /// Whether a graph is ready to replay.
    captured: bool,
    /// Why graphs were given up, if they were.
    pub fallback: Option<String>,
    /// Whether a graph replay was submitted.
    pub replayed: bool,
}

impl<D: Submit> Submitter<D> {
    /// Submits to `device` in `mode`.
    pub fn new(device: D, mode: LaunchMode) -> Submitter<D> {
        Submitter {
            device,
            mode,
            asked: mode,
            captured: false,
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
    /// the enqueue time and the burst's time to `stats`. Only a direct launch's error fails.
    pub fn submit(&mut self, plan: &[Submission], stats: &mut LaunchStats) -> Result<(), String> {
        if plan.iter().any(|s| matches!(s, Submission::Graph { .. })) {
            self.ensure_graph();
        }
        let start = Instant::now();
        let mut done = 0u64;
        let mut timed = false;
        for step in plan {
            let launches = step.launches();
            let direct = match *step {
                Submission::ReadHistogram => continue,
                Submission::Direct { .. } => true,
                // A refused replay's launches are made directly.
                Submission::Graph { .. } => !self.replay(stats),
            };
            if !direct {
                done += launches;
                timed = timed || burst(stats, done, start);
                continue;
            }
            for _ in 0..launches {
                self.device.pair()?;
                stats.launch_calls += 2;
                done += 1;
                timed = timed || burst(stats, done, start);
            }
        }
        stats.enqueue_s += start.elapsed().as_secs_f64();
        stats.launches += done;
        Ok(())
    }

    /// One replay of the graph; `false` (and direct launches from now on) when there is no
    /// graph or the replay is refused.
    fn replay(&mut self, stats: &mut LaunchStats) -> bool {
        if !self.captured {
            return false;
        }
        match self.device.replay() {
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
        if self.captured {
            return;
        }
        match self.device.capture(k) {
            Ok(()) => self.captured = true,
            Err(e) => self.give_up(e),
        }
    }

    /// Goes on with direct launches, keeping why.
    fn give_up(&mut self, why: String) {
        self.device.drop_graph();
        self.captured = false;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::cuda::submit::batch;

    /// A driver that counts calls and refuses what it is told to.
    #[derive(Default)]
    struct Double {
        pairs: u64,
        captures: Vec<u32>,
        replays: u64,
        refuse_capture: bool,
        /// The replay (counted from 1) that is refused.
        refuse_replay: Option<u64>,
        /// The direct launch (counted from 1) that fails.
        fail_pair: Option<u64>,
        graph: bool,
    }

    impl Submit for Double {
        fn pair(&mut self) -> Result<(), String> {
            self.pairs += 1;
            match self.fail_pair {
                Some(n) if n == self.pairs => Err("CUDA_ERROR_LAUNCH_FAILED".into()),
                _ => Ok(()),
            }
        }
        fn capture(&mut self, launches: u32) -> Result<(), String> {
            self.captures.push(launches);
            if self.refuse_capture {
                return Err("cuStreamBeginCapture: CUDA_ERROR_NOT_SUPPORTED".into());
            }
            self.graph = true;
            Ok(())
        }
        fn replay(&mut self) -> Result<(), String> {
            assert!(self.graph, "a replay without a graph");
            self.replays += 1;
            match self.refuse_replay {
                Some(n) if n == self.replays => Err("cuGraphLaunch: refused".into()),
                _ => Ok(()),
            }
        }
        fn drop_graph(&mut self) {
            self.graph = false;
        }
    }

    fn run(double: Double, mode: LaunchMode, batches: &[u64]) -> (Submitter<Double>, LaunchStats) {
        let mut sub = Submitter::new(double, mode);
        let mut stats = LaunchStats::default();
        for &n in batches {
            let plan = batch(n, sub.mode);
            sub.submit(&plan, &mut stats).unwrap();
        }
        (sub, stats)
    }

    #[test]
    fn graphs_are_captured_once_and_replayed_once_per_k_launches() {
        let (sub, stats) = run(Double::default(), LaunchMode::Graph(64), &[4, 640, 6400]);
        // The first batch, smaller than a graph, goes direct; then 10 + 100 replays.
        assert_eq!(sub.device.captures, [64]);
        assert_eq!((sub.device.pairs, sub.device.replays), (4, 110));
        assert_eq!(stats.launches, 4 + 640 + 6400);
        assert_eq!(stats.launch_calls, 2 * 4 + 110);
        // Each graph batch's first replay (64 launches) is its burst.
        assert_eq!(stats.burst_launches, 2 * 64);
        assert_eq!(
            (sub.mode_name(), sub.fallback),
            ("graph:64".to_string(), None)
        );
    }

    #[test]
    fn a_graph_that_cannot_be_captured_falls_back_to_direct_launches() {
        let double = Double {
            refuse_capture: true,
            ..Double::default()
        };
        let (sub, stats) = run(double, LaunchMode::Graph(64), &[640, 640]);
        // Tried once, never again; every launch made directly, none lost.
        assert_eq!(sub.device.captures, [64]);
        assert_eq!((sub.device.pairs, sub.device.replays), (1280, 0));
        assert_eq!(stats.launches, 1280);
        assert_eq!(stats.launch_calls, 2 * 1280);
        assert_eq!(stats.burst_launches, 2 * BURST);
        assert_eq!(sub.mode, LaunchMode::Direct);
        assert_eq!(sub.mode_name(), "direct");
        assert!(sub.fallback.unwrap().contains("NOT_SUPPORTED"));
    }

    #[test]
    fn a_refused_replay_is_made_up_by_direct_launches() {
        let double = Double {
            refuse_replay: Some(3),
            ..Double::default()
        };
        let (sub, stats) = run(double, LaunchMode::Graph(64), &[640]);
        // Two replays, then the third graph's 64 launches and the 7 graphs after it direct.
        assert_eq!(sub.device.replays, 3);
        assert_eq!(sub.device.pairs, 8 * 64);
        assert_eq!(stats.launches, 640);
        assert_eq!(stats.launch_calls, 2 + 2 * 8 * 64);
        assert!(!sub.device.graph);
        // Replays were made, so the mode says graphs; the fallback says why they stopped.
        assert_eq!(sub.mode_name(), "graph:64");
        assert!(sub.fallback.unwrap().contains("refused"));
    }

    #[test]
    fn direct_launches_make_two_calls_each_and_their_errors_fail_the_test() {
        let (sub, stats) = run(Double::default(), LaunchMode::Direct, &[100]);
        assert!(sub.device.captures.is_empty());
        assert_eq!((stats.launches, stats.launch_calls), (100, 200));
        assert_eq!(stats.burst_launches, BURST);
        let mut sub = Submitter::new(
            Double {
                fail_pair: Some(5),
                ..Double::default()
            },
            LaunchMode::Direct,
        );
        let e = sub
            .submit(&batch(10, LaunchMode::Direct), &mut LaunchStats::default())
            .unwrap_err();
        assert!(e.contains("LAUNCH_FAILED"), "{e}");
    }
}
