//! `ptx-litmus campaign status|machine` and what the campaign commands share: the manifest,
//! the standing of its steps under `results/`, the machine folder of a backend.

use super::{AppError, Exit};
use crate::campaign::manifest::{self, Step};
use crate::campaign::progress::{self, Standing};
use crate::cli::{CampaignCommon, CampaignMachineArgs, CampaignStatusArgs};
use crate::harness::{self, Backend};
use crate::results::{self, Parameters, RunRecord};
use std::path::Path;

/// The manifest's steps.
pub fn steps(path: &Path) -> Result<Vec<Step>, AppError> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(manifest::parse(&text, path)?)
}

/// The steps with their standing, warnings about unreadable records printed.
pub fn standing(common: &CampaignCommon) -> Result<Vec<(Step, Standing)>, AppError> {
    let steps = steps(&common.manifest)?;
    let (found, warnings) = progress::found(&common.results);
    for w in warnings {
        eprintln!("ptx-litmus: campaign: skipping a step record: {w}");
    }
    let standing = progress::standing(&steps, &found, common.backend.as_str());
    Ok(steps.into_iter().zip(standing).collect())
}

/// Runs `campaign status`.
pub fn status(args: &CampaignStatusArgs) -> Result<Exit, AppError> {
    let c = &args.common;
    let all = standing(c)?;
    println!(
        "campaign {} on the {} backend, from the step records under {}/:",
        c.manifest.display(),
        c.backend.as_str(),
        c.results.display()
    );
    let width = all.iter().map(|(s, _)| s.name.len()).max().unwrap_or(0);
    let mut next: Vec<&Step> = Vec::new();
    for (step, st) in &all {
        let name = crate::text::pad(&step.name, width);
        match st {
            Standing::Done(dir) => println!("  done  {name}  {}", dir.display()),
            Standing::Todo(tries) => {
                next.push(step);
                let tried = match tries.last() {
                    Some(d) => format!("  (incomplete: {})", d.display()),
                    None => String::new(),
                };
                println!("  todo  {name}  ~{} s{tried}", step.seconds);
            }
        }
    }
    match next.first() {
        None => println!("every step is done"),
        Some(first) => {
            let total: u32 = next.iter().map(|s| s.seconds).sum();
            println!(
                "next: {} ({} step(s) left, ~{total} s in all): ptx-litmus campaign run \
                 --budget 540s --out $OUT",
                first.name,
                next.len()
            );
        }
    }
    Ok(Exit::Success)
}

/// The machine folder (`results/<machine>/`) results of `backend` go into here; `Err` when
/// the backend cannot run here.
pub fn machine_folder(backend: Backend) -> Result<String, AppError> {
    if backend == Backend::Cuda {
        harness::cuda::status().map_err(|why| format!("--backend cuda: {why}"))?;
    }
    let mut rec = RunRecord::new("x", backend.as_str(), vec![], Parameters::default(), "");
    rec.provenance = harness::provenance(backend);
    let dir = results::default_dir(Path::new(""), &rec);
    Ok(dir
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default())
}

/// Runs `campaign machine`.
pub fn machine(args: &CampaignMachineArgs) -> Result<Exit, AppError> {
    println!("{}", machine_folder(args.backend)?);
    Ok(Exit::Success)
}
