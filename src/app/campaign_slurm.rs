//! A campaign step on a Slurm cluster: `campaign submit` writes the step's batch script (a job
//! array, one shard per task, each running `campaign task`) and submits it; `campaign collect`
//! waits for the array if asked, checks every shard, and either merges them into one result
//! set with its report or names the shards missing or incomplete and the `sbatch` command that
//! reruns only those.

use super::campaign_shard::{parts, run_args};
use super::campaign_tests::{covered, owned};
use super::{AppError, Exit};
use crate::cli::{CampaignCollectArgs, CampaignShards, CampaignSubmitArgs};
use crate::harness::Backend;
use crate::report::{self, summary};
use crate::results;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The batch script of a step.
fn script_path(s: &CampaignShards) -> PathBuf {
    s.dir.join(format!("{}.sbatch", s.step))
}

/// A path made absolute (array tasks may start anywhere).
fn absolute(p: &Path) -> Result<PathBuf, AppError> {
    Ok(if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()?.join(p)
    })
}

/// Quotes a word for bash.
fn quote(w: &str) -> String {
    format!("'{}'", w.replace('\'', r"'\''"))
}

/// The batch script: a job array of one task per shard.
pub fn batch_script(
    s: &CampaignShards,
    gres: Option<&str>,
    extra: &[String],
) -> Result<String, AppError> {
    let exe = std::env::current_exe()?;
    let dir = absolute(&s.dir)?;
    let mut lines = vec![
        "#!/bin/bash".to_string(),
        format!("#SBATCH --job-name=ptx-litmus-{}", s.step),
        format!("#SBATCH --array=0-{}", s.tasks - 1),
        format!("#SBATCH --output={}/logs/%A_%a.out", dir.display()),
    ];
    if let Some(g) = gres {
        lines.push(format!("#SBATCH --gres={g}"));
    }
    lines.extend(extra.iter().map(|e| format!("#SBATCH {e}")));
    lines.push("# One shard of the step per array task (ptx-litmus campaign task).".into());
    lines.push(format!(
        "cd {}",
        quote(&std::env::current_dir()?.display().to_string())
    ));
    let words = [
        exe.display().to_string(),
        "campaign".into(),
        "task".into(),
        "--manifest".into(),
        absolute(&s.manifest)?.display().to_string(),
        "--step".into(),
        s.step.clone(),
        "--tasks".into(),
        s.tasks.to_string(),
        "--dir".into(),
        dir.display().to_string(),
        "--backend".into(),
        s.backend.as_str().into(),
    ];
    let cmd: Vec<String> = words.iter().map(|w| quote(w)).collect();
    lines.push(format!(
        "exec {} --index \"$SLURM_ARRAY_TASK_ID\"",
        cmd.join(" ")
    ));
    Ok(lines.join("\n") + "\n")
}

/// Runs `campaign submit`.
pub fn submit(args: &CampaignSubmitArgs) -> Result<Exit, AppError> {
    let s = &args.shards;
    run_args(s)?;
    let gres = args
        .gres
        .clone()
        .or_else(|| (s.backend == Backend::Cuda).then(|| "gpu:1".to_string()));
    std::fs::create_dir_all(s.dir.join("logs"))?;
    let path = script_path(s);
    std::fs::write(&path, batch_script(s, gres.as_deref(), &args.sbatch)?)?;
    println!("wrote {}", path.display());
    if args.dry_run {
        return Ok(Exit::Success);
    }
    let o = Command::new("sbatch")
        .arg("--parsable")
        .args(&args.submit_options)
        .arg(&path)
        .output()
        .map_err(|e| format!("sbatch: {e} (is Slurm installed here?)"))?;
    if !o.status.success() {
        return Err(format!("sbatch: {}", String::from_utf8_lossy(&o.stderr).trim()).into());
    }
    let job = String::from_utf8_lossy(&o.stdout).trim().to_string();
    println!("submitted job {job}: {} tasks of step {}", s.tasks, s.step);
    Ok(Exit::Success)
}

