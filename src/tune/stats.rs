//! How sure a handful of measurements make us of a configuration's weak outcomes per second:
//! a 99 % interval that is wide enough for both the counting noise of rare outcomes (Poisson)
//! and the scatter between chunks (load on a shared machine, launch-to-launch variation),
//! whichever is larger. The search stops measuring a configuration once its interval lies below
//! the best one's (the racing of OOPSLA'20 "Foundations of empirical memory consistency
//! testing" and GPUHarbor's tuning), so a poor configuration costs few chunks.

use serde::{Deserialize, Serialize};

/// What one chunk of measurement counted.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Instances run.
    pub instances: u64,
    /// Instances showing the target (weak) outcome.
    pub weak: u64,
    /// Seconds the backend spent running them.
    pub seconds: f64,
    /// The cache line's round trip between two cores just before the chunk, in nanoseconds
    /// (the CPU backend's `round_trip_ns`; absent on the GPU): which state the machine was in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_ns: Option<f64>,
}

/// A configuration's weak outcomes per second with its 99 % interval (`f64::MAX` stands for
/// no upper bound, so that the record stays JSON).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Weak outcomes per second over every chunk.
    pub rate: f64,
    /// Lower bound (never below 0).
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Instances run in all.
    pub instances: u64,
    /// Weak outcomes in all.
    pub weak: u64,
    /// Seconds in all.
    pub seconds: f64,
}

/// The one-sided 99.5 % point of the normal distribution: a two-sided 99 % interval.
const Z_99: f64 = 2.576;

/// Two-sided 99 % critical values of Student's t for 1 to 10 degrees of freedom (standard
/// tables); beyond 10 the last is used, which only widens the interval.
const T_99: [f64; 10] = [
    63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
];

/// `-ln(0.01)`: with no event in `s` seconds, rates above `4.6 / s` are excluded at 99 %.
const NONE_SEEN_99: f64 = 4.605;

fn t_99(df: usize) -> f64 {
    T_99[df.clamp(1, T_99.len()) - 1]
}

/// The estimate of a configuration measured in `samples` (chunks without time are skipped).
pub fn estimate(samples: &[Sample]) -> Estimate {
    let timed: Vec<&Sample> = samples.iter().filter(|s| s.seconds > 0.0).collect();
    let seconds: f64 = timed.iter().map(|s| s.seconds).sum();
    let weak: u64 = timed.iter().map(|s| s.weak).sum();
    let instances: u64 = timed.iter().map(|s| s.instances).sum();
    if timed.is_empty() {
        return Estimate {
            rate: 0.0,
            low: 0.0,
            high: f64::MAX,
            instances,
            weak,
            seconds,
        };
    }
    let rate = weak as f64 / seconds;
    let poisson = Z_99 * (weak as f64).sqrt() / seconds;
    let half = poisson.max(scatter(&timed, rate));
    let high = (rate + half).max(NONE_SEEN_99 / seconds);
    Estimate {
        rate,
        low: (rate - half).max(0.0),
        high,
        instances,
        weak,
        seconds,
    }
}

/// The half-width the scatter of the chunks' own rates gives: `t * sd / sqrt(k)`, unbounded
/// with one chunk (one chunk says nothing about its scatter).
fn scatter(timed: &[&Sample], rate: f64) -> f64 {
    let k = timed.len();
    if k < 2 {
        return if rate > 0.0 { f64::MAX } else { 0.0 };
    }
    let rates: Vec<f64> = timed.iter().map(|s| s.weak as f64 / s.seconds).collect();
    let mean = rates.iter().sum::<f64>() / k as f64;
    let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
    t_99(k - 1) * (var / k as f64).sqrt()
}

/// The median of the chunks' own rates with a distribution-free interval: the `j`-th lowest
/// and `j`-th highest chunk rates, `j` the largest with `P(Binomial(k, 1/2) < j) <= 0.005`, so
/// the interval covers the median at 99 % whatever the chunks' distribution. A few chunks in
/// which the machine, not the configuration, decided the count (a role descheduled throughout:
/// nothing weak) move only the interval's outer order statistics. Below 8 chunks no such
/// interval exists and the bounds are 0 and unbounded.
pub fn median_estimate(samples: &[Sample]) -> Estimate {
    let mut e = estimate(samples);
    let mut rates: Vec<f64> = samples
        .iter()
        .filter(|s| s.seconds > 0.0)
        .map(|s| s.weak as f64 / s.seconds)
        .collect();
    rates.sort_by(f64::total_cmp);
    let k = rates.len();
    if k == 0 {
        return e;
    }
    e.rate = (rates[(k - 1) / 2] + rates[k / 2]) / 2.0;
    (e.low, e.high) = median_interval(&rates).unwrap_or((0.0, f64::MAX));
    e
}

