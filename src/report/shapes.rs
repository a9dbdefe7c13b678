//! The per-shape table of a campaign (the README's Results): for each shape family of the
//! built-in suite (a test's folder under `litmus/`) and each preset's result set, the median
//! of its tests' instances per second and the test with the most weak outcomes per second,
//! beside the published cuda-litmus figures. Every number is read from the result sets.

use super::format;
use super::stats::median;
use crate::results::{ResultSet, TestRecord};
use crate::text::{md_code as code, md_text as cell};
use std::collections::BTreeMap;
use std::path::Path;

/// The published cuda-litmus figures on Hopper that the table is read beside.
pub const PEER: &str = "cuda-litmus on Hopper (published): median 2.7e8 and max 9.3e8 \
                        instances/s; best RWC 7.6M weak/s; best IRIW 2.8M weak/s.";

/// The best weak outcomes per second of [`PEER`], by shape family.
pub const PEER_WEAK_PER_S: [(&str, f64); 2] = [("RWC", 7.6e6), ("IRIW", 2.8e6)];

/// The shapes the Results table names, in its order, by folder (the rest follow).
const FIRST: [(&str, &str); 10] = [
    ("mp", "MP"),
    ("sb", "SB"),
    ("lb", "LB"),
    ("iriw", "IRIW"),
    ("corr", "CoRR"),
    ("2+2w", "2+2W"),
    ("wrc", "WRC"),
    ("isa2", "ISA2"),
    ("rwc", "RWC"),
    ("cluster", "cluster"),
];

/// The other folders of `litmus/` with the names their shapes go by.
const OTHERS: [(&str, &str); 6] = [
    ("corw", "CoRW"),
    ("cowr", "CoWR"),
    ("coww", "CoWW"),
    ("r", "R"),
    ("s", "S"),
    ("wrw+2w", "WRW+2W"),
];

/// One shape under one preset.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeRow {
    /// The shape's name (`MP`, `2+2W`, or its folder's name upper-cased).
    pub shape: String,
    /// The preset of the result set.
    pub preset: String,
    /// Tests of the shape in the set.
    pub tests: usize,
    /// The median of their instances per second (tests with a rate only).
    pub median_instances_per_s: Option<f64>,
    /// The test with the most weak outcomes per second, if any test saw one: its name,
    /// weak/s and weak/instance.
    pub most_weak: Option<(String, f64, Option<f64>)>,
}

/// The folder a test's path lies in: its shape family.
fn folder(path: &str) -> String {
    Path::new(path)
        .parent()
        .and_then(|p| p.file_name())
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Where a folder's shape comes in the table, and its name (the folder's own when unknown).
pub fn shape(folder: &str) -> (usize, String) {
    if let Some(k) = FIRST.iter().position(|(f, _)| *f == folder) {
        return (k, FIRST[k].1.to_string());
    }
    let name = OTHERS
        .iter()
        .find(|(f, _)| *f == folder)
        .map_or(folder, |o| o.1);
    (FIRST.len(), name.to_string())
}

/// The rows of `sets` (one per preset, in the order given), shape by shape.
pub fn rows(sets: &[&ResultSet]) -> Vec<ShapeRow> {
    let mut by_shape: BTreeMap<(usize, String), Vec<ShapeRow>> = BTreeMap::new();
    for set in sets {
        let mut groups: BTreeMap<String, Vec<&TestRecord>> = BTreeMap::new();
        for t in &set.tests {
            groups.entry(folder(&t.path)).or_default().push(t);
        }
        for (f, tests) in groups {
            let key = shape(&f);
            let row = row(&key.1, &set.run.parameters.preset, &tests);
            by_shape.entry(key).or_default().push(row);
        }
    }
    by_shape.into_values().flatten().collect()
}

/// The row of one shape's `tests` under `preset`.
fn row(shape: &str, preset: &str, tests: &[&TestRecord]) -> ShapeRow {
    let mut ips: Vec<f64> = tests
        .iter()
        .filter_map(|t| t.rates.instances_per_second)
        .collect();
    let most_weak = tests
        .iter()
        .filter_map(|t| Some((t, t.rates.weak_per_second?)))
        .filter(|(_, w)| *w > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(t, w)| (t.name.clone(), w, t.rates.weak_per_instance));
    ShapeRow {
        shape: shape.into(),
        preset: preset.into(),
        tests: tests.len(),
        median_instances_per_s: median(&mut ips),
        most_weak,
    }
}

/// The rows as a Markdown table, followed by [`PEER`].
pub fn markdown(rows: &[ShapeRow]) -> String {
    let mut m = String::from(
        "| shape | preset | tests | instances/s (median) | most weak/s | in test | its weak / instance |\n\
         |---|---|--:|--:|--:|---|--:|\n",
    );
    for r in rows {
        let (test, weak, rate) = match (&r.most_weak, r.median_instances_per_s) {
            (Some((name, w, rate)), _) => (code(name), format::rate(Some(*w)), format::rate(*rate)),
            (None, Some(_)) => ("none seen".into(), "0".into(), "0".into()),
            (None, None) => (String::new(), format::rate(None), format::rate(None)),
        };
        m.push_str(&format!(
            "| {} | {} | {} | {} | {weak} | {test} | {rate} |\n",
            cell(&r.shape),
            cell(&r.preset),
            r.tests,
            format::rate(r.median_instances_per_s)
        ));
    }
    m.push_str(&format!("\n{PEER}\n"));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peer_line_states_each_best_weak_rate_the_tables_use() {
        for (family, v) in PEER_WEAK_PER_S {
            let said = format!("best {family} {:.1}M weak/s", v / 1e6);
            assert!(PEER.contains(&said), "{said} not in {PEER}");
        }
    }

    #[test]
    fn shapes_come_in_the_results_table_order_then_by_folder() {
        assert_eq!(folder("litmus/2+2w/2+2W+rlx.litmus"), "2+2w");
        assert_eq!(shape("2+2w"), (5, "2+2W".into()));
        assert_eq!(shape("corr"), (4, "CoRR".into()));
        assert_eq!(shape("s"), (FIRST.len(), "S".into()));
        assert_eq!(shape("pomset"), (FIRST.len(), "pomset".into()));
        assert!(shape("cluster").0 < shape("coww").0);
    }

    #[test]
    fn the_median_takes_the_middle_two_of_an_even_count() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }
}
