//! Comparing two weak rates with the round (or launch batch) as the unit, not the instance.
//!
//! Instances of one round share its timing, placement and load, so weak counts vary between
//! rounds far more than a binomial allows; a test on pooled instance counts then calls noise
//! highly significant. Here each set is a list of parts `(k_i weak of n_i)`, and the weak count
//! is taken to have a quasi-binomial variance `φ · n p (1 - p)` (McCullagh and Nelder,
//! *Generalized Linear Models*, 1989, §4.5): `φ` is estimated from how much the parts of each
//! set scatter around that set's own rate (Pearson's X² over the residual degrees of freedom),
//! never below 1. The rates are then compared by a Wald statistic with the pooled rate in the
//! variance, against Student's t with the residual degrees of freedom.

use crate::results::{PartCounts, TestRecord, Unit};
use serde::Serialize;

/// The outcome of comparing two sets of parts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Dispersed {
    /// The two-sided p-value.
    pub p: f64,
    /// The dispersion estimate `φ` (1 = binomial; never below).
    pub phi: f64,
    /// Residual degrees of freedom: parts in both sets less 2.
    pub df: u64,
}

/// The quasi-binomial comparison of the weak rates of `a` and `b`; `None` when neither set
/// shows scatter to estimate `φ` from: a set tells how its parts scatter only when it has at
/// least 2 non-empty parts and a rate strictly between 0 and 1 (a set never weak, or weak in
/// every instance, says nothing about the dispersion of the other).
pub fn quasi_binomial(a: &[PartCounts], b: &[PartCounts]) -> Option<Dispersed> {
    let a: Vec<&PartCounts> = a.iter().filter(|p| p.instances > 0).collect();
    let b: Vec<&PartCounts> = b.iter().filter(|p| p.instances > 0).collect();
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let ((ka, na), (kb, nb)) = (totals(&a), totals(&b));
    let (pa, pb, pooled) = (ka / na, kb / nb, (ka + kb) / (na + nb));
    if pooled <= 0.0 || pooled >= 1.0 {
        // Never weak (or always) on both sides: nothing changed.
        let df = (a.len() + b.len()) as u64 - 2;
        return (df > 0).then_some(Dispersed {
            p: 1.0,
            phi: 1.0,
            df,
        });
    }
    let df = residual_df(&a, pa) + residual_df(&b, pb);
    if df == 0 {
        return None;
    }
    let x2 = pearson(&a, pa) + pearson(&b, pb);
    let phi = (x2 / df as f64).max(1.0);
    let se = (phi * pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb)).sqrt();
    let t = (pa - pb).abs() / se;
    Some(Dispersed {
        p: student_t_two_sided(t, df),
        phi,
        df,
    })
}

/// One set's weak rate with its 95 % interval, the part as the unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateInterval {
    /// The lower bound.
    pub lo: f64,
    /// The upper bound.
    pub hi: f64,
    /// The dispersion estimate `φ` of the set's parts (1 = binomial; never below).
    pub phi: f64,
    /// Degrees of freedom: non-empty parts less 1.
    pub df: u64,
}

/// The 95 % interval of a set's weak rate over its parts: Wilson's interval at the effective
/// sample size `n / φ` (`φ` from how far the parts scatter around the set's rate, at least 1;
/// Kish's design effect) with Student's t critical value at the parts less 1 degrees of
/// freedom in place of the normal's. `None` with fewer than 2 non-empty parts: one part tells
/// nothing of how rounds scatter, and an interval on instances would claim too much.
pub fn rate_interval(parts: &[PartCounts]) -> Option<RateInterval> {
    let parts: Vec<&PartCounts> = parts.iter().filter(|p| p.instances > 0).collect();
    if parts.len() < 2 {
        return None;
    }
    let (k, n) = totals(&parts);
    let p = k / n;
    let df = parts.len() as u64 - 1;
    let phi = (pearson(&parts, p) / df as f64).max(1.0);
    let (lo, hi) = super::stats::wilson(p, n / phi, t_critical_95(df));
    Some(RateInterval { lo, hi, phi, df })
}

/// How far repeated runs of one setup scatter, against how far one run's parts do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunScatter {
    /// Tests merged from two or more runs whose weak rate is neither 0 nor 1.
    pub tests: usize,
    /// The median over those tests of `φ` with the run as the unit.
    pub between_runs: f64,
    /// The median over those tests of `φ` within runs: each run's parts around that run's
    /// own rate.
    pub within_runs: f64,
}

