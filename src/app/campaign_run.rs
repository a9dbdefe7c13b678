//! `ptx-litmus campaign run`: the next undone steps of the manifest within a time budget, each
//! in processes of its own, each packed into one archive under `--out`, plus `summary.txt`.

use super::campaign::{pace, standing};
use super::campaign_child::supervise;
use super::campaign_pack::pack;
use super::campaign_replay::Replay;
use super::campaign_resume::{self, Resume};
use super::campaign_tests::{self, run_command};
use super::{interrupt, AppError, Exit};
use crate::campaign::limits;
use crate::campaign::manifest::{split_run, Kind, Step};
use crate::campaign::progress::{self, Standing, StepRecord};
use crate::campaign::window::{self, budget_seconds, Item, RESERVE_S};
use crate::cli::CampaignRunArgs;
use crate::harness::cuda::compiler::Compiler;
use crate::report::kernels;
use crate::results::{self, TestRecord};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Processes a `run` step may take (one more each time the device is lost).
const MAX_PROCESSES: u32 = 16;

/// What every step of this campaign run shares.
struct Ctx {
    exe: PathBuf,
    backend: String,
    machine: String,
    /// The hardware model the machine folder starts with.
    model: String,
    /// Where step folders are made: `work/<machine>/<run>/`.
    work: PathBuf,
    out: PathBuf,
    /// How many files may come back from `out` (`--files`).
    files: usize,
    stamp: String,
}

/// How one step went.
struct Outcome {
    run: String,
    complete: bool,
    /// Whether the campaign stopped it rather than it ending by itself.
    stopped: bool,
    exits: Vec<i32>,
    notes: Vec<String>,
}

/// Runs `campaign run`.
pub fn run(args: &CampaignRunArgs) -> Result<Exit, AppError> {
    let started = Instant::now();
    let budget = budget_seconds(&args.budget)?;
    let anywhere = standing(&args.common, None)?;
    todo(args, &anywhere)?;
    prepare_out(&args.out)?;
    let exe = std::env::current_exe()?;
    let (machine, model) = match ask_machine(&exe, args.common.backend.as_str()) {
        Ok(m) => m,
        Err(why) => {
            // What comes back from a device call is only `--out`: the reason goes there too.
            let steps: Vec<&Step> = todo(args, &anywhere)?.iter().map(|(s, _)| *s).collect();
            write_nothing_ran(&args.out, &why, &steps)?;
            return Err(why.into());
        }
    };
    // A step done on other hardware is still to do on this one.
    let all = standing(&args.common, Some(&model))?;
    let todo = todo(args, &all)?;
    let steps: Vec<&Step> = todo.iter().map(|(s, _)| *s).collect();
    let pace = pace(&args.common, Some(&model)).map(|p| p.factor);
    let ctx = Ctx::new(args, exe, machine, model);
    interrupt::install();
    let time = Window {
        started,
        budget,
        pace,
    };
    let mut lines = held_back(args, &all);
    for l in &lines {
        println!("{l}");
    }
    let (ran, failed) = time.run(&ctx, &todo, &steps)?;
    lines.extend(ran);
    let summary = write_summary(&ctx, &lines, started, budget);
    if args.work.is_none() {
        // The archives hold everything; a scratch folder of our own is not left behind.
        let _ = std::fs::remove_dir_all(&ctx.work);
    }
    summary?;
    Ok(if failed { Exit::Error } else { Exit::Success })
}

/// A line for each step whose latest try failed by itself, which runs only when `--only`
/// names it.
fn held_back(args: &CampaignRunArgs, all: &[(Step, Standing)]) -> Vec<String> {
    if !args.only.is_empty() {
        return Vec::new();
    }
    let failed = all.iter().filter_map(|(s, st)| match st {
        Standing::Failed(tries) => Some((s, tries.last()?)),
        _ => None,
    });
    failed
        .map(|(s, dir)| {
            format!(
                "held back: {} (it failed by itself in {}; `campaign run --only {}` runs it \
                 again)",
                s.name,
                dir.display(),
                s.name
            )
        })
        .collect()
}

