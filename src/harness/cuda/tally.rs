//! What the host makes of the histogram buffer it reads back: the decoded counts, the checksum
//! (every instance of every launch examined exactly once, none incomplete) and the stress
//! self-test (stress that a launch drew really issued memory traffic). A failed check is an
//! error of the run, never a silently smaller histogram. Pure, so tested without a GPU.

use crate::codegen::layout::{chance, Salt};
use crate::codegen::{DeviceCounts, Layout, Stress};
use crate::outcome::Histogram;

/// Decodes a snapshot of the histogram buffer taken between launches (for progress): the
/// outcome counts must add up to the examined instances, whatever the number of launches.
pub fn snapshot(layout: &Layout, words: &[u64]) -> Result<DeviceCounts, String> {
    layout.decode_histogram(words).map_err(|e| e.to_string())
}

/// The counts `now` holds beyond `before`, an earlier snapshot of the same histogram: one
/// launch batch's part.
pub fn since(now: &Histogram, before: &Histogram) -> Histogram {
    let mut part = Histogram {
        counts: Default::default(),
        unexpected: now.unexpected.saturating_sub(before.unexpected),
    };
    for (o, &n) in &now.counts {
        let d = n.saturating_sub(before.counts.get(o).copied().unwrap_or(0));
        if d > 0 {
            part.counts.insert(o.clone(), d);
        }
    }
    part
}

/// What the launches with `seeds` must have done to the StressOps counter: `(any, at_least)`:
/// whether some launch drew memory stress of either kind, and the operations the stress CTAs
/// alone must have issued.
pub fn expected_stress(layout: &Layout, stress: &Stress, seeds: &[u32]) -> (bool, u64) {
    let cta_ops = if stress.mem_stress_iterations > 0 {
        layout.stress_cta_ops(stress)
    } else {
        0
    };
    let mut any = false;
    let mut at_least = 0u64;
    for &s in seeds {
        if cta_ops > 0 && chance(s, Salt::MemStress, stress.mem_stress_pct) {
            any = true;
            at_least += cta_ops;
        }
        if stress.pre_stress_iterations > 0 && chance(s, Salt::PreStress, stress.pre_stress_pct) {
            any = true;
        }
    }
    (any, at_least)
}

