//! Carries out a batch's plan ([`super::submit`]) on the run's stream: direct launches and graph
//! replays, capturing the graph the first time a plan has one. Should capture, instantiation
//! or a replay fail, the test goes on with direct launches and the reason is kept for its
//! provenance. The first [`BURST`] launches of each batch are timed as the host's own cost.
//! The host never runs more than two [`WINDOW`]s ahead of the device: the driver's launch calls
//! block once its queue is full, where no deadline reaches them, so the host instead waits,
//! bounded by the test's deadline, for the end of the window two back before it starts a window.
//! The driver sits behind [`Submit`], so the fallbacks, counts and waits are tested with a double.

use super::graph::Graph;
use super::launch::{Args, Launcher};
use super::marks::Marks;
use super::stats::{LaunchStats, BURST};
use super::submit::{LaunchMode, Submission};
use crate::harness::watchdog::{self, Poll, Queue};
use crate::harness::RunError;
use cudarc::driver::sys;
use std::time::Instant;

/// Launches per window: with two windows pending at most, 256 kernels are queued, far below
/// the driver's queue of about a thousand launches, and each wait is for work 64 to 128
/// launches old, almost always done. A graph replay is one window when it holds more.
pub const WINDOW: u64 = 64;

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
    /// Records mark `slot` (0 or 1) after everything enqueued so far.
    fn mark(&mut self, slot: usize) -> Result<(), String>;
    /// Whether the work before mark `slot` has finished: one non-blocking query.
    fn poll_mark(&mut self, slot: usize) -> Poll;
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
    marks: Marks,
}

impl<'a> Stream<'a> {
    /// Launches of `test` and `collect` with `args` on `stream`.
    pub fn new(
        test: Launcher,
        collect: Launcher,
        args: &'a Args,
        stream: sys::CUstream,
    ) -> Result<Stream<'a>, String> {
        Ok(Stream {
            test,
            collect,
            args,
            stream,
            graph: None,
            marks: Marks::new()?,
        })
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

    fn mark(&mut self, slot: usize) -> Result<(), String> {
        self.marks.record(slot, self.stream)
    }

    fn poll_mark(&mut self, slot: usize) -> Poll {
        self.marks.poll(slot)
    }
}

/// One mark of a device, as a queue to wait on.
struct Mark<'d, D>(&'d mut D, usize);

impl<D: Submit> Queue for Mark<'_, D> {
    fn poll(&mut self) -> Poll {
        self.0.poll_mark(self.1)
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
    /// Until when a wait for the device may last: the test's deadline.
    deadline: Instant,
    /// The launches, as a stall names them.
    what: String,
    /// Launches enqueued since the last mark.
    since_mark: u64,
    /// Marks recorded.
    marked: u64,
}