/// Waits until `job` has left Slurm's queue, `timeout` seconds at most.
fn wait_for(job: &str, timeout: f64) -> Result<(), AppError> {
    let until = Instant::now() + Duration::from_secs_f64(timeout.max(0.0));
    loop {
        let o = Command::new("squeue")
            .args(["-h", "-j", job, "-o", "%i"])
            .output()
            .map_err(|e| format!("squeue: {e}"))?;
        let err = String::from_utf8_lossy(&o.stderr);
        // A job that has left the controller's memory is reported as invalid: it is done.
        if !o.status.success() && !err.contains("Invalid job id") {
            return Err(format!("squeue -j {job}: {}", err.trim()).into());
        }
        if String::from_utf8_lossy(&o.stdout).trim().is_empty() {
            return Ok(());
        }
        if Instant::now() >= until {
            return Err(format!("job {job} still queued or running after {timeout} s").into());
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Runs `campaign collect`.
pub fn collect(args: &CampaignCollectArgs) -> Result<Exit, AppError> {
    let s = &args.shards;
    let (paths, _) = run_args(s)?;
    if let Some(job) = &args.wait {
        wait_for(job, args.wait_timeout)?;
    }
    let mut sets = Vec::new();
    let mut bad = Vec::new();
    for i in 0..s.tasks {
        let mine = owned(&paths, i, s.tasks)?;
        let (found, _) = parts(&s.dir, i);
        let done = covered(&found);
        let have = mine.iter().filter(|t| done.contains(*t)).count();
        if found.is_empty() {
            println!("shard {i}: missing (no result set)");
            bad.push(i);
        } else if have < mine.len() {
            println!("shard {i}: incomplete ({have} of {} tests)", mine.len());
            bad.push(i);
        } else {
            println!(
                "shard {i}: complete ({} tests in {} part(s))",
                mine.len(),
                found.len()
            );
        }
        sets.extend(found);
    }
    if !bad.is_empty() {
        let list: Vec<String> = bad.iter().map(u32::to_string).collect();
        println!(
            "rerun: sbatch --array={} {}",
            list.join(","),
            absolute(&script_path(s))?.display()
        );
        return Ok(Exit::Partial);
    }
    merge_all(s, &sets)
}

/// Merges every part of every shard into `DIR/merged/<step>` and renders its report.
fn merge_all(s: &CampaignShards, dirs: &[PathBuf]) -> Result<Exit, AppError> {
    let sets = dirs
        .iter()
        .map(|d| results::read_result_set(d))
        .collect::<Result<Vec<_>, _>>()?;
    let first = &sets[0].run;
    for x in &sets[1..] {
        let (a, b) = (&first, &x.run);
        if (&a.tool_version, &a.git_revision) != (&b.tool_version, &b.git_revision) {
            return Err(format!(
                "{} and {}: built from different versions ({} {} / {} {}); rerun the shards \
                 with one build",
                sets[0].dir.display(),
                x.dir.display(),
                a.tool_version,
                a.git_revision,
                b.tool_version,
                b.git_revision
            )
            .into());
        }
    }
    let (mut run, tests) = results::merge(&sets, &s.step)?;
    run.partial = false;
    let out = s.dir.join("merged").join(&s.step);
    results::write_result_set(&out, &run, &tests, true)?;
    let set = results::read_result_set(&out)?;
    report::write_report(&set, &out, true)?;
    print!("{}", summary::render(&set.run, &set.tests));
    println!(
        "merged {} shard(s), {} part(s), into {}",
        s.tasks,
        dirs.len(),
        out.display()
    );
    Ok(
        if set
            .tests
            .iter()
            .any(|t| t.verdict.status == crate::verdict::Status::Violation)
        {
            Exit::Finding
        } else {
            Exit::Success
        },
    )
}
