//! The campaign's Tuned table (the README's Results): per shape family, the configuration
//! `tune` chose with its weak outcomes and instances per second beside the baseline's, what
//! the final race measured, and the published cuda-litmus figure where there is one. Every
//! number is read from the search records.

use super::format;
use super::shapes::{shape, PEER_WEAK_PER_S};
use crate::text::md_text as cell;
use crate::tune::SearchRecord;
use std::fmt::Write;

/// The table of `records`, one row per family in the shape table's order, in Markdown.
pub fn markdown(records: &[SearchRecord]) -> String {
    let mut records: Vec<&SearchRecord> = records.iter().collect();
    records.sort_by_key(|r| (shape(&r.family.to_lowercase()).0, r.family.clone()));
    let mut m = String::from(
        "| family | measured | baseline weak/s | tuned weak/s | tuned instances/s | × baseline \
         (final race, 99 %) | cuda-litmus best weak/s | tuned settings |\n\
         |---|--:|--:|--:|--:|--:|--:|---|\n",
    );
    for r in records {
        let t = &r.search.trials;
        let (base, best) = (&t[0].estimate, &t[r.search.best].estimate);
        let per_s = |n: u64, s: f64| (s > 0.0).then(|| n as f64 / s);
        let ratio = match r.search.vs_baseline(r.search.best) {
            _ if r.search.best == 0 => "1 (baseline kept)".to_string(),
            Some(q) if q.high < f64::MAX => format!("{:.2} ({:.2}–{:.2})", q.median, q.low, q.high),
            Some(q) => format!("{:.2} ({:.2}–)", q.median, q.low),
            None => "—".into(),
        };
        let peer = PEER_WEAK_PER_S.iter().find(|(f, _)| *f == r.family);
        let _ = writeln!(
            m,
            "| {} | {} | {} | {} | {} | {ratio} | {} | {} |",
            cell(&r.family),
            r.ranked().len(),
            format::rate(Some(base.rate)),
            format::rate(Some(best.rate)),
            format::rate(per_s(best.instances, best.seconds)),
            format::rate(peer.map(|p| p.1)),
            cell(&r.describe(r.search.best)),
        );
    }
    m
}