/// Each step to run, with the folders of its incomplete tries: the steps not done, or those
/// `--only` names (a done step run again starts afresh).
fn todo<'a>(
    args: &CampaignRunArgs,
    all: &'a [(Step, Standing)],
) -> Result<Vec<(&'a Step, &'a [PathBuf])>, AppError> {
    for name in &args.only {
        if !all.iter().any(|(s, _)| &s.name == name) {
            return Err(format!(
                "--only {name}: no such step in {}",
                args.common.manifest.display()
            )
            .into());
        }
    }
    Ok(all
        .iter()
        .filter(|(s, st)| match args.only.is_empty() {
            true => matches!(st, Standing::Todo(_)),
            false => args.only.contains(&s.name),
        })
        .map(|(s, st)| match st {
            Standing::Todo(tries) | Standing::Failed(tries) => (s, tries.as_slice()),
            Standing::Done(_) => (s, &[][..]),
        })
        .collect())
}

impl Ctx {
    /// The run's context: its time stamp, and its scratch folder (`--work`, else a fresh one
    /// under the temp dir).
    fn new(args: &CampaignRunArgs, exe: PathBuf, machine: String, model: String) -> Ctx {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let stamp: String = results::time::rfc3339(now)
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        let work = match &args.work {
            Some(w) => w.clone(),
            None => std::env::temp_dir().join(format!(
                "ptx-litmus-campaign-{}-{stamp}",
                std::process::id()
            )),
        };
        Ctx {
            exe,
            backend: args.common.backend.as_str().to_string(),
            machine,
            model,
            work,
            out: args.out.clone(),
            files: usize::from(args.files),
            stamp,
        }
    }
}

/// The time a run has: its start, its budget in seconds, the pace of earlier windows.
struct Window {
    started: Instant,
    budget: f64,
    pace: Option<f64>,
}

impl Window {
    /// Runs the steps of `todo` that fit, in order: a step that does not fit what is left is
    /// passed over for a later, shorter one. The summary's lines, and whether a step failed.
    fn run(
        &self,
        ctx: &Ctx,
        todo: &[(&Step, &[PathBuf])],
        steps: &[&Step],
    ) -> Result<(Vec<String>, bool), AppError> {
        let mut lines = Vec::new();
        let mut failed = false;
        // Steps started in this window (a failed one writes no archive but took time).
        let mut begun = 0;
        for (k, &(step, tries)) in todo.iter().enumerate() {
            let left = self.budget - self.started.elapsed().as_secs_f64() - RESERVE_S;
            let room = limits::room(&ctx.out);
            let packed = limits::count(&ctx.out);
            if let Some(why) = stop_before(packed, ctx.files, interrupt::requested(), room) {
                lines.push(format!("not run: {} ({why})", names(&steps[k..])));
                break;
            }
            if let Some(why) = absent(step) {
                lines.push(format!("not run: {} ({why})", step.name));
                continue;
            }
            let resume = campaign_resume::find(step, tries, &ctx.machine, &ctx.backend);
            let share = campaign_resume::share_left(&resume);
            let need = window::need(step, self.pace, share);
            let whole = self.budget - RESERVE_S;
            if !window::starts(Item::of(step, need), left, whole, begun == 0) {
                // A later, shorter step may still fit: the window is not left idle.
                let why = late(step, need, left);
                lines.push(format!("not run: {} ({why})", step.name));
                continue;
            }
            let secs = left.min(2.0 * need + 30.0).max(0.0);
            let deadline = Instant::now() + Duration::from_secs_f64(secs);
            let t0 = Instant::now();
            let outcome = run_step(ctx, step, resume, deadline);
            let line = finish_step(ctx, step, outcome, t0)?;
            failed |= !line.1;
            lines.push(line.0);
            begun += 1;
        }
        Ok((lines, failed))
    }
}

/// Below this many bytes left for one more archive, no further step is started.
const MIN_ROOM: u64 = 1 << 20;