/// The scatter of the repeated tests of a merged set (`None` when none repeats with a weak
/// rate strictly between 0 and 1). Runs far more scattered than their parts mean that a
/// comparison of single runs would take drift for change.
pub fn run_scatter(tests: &[TestRecord]) -> Option<RunScatter> {
    let (mut runs, mut parts): (Vec<f64>, Vec<f64>) = tests
        .iter()
        .filter(|t| t.observed.runs() >= 2)
        .filter(|t| (1..t.verdict.instances).contains(&t.verdict.counts.weak))
        .filter_map(|t| {
            let between = rate_interval(&t.observed.units(Unit::Run))?.phi;
            Some((between, within_runs_phi(&t.observed.runs_parts())?))
        })
        .unzip();
    Some(RunScatter {
        tests: runs.len(),
        between_runs: super::stats::median(&mut runs)?,
        within_runs: super::stats::median(&mut parts)?,
    })
}

/// The dispersion of parts around their own run's rate, pooled over the runs (Pearson's X²
/// over the residual degrees of freedom, at least 1); `None` without such freedom.
fn within_runs_phi(runs: &[&[PartCounts]]) -> Option<f64> {
    let (mut x2, mut df) = (0.0, 0u64);
    for run in runs {
        let parts: Vec<&PartCounts> = run.iter().filter(|p| p.instances > 0).collect();
        let (k, n) = totals(&parts);
        let p = if n > 0.0 { k / n } else { 0.0 };
        x2 += pearson(&parts, p);
        df += residual_df(&parts, p);
    }
    (df > 0).then(|| (x2 / df as f64).max(1.0))
}

