//! The record of one family's search (`FAMILY.search.json`): what was searched, on what, and
//! every configuration's chunks; the report page is rendered from it alone.

use super::search::Outcome;
use super::space::Space;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The file name suffix of a search record.
pub const SUFFIX: &str = ".search.json";

/// One knob as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamRecord {
    /// Its key.
    pub name: String,
    /// The values tried, in order; a point's index refers to this list.
    pub values: Vec<String>,
}

/// One family's search.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    /// The family (the tests' name before the first `+`).
    pub family: String,
    /// The backend (`cpu`, `cuda`).
    pub backend: String,
    /// The search seed.
    pub seed: u64,
    /// The whole command's time budget in seconds.
    pub budget_s: f64,
    /// The family's tests.
    pub tests: Vec<String>,
    /// The machine's provenance.
    pub provenance: BTreeMap<String, String>,
    /// The knobs searched.
    pub params: Vec<ParamRecord>,
    /// The baseline, as value indices.
    pub baseline: Vec<usize>,
    /// The search.
    pub search: Outcome,
}

impl SearchRecord {
    /// The knobs of `space` as recorded.
    pub fn params_of(space: &Space) -> Vec<ParamRecord> {
        space
            .params
            .iter()
            .map(|p| ParamRecord {
                name: p.name.to_string(),
                values: p.values.clone(),
            })
            .collect()
    }

    /// The settings of trial `i` that differ from the baseline, as `key=value` (`baseline`
    /// when none).
    pub fn describe(&self, i: usize) -> String {
        let point = &self.search.trials[i].point.0;
        let diff: Vec<String> = self
            .params
            .iter()
            .enumerate()
            .filter(|(k, _)| point.get(*k) != self.baseline.get(*k))
            .filter_map(|(k, p)| Some(format!("{}={}", p.name, p.values.get(point[k])?)))
            .collect();
        if diff.is_empty() {
            "baseline".into()
        } else {
            diff.join(" ")
        }
    }

    /// Trial indices with measurements, best first (by lower bound, then rate, then earliest).
    pub fn ranked(&self) -> Vec<usize> {
        let t = &self.search.trials;
        let mut idx: Vec<usize> = (0..t.len()).filter(|&i| !t[i].samples.is_empty()).collect();
        idx.sort_by(|&a, &b| {
            let (ea, eb) = (&t[a].estimate, &t[b].estimate);
            eb.low
                .total_cmp(&ea.low)
                .then(eb.rate.total_cmp(&ea.rate))
                .then(a.cmp(&b))
        });
        idx
    }
}
