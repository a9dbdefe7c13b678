//! `ptx-litmus merge DIR... --out OUT`: combines the result sets of one campaign (shards, and
//! repeated runs whatever their seeds), saying what it summed.

use super::{AppError, Exit};
use crate::cli::MergeArgs;
use crate::report::dispersion::run_scatter;
use crate::report::summary;
use crate::results::{self, RunPart, TestRecord};
use std::collections::BTreeMap;

/// Runs `merge`.
pub fn run(args: &MergeArgs) -> Result<Exit, AppError> {
    let sets = args
        .dirs
        .iter()
        .map(|d| results::read_result_set(d))
        .collect::<Result<Vec<_>, _>>()?;
    let run_id = args
        .out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "merged".into());
    let (run, tests) = results::merge(&sets, &run_id)?;
    results::write_result_set(&args.out, &run, &tests, args.force)?;
    print!("{}", summary::render(&run, &tests));
    print!("{}", what_was_summed(&run.merged_parts));
    if let Some(line) = scatter_line(&tests) {
        println!("{line}");
    }
    println!("wrote {}", args.out.display());
    Ok(Exit::Success)
}

/// How many runs were summed and with which seeds, and which repeats share a seed (on the GPU
/// they re-run the same placements, so their counts are not independent).
fn what_was_summed(parts: &[RunPart]) -> String {
    // Shards of one run share its seed but run different tests: only runs of the same shard
    // (or none) repeat each other.
    let mut repeats: BTreeMap<(u64, String), Vec<&str>> = BTreeMap::new();
    for p in parts {
        let shard = p.shard.map(|s| s.to_string()).unwrap_or_default();
        repeats
            .entry((p.parameters.seed, shard))
            .or_default()
            .push(&p.run_id);
    }
    let seeds: Vec<String> = parts
        .iter()
        .map(|p| p.parameters.seed)
        .collect::<std::collections::BTreeSet<u64>>()
        .iter()
        .map(u64::to_string)
        .collect();
    let mut s = format!(
        "merged {} runs with {} seed{} ({}): counts summed test by test; each run's seed, \
         budget and provenance kept in run.json's merged_parts\n",
        parts.len(),
        seeds.len(),
        if seeds.len() == 1 { "" } else { "s" },
        seeds.join(", ")
    );
    for ((seed, _), ids) in repeats.iter().filter(|(_, ids)| ids.len() > 1) {
        s.push_str(&format!(
            "note: runs {} share seed {seed}: on the GPU they re-run the same placements\n",
            ids.join(", ")
        ));
    }
    s
}

/// The line saying how far the merged runs scatter, and one run's parts, when tests repeat.
fn scatter_line(tests: &[TestRecord]) -> Option<String> {
    let s = run_scatter(tests)?;
    Some(format!(
        "scatter of the {} repeated tests with weak outcomes: median phi {:.1} between runs, \
         {:.1} within a run (1 = binomial); diff and compare take the run as the unit for this \
         set",
        s.tests, s.between_runs, s.within_runs
    ))
}
