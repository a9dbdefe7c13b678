//! `ptx-litmus campaign table`: the README's Results tables from the committed step records.
//! Per machine, the per-shape table of the suite steps' latest complete result sets
//! ([`crate::report::shapes`]), then the bench step's tables as it wrote them, then the tune
//! step's Tuned table ([`crate::report::tuned`]). Nothing is typed by hand, so the README
//! quotes the measured numbers only.

use super::{AppError, Exit};
use crate::campaign::progress;
use crate::cli::CampaignTableArgs;
use crate::report::{kernels, shapes, tune_page, tuned};
use crate::results::{self, ResultSet};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Runs `campaign table`.
pub fn table(args: &CampaignTableArgs) -> Result<Exit, AppError> {
    let c = &args.common;
    let (found, warnings) = progress::found(&c.results);
    for w in warnings {
        eprintln!("ptx-litmus: campaign: skipping a step record: {w}");
    }
    // Per machine, each step's latest complete folder (`found` is in folder order, and a
    // folder's name ends in its start time).
    let mut machines: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for f in found
        .iter()
        .filter(|f| f.record.complete && f.record.backend == c.backend.as_str())
    {
        machines
            .entry(f.record.machine.clone())
            .or_default()
            .insert(f.record.step.clone(), f.dir.clone());
    }
    machines.retain(|_, steps| {
        let extra = [&args.bench_step, &args.tune_step];
        args.steps
            .iter()
            .chain(extra)
            .any(|s| steps.contains_key(s))
    });
    if machines.is_empty() {
        return Err(format!(
            "no complete step among {}, {} or {} on the {} backend under {}",
            args.steps.join(", "),
            args.bench_step,
            args.tune_step,
            c.backend.as_str(),
            c.results.display()
        )
        .into());
    }
    for (machine, steps) in &machines {
        println!("## {machine} ({} backend)\n", c.backend.as_str());
        shape_table(args, steps)?;
        if let Some(dir) = steps.get(&args.bench_step) {
            bench_tables(dir)?;
        }
        if let Some(dir) = steps.get(&args.tune_step) {
            tuned_table(dir)?;
        }
    }
    Ok(Exit::Success)
}

/// The per-shape table of the suite steps `steps` holds, with the folders it reads.
fn shape_table(
    args: &CampaignTableArgs,
    steps: &BTreeMap<String, PathBuf>,
) -> Result<(), AppError> {
    let dirs: Vec<&PathBuf> = args.steps.iter().filter_map(|s| steps.get(s)).collect();
    if dirs.is_empty() {
        return Ok(());
    }
    let sets: Vec<ResultSet> = dirs
        .iter()
        .map(|d| results::read_result_set(d))
        .collect::<Result<_, _>>()?;
    let shown: Vec<String> = dirs.iter().map(|d| format!("`{}`", d.display())).collect();
    println!("From {}:\n", shown.join(", "));
    let refs: Vec<&ResultSet> = sets.iter().collect();
    println!("{}", shapes::markdown(&shapes::rows(&refs)));
    // What the numbers are worth: whether the code that ran kept every access of the tests.
    for (d, set) in dirs.iter().zip(&sets) {
        if let Some(tally) = kernels::sass_tally(&set.tests) {
            println!("{tally} (`{}`).\n", d.display());
        }
    }
    Ok(())
}

/// The tune step's Tuned table, from the search records of its `tuned/` folder.
fn tuned_table(dir: &Path) -> Result<(), AppError> {
    let tuned = dir.join("tuned");
    let records = tune_page::read_dir(&tuned)?;
    if records.is_empty() {
        return Err(format!("{}: no search record (*.search.json)", tuned.display()).into());
    }
    println!("Tuned, from `{}`:\n", tuned.display());
    println!("{}", tuned::markdown(&records));
    Ok(())
}

/// The bench step's `bench-*.txt` tables, each in a code block under its name.
fn bench_tables(dir: &Path) -> Result<(), AppError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|n| n.starts_with("bench-") && n.ends_with(".txt"))
        })
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        println!("`{}`:\n\n```\n{}\n```\n", f.display(), text.trim_end());
    }
    Ok(())
}
