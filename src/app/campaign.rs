//! `ptx-litmus campaign status|machine` and what the campaign commands share: the manifest,
//! the standing of its steps under `results/`, the machine folder of a backend.

use super::campaign_resume::{self, Resume};
use super::{AppError, Exit};
use crate::campaign::manifest::{self, Step};
use crate::campaign::progress::{self, Standing};
use crate::campaign::window::{self, Item, RESERVE_S};
use crate::cli::{CampaignCommon, CampaignMachineArgs, CampaignStatusArgs};
use crate::harness::{self, Backend};
use crate::results::{self, Parameters, RunRecord};
use std::path::Path;

/// The largest manifest read: `campaign/manifest.txt` is a few KiB.
const MAX_MANIFEST_BYTES: u64 = 4 << 20;

/// The manifest's steps.
pub fn steps(path: &Path) -> Result<Vec<Step>, AppError> {
    let text = crate::input::text_of(path, MAX_MANIFEST_BYTES, "a campaign manifest")?;
    Ok(manifest::parse(&text, path)?)
}

/// The steps with their standing on the hardware models whose names contain `hardware` (on
/// every model where `None`), warnings about unreadable records printed.
pub fn standing(
    common: &CampaignCommon,
    hardware: Option<&str>,
) -> Result<Vec<(Step, Standing)>, AppError> {
    let steps = steps(&common.manifest)?;
    let (found, warnings) = progress::found(&common.results);
    for w in warnings {
        eprintln!("ptx-litmus: campaign: skipping a step record: {w}");
    }
    let scope = progress::Scope {
        backend: common.backend.as_str(),
        model: hardware,
    };
    let standing = progress::standing(&steps, &found, scope);
    Ok(steps.into_iter().zip(standing).collect())
}

/// How fast the complete steps recorded under `--results` ran against their estimates on
/// the hardware models whose names contain `hardware` or, until enough have, on the backend
/// (`None` until enough have).
pub fn pace(common: &CampaignCommon, hardware: Option<&str>) -> Option<progress::Pace> {
    let (found, _) = progress::found(&common.results);
    let scope = progress::Scope {
        backend: common.backend.as_str(),
        model: hardware,
    };
    progress::pace(&found, scope)
}

/// Runs `campaign status`.
pub fn status(args: &CampaignStatusArgs) -> Result<Exit, AppError> {
    let c = &args.common;
    let budget = window::budget_seconds(&args.budget)?;
    let hardware = args.hardware.as_deref().map(str::to_ascii_lowercase);
    let all = standing(c, hardware.as_deref())?;
    print_header(c, hardware.as_deref());
    let pace = pace(c, hardware.as_deref());
    let (next, failed) = list_steps(c, &all, pace);
    let Some((first, _)) = next.first() else {
        match failed {
            0 => println!("every step is done"),
            n => println!("no step is left to do but the {n} that failed"),
        }
        return Ok(Exit::Success);
    };
    if let Some(p) = pace {
        let on = match (p.of_model, hardware.as_deref()) {
            (true, Some(h)) => format!("on {h}"),
            _ => format!("on the {} backend", c.backend.as_str()),
        };
        println!(
            "the {} complete run step(s) {on} took {:.2}× their estimates \
             (median, kept within {}–{}×): the plan scales run steps' estimates by it",
            p.steps,
            p.factor,
            progress::PACE_BOUNDS.0,
            progress::PACE_BOUNDS.1
        );
    }
    print_windows(&next, budget);
    let total: f64 = next.iter().map(|(_, n)| n).sum();
    println!(
        "next: {} ({} step(s) left, ~{total:.0} s in all): ptx-litmus campaign run \
         --budget {} --out $OUT",
        first.name,
        next.len(),
        args.budget
    );
    let untried = all
        .iter()
        .all(|(_, st)| matches!(st, Standing::Todo(tries) if tries.is_empty()));
    if untried && c.backend.as_str() == "cuda" {
        let what = if hardware.is_some() { "that" } else { "a" };
        println!(
            "first window: nothing has run on {what} GPU yet, so make it one device call of \
             `bash campaign/window.sh 590` (timeout_s 600): the smoke, then the campaign \
             (docs/gpu-runs.md)"
        );
    }
    Ok(Exit::Success)
}

/// Status's first lines: what it reads, and on which hardware the steps it counts ran.
fn print_header(c: &CampaignCommon, hardware: Option<&str>) {
    let on = match hardware {
        Some(h) => format!(" on hardware matching `{h}`"),
        None => String::new(),
    };
    println!(
        "campaign {} on the {} backend{on}, from the step records under {}/:",
        c.manifest.display(),
        c.backend.as_str(),
        c.results.display()
    );
    if hardware.is_none() {
        if let Some(line) = models_line(c) {
            println!("{line}");
        }
    }
}

