//! Two-proportion tests for comparing weak rates of two result sets, and the median the
//! summary tables use.
//!
//! Fisher's exact test (two-sided) when the two sets together saw at most
//! [`EXACT_LIMIT`] events, otherwise the two-sided two-proportion z-test with pooled variance,
//! which is accurate at such counts. Both answer: could `k1/n1` and `k2/n2` come from one rate?

/// The median of `values` (the mean of the middle two for an even count), sorting them;
/// `None` when there are none.
pub fn median(values: &mut [f64]) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// Above this many events in total, the z-test replaces Fisher's exact test.
pub const EXACT_LIMIT: u64 = 100_000;

/// Which test produced a p-value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Fisher's exact test, two-sided (summing tables no more likely than the observed one).
    FisherExact,
    /// Two-proportion z-test with pooled variance, two-sided.
    ZTest,
}

impl Method {
    /// A short name for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::FisherExact => "Fisher exact",
            Method::ZTest => "z-test",
        }
    }
}

/// The two-sided p-value for "`k1` of `n1` and `k2` of `n2` share one rate", and the method
/// used. `None` when either side has no trials.
pub fn two_proportion(k1: u64, n1: u64, k2: u64, n2: u64) -> Option<(f64, Method)> {
    if n1 == 0 || n2 == 0 || k1 > n1 || k2 > n2 {
        return None;
    }
    let k = k1 + k2;
    let n = n1 + n2;
    if k.min(n - k) <= EXACT_LIMIT {
        Some((fisher_two_sided(k1, n1, n2, k), Method::FisherExact))
    } else {
        Some((z_test(k1, n1, k2, n2), Method::ZTest))
    }
}

/// Fisher's exact test: `X ~ Hypergeometric(n1 + n2, k, n1)`, summing the probabilities of
/// every table no more likely than the observed `X = k1`.
fn fisher_two_sided(k1: u64, n1: u64, n2: u64, k: u64) -> f64 {
    // By symmetry, count the rarer of events and non-events (few terms either way).
    let n = n1 + n2;
    let (k1, k) = if k > n - k { (n1 - k1, n - k) } else { (k1, k) };
    let lo = k.saturating_sub(n2);
    let hi = k.min(n1);
    // log P(X = i) up to a constant, by the ratio P(i+1)/P(i) = (n1-i)(k-i) / ((i+1)(n2-k+i+1)).
    let mut logs = Vec::with_capacity((hi - lo + 1) as usize);
    let mut l = 0.0f64;
    logs.push(l);
    for i in lo..hi {
        let num = (n1 - i) as f64 * (k - i) as f64;
        let den = (i + 1) as f64 * (n2 + i + 1 - k) as f64;
        l += (num / den).ln();
        logs.push(l);
    }
    let max = logs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = logs.iter().map(|x| (x - max).exp()).sum();
    let observed = logs[(k1 - lo) as usize];
    // A relative tolerance so that tables exactly as likely as the observed one count.
    let p: f64 = logs
        .iter()
        .filter(|x| **x <= observed + 1e-7 * observed.abs().max(1.0))
        .map(|x| (x - max).exp())
        .sum::<f64>()
        / total;
    p.min(1.0)
}

/// The two-sided two-proportion z-test with pooled variance.
fn z_test(k1: u64, n1: u64, k2: u64, n2: u64) -> f64 {
    let (p1, p2) = (k1 as f64 / n1 as f64, k2 as f64 / n2 as f64);
    let p = (k1 + k2) as f64 / (n1 + n2) as f64;
    let se = (p * (1.0 - p) * (1.0 / n1 as f64 + 1.0 / n2 as f64)).sqrt();
    if se == 0.0 {
        return 1.0;
    }
    let z = ((p1 - p2) / se).abs();
    erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

/// The complementary error function, by a Chebyshev fit with relative error below 1.2e-7
/// everywhere (so small p-values keep their magnitude).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// The Wilson score interval at 95 % for `k` events in `n` trials: a rate's plausible range,
/// never outside [0, 1] and not empty at `k == 0`. `None` for `n == 0`.
pub fn wilson_95(k: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 || k > n {
        return None;
    }
    const Z: f64 = 1.959_963_984_540_054;
    Some(wilson(k as f64 / n as f64, n as f64, Z))
}

/// The Wilson score interval of a rate `p` over `n` trials (`n` need not be whole: an
/// effective sample size) with the critical value `z`.
pub fn wilson(p: f64, n: f64, z: f64) -> (f64, f64) {
    let z2 = z * z / n;
    let centre = (p + z2 / 2.0) / (1.0 + z2);
    let half = z * (p * (1.0 - p) / n + z2 / n / 4.0).sqrt() / (1.0 + z2);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_published_values() {
        // 81 of 263 (Wilson 1927 as tabulated by Newcombe 1998): 0.2553 to 0.3662.
        let (lo, hi) = wilson_95(81, 263).unwrap();
        assert!(
            (lo - 0.2553).abs() < 5e-4 && (hi - 0.3662).abs() < 5e-4,
            "{lo} {hi}"
        );
        // 0 of 10: 0 to 0.2775.
        let (lo, hi) = wilson_95(0, 10).unwrap();
        assert!(lo == 0.0 && (hi - 0.2775).abs() < 5e-4, "{hi}");
        assert_eq!(wilson_95(1, 0), None);
        assert_eq!(wilson_95(5, 4), None);
    }

    #[test]
    fn erfc_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-7);
        // erfc(5) = 1.5375e-12: the relative error stays small in the tail.
        assert!((erfc(5.0) / 1.537_459_794_428_035e-12 - 1.0).abs() < 1e-6);
    }

    #[test]
    fn fisher_matches_a_hand_computed_table() {
        // Table [[1, 9], [11, 3]] (the tea-tasting style example): two-sided p = 0.002759.
        let (p, m) = two_proportion(1, 10, 11, 14).unwrap();
        assert_eq!(m, Method::FisherExact);
        assert!((p - 0.002_759_456).abs() < 1e-6, "{p}");
        // Equal proportions: nothing to see.
        let (p, _) = two_proportion(5, 100, 5, 100).unwrap();
        assert!((p - 1.0).abs() < 1e-9, "{p}");
    }

    #[test]
    fn rare_events_in_billions_of_instances() {
        // 30 vs 3 weak in 1e9 instances each: clearly different.
        let (p, m) = two_proportion(30, 1_000_000_000, 3, 1_000_000_000).unwrap();
        assert_eq!(m, Method::FisherExact);
        assert!(p < 1e-5, "{p}");
        // 10 vs 12: not.
        let (p, _) = two_proportion(10, 1_000_000_000, 12, 1_000_000_000).unwrap();
        assert!(p > 0.5, "{p}");
    }

    #[test]
    fn z_test_for_large_counts() {
        let (p, m) = two_proportion(500_000, 10_000_000, 501_000, 10_000_000).unwrap();
        assert_eq!(m, Method::ZTest);
        // z = 1000 / sqrt(2 * 1e7 * p(1-p)) with p = 0.05005: about 1.03, p about 0.30.
        assert!(p > 0.2 && p < 0.4, "{p}");
        let (p, _) = two_proportion(500_000, 10_000_000, 520_000, 10_000_000).unwrap();
        assert!(p < 1e-9, "{p}");
        assert_eq!(two_proportion(1, 0, 1, 5), None);
    }
}
