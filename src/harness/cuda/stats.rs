//! Timing and counts of a test's launches: GPU time by events, the host's own cost per launch
//! (timed on the first launches after each synchronisation) and the driver calls made.

/// Timing of a test's launches.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaunchStats {
    /// Launches of `litmus_test` (each followed by one of `litmus_collect`).
    pub launches: u64,
    /// Milliseconds of GPU time from the first launch to the last, by events.
    pub gpu_ms: f64,
    /// Seconds the host spent in launch calls (including waits for room in a full launch
    /// queue, so with a busy GPU this approaches `wall_s`).
    pub enqueue_s: f64,
    /// Launch pairs enqueued right after a synchronisation, when the launch queue had room.
    pub burst_launches: u64,
    /// Seconds the host spent enqueueing those: the host's own cost per launch.
    pub burst_s: f64,
    /// Driver calls that submitted kernels: two `cuLaunchKernelEx` per direct launch, one
    /// `cuGraphLaunch` per graph replay.
    pub launch_calls: u64,
    /// Wall-clock seconds from the first launch to the last result read.
    pub wall_s: f64,
}

/// Launch pairs at the start of each batch whose enqueueing is timed as the host's own cost:
/// few enough that the driver's launch queue, just drained, never fills.
pub const BURST: u64 = 32;

impl LaunchStats {
    /// Host microseconds per launch pair (test + collect kernel) while the launch queue had
    /// room; `None` before a batch of at least [`BURST`] launches.
    pub fn host_us_per_launch(&self) -> Option<f64> {
        (self.burst_launches > 0).then(|| 1e6 * self.burst_s / self.burst_launches as f64)
    }

    /// GPU microseconds per launch pair.
    pub fn gpu_us_per_launch(&self) -> Option<f64> {
        (self.launches > 0).then(|| 1e3 * self.gpu_ms / self.launches as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_launch_times_come_from_the_right_counts() {
        let mut s = LaunchStats::default();
        assert_eq!(s.host_us_per_launch(), None);
        assert_eq!(s.gpu_us_per_launch(), None);
        s.launches = 1000;
        s.gpu_ms = 30.0;
        s.enqueue_s = 0.03;
        s.burst_launches = 2 * BURST;
        s.burst_s = 2.0 * BURST as f64 * 4e-6;
        // 30 ms of GPU time over 1000 launches; the host cost is the burst's, not the total
        // enqueue time, which includes waiting for the GPU.
        assert!((s.gpu_us_per_launch().unwrap() - 30.0).abs() < 1e-9);
        assert!((s.host_us_per_launch().unwrap() - 4.0).abs() < 1e-9);
    }
}