/// The final check of a test's run: decodes `words` (read after the last launch completed),
/// and checks the checksum against `launches` and the stress counter against `expected`, the
/// sum of [`expected_stress`] over the launches' seeds.
pub fn finish(
    layout: &Layout,
    words: &[u64],
    launches: u64,
    expected: (bool, u64),
) -> Result<DeviceCounts, String> {
    let counts = snapshot(layout, words)?;
    counts
        .check_total(layout, launches)
        .map_err(|e| e.to_string())?;
    let (any, at_least) = expected;
    if any && counts.stress_ops == 0 {
        return Err(
            "stress self-test failed: launches drew memory stress but the stress counter is 0"
                .into(),
        );
    }
    if counts.stress_ops < at_least {
        return Err(format!(
            "stress self-test failed: the stress CTAs must have issued at least {at_least} \
             memory operations, the counter says {}",
            counts.stress_ops
        ));
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::layout::COUNTERS;
    use crate::codegen::Counter;
    use crate::litmus;
    use crate::outcome::Outcome;

    #[test]
    fn a_batch_part_is_the_difference_of_two_snapshots() {
        let h = |a: u64, b: u64, u: u64| Histogram {
            counts: [(Outcome(vec![0]), a), (Outcome(vec![1]), b)]
                .into_iter()
                .filter(|(_, n)| *n > 0)
                .collect(),
            unexpected: u,
        };
        let mut sum = h(5, 0, 1);
        let part = since(&h(12, 3, 1), &h(5, 0, 1));
        assert_eq!(part, h(7, 3, 0));
        sum.merge(&part);
        assert_eq!(sum, h(12, 3, 1));
    }

    const MP: &str = "PTX MP { x=0; y=0; }
         P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
         st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, y ;
         st.relaxed.gpu y, 1 | ld.relaxed.gpu r1, x ;
         exists (P1:r0 == 1 /\\ P1:r1 == 0)";

    /// MP with domains {0,1} for both registers: 4 outcomes, index = 2 * r0 + r1.
    fn mp(stress: &Stress) -> Layout {
        let test = litmus::parse(MP, std::path::Path::new("mp.litmus")).expect("MP parses");
        Layout::new(&test, stress, &[vec![0, 1], vec![0, 1]]).expect("MP lays out")
    }

    /// A histogram buffer: counts per outcome index, then the counters.
    fn words(outcomes: [u64; 4], counters: [(Counter, u64); 5]) -> Vec<u64> {
        let mut w = outcomes.to_vec();
        w.resize(4 + COUNTERS as usize, 0);
        for (c, v) in counters {
            w[4 + c as usize] = v;
        }
        w
    }

    fn counters(unexpected: u64, skipped: u64, checked: u64, stress: u64) -> [(Counter, u64); 5] {
        [
            (Counter::Unexpected, unexpected),
            (Counter::Skipped, skipped),
            (Counter::Checked, checked),
            (Counter::Incomplete, 0),
            (Counter::StressOps, stress),
        ]
    }

    #[test]
    fn device_histograms_decode_to_outcomes() {
        let l = mp(&Stress::basic());
        assert_eq!(l.outcome_count, 4);
        // 10 × (r0=0,r1=0), 0 × (0,1), 3 × (1,0) — the weak outcome — 7 × (1,1), 2 unexpected,
        // 1 skipped: 23 examined.
        let c = snapshot(&l, &words([10, 0, 3, 7], counters(2, 1, 23, 0))).unwrap();
        assert_eq!(c.histogram.counts.len(), 3);
        assert_eq!(c.histogram.counts[&Outcome(vec![0, 0])], 10);
        assert_eq!(c.histogram.counts[&Outcome(vec![1, 0])], 3);
        assert_eq!(c.histogram.counts[&Outcome(vec![1, 1])], 7);
        assert!(!c.histogram.counts.contains_key(&Outcome(vec![0, 1])));
        assert_eq!((c.histogram.unexpected, c.skipped, c.checked), (2, 1, 23));
    }

    #[test]
    fn a_count_that_does_not_add_up_is_an_error() {
        let l = mp(&Stress::basic());
        // 20 + 2 + 1 = 23 but 24 examined: one instance was lost.
        let e = snapshot(&l, &words([10, 0, 3, 7], counters(2, 1, 24, 0))).unwrap_err();
        assert!(e.contains("23") || e.contains("22"), "{e}");
        // A short buffer is refused, not read out of bounds.
        assert!(snapshot(&l, &[0; 3]).is_err());
    }

    #[test]
    fn the_final_total_must_be_every_instance_of_every_launch() {
        let l = mp(&Stress::basic());
        let n = l.instances;
        let seeds = [1, 2];
        let ok = words([n, 0, 0, n], counters(0, 0, 2 * n, 0));
        let c = finish(&l, &ok, 2, expected_stress(&l, &Stress::basic(), &seeds)).unwrap();
        assert_eq!(c.histogram.total() + c.skipped, 2 * n);
        // The same buffer after three launches is one launch short.
        let e = finish(&l, &ok, 3, (false, 0)).unwrap_err();
        assert!(e.contains(&format!("expected {}", 3 * n)), "{e}");
        // An incomplete instance fails even when the sums agree.
        let mut bad = ok.clone();
        bad[4 + Counter::Incomplete as usize] = 1;
        assert!(finish(&l, &bad, 2, (false, 0)).is_err());
    }

    #[test]
    fn stress_that_was_drawn_must_show_in_the_counter() {
        let s = Stress::full_stress();
        let l = mp(&s);
        let per_launch = l.stress_cta_ops(&s);
        // Hand count: the preset's grid has 264 CTAs of 256 threads, 198 of them testing (MP
        // puts its two roles in distinct CTAs, so the testing ones round down to 198); the
        // other 66 stress with 1024 iterations of two accesses.
        assert_eq!(l.test_launch.grid[0], 264);
        assert_eq!(l.testing_ctas, 198);
        assert_eq!(per_launch, 66 * 256 * 2 * 1024);
        let seeds = [5u32, 6, 7];
        let (any, at_least) = expected_stress(&l, &s, &seeds);
        assert!(any);
        // mem_stress_pct is 100: every launch stresses.
        assert_eq!(at_least, 3 * per_launch);
        let n = l.instances;
        let buf = |ops| words([3 * n, 0, 0, 0], counters(0, 0, 3 * n, ops));
        assert!(finish(&l, &buf(at_least + 17), 3, (any, at_least)).is_ok());
        assert!(finish(&l, &buf(at_least - 1), 3, (any, at_least))
            .unwrap_err()
            .contains("at least"));
        assert!(finish(&l, &buf(0), 3, (true, 0))
            .unwrap_err()
            .contains("stress"));
        // Without stress, a zero counter is right.
        let b = Stress::basic();
        let lb = mp(&b);
        assert_eq!(expected_stress(&lb, &b, &seeds), (false, 0));
        let nb = lb.instances;
        assert!(finish(
            &lb,
            &words([nb, 0, 0, 0], counters(0, 0, nb, 0)),
            1,
            expected_stress(&lb, &b, &[9])
        )
        .is_ok());
    }

    #[test]
    fn pre_stress_draws_follow_the_launch_seeds() {
        let mut s = Stress::basic();
        s.pre_stress_pct = 50;
        s.pre_stress_iterations = 8;
        let l = mp(&s);
        // Find seeds on both sides of the 50 % draw with the device's own hash.
        let drawn: Vec<u32> = (0..200)
            .filter(|&x| chance(x, Salt::PreStress, 50))
            .collect();
        let not: Vec<u32> = (0..200)
            .filter(|&x| !chance(x, Salt::PreStress, 50))
            .collect();
        assert!(!drawn.is_empty() && !not.is_empty());
        assert_eq!(expected_stress(&l, &s, &not[..3]), (false, 0));
        assert_eq!(expected_stress(&l, &s, &drawn[..1]), (true, 0));
    }
}