/// Which hardware models the backend's complete steps ran on, where any did: each model's
/// standing is its own, which `--hardware` shows.
fn models_line(c: &CampaignCommon) -> Option<String> {
    let (found, _) = progress::found(&c.results);
    let mut models = std::collections::BTreeMap::<&str, usize>::new();
    for f in found
        .iter()
        .filter(|f| f.record.backend == c.backend.as_str())
    {
        if f.record.complete {
            *models.entry(f.record.model.as_str()).or_default() += 1;
        }
    }
    if models.is_empty() {
        return None;
    }
    let list: Vec<String> = models
        .iter()
        .map(|(m, n)| format!("{n} on {}", if m.is_empty() { "?" } else { m }))
        .collect();
    Some(format!(
        "steps done, counted whatever hardware they ran on: {}; a `campaign run` counts only \
         those of the hardware it runs on, as `--hardware MODEL` shows",
        list.join(", ")
    ))
}

/// Prints each step's line (done, failed or to do); returns the steps to do, with what each
/// still needs (less where a resumed try will skip the tests an earlier one recorded), and
/// how many failed.
fn list_steps<'a>(
    c: &CampaignCommon,
    all: &'a [(Step, Standing)],
    pace: Option<progress::Pace>,
) -> (Vec<(&'a Step, f64)>, usize) {
    let width = all.iter().map(|(s, _)| s.name.len()).max().unwrap_or(0);
    let mut next: Vec<(&Step, f64)> = Vec::new();
    let mut failed = 0;
    for (step, st) in all {
        let name = crate::text::pad(&step.name, width);
        match st {
            Standing::Done(dir) => println!("  done  {name}  {}", dir.display()),
            Standing::Failed(tries) => {
                let dir = tries
                    .last()
                    .map_or(String::new(), |d| d.display().to_string());
                println!(
                    "  fail  {name}  {dir}  (it ended by itself without completing: see its \
                     log; `campaign run --only {}` runs it again)",
                    step.name
                );
                failed += 1;
            }
            Standing::Todo(tries) => {
                let resume = tries.last().and_then(|d| resumed(step, d, c));
                let share = campaign_resume::share_left(&resume);
                let need = window::need(step, pace.map(|p| p.factor), share);
                let tried = tried(tries.last(), &resume, need);
                println!("  todo  {name}  ~{} s{tried}", step.seconds);
                next.push((step, need));
            }
        }
    }
    (next, failed)
}

/// What the last try of a step left, for its `todo` line: where it is, and how much of the
/// step a resumed try still owes (`need` seconds).
fn tried(
    last: Option<&std::path::PathBuf>,
    resume: &Option<Result<Resume, String>>,
    need: f64,
) -> String {
    match (last, resume) {
        (Some(d), Some(Ok(r))) => format!(
            "  (incomplete: {}; {} of {} tests recorded, ~{need:.0} s left)",
            d.display(),
            r.recorded(),
            r.all.len()
        ),
        (Some(d), Some(Err(why))) => {
            format!("  (incomplete: {}; not resumable: {why})", d.display())
        }
        (Some(d), None) => format!("  (incomplete: {})", d.display()),
        (None, _) => String::new(),
    }
}

/// Prints which steps each coming window of `budget` seconds runs, if each goes as
/// estimated.
fn print_windows(next: &[(&Step, f64)], budget: f64) {
    let items: Vec<Item> = next.iter().map(|(s, n)| Item::of(s, *n)).collect();
    let plan = window::plan(&items, budget);
    println!(
        "windows of {budget:.0} s ({RESERVE_S:.0} s kept for packing), as estimated: {}",
        plan.windows.len()
    );
    let list = |ks: &[usize]| -> String {
        ks.iter()
            .map(|&k| next[k].0.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (w, ks) in plan.windows.iter().enumerate() {
        println!("  {}: {} (~{:.0} s)", w + 1, list(ks), plan.seconds[w]);
    }
    if !plan.never.is_empty() {
        println!(
            "  longer than a window, so never started: {} (give --budget more, or split them)",
            list(&plan.never)
        );
    }
}

/// Where `step`, left incomplete in `dir`, resumes on the machine that try ran on.
fn resumed(step: &Step, dir: &Path, c: &CampaignCommon) -> Option<Result<Resume, String>> {
    let rec = progress::read(&dir.join(progress::RECORD)).ok()?;
    let tries = [dir.to_path_buf()];
    campaign_resume::find(step, &tries, &rec.machine, c.backend.as_str())
}

/// The machine folder (`results/<machine>/`) results of `backend` go into here, and the
/// hardware model it starts with; `Err` when the backend cannot run here.
pub fn machine_folder(backend: Backend) -> Result<(String, String), AppError> {
    if backend == Backend::Cuda {
        harness::cuda::status().map_err(|why| format!("--backend cuda: {why}"))?;
    }
    let mut rec = RunRecord::new("x", backend.as_str(), vec![], Parameters::default(), "");
    rec.provenance = harness::provenance(backend);
    let dir = results::default_dir(Path::new(""), &rec);
    let folder = dir
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    Ok((folder, results::model(&rec)))
}

/// Runs `campaign machine`.
pub fn machine(args: &CampaignMachineArgs) -> Result<Exit, AppError> {
    let (folder, model) = machine_folder(args.backend)?;
    println!("{}", if args.hardware { model } else { folder });
    Ok(Exit::Success)
}
