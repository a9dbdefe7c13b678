//! The final race's table on the tune page: per finalist, its median weak/s in the race, its
//! weak/s over the baseline's round by round (what decided), its chunks, and how it ended.

use crate::tune::SearchRecord;

/// The table's column heads.
pub const HEADER: [&str; 5] = [
    "configuration (differences from the baseline)",
    "weak/s in the race (median)",
    "over the baseline, round by round (99 % interval)",
    "chunks",
    "end",
];

/// The line above the table: the race's rounds and the machine state it was decided in.
pub fn caption(r: &SearchRecord) -> Option<String> {
    let d = r.search.decision.as_ref()?;
    let state = d.state.map_or(String::new(), |s| {
        format!(
            ", decided on the {} rounds at a {:.0}-{:.0} ns round trip between two cores",
            s.rounds, s.low_ns, s.high_ns
        )
    });
    let cut = if d.cut_short {
        ", cut short by the budget"
    } else {
        ""
    };
    Some(format!("Final race: {} rounds{state}{cut}.", d.rounds))
}

/// One row per finalist, the baseline first; none without a race.
pub fn rows(r: &SearchRecord) -> Vec<[String; 5]> {
    let Some(d) = &r.search.decision else {
        return Vec::new();
    };
    let row = |(k, &i): (usize, &usize)| {
        let ratio = d.vs_baseline.get(k).copied().flatten().map_or_else(
            || "-".to_string(),
            |x| format!("{:.2} ({:.2} to {})", x.median, x.low, bound(x.high)),
        );
        let end = match d.tied.iter().position(|&t| t == i) {
            Some(0) => "winner",
            Some(_) => "tied",
            None => "left",
        };
        [
            r.describe(i),
            format!("{:.3e}", d.estimates[k].rate),
            ratio,
            d.samples[k].len().to_string(),
            end.to_string(),
        ]
    };
    d.finalists.iter().enumerate().map(row).collect()
}

/// An upper bound, `f64::MAX` standing for none.
fn bound(high: f64) -> String {
    if high >= f64::MAX {
        "unbounded".into()
    } else {
        format!("{high:.2}")
    }
}