/// Why the campaign starts no further step after `packed` archives of the `files` that come
/// back, if it does not.
fn stop_before(packed: usize, files: usize, stopped: bool, room: u64) -> Option<String> {
    if stopped {
        let by = interrupt::signal_name().map_or(String::new(), |s| format!(" by {s}"));
        return Some(format!("the campaign was stopped{by}"));
    }
    if room < MIN_ROOM {
        return Some(format!(
            "{room} bytes are left of the {} that come back",
            limits::MAX_TOTAL_BYTES
        ));
    }
    (!window::file_left(packed, files)).then(|| {
        format!(
            "{} archives and the summary are all that come back",
            files - 1
        )
    })
}

/// What a `run` step needs that is not here, if anything: a test path, or its offline
/// compiler (neither its ptxas nor its prebuilt cubins, or cubins of other kernels only),
/// which the device call did not carry.
/// Such a step waits for a window that has them, rather than fail and be held back as failed.
fn absent(step: &Step) -> Option<String> {
    let Kind::Run(args) = &step.kind else {
        return None;
    };
    let (paths, _) = split_run(args);
    // A path with a folder: a bare name may be a test of the built-in suite.
    let missing = |p: &&String| p.contains('/') && !Path::new(p).exists();
    if let Some(p) = paths.iter().find(missing) {
        return Some(format!("its tests are not here: no {p}"));
    }
    let compiler: Compiler = step.compiler()?.parse().ok()?;
    match compiler.resolve() {
        Ok(store) => super::campaign_cubins::stale(args, &store?),
        Err(why) => {
            // Installing is for the build machine; here only carrying the cubins helps.
            let why = why.split("; install one").next().unwrap_or_default();
            Some(format!(
                "its compiler is not here: {why}; carry its prebuilt cubins, \
                 `.tools/cuda-*/cubins`"
            ))
        }
    }
}

/// What stopped a step's process: the signal the campaign was stopped by, else the end of
/// the budget.
fn stopped_by() -> String {
    match interrupt::signal_name() {
        Some(sig) => format!("stopped by {sig}"),
        None => "stopped at the end of the budget".into(),
    }
}

/// Why `step`, needing `need` seconds, does not start with `left` seconds of the budget.
fn late(step: &Step, need: f64, left: f64) -> String {
    format!(
        "{} needs ~{need:.0} s, {:.0} s of the budget left",
        step.name,
        left.max(0.0)
    )
}

