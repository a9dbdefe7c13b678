//! The driver calls of one batch of launches, as data: the runner executes a batch's plan and
//! a test counts its calls without a GPU. A launch is one `litmus_test` and one
//! `litmus_collect`; every launch of a test passes the same arguments (the device derives its
//! seed), so k launches can be captured once into a CUDA graph and replayed with one
//! `cuGraphLaunch`. Whatever the mode, the histogram is read once per batch.

/// How a test's launches are submitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchMode {
    /// Two `cuLaunchKernelEx` calls per launch.
    Direct,
    /// A graph of this many launches, captured once, one `cuGraphLaunch` per replay; a batch's
    /// remainder (an instance budget that is not a multiple) goes direct.
    Graph(u32),
}

/// Launches per graph unless `-o graph=` says otherwise: 128 kernel nodes, so one
/// `cuGraphLaunch` stands for 64 launches while the graph stays quick to instantiate.
pub const DEFAULT_GRAPH: u32 = 64;

impl LaunchMode {
    /// The mode's name in provenance (`kernel.launch_mode`): `graph:K` or `direct`.
    pub fn name(self) -> String {
        match self {
            LaunchMode::Direct => "direct".into(),
            LaunchMode::Graph(k) => format!("graph:{k}"),
        }
    }

    /// `n` launches rounded up to whole graphs, for a time budget, where a few more launches
    /// cost nothing and a remainder would go direct.
    pub fn round_up(self, n: u64) -> u64 {
        match self {
            LaunchMode::Graph(k) if n > 0 => n.next_multiple_of(u64::from(k)),
            _ => n,
        }
    }
}

/// One step of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Submission {
    /// `launches` launches made directly: two `cuLaunchKernelEx` calls each.
    Direct {
        /// Launches (test + collect pairs).
        launches: u64,
    },
    /// One `cuGraphLaunch` of the captured graph.
    Graph {
        /// Launches the graph holds.
        launches: u64,
    },
    /// The histogram read back: one copy and one wait for the stream.
    ReadHistogram,
}

impl Submission {
    /// Launches this step makes.
    pub fn launches(self) -> u64 {
        match self {
            Submission::Direct { launches } | Submission::Graph { launches } => launches,
            Submission::ReadHistogram => 0,
        }
    }

    /// Calls that submit kernels (`cuLaunchKernelEx` or `cuGraphLaunch`) in this step.
    pub fn launch_calls(self) -> u64 {
        match self {
            Submission::Direct { launches } => 2 * launches,
            Submission::Graph { .. } => 1,
            Submission::ReadHistogram => 0,
        }
    }
}

/// The plan of a batch of `n` launches under `mode`: whole graphs, the remainder direct, then
/// one histogram read.
pub fn batch(n: u64, mode: LaunchMode) -> Vec<Submission> {
    let (graphs, rest) = match mode {
        LaunchMode::Graph(k) => (n / u64::from(k), n % u64::from(k)),
        LaunchMode::Direct => (0, n),
    };
    let mut plan = Vec::new();
    if let LaunchMode::Graph(k) = mode {
        let launches = u64::from(k);
        plan.extend((0..graphs).map(|_| Submission::Graph { launches }));
    }
    if rest > 0 {
        plan.push(Submission::Direct { launches: rest });
    }
    plan.push(Submission::ReadHistogram);
    plan
}

/// Kernel-submitting driver calls per launch of a plan.
pub fn calls_per_launch(plan: &[Submission]) -> f64 {
    let launches: u64 = plan.iter().map(|s| s.launches()).sum();
    let calls: u64 = plan.iter().map(|s| s.launch_calls()).sum();
    calls as f64 / launches.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(plan: &[Submission], f: impl Fn(&Submission) -> bool) -> usize {
        plan.iter().filter(|s| f(s)).count()
    }

    #[test]
    fn direct_batches_make_two_calls_per_launch_and_one_read() {
        for n in [1, 4, 1000, 65536] {
            let plan = batch(n, LaunchMode::Direct);
            let calls: u64 = plan.iter().map(|s| s.launch_calls()).sum();
            assert_eq!(calls, 2 * n);
            assert_eq!(plan.iter().map(|s| s.launches()).sum::<u64>(), n);
            assert_eq!(count(&plan, |s| matches!(s, Submission::Graph { .. })), 0);
            assert_eq!(count(&plan, |s| *s == Submission::ReadHistogram), 1);
            assert_eq!(plan.last(), Some(&Submission::ReadHistogram));
        }
    }

    #[test]
    fn graph_batches_make_one_call_per_graph() {
        let mode = LaunchMode::Graph(64);
        for n in [64, 640, 65536] {
            let plan = batch(n, mode);
            let graphs = count(&plan, |s| matches!(s, Submission::Graph { .. }));
            assert_eq!(graphs as u64, n.div_ceil(64));
            let calls: u64 = plan.iter().map(|s| s.launch_calls()).sum();
            assert_eq!(calls, n.div_ceil(64));
            assert_eq!(count(&plan, |s| *s == Submission::ReadHistogram), 1);
            assert!((calls_per_launch(&plan) - 1.0 / 64.0).abs() < 1e-12);
        }
        // A time budget's batch is rounded up to whole graphs; an instance budget's remainder
        // goes direct, so the launches stay exactly what the budget asked for.
        assert_eq!(mode.round_up(100), 128);
        assert_eq!(mode.round_up(0), 0);
        let plan = batch(100, mode);
        assert_eq!(plan.iter().map(|s| s.launches()).sum::<u64>(), 100);
        assert_eq!(plan[0], Submission::Graph { launches: 64 });
        assert_eq!(plan[1], Submission::Direct { launches: 36 });
        assert_eq!(calls_per_launch(&plan), (1.0 + 72.0) / 100.0);
        // A batch smaller than a graph is direct.
        assert_eq!(batch(4, mode)[0], Submission::Direct { launches: 4 });
    }

    #[test]
    fn the_mode_names_itself_as_provenance_says() {
        assert_eq!(LaunchMode::Direct.name(), "direct");
        assert_eq!(LaunchMode::Graph(64).name(), "graph:64");
        assert_eq!(LaunchMode::Direct.round_up(100), 100);
    }
}