/// The distribution-free 99 % interval of the median of `sorted` (ascending): its `j`-th
/// lowest and `j`-th highest values ([`median_estimate`]); `None` below 8 values.
pub fn median_interval(sorted: &[f64]) -> Option<(f64, f64)> {
    let k = sorted.len();
    order_rank(k).map(|j| (sorted[j - 1], sorted[k - j]))
}

/// The largest `j >= 1` with `P(Binomial(k, 1/2) < j) <= 0.005`, if any.
fn order_rank(k: usize) -> Option<usize> {
    let mut below = 0.0; // P(X < j), built up term by term
    let mut term = 0.5f64.powi(k as i32); // P(X = j - 1), starting at P(X = 0)
    let mut j = 0;
    while j < k {
        if below + term > 0.005 {
            break;
        }
        below += term;
        term *= (k - j) as f64 / (j + 1) as f64;
        j += 1;
    }
    (j >= 1).then_some(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(weak: u64, seconds: f64) -> Sample {
        Sample {
            instances: 1000,
            weak,
            seconds,
            link_ns: None,
        }
    }

    #[test]
    fn steady_counts_give_a_poisson_interval_around_the_rate() {
        let e = estimate(&[s(100, 1.0), s(100, 1.0), s(100, 1.0), s(100, 1.0)]);
        assert_eq!(e.rate, 100.0);
        assert_eq!((e.weak, e.instances), (400, 4000));
        // sqrt(400) = 20 weak over 4 s: 2.576 * 5 on either side.
        assert!((e.high - e.rate - 12.88).abs() < 1e-9, "{e:?}");
        assert!((e.rate - e.low - 12.88).abs() < 1e-9, "{e:?}");
    }

    #[test]
    fn scattered_chunks_widen_the_interval_beyond_counting_noise() {
        let steady = estimate(&[s(100, 1.0), s(100, 1.0), s(100, 1.0)]);
        let scattered = estimate(&[s(0, 1.0), s(300, 1.0), s(0, 1.0)]);
        assert_eq!(steady.rate, scattered.rate);
        assert!(scattered.high - scattered.low > 5.0 * (steady.high - steady.low));
        assert_eq!(scattered.low, 0.0);
    }

    #[test]
    fn the_median_interval_takes_order_statistics_and_shrugs_off_a_dead_chunk() {
        assert_eq!(order_rank(7), None);
        assert_eq!(order_rank(8), Some(1), "P(X = 0) = 1/256");
        assert_eq!(order_rank(12), Some(2), "P(X < 2) = 13/4096");
        assert_eq!(
            order_rank(16),
            Some(3),
            "P(X < 3) = 137/65536, P(X < 4) > 0.005"
        );
        let mut chunks: Vec<Sample> = (0..12).map(|i| s(100 + i, 1.0)).collect();
        chunks[3] = s(0, 1.0);
        let e = median_estimate(&chunks);
        assert_eq!((e.low, e.rate, e.high), (100.0, 105.5, 110.0), "{e:?}");
        assert!(
            estimate(&chunks).low < 80.0,
            "the mean's interval is dragged down"
        );
        let few = median_estimate(&chunks[..5]);
        assert_eq!((few.low, few.high), (0.0, f64::MAX));
    }

    #[test]
    fn nothing_seen_still_bounds_the_rate_and_one_chunk_bounds_nothing_seen_only() {
        let none = estimate(&[s(0, 2.0), s(0, 2.0)]);
        assert_eq!((none.rate, none.low), (0.0, 0.0));
        assert!((none.high - NONE_SEEN_99 / 4.0).abs() < 1e-12);
        let one = estimate(&[s(5, 1.0)]);
        assert_eq!(one.high, f64::MAX);
        assert_eq!(estimate(&[]).high, f64::MAX);
    }
}
