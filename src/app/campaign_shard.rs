//! One shard of a campaign step on a cluster: the tests it owns (the step's tests dealt as
//! `--shard i/n` deals them), the parts written for it so far under
//! `DIR/shards/<i>/p<k>/<machine>/<step>.s<i>.p<k>/`, and `campaign task`, which runs only
//! the shard's tests no part has recorded yet: a rerun of a complete shard does nothing, a
//! preempted one resumes.

use super::campaign::steps;
use super::campaign_child::supervise;
use super::campaign_tests::{covered, owned, run_command};
use super::{AppError, Exit};
use crate::campaign::manifest::{split_run, Kind};
use crate::cli::{CampaignShards, CampaignTaskArgs};
use crate::results;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A step's `run` arguments: test paths and flags.
pub fn run_args(s: &CampaignShards) -> Result<(Vec<String>, Vec<String>), AppError> {
    let all = steps(&s.manifest)?;
    let step = all.iter().find(|x| x.name == s.step).ok_or_else(|| {
        format!(
            "--step {}: no such step in {}",
            s.step,
            s.manifest.display()
        )
    })?;
    let Kind::Run(args) = &step.kind else {
        return Err(format!("--step {}: a script step cannot be sharded", s.step).into());
    };
    if s.tasks == 0 || s.tasks > 10_000 {
        return Err(format!("--tasks {}: expected 1..=10000", s.tasks).into());
    }
    let (paths, flags) = split_run(args);
    Ok((paths.to_vec(), flags.to_vec()))
}

/// The folder of shard `index`'s part `k`.
fn part_dir(dir: &Path, index: u32, k: usize) -> PathBuf {
    dir.join("shards")
        .join(index.to_string())
        .join(format!("p{k}"))
}

/// The first folder of a result set under `dir` (`<machine>/<run>/`).
fn first_set(dir: &Path) -> Option<PathBuf> {
    let sub = |d: &Path| -> Option<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        v.sort();
        v.into_iter().next()
    };
    sub(&sub(dir)?).filter(|s| s.join(results::RUN_FILE).is_file())
}

/// The result sets of shard `index` under `dir`, in part order, and the next part's number.
pub fn parts(dir: &Path, index: u32) -> (Vec<PathBuf>, usize) {
    let mut out = Vec::new();
    let mut k = 1;
    while part_dir(dir, index, k).is_dir() {
        out.extend(first_set(&part_dir(dir, index, k)));
        k += 1;
    }
    (out, k)
}

/// Runs `campaign task`: the shard's tests not yet covered, as its next part.
pub fn task(args: &CampaignTaskArgs) -> Result<Exit, AppError> {
    let s = &args.shards;
    let (paths, flags) = run_args(s)?;
    if args.index >= s.tasks {
        return Err(format!("--index {}: expected 0..{}", args.index, s.tasks).into());
    }
    let mine = owned(&paths, args.index, s.tasks)?;
    let (done, k) = parts(&s.dir, args.index);
    let covered = covered(&done);
    let left: Vec<String> = mine
        .iter()
        .filter(|t| !covered.contains(*t))
        .cloned()
        .collect();
    let shard = format!("shard {}/{} of {}", args.index, s.tasks, s.step);
    if left.is_empty() {
        println!("{shard}: complete ({} tests), nothing to do", mine.len());
        return Ok(Exit::Success);
    }
    println!(
        "{shard}: {} of {} tests left; part {k}",
        left.len(),
        mine.len()
    );
    let id = format!("{}.s{}.p{k}", s.step, args.index);
    let out = part_dir(&s.dir, args.index, k);
    let exe = std::env::current_exe()?;
    let cmd = run_command(&exe, &left, &flags, s.backend.as_str(), &id, &out);
    std::fs::create_dir_all(&out)?;
    // The task's own time limit is Slurm's; this one only bounds a process that never ends.
    let log = out.with_extension("log");
    let end = supervise(cmd, Instant::now() + Duration::from_secs(7 * 86_400), &log)?;
    let code = end.code.unwrap_or(2);
    println!("{shard}: part {k} exited {code}");
    Ok(match code {
        0 => Exit::Success,
        1 => Exit::Finding,
        3 => Exit::Partial,
        4 => Exit::DeviceLost,
        _ => Exit::Error,
    })
}