impl<D: Submit> Submitter<D> {
    /// Submits to `device` in `mode`; a wait for the device ends by `deadline`, naming `what`.
    pub fn new(device: D, mode: LaunchMode, deadline: Instant, what: &str) -> Submitter<D> {
        Submitter {
            device,
            mode,
            asked: mode,
            captured: false,
            fallback: None,
            replayed: false,
            deadline,
            what: what.to_string(),
            since_mark: 0,
            marked: 0,
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
    /// the enqueue time and the burst's time to `stats`. A direct launch's error fails, and a
    /// device that does not finish the window two back by the deadline ends it as timed out.
    pub fn submit(&mut self, plan: &[Submission], stats: &mut LaunchStats) -> Result<(), RunError> {
        if plan.iter().any(|s| matches!(s, Submission::Graph { .. })) {
            self.ensure_graph();
        }
        let start = Instant::now();
        let mut done = 0u64;
        let mut timed = false;
        for step in plan {
            let launches = step.launches();
            if !matches!(step, Submission::ReadHistogram) {
                self.throttle()?;
            }
            let direct = match *step {
                Submission::ReadHistogram => continue,
                Submission::Direct { .. } => true,
                // A refused replay's launches are made directly.
                Submission::Graph { .. } => !self.replay(stats),
            };
            if !direct {
                self.since_mark += launches;
                done += launches;
                timed = timed || burst(stats, done, start);
                continue;
            }
            for _ in 0..launches {
                self.throttle()?;
                self.device.pair()?;
                self.since_mark += 1;
                stats.launch_calls += 2;
                done += 1;
                timed = timed || burst(stats, done, start);
            }
        }
        stats.enqueue_s += start.elapsed().as_secs_f64();
        stats.launches += done;
        Ok(())
    }

    /// Ends the window once it holds [`WINDOW`] launches: records its mark, then waits (until
    /// the deadline) for the mark of the window before it, so that at most that window and the
    /// next one are pending. The two marks are used in turn; each is waited for before reuse.
    fn throttle(&mut self) -> Result<(), RunError> {
        if self.since_mark < WINDOW {
            return Ok(());
        }
        self.device.mark((self.marked % 2) as usize)?;
        self.marked += 1;
        self.since_mark = 0;
        if self.marked < 2 {
            return Ok(());
        }
        let slot = (self.marked % 2) as usize;
        let what = format!("{} (two windows back)", self.what);
        watchdog::wait(&mut Mark(&mut self.device, slot), self.deadline, &what)?;
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
        /// Launches the device finishes before it stops (all, when `None`).
        stop_after: Option<u64>,
        /// Whether the device lags: it finishes 8 launches per query of a mark, none otherwise.
        lag: bool,
        /// Launches enqueued (by pairs and replays), finished, and the most ever pending.
        enqueued: u64,
        done: u64,
        most_pending: u64,
        /// The launches each mark follows.
        marks: [u64; 2],
        recorded: u64,
    }

    impl Double {
        /// Lets the device finish up to `n` launches, no more than enqueued or where it stops.
        fn finish(&mut self, n: u64) {
            let stop = self.stop_after.unwrap_or(u64::MAX);
            self.done = n.min(self.enqueued).min(stop).max(self.done);
        }

        fn enqueue(&mut self, launches: u64) {
            self.enqueued += launches;
            if !self.lag {
                self.finish(self.enqueued);
            }
            self.most_pending = self.most_pending.max(self.enqueued - self.done);
        }
    }

    impl Submit for Double {
        fn pair(&mut self) -> Result<(), String> {
            self.pairs += 1;
            self.enqueue(1);
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
            self.enqueue(u64::from(*self.captures.last().unwrap()));
            match self.refuse_replay {
                Some(n) if n == self.replays => Err("cuGraphLaunch: refused".into()),
                _ => Ok(()),
            }
        }
        fn drop_graph(&mut self) {
            self.graph = false;
        }
        fn mark(&mut self, slot: usize) -> Result<(), String> {
            self.marks[slot] = self.enqueued;
            self.recorded += 1;
            Ok(())
        }
        fn poll_mark(&mut self, slot: usize) -> Poll {
            self.finish(self.done + 8);
            if self.marks[slot] <= self.done {
                Poll::Ready
            } else {
                Poll::Pending
            }
        }
    }

    fn far() -> Instant {
        Instant::now() + std::time::Duration::from_secs(60)
    }

    fn run(double: Double, mode: LaunchMode, batches: &[u64]) -> (Submitter<Double>, LaunchStats) {
        let mut sub = Submitter::new(double, mode, far(), "MP's launches");
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
            far(),
            "MP's launches",
        );
        let e = sub
            .submit(&batch(10, LaunchMode::Direct), &mut LaunchStats::default())
            .unwrap_err();
        assert!(e.to_string().contains("LAUNCH_FAILED"), "{e}");
    }

    #[test]
    fn the_host_never_runs_more_than_two_windows_ahead_of_the_device() {
        for (mode, bound) in [
            (LaunchMode::Direct, 2 * WINDOW),
            (LaunchMode::Graph(16), 2 * WINDOW),
            (LaunchMode::Graph(64), 2 * WINDOW),
            // A graph larger than a window is a window of its own.
            (LaunchMode::Graph(256), 2 * 256),
        ] {
            let lagging = Double {
                lag: true,
                ..Double::default()
            };
            let (sub, stats) = run(lagging, mode, &[65536, 1000]);
            let d = &sub.device;
            assert_eq!(d.enqueued, 66536, "{mode:?}");
            // The lagging device finishes only while the host waits, so the bound is reached.
            assert_eq!(d.most_pending, bound, "{mode:?}");
            if mode == LaunchMode::Direct {
                // A mark ends every window that more launches follow.
                assert_eq!(d.recorded, (66536 - 1) / WINDOW);
            }
            // Marks are no launch calls: the counts stay what the plan says.
            let plans = [batch(65536, mode), batch(1000, mode)];
            let planned: u64 = plans.iter().flatten().map(|s| s.launch_calls()).sum();
            assert_eq!(stats.launch_calls, planned, "{mode:?}");
        }
    }

    #[test]
    fn a_device_that_stops_ends_the_test_as_timed_out_by_its_deadline() {
        for mode in [LaunchMode::Direct, LaunchMode::Graph(64)] {
            let stopping = Double {
                stop_after: Some(100),
                ..Double::default()
            };
            let t0 = Instant::now();
            let deadline = t0 + std::time::Duration::from_millis(150);
            let mut sub = Submitter::new(stopping, mode, deadline, "MP's launches");
            let r = sub.submit(&batch(65536, mode), &mut LaunchStats::default());
            let took = t0.elapsed();
            match r {
                Err(RunError::TimedOut(m)) => assert!(m.starts_with("MP's launches"), "{m}"),
                other => panic!("{mode:?}: expected a time-out, got {other:?}"),
            }
            assert!(took >= std::time::Duration::from_millis(150), "{took:?}");
            assert!(took < std::time::Duration::from_secs(2), "{took:?}");
            // No launch beyond the two windows after the device's last finished one.
            let d = &sub.device;
            assert!(d.enqueued <= 100 + 2 * WINDOW, "{mode:?}: {}", d.enqueued);
            assert!(d.enqueued > 100, "{mode:?}: {}", d.enqueued);
        }
    }
}
