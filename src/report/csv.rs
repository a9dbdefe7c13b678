//! One CSV row per test of a result set (RFC 4180 quoting), for spreadsheets and data frames:
//! identity, status, counts, rates, timing and the CPU a CPU-backend test got.

use crate::harness::notes;
use crate::results::{RunRecord, TestRecord};

/// The columns, in order.
pub const COLUMNS: &[&str] = &[
    "run_id",
    "backend",
    "test",
    "path",
    "hash",
    "status",
    "observation",
    "instances",
    "sc",
    "weak",
    "forbidden",
    "unexpected",
    "weak_per_instance",
    "weak_per_second",
    "unseen_upper_bound_95",
    "elapsed_s",
    "cpu_used",
];

/// The header and one row per test, in the set's order.
pub fn render(run: &RunRecord, tests: &[TestRecord]) -> String {
    let mut out = COLUMNS.join(",") + "\n";
    for t in tests {
        let v = &t.verdict;
        let rate = |r: Option<f64>| r.map(|x| x.to_string()).unwrap_or_default();
        let cells = [
            run.run_id.clone(),
            run.backend.clone(),
            t.name.clone(),
            t.path.clone(),
            t.hash.clone(),
            // The JSON spelling (`no_data`), as data.
            serde_json::to_value(v.status)
                .ok()
                .and_then(|j| j.as_str().map(str::to_string))
                .unwrap_or_default(),
            v.observation.to_string(),
            v.instances.to_string(),
            v.counts.sc.to_string(),
            v.counts.weak.to_string(),
            v.counts.forbidden.to_string(),
            v.counts.unexpected.to_string(),
            rate(t.rates.weak_per_instance),
            rate(t.rates.weak_per_second),
            rate(t.rates.unseen_upper_bound_95),
            t.observed.elapsed_s.to_string(),
            t.notes.get(notes::CPU_USED).cloned().unwrap_or_default(),
        ];
        let quoted: Vec<String> = cells.iter().map(|c| field(c)).collect();
        out.push_str(&quoted.join(","));
        out.push('\n');
    }
    out
}

/// A field quoted when it holds a comma, a quote or a line break (quotes doubled).
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn fields_with_commas_quotes_or_newlines_are_quoted() {
        assert_eq!(field("SB+wk+wk"), "SB+wk+wk");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(field("l1\nl2"), "\"l1\nl2\"");
    }
}