fn names(steps: &[&Step]) -> String {
    steps
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Creates `out`, which must hold nothing yet (what comes back is only what the campaign
/// wrote).
fn prepare_out(out: &Path) -> Result<(), AppError> {
    std::fs::create_dir_all(out).map_err(|e| format!("--out {}: {e}", out.display()))?;
    if std::fs::read_dir(out)?.next().is_some() {
        return Err(format!("--out {}: not empty", out.display()).into());
    }
    Ok(())
}

/// The machine folder and the hardware model it starts with, each from a process of its own
/// (the campaign's process never opens the GPU, so a step's fault cannot reach it); `Err` is
/// the one-line reason there is none.
fn ask_machine(exe: &Path, backend: &str) -> Result<(String, String), String> {
    let folder = ask(exe, backend, &[])?;
    Ok((folder, ask(exe, backend, &["--hardware"])?))
}

/// One line of `campaign machine` with `flags`, a plain name.
fn ask(exe: &Path, backend: &str, flags: &[&str]) -> Result<String, String> {
    let o = Command::new(exe)
        .args(["campaign", "machine", "--backend", backend])
        .args(flags)
        .output()
        .map_err(|e| format!("campaign: cannot start {}: {e}", exe.display()))?;
    let text = String::from_utf8_lossy(&o.stdout).trim().to_string();
    if !o.status.success() || !limits::plain_name(&text) {
        let err = String::from_utf8_lossy(&o.stderr);
        let why = err.trim().trim_start_matches("ptx-litmus: error: ");
        return Err(format!(
            "campaign: no machine for the {backend} backend: {}",
            if why.is_empty() {
                "no reason given"
            } else {
                why
            }
        ));
    }
    Ok(text)
}

/// `summary.txt` of a campaign that could not start: the reason and the steps left to do.
fn write_nothing_ran(out: &Path, why: &str, todo: &[&Step]) -> Result<(), AppError> {
    let text = format!(
        "ptx-litmus campaign: nothing ran\n{why}\nnot run: {}\n",
        if todo.is_empty() {
            "no step is left to do".to_string()
        } else {
            names(todo)
        }
    );
    let path = out.join("summary.txt");
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// Runs one step until it ends or `deadline`; a `run` step from where `resume` says.
fn run_step(
    ctx: &Ctx,
    step: &Step,
    resume: Option<Result<Resume, String>>,
    deadline: Instant,
) -> Result<Outcome, String> {
    let run = format!("{}-{}", step.name, ctx.stamp);
    let dir = ctx.work.join(&ctx.machine).join(&run);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    match &step.kind {
        Kind::Script(args) => {
            let mut cmd = Command::new("bash");
            cmd.args(args)
                .env("STEP_DIR", &dir)
                .env("PTX_LITMUS", &ctx.exe)
                .env("CAMPAIGN_BACKEND", &ctx.backend);
            let end = supervise(cmd, deadline, &dir.join("log.txt"))?;
            let mut notes = Vec::new();
            if end.stopped {
                notes.push(stopped_by());
            }
            Ok(Outcome {
                run,
                complete: end.code == Some(0) && !end.stopped,
                stopped: end.stopped,
                exits: vec![end.code.unwrap_or(-1)],
                notes,
            })
        }
        Kind::Run(args) => run_tests(ctx, args, resume, &run, &dir, deadline),
    }
}

/// What a part's result set covered: every test path it names, and those it recorded or
/// skipped with a reason.
fn covered(set: &Path) -> Option<(Vec<String>, BTreeSet<String>)> {
    let s = results::read_result_set(set).ok()?;
    let mut done: BTreeSet<String> = s.tests.iter().map(|t| t.path.clone()).collect();
    done.extend(s.run.skipped_tests.iter().map(|t| t.path.clone()));
    Some((s.run.test_paths.clone(), done))
}

/// The one result set under `dir` (`<machine>/<run>/`), if the process wrote one.
fn only_set(dir: &Path) -> Option<PathBuf> {
    let group = std::fs::read_dir(dir).ok()?.flatten().next()?.path();
    Some(std::fs::read_dir(group).ok()?.flatten().next()?.path())
}

/// A `run` step: `ptx-litmus run` in a process (on the tests an earlier try left, when it
/// resumes); when it loses the device (exit 4, or 1 after a violation) with tests left, the
/// rest in a fresh one; then
/// the parts, the earlier try's set first, merged into one result set at `dir`.
fn run_tests(
    ctx: &Ctx,
    args: &[String],
    resume: Option<Result<Resume, String>>,
    run: &str,
    dir: &Path,
    deadline: Instant,
) -> Result<Outcome, String> {
    let (paths, flags) = split_run(args);
    let mut t = Tries::new(paths, resume);
    let log = ctx.work.join(format!("{run}.log"));
    if let Some(first) = t.notes.first() {
        std::fs::write(&log, format!("{first}\n")).map_err(|e| e.to_string())?;
    }
    let stopped = t.run(ctx, flags, run, deadline, &log)?;
    if stopped {
        t.notes.push(format!(
            "{}; the rest of the step did not run",
            stopped_by()
        ));
    }
    if t.parts.is_empty() {
        return Err(format!(
            "ptx-litmus run wrote no result set (exit codes {:?}); the end of its log:",
            t.exits
        ));
    }
    let idle = campaign_tests::none_ran(&t.parts).filter(|_| !stopped);
    let complete = !stopped && idle.is_none() && !t.all.is_empty() && t.all.is_subset(&t.done);
    t.notes.extend(idle);
    merge_parts(&t.parts, run, dir, complete)?;
    t.notes.extend(sass_note(&t.parts));
    if !stopped {
        let (exe, backend, scratch) = (&ctx.exe, &ctx.backend, &ctx.work.join("replays"));
        let replay = Replay {
            exe,
            backend,
            dir,
            scratch,
            log: &log,
            deadline,
        };
        t.notes.extend(replay.violations(&t.parts));
    }
    std::fs::copy(&log, dir.join("log.txt")).map_err(|e| e.to_string())?;
    Ok(Outcome {
        run: run.into(),
        complete,
        stopped,
        exits: t.exits,
        notes: t.notes,
    })
}

/// How the SASS checks of the code the step's tests ran went, naming those that failed;
/// `None` when no test recorded one (a CPU step).
fn sass_note(parts: &[PathBuf]) -> Option<String> {
    let tests: Vec<TestRecord> = parts
        .iter()
        .filter_map(|p| results::read_result_set(p).ok())
        .flat_map(|set| set.tests)
        .collect();
    let mut note = kernels::sass_tally(&tests)?;
    let failed: Vec<&str> = tests
        .iter()
        .filter(|t| kernels::sass_failed(t))
        .map(|t| t.name.as_str())
        .collect();
    if !failed.is_empty() {
        note.push_str(&format!(" (FAIL: {})", failed.join(", ")));
    }
    Some(note)
}

/// A `run` step's processes so far: the tests left, the result sets they wrote (a resumed
/// try's first), their exit codes, the notes for the step's record, and the tests known and
/// covered.
struct Tries {
    todo: Vec<String>,
    parts: Vec<PathBuf>,
    exits: Vec<i32>,
    notes: Vec<String>,
    all: BTreeSet<String>,
    done: BTreeSet<String>,
}

impl Tries {
    /// Before the first process: every test of `paths`, or what a resumed try left.
    fn new(paths: &[String], resume: Option<Result<Resume, String>>) -> Tries {
        let mut t = Tries {
            todo: paths.to_vec(),
            parts: Vec::new(),
            exits: Vec::new(),
            notes: Vec::new(),
            all: BTreeSet::new(),
            done: BTreeSet::new(),
        };
        match resume {
            Some(Ok(r)) => {
                t.notes.push(r.note());
                t.todo = r.left();
                t.parts.push(r.set);
                t.all = r.all;
                t.done = r.done;
            }
            Some(Err(why)) => t
                .notes
                .push(format!("not resumed: {why}; every test ran again")),
            None => {}
        }
        t
    }

    /// Runs the tests left, a fresh process after each that lost the device (at most
    /// [`MAX_PROCESSES`]); whether the deadline stopped the last one.
    fn run(
        &mut self,
        ctx: &Ctx,
        flags: &[String],
        run: &str,
        deadline: Instant,
        log: &Path,
    ) -> Result<bool, String> {
        for k in 1..=MAX_PROCESSES {
            if self.todo.is_empty() {
                break;
            }
            let id = format!("{run}.p{k}");
            let part = ctx.work.join("parts").join(&id);
            let cmd = run_command(&ctx.exe, &self.todo, flags, &ctx.backend, &id, &part);
            let end = supervise(cmd, deadline, log)?;
            self.exits.push(end.code.unwrap_or(-1));
            let Some(set) = only_set(&part) else {
                return Ok(end.stopped);
            };
            let Some((names, covered)) = covered(&set) else {
                return Ok(end.stopped);
            };
            self.parts.push(set);
            self.all.extend(names);
            let before = self.done.len();
            self.done.extend(covered);
            let left: Vec<String> = self.all.difference(&self.done).cloned().collect();
            let lost = may_have_lost_the_device(end.code);
            if end.stopped || !lost || left.is_empty() || self.done.len() == before {
                return Ok(end.stopped);
            }
            if k == MAX_PROCESSES {
                self.notes.push(format!(
                    "process {k} lost the device; {} test(s) left for the step's next try (at \
                     most {MAX_PROCESSES} processes a try)",
                    left.len()
                ));
                return Ok(false);
            }
            self.notes.push(format!(
                "process {k} lost the device; {} test(s) went on in process {}",
                left.len(),
                k + 1
            ));
            self.todo = left;
        }
        Ok(false)
    }
}

/// Whether a `run` process that exited with `code` and left tests may have lost its device:
/// it exits 4 when it did, but 1 when it had also seen a violation, a finding coming first in
/// its exit code. Either way the tests it left go on in a fresh process.
fn may_have_lost_the_device(code: Option<i32>) -> bool {
    code == Some(Exit::DeviceLost as i32) || code == Some(Exit::Finding as i32)
}

/// The parts as one result set at `dir` (complete when every test is covered), with every
/// part's `sass/` files.
fn merge_parts(parts: &[PathBuf], run: &str, dir: &Path, complete: bool) -> Result<(), String> {
    let sets = parts
        .iter()
        .map(|p| results::read_result_set(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let (mut rec, tests) = results::merge(&sets, run).map_err(|e| e.to_string())?;
    rec.partial = !complete;
    results::write_result_set(dir, &rec, &tests, true).map_err(|e| e.to_string())?;
    for p in parts {
        let Ok(files) = std::fs::read_dir(p.join("sass")) else {
            continue;
        };
        let to = dir.join("sass");
        std::fs::create_dir_all(&to).map_err(|e| e.to_string())?;
        for f in files.flatten() {
            std::fs::copy(f.path(), to.join(f.file_name())).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Writes the step's record, packs it; the summary line and whether the step completed.
fn finish_step(
    ctx: &Ctx,
    step: &Step,
    outcome: Result<Outcome, String>,
    t0: Instant,
) -> Result<(String, bool), AppError> {
    let o = match outcome {
        Ok(o) => o,
        Err(why) => {
            let mut line = format!("{}: failed: {why}", step.name);
            for l in log_tail(ctx, step) {
                line.push_str(&format!("\n  | {l}"));
            }
            println!("{line}");
            return Ok((line, false));
        }
    };
    let rel = format!("{}/{}", ctx.machine, o.run);
    let mut record = StepRecord {
        format: progress::FORMAT.into(),
        step: step.name.clone(),
        command: step.to_string(),
        backend: ctx.backend.clone(),
        machine: ctx.machine.clone(),
        model: ctx.model.clone(),
        run: o.run.clone(),
        started: ctx.stamp.clone(),
        elapsed_s: t0.elapsed().as_secs_f64(),
        complete: o.complete,
        exits: o.exits,
        stopped: o.stopped,
        notes: o.notes,
    };
    let archive = match pack_step(ctx, step, &rel, &mut record)? {
        Ok(a) => a,
        Err(why) => {
            // Not packed, so not brought back (a first try that fit is taken away too, as its
            // record lacks the notes); later steps may still fit.
            for ext in ["tar", "tar.gz"] {
                let _ = std::fs::remove_file(ctx.out.join(format!("{}.{ext}", step.name)));
            }
            return Ok((
                format!("{}: INCOMPLETE, not packed: {why}", step.name),
                false,
            ));
        }
    };
    let line = step_line(step, &record, &archive);
    println!("{line}");
    Ok((line, record.complete))
}

/// Writes the step's record into its result folder and packs the folder into an archive under
/// the output folder, within the room the archives before it left. Packing may add notes (what
/// it left out); the record is then written again with them and packed again. The inner
/// `Err` is why the step could not be packed; the outer one a record that could not be
/// written.
fn pack_step(
    ctx: &Ctx,
    step: &Step,
    rel: &str,
    record: &mut StepRecord,
) -> Result<Result<PathBuf, String>, AppError> {
    let write = |r: &StepRecord| {
        let p = ctx.work.join(rel).join(progress::RECORD);
        std::fs::write(&p, serde_json::to_string_pretty(r).unwrap_or_default())
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    write(record)?;
    let cap = limits::room(&ctx.out);
    Ok(
        pack(&ctx.work, rel, &step.name, &ctx.out, cap).and_then(|(archive, notes)| {
            if notes.is_empty() {
                return Ok(archive);
            }
            record.notes.extend(notes);
            write(record)?;
            pack(&ctx.work, rel, &step.name, &ctx.out, cap).map(|(a, _)| a)
        }),
    )
}

/// The summary's line of a packed step: its state, time, exit codes, archive and notes.
fn step_line(step: &Step, record: &StepRecord, archive: &Path) -> String {
    let state = if record.complete {
        "complete"
    } else {
        "INCOMPLETE"
    };
    let mut line = format!(
        "{}: {state} in {:.0} s, exit codes {:?}, {}",
        step.name,
        record.elapsed_s,
        record.exits,
        archive
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    for n in &record.notes {
        line.push_str(&format!("\n  {n}"));
    }
    line
}

/// Lines of a failed step's log kept in the summary (the work folder, and the log with it,
/// does not come back from a GPU machine).
const LOG_TAIL: usize = 8;

/// The last [`LOG_TAIL`] lines of `step`'s log in this campaign's work folder (a `run`
/// step's processes, or a script's), each cut to 200 characters.
fn log_tail(ctx: &Ctx, step: &Step) -> Vec<String> {
    let run = format!("{}-{}", step.name, ctx.stamp);
    let logs = [
        ctx.work.join(format!("{run}.log")),
        ctx.work.join(&ctx.machine).join(&run).join("log.txt"),
    ];
    let Some(text) = logs.iter().find_map(|p| std::fs::read_to_string(p).ok()) else {
        return Vec::new();
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(LOG_TAIL)..]
        .iter()
        .map(|l| l.chars().take(200).collect())
        .collect()
}

/// Writes `summary.txt` and checks everything under `--out` against what comes back.
fn write_summary(
    ctx: &Ctx,
    lines: &[String],
    started: Instant,
    budget: f64,
) -> Result<(), AppError> {
    let mut text = format!(
        "ptx-litmus campaign on {} ({} backend), {:.0} s of a {:.0} s budget\n",
        ctx.machine,
        ctx.backend,
        started.elapsed().as_secs_f64(),
        budget
    );
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    text.push_str("unpack with: ptx-litmus campaign unpack <archives>\n");
    std::fs::write(ctx.out.join("summary.txt"), &text)?;
    print!(
        "{}",
        text.lines()
            .skip(1)
            .filter(|l| l.starts_with("not run"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    match limits::check_within(&ctx.out, ctx.files) {
        Ok(files) => println!(
            "{} file(s) under {} come back",
            files.len(),
            ctx.out.display()
        ),
        Err(problems) => {
            return Err(format!(
                "--out {} would not all come back: {}",
                ctx.out.display(),
                problems.join("; ")
            )
            .into())
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::limits::MAX_FILES;

    #[test]
    fn a_step_starts_only_with_a_file_and_room_for_its_archive() {
        let room = limits::MAX_FILE_BYTES;
        assert_eq!(stop_before(0, MAX_FILES, false, room), None);
        assert_eq!(stop_before(MAX_FILES - 2, MAX_FILES, false, room), None);
        assert!(stop_before(MAX_FILES - 1, MAX_FILES, false, room).is_some());
        assert!(stop_before(4, 6, false, room).is_none());
        assert!(stop_before(5, 6, false, room).is_some());
        assert!(stop_before(0, MAX_FILES, true, room).is_some());
        let full = stop_before(0, MAX_FILES, false, MIN_ROOM - 1).unwrap();
        assert!(full.contains("bytes are left of the"), "{full}");
        let text = "s 100 run litmus/mp\n";
        let step = &crate::campaign::manifest::parse(text, Path::new("m.txt")).unwrap()[0];
        assert_eq!(
            late(step, 100.0, 99.0),
            "s needs ~100 s, 99 s of the budget left"
        );
    }
}
