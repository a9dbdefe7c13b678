//! How many launches to enqueue before the host next waits for the GPU. Launches are enqueued
//! asynchronously on one stream; the host synchronises only between batches, to read the
//! histogram for the progress bar, to check the budget and to notice Ctrl-C. Batches are sized
//! so that one lasts about [`TICK_S`], which keeps the per-launch host work to the launch calls
//! themselves. Pure, so tested without a GPU.

use crate::harness::Budget;

/// Wanted duration of one batch, in seconds.
pub const TICK_S: f64 = 0.1;

/// Launches in the first batch, before any launch has been timed.
pub const FIRST_BATCH: u64 = 4;

/// Most launches in one batch.
pub const MAX_BATCH: u64 = 1 << 16;

/// The batching of one test's launches.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    budget: Budget,
    instances_per_launch: u64,
    fixed_batch: Option<u64>,
}

impl Schedule {
    /// A schedule for `budget` with `instances_per_launch`; `fixed_batch` overrides the
    /// adaptive batch size.
    pub fn new(budget: Budget, instances_per_launch: u64, fixed_batch: Option<u64>) -> Schedule {
        Schedule {
            budget,
            instances_per_launch: instances_per_launch.max(1),
            fixed_batch,
        }
    }

    /// Launches an instance budget needs (at least one; rounded up to whole launches), or
    /// `None` for a time budget.
    pub fn total_launches(&self) -> Option<u64> {
        match self.budget {
            Budget::Instances(n) => Some(n.div_ceil(self.instances_per_launch).max(1)),
            Budget::Seconds(_) => None,
        }
    }

    /// Launches of the next batch after `done` launches in `elapsed_s` seconds; 0 means the
    /// budget is spent. A time budget always runs at least one launch.
    pub fn next_batch(&self, done: u64, elapsed_s: f64) -> u64 {
        let per_launch = (done > 0).then(|| elapsed_s / done as f64);
        let wanted = match (self.fixed_batch, per_launch) {
            (Some(b), _) => b.max(1),
            (None, None) => FIRST_BATCH,
            (None, Some(t)) if t > 0.0 => ((TICK_S / t).round() as u64).clamp(1, MAX_BATCH),
            (None, Some(_)) => MAX_BATCH,
        };
        match self.budget {
            Budget::Instances(_) => {
                let total = self.total_launches().unwrap_or(0);
                wanted.min(total.saturating_sub(done))
            }
            Budget::Seconds(s) => {
                if done > 0 && elapsed_s >= s {
                    return 0;
                }
                match per_launch {
                    Some(t) if t > 0.0 && self.fixed_batch.is_none() => {
                        let left = ((s - elapsed_s) / t).round() as u64;
                        wanted.min(left.max(1))
                    }
                    _ => wanted,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_budgets_round_up_to_whole_launches() {
        let s = Schedule::new(Budget::Instances(100_000), 33_792, None);
        assert_eq!(s.total_launches(), Some(3));
        assert_eq!(
            Schedule::new(Budget::Instances(0), 10, None).total_launches(),
            Some(1)
        );
        assert_eq!(
            Schedule::new(Budget::Instances(20), 10, None).total_launches(),
            Some(2)
        );
        assert_eq!(
            Schedule::new(Budget::Seconds(1.0), 10, None).total_launches(),
            None
        );
    }

    #[test]
    fn batches_stop_exactly_at_the_instance_budget() {
        let s = Schedule::new(Budget::Instances(1_000_000), 1000, None);
        let mut done = 0;
        let mut batches = 0;
        // Pretend each launch takes 10 µs: batches of 10000 wanted, 1000 launches in all.
        loop {
            let b = s.next_batch(done, done as f64 * 1e-5);
            if b == 0 {
                break;
            }
            done += b;
            batches += 1;
        }
        assert_eq!(done, 1000);
        // First batch of 4, then one batch with the rest.
        assert_eq!(batches, 2);
    }

    #[test]
    fn batches_last_about_one_tick() {
        let s = Schedule::new(Budget::Seconds(60.0), 1000, None);
        assert_eq!(s.next_batch(0, 0.0), FIRST_BATCH);
        // 4 launches took 200 µs: 50 µs each, so 0.1 s is 2000 launches.
        assert_eq!(s.next_batch(4, 200e-6), 2000);
        // Very fast launches are capped.
        assert_eq!(s.next_batch(4, 1e-9), MAX_BATCH);
        // Very slow ones still make progress.
        assert_eq!(s.next_batch(4, 40.0), 1);
    }

    #[test]
    fn time_budgets_end_when_the_time_is_spent_and_do_not_overshoot_much() {
        let s = Schedule::new(Budget::Seconds(1.0), 1000, None);
        // 0.95 s spent at 1 ms per launch: 50 launches left, not 100.
        assert_eq!(s.next_batch(950, 0.95), 50);
        assert_eq!(s.next_batch(1000, 1.0), 0);
        assert_eq!(s.next_batch(1001, 1.2), 0);
        // A fixed batch is honoured.
        let f = Schedule::new(Budget::Seconds(1.0), 1000, Some(7));
        assert_eq!(f.next_batch(0, 0.0), 7);
        assert_eq!(f.next_batch(7, 0.5), 7);
    }
}