/// The two-sided 95 % critical value of Student's t with `df` degrees of freedom (by bisection
/// on [`student_t_two_sided`], which falls as `t` grows).
pub fn t_critical_95(df: u64) -> f64 {
    // df = 1 needs 12.7; nothing needs more than 1000.
    let (mut lo, mut hi) = (0.0f64, 1000.0f64);
    for _ in 0..80 {
        let mid = (lo + hi) / 2.0;
        if student_t_two_sided(mid, df) > 0.05 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// Weak and total instances of a set's parts.
fn totals(parts: &[&PartCounts]) -> (f64, f64) {
    let n: u64 = parts.iter().map(|p| p.instances).sum();
    let k: u64 = parts.iter().map(|p| p.weak).sum();
    (k as f64, n as f64)
}

/// The degrees of freedom a set's parts give the scatter around its rate `p`: none when `p`
/// is 0 or 1 (every part agrees with it whatever the dispersion).
fn residual_df(parts: &[&PartCounts], p: f64) -> u64 {
    if p <= 0.0 || p >= 1.0 {
        0
    } else {
        parts.len() as u64 - 1
    }
}

/// Pearson's X² of the parts around the rate `p` (0 when `p` is 0 or 1: every part then
/// agrees with it exactly).
fn pearson(parts: &[&PartCounts], p: f64) -> f64 {
    if p <= 0.0 || p >= 1.0 {
        return 0.0;
    }
    parts
        .iter()
        .map(|c| {
            let n = c.instances as f64;
            let e = n * p;
            (c.weak as f64 - e).powi(2) / (e * (1.0 - p))
        })
        .sum()
}

/// `P(|T| ≥ t)` for Student's t with `df` degrees of freedom: the regularised incomplete beta
/// `I_x(df/2, 1/2)` at `x = df / (df + t²)`.
pub fn student_t_two_sided(t: f64, df: u64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    let x = df as f64 / (df as f64 + t * t);
    incomplete_beta_half(x, df).clamp(0.0, 1.0)
}

/// `I_x(a, 1/2)` with `a = df / 2`, by the continued fraction of the incomplete beta function
/// (evaluated by Lentz's method), on the side where it converges fast.
fn incomplete_beta_half(x: f64, df: u64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let (a, b) = (df as f64 / 2.0, 0.5);
    // ln of x^a (1-x)^b / B(a, b); Γ's arguments are all halves of integers.
    let ln_front = ln_gamma_half(df + 1) - ln_gamma_half(df) - ln_gamma_half(1)
        + a * x.ln()
        + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * continued_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * continued_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction `1 / (1 + d1 / (1 + d2 / ...))` of the incomplete beta function.
fn continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 / (1.0 - (a + b) * x / (a + 1.0)).max(TINY);
    let mut f = d;
    for m in 1..500 {
        let m = m as f64;
        for coefficient in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + coefficient * d;
            d = 1.0 / if d.abs() < TINY { TINY } else { d };
            c = 1.0 + coefficient / c;
            c = if c.abs() < TINY { TINY } else { c };
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    f
}

/// `ln Γ(twice / 2)` for `twice ≥ 1`, from `Γ(1/2) = √π`, `Γ(1) = 1` and `Γ(z + 1) = z Γ(z)`.
fn ln_gamma_half(twice: u64) -> f64 {
    let mut z = if twice % 2 == 1 { 0.5 } else { 1.0 };
    let mut sum = if twice % 2 == 1 {
        0.5 * std::f64::consts::PI.ln()
    } else {
        0.0
    };
    while 2.0 * z < twice as f64 {
        sum += z.ln();
        z += 1.0;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn student_t_matches_tables() {
        // Two-sided 5 % critical values (any statistics table): df 1, 10, 30.
        for (t, df) in [(12.706, 1), (2.228, 10), (2.042, 30)] {
            let p = student_t_two_sided(t, df);
            assert!((p - 0.05).abs() < 2e-4, "df {df}: {p}");
        }
        // df = 1 is Cauchy: P(|T| ≥ t) = 1 - 2 atan(t) / π.
        let p = student_t_two_sided(3.0, 1);
        assert!((p - (1.0 - 2.0 * 3f64.atan() / std::f64::consts::PI)).abs() < 1e-9);
        assert!((student_t_two_sided(0.0, 7) - 1.0).abs() < 1e-12);
        // Far tail at many degrees of freedom approaches the normal's: 2 Φ(-6) = 1.97e-9.
        let p = student_t_two_sided(6.0, 100_000);
        assert!((p / 1.973e-9 - 1.0).abs() < 0.01, "{p}");
    }

    #[test]
    fn ln_gamma_of_halves() {
        assert!((ln_gamma_half(1) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
        assert!((ln_gamma_half(2)).abs() < 1e-12);
        // Γ(5) = 24, Γ(7/2) = 15 √π / 8.
        assert!((ln_gamma_half(10) - 24f64.ln()).abs() < 1e-12);
        let g = 15.0 * std::f64::consts::PI.sqrt() / 8.0;
        assert!((ln_gamma_half(7) - g.ln()).abs() < 1e-12);
    }

    fn parts(counts: &[(u64, u64)]) -> Vec<PartCounts> {
        counts
            .iter()
            .map(|&(weak, instances)| PartCounts { instances, weak })
            .collect()
    }

    #[test]
    fn too_few_parts_cannot_be_compared() {
        assert_eq!(quasi_binomial(&parts(&[(1, 10)]), &parts(&[(2, 10)])), None);
        assert_eq!(quasi_binomial(&[], &parts(&[(2, 10), (1, 10)])), None);
        // Empty parts do not count.
        assert_eq!(
            quasi_binomial(&parts(&[(1, 10), (0, 0)]), &parts(&[(2, 10)])),
            None
        );
        let d = quasi_binomial(&parts(&[(1, 10), (2, 10)]), &parts(&[(2, 10)])).unwrap();
        assert_eq!(d.df, 1);
        // Never weak in 30 parts says nothing about how the other set's single part scatters.
        let never = parts(&[(0, 100); 30]);
        assert_eq!(quasi_binomial(&never, &parts(&[(9, 100)])), None);
        let d = quasi_binomial(&never, &parts(&[(9, 100), (1, 100), (5, 100)])).unwrap();
        assert_eq!(d.df, 2);
    }

    #[test]
    fn no_weak_anywhere_is_no_change() {
        let z = parts(&[(0, 100), (0, 100), (0, 100)]);
        let d = quasi_binomial(&z, &z).unwrap();
        assert_eq!((d.p, d.phi, d.df), (1.0, 1.0, 4));
    }

    #[test]
    fn scatter_between_parts_widens_the_test() {
        // Same totals (60 of 4000 against 120 of 4000), steady parts against parts that
        // swing: the steady ones show a clear change, the swinging ones do not.
        let steady_a = parts(&[(15, 1000); 4]);
        let steady_b = parts(&[(30, 1000); 4]);
        let d = quasi_binomial(&steady_a, &steady_b).unwrap();
        assert!(d.phi == 1.0 && d.p < 0.01, "{d:?}");
        let swing_a = parts(&[(0, 1000), (40, 1000), (2, 1000), (18, 1000)]);
        let swing_b = parts(&[(90, 1000), (1, 1000), (25, 1000), (4, 1000)]);
        let d = quasi_binomial(&swing_a, &swing_b).unwrap();
        assert!(d.phi > 10.0 && d.p > 0.05, "{d:?}");
    }

    /// A run of `rounds` rounds of 512 instances whose rate swings from round to round
    /// around `mean` (uniform in [0, 2 mean]), as machine load makes it swing.
    fn run(state: &mut Rng, mean: f64, rounds: usize) -> Vec<PartCounts> {
        (0..rounds)
            .map(|_| {
                let rate = 2.0 * mean * state.uniform();
                let weak = (0..512).filter(|_| state.uniform() < rate).count() as u64;
                PartCounts {
                    instances: 512,
                    weak,
                }
            })
            .collect()
    }

    #[test]
    fn same_rate_runs_are_rarely_significant_where_pooled_counts_often_are() {
        let mut state = Rng::new(7);
        let (mut pooled, mut dispersed) = (0, 0);
        for _ in 0..100 {
            let (a, b) = (run(&mut state, 0.05, 20), run(&mut state, 0.05, 20));
            let sum = |s: &[PartCounts]| {
                s.iter()
                    .fold((0, 0), |(k, n), p| (k + p.weak, n + p.instances))
            };
            let ((ka, na), (kb, nb)) = (sum(&a), sum(&b));
            let (p, _) = crate::report::stats::two_proportion(ka, na, kb, nb).unwrap();
            pooled += usize::from(p < 0.05);
            dispersed += usize::from(quasi_binomial(&a, &b).unwrap().p < 0.05);
        }
        // At the 5 % level a sound test flags about 5 of 100 runs of one rate.
        assert!(dispersed <= 10, "{dispersed} of 100 flagged");
        assert!(pooled >= 30, "the pooled test flagged only {pooled} of 100");
        // A planted change is still found: the rate tripled.
        let mut found = 0;
        for _ in 0..20 {
            let (a, b) = (run(&mut state, 0.05, 20), run(&mut state, 0.15, 20));
            found += usize::from(quasi_binomial(&a, &b).unwrap().p < 0.001);
        }
        assert!(found >= 18, "found {found} of 20");
    }

    #[test]
    fn t_critical_values_match_tables() {
        for (df, t) in [(1, 12.706), (4, 2.776), (10, 2.228), (30, 2.042)] {
            let got = t_critical_95(df);
            assert!((got - t).abs() < 2e-3, "df {df}: {got}");
        }
    }

    #[test]
    fn one_part_has_no_interval() {
        assert_eq!(rate_interval(&parts(&[(5, 100)])), None);
        assert_eq!(rate_interval(&parts(&[(5, 100), (0, 0)])), None);
        let r = rate_interval(&parts(&[(5, 100), (5, 100)])).unwrap();
        assert_eq!((r.phi, r.df), (1.0, 1));
        // t with 1 degree of freedom: far wider than Wilson's on 200 instances.
        let (lo, hi) = crate::report::stats::wilson_95(10, 200).unwrap();
        assert!(r.lo < lo && r.hi > hi, "{r:?}");
    }

    #[test]
    fn interval_widens_with_scatter() {
        let steady = rate_interval(&parts(&[(50, 1000); 20])).unwrap();
        assert_eq!(steady.phi, 1.0);
        assert!(steady.lo < 0.05 && 0.05 < steady.hi, "{steady:?}");
        let swing = rate_interval(&parts(&[(0, 1000), (100, 1000)].repeat(10))).unwrap();
        assert!(swing.phi > 50.0, "{swing:?}");
        assert!(
            swing.hi - swing.lo > 5.0 * (steady.hi - steady.lo),
            "{swing:?}"
        );
    }

    #[test]
    fn interval_covers_a_swinging_rate_where_pooled_wilson_does_not() {
        let mut state = Rng::new(11);
        let (mut covered, mut pooled_covered) = (0, 0);
        for _ in 0..200 {
            let r = run(&mut state, 0.05, 20);
            let i = rate_interval(&r).unwrap();
            covered += usize::from(i.lo <= 0.05 && 0.05 <= i.hi);
            let (k, n) = r
                .iter()
                .fold((0, 0), |(k, n), p| (k + p.weak, n + p.instances));
            let (lo, hi) = crate::report::stats::wilson_95(k, n).unwrap();
            pooled_covered += usize::from(lo <= 0.05 && 0.05 <= hi);
        }
        // A 95 % interval covers the true rate about 190 times in 200.
        assert!(covered >= 180, "covered {covered} of 200");
        assert!(
            pooled_covered <= 120,
            "pooled Wilson covered {pooled_covered} of 200"
        );
    }
}
