//! The units a comparison of weak rates counts: a record's parts (CPU rounds or GPU launch
//! batches), or its runs when it merges repeated runs of the test.
//!
//! Parts of one run share that run's build, placement and machine state, so they scatter less
//! than whole runs do. A comparison with the part as its unit measures noise within a run and
//! calls the drift between runs significant; with the run as its unit it measures that drift.

use super::{ObservedData, PartCounts};
use serde::Serialize;

/// What a comparison takes as one observation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// A part of a run: a group of CPU rounds or GPU launch batches.
    Part,
    /// A whole run, when a record merges repeated runs.
    Run,
}

impl Unit {
    /// The unit for comparing these records: the run when any of them merges two or more runs
    /// (every record is then counted by run, so that one scale of scatter is pooled), else the
    /// part.
    pub fn of(records: &[&ObservedData]) -> Unit {
        if records.iter().any(|o| o.runs() >= 2) {
            Unit::Run
        } else {
            Unit::Part
        }
    }

    /// The unit's plural, for reports.
    pub fn plural(self) -> &'static str {
        match self {
            Unit::Part => "parts",
            Unit::Run => "runs",
        }
    }
}

impl ObservedData {
    /// How many runs the record's parts come from: 0 without parts, 1 unless it merges runs.
    pub fn runs(&self) -> usize {
        match (self.parts.is_empty(), self.run_parts.len()) {
            (true, _) => 0,
            (false, 0) => 1,
            (false, n) => n,
        }
    }

    /// The record's observations in `unit`: its parts, or each run's parts summed.
    pub fn units(&self, unit: Unit) -> Vec<PartCounts> {
        match unit {
            Unit::Part => self.parts.clone(),
            Unit::Run => self.runs_parts().into_iter().filter_map(total).collect(),
        }
    }

    /// Each run's parts, in order (one run, or none without parts, unless it merges runs).
    pub fn runs_parts(&self) -> Vec<&[PartCounts]> {
        if self.run_parts.is_empty() {
            return [self.parts.as_slice()]
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect();
        }
        let mut rest = self.parts.as_slice();
        let mut runs = Vec::with_capacity(self.run_parts.len());
        for &n in &self.run_parts {
            let (run, tail) = rest.split_at((n as usize).min(rest.len()));
            runs.push(run);
            rest = tail;
        }
        runs
    }
}

/// The sum of some parts; `None` when there are none.
fn total(parts: &[PartCounts]) -> Option<PartCounts> {
    (!parts.is_empty()).then(|| PartCounts {
        instances: parts.iter().map(|p| p.instances).sum(),
        weak: parts.iter().map(|p| p.weak).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(parts: &[(u64, u64)], run_parts: &[u64]) -> ObservedData {
        ObservedData {
            hash: String::new(),
            skipped: 0,
            elapsed_s: 0.0,
            parts: parts
                .iter()
                .map(|&(instances, weak)| PartCounts { instances, weak })
                .collect(),
            run_parts: run_parts.to_vec(),
        }
    }

    fn pairs(units: Vec<PartCounts>) -> Vec<(u64, u64)> {
        units.iter().map(|p| (p.instances, p.weak)).collect()
    }

    #[test]
    fn a_merged_record_counts_each_runs_parts_as_one_unit() {
        let o = observed(&[(10, 1), (10, 2), (5, 0), (7, 7), (3, 1)], &[2, 1, 2]);
        assert_eq!(o.runs(), 3);
        assert_eq!(pairs(o.units(Unit::Run)), [(20, 3), (5, 0), (10, 8)]);
        assert_eq!(o.units(Unit::Part).len(), 5);
    }

    #[test]
    fn one_run_is_one_unit_and_no_parts_are_none() {
        let one = observed(&[(10, 1), (10, 2)], &[]);
        assert_eq!(one.runs(), 1);
        assert_eq!(pairs(one.units(Unit::Run)), [(20, 3)]);
        let none = observed(&[], &[]);
        assert_eq!(none.runs(), 0);
        assert!(none.units(Unit::Run).is_empty());
    }

    #[test]
    fn the_run_is_the_unit_when_either_record_merges_runs() {
        let (one, merged) = (observed(&[(1, 0)], &[]), observed(&[(1, 0); 2], &[1, 1]));
        assert_eq!(Unit::of(&[&one, &one]), Unit::Part);
        assert_eq!(Unit::of(&[&one, &merged]), Unit::Run);
    }
}
