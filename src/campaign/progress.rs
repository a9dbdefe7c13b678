//! What a campaign has done: each step's result folder holds a `campaign.json` record of the
//! step (its manifest line, whether it completed, on what machine, in how many processes).
//! `campaign status` and `campaign run` read these from `results/` to find the next steps.

use super::manifest::{self, Step};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The name of a step's record inside its result folder.
pub const RECORD: &str = "campaign.json";

/// The format tag of a step record.
pub const FORMAT: &str = "ptx-litmus-campaign-step/1";

/// One step as it ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// [`FORMAT`].
    pub format: String,
    /// The step's name.
    pub step: String,
    /// Its manifest line.
    pub command: String,
    /// The backend it ran on (`cuda`, `cpu`).
    pub backend: String,
    /// The machine folder its results belong in (`results/<machine>/`).
    pub machine: String,
    /// The hardware model the machine folder starts with (the GPU's or CPU's name, without
    /// the driver): a step done on one GPU model is still to do on another.
    #[serde(default)]
    pub model: String,
    /// The result folder's name (`results/<machine>/<run>/`).
    pub run: String,
    /// When it started (RFC 3339).
    pub started: String,
    /// Wall-clock seconds it took.
    pub elapsed_s: f64,
    /// Whether every part of it ran (every test recorded or skipped with its reason).
    pub complete: bool,
    /// The exit code of each process it took (a run that lost its device goes on in another).
    pub exits: Vec<i32>,
    /// Whether the campaign stopped it (at its deadline, or on a signal) rather than it
    /// ending by itself.
    #[serde(default)]
    pub stopped: bool,
    /// What the step left out or went through, one line each.
    pub notes: Vec<String>,
}

/// A step record found under a results folder, with where it was.
#[derive(Clone, Debug)]
pub struct Found {
    /// The record.
    pub record: StepRecord,
    /// Its result folder.
    pub dir: PathBuf,
}

/// Every step record under `results/<machine>/<run>/`; unreadable ones are skipped with a
/// warning line each in the second list.
pub fn found(results: &Path) -> (Vec<Found>, Vec<String>) {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let Ok(machines) = std::fs::read_dir(results) else {
        return (out, warnings);
    };
    for m in machines.flatten().filter(|e| e.path().is_dir()) {
        let Ok(runs) = std::fs::read_dir(m.path()) else {
            continue;
        };
        for r in runs.flatten() {
            let p = r.path().join(RECORD);
            if !p.is_file() {
                continue;
            }
            match read(&p) {
                Ok(record) => out.push(Found {
                    record,
                    dir: r.path(),
                }),
                Err(e) => warnings.push(e),
            }
        }
    }
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    (out, warnings)
}

/// Reads one step record.
pub fn read(path: &Path) -> Result<StepRecord, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let r: StepRecord =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if r.format != FORMAT {
        return Err(format!(
            "{}: format `{}`, expected `{FORMAT}`",
            path.display(),
            r.format
        ));
    }
    Ok(r)
}

/// Where a step of the manifest stands.
#[derive(Clone, Debug)]
pub enum Standing {
    /// Completed on `backend` (the folder of the latest complete run).
    Done(PathBuf),
    /// Not completed yet; the folders of incomplete attempts, if any, oldest first.
    Todo(Vec<PathBuf>),
    /// Its latest attempt ended by itself without completing (a preflight check failed, a
    /// script's error): running it again as it is would spend a window's time on the same
    /// failure, so it waits for a look (`campaign run --only STEP`); the folders of its
    /// attempts, oldest first.
    Failed(Vec<PathBuf>),
}

/// Which step records count: those of one backend and, where `model` is given, of the
/// hardware models whose names contain it (`h100` counts an H100's, not an H200's).
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    /// The backend (`cuda`, `cpu`).
    pub backend: &'a str,
    /// A part of the hardware model's name, or every model.
    pub model: Option<&'a str>,
}

impl Scope<'_> {
    /// Whether `r` counts.
    pub fn counts(&self, r: &StepRecord) -> bool {
        r.backend == self.backend && self.model.is_none_or(|m| r.model.contains(m))
    }
}

/// The standing of each step of `steps` in `scope`, from the records `found`.
pub fn standing(steps: &[Step], found: &[Found], scope: Scope) -> Vec<Standing> {
    steps
        .iter()
        .map(|s| {
            let mut mine: Vec<&Found> = found
                .iter()
                .filter(|f| f.record.step == s.name && scope.counts(&f.record))
                .collect();
            // Oldest first, across machine folders too.
            mine.sort_by(|a, b| (&a.record.started, &a.dir).cmp(&(&b.record.started, &b.dir)));
            if let Some(f) = mine.iter().rev().find(|f| f.record.complete) {
                return Standing::Done(f.dir.clone());
            }
            let tries = mine.iter().map(|f| f.dir.clone()).collect();
            match mine.last() {
                Some(f) if !f.record.stopped => Standing::Failed(tries),
                _ => Standing::Todo(tries),
            }
        })
        .collect()
}

/// How a resumed step's record note starts: its time is only the resumed part's, so it
/// says nothing of the pace.
pub const RESUMED: &str = "resumed from";

/// How fast steps ran against their estimates on one backend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pace {
    /// The median of elapsed over estimated seconds, kept within [`PACE_BOUNDS`].
    pub factor: f64,
    /// The complete steps it is the median of.
    pub steps: usize,
    /// Whether they all ran on the hardware model asked about, rather than on any model of
    /// the backend (too few had).
    pub of_model: bool,
}

/// Fewest complete steps a pace is taken from: one step's time says little of the others.
pub const PACE_MIN_STEPS: usize = 3;

/// The factor a pace may scale estimates by, at least and at most: a few quick steps must
/// not let a window plan a step it cannot finish, nor slow ones empty it.
pub const PACE_BOUNDS: (f64, f64) = (0.5, 4.0);

/// The pace of the complete `run` steps `found` ran in `scope` or, when fewer than
/// [`PACE_MIN_STEPS`] ran on its model, on any model of its backend; `None` below that.
pub fn pace(found: &[Found], scope: Scope) -> Option<Pace> {
    let every_model = Scope {
        model: None,
        ..scope
    };
    match scope.model {
        Some(_) => pace_in(found, scope).map(|p| Pace {
            of_model: true,
            ..p
        }),
        None => None,
    }
    .or_else(|| pace_in(found, every_model))
}

/// The pace of the complete `run` steps `found` ran in `scope` (their estimates read from
/// their recorded manifest lines; a script step's time is its own choice, not the GPU's).
fn pace_in(found: &[Found], scope: Scope) -> Option<Pace> {
    let mut ratios: Vec<f64> = found
        .iter()
        .filter(|f| f.record.complete && scope.counts(&f.record))
        .filter(|f| !f.record.notes.iter().any(|n| n.starts_with(RESUMED)))
        .filter_map(|f| {
            let step = manifest::parse(&f.record.command, Path::new(RECORD)).ok()?;
            let step = step.first()?;
            let manifest::Kind::Run(_) = step.kind else {
                return None;
            };
            let est = f64::from(step.seconds);
            (est > 0.0 && f.record.elapsed_s.is_finite()).then(|| f.record.elapsed_s / est)
        })
        .collect();
    if ratios.len() < PACE_MIN_STEPS {
        return None;
    }
    let steps = ratios.len();
    let median = crate::report::stats::median(&mut ratios)?;
    Some(Pace {
        factor: median.clamp(PACE_BOUNDS.0, PACE_BOUNDS.1),
        steps,
        of_model: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::manifest;

    fn record(step: &str, backend: &str, complete: bool) -> StepRecord {
        StepRecord {
            format: FORMAT.into(),
            step: step.into(),
            command: String::new(),
            backend: backend.into(),
            machine: "m".into(),
            model: "nvidia-h200".into(),
            run: format!("{step}-1"),
            started: "t".into(),
            elapsed_s: 1.0,
            complete,
            exits: vec![0],
            stopped: !complete,
            notes: vec![],
        }
    }

    /// A record of step `step` that started at `started`, complete or not, stopped or not.
    fn tried(step: &str, started: &str, complete: bool, stopped: bool) -> Found {
        let mut record = record(step, "cuda", complete);
        record.started = started.into();
        record.stopped = stopped;
        Found {
            record,
            dir: PathBuf::from(format!("m/{step}-{started}")),
        }
    }

    fn cuda(model: Option<&str>) -> Scope<'_> {
        Scope {
            backend: "cuda",
            model,
        }
    }

    #[test]
    fn a_step_done_on_one_gpu_model_is_still_to_do_on_another() {
        let steps = manifest::parse("a 1 run x\nb 1 run x\n", Path::new("m")).unwrap();
        let mut h100 = tried("a", "1", true, false);
        h100.record.model = "nvidia-h100-80gb-hbm3".into();
        let found = [h100, tried("b", "1", true, false)];
        let done = |s: &Standing| matches!(s, Standing::Done(_));
        let on = |m| {
            standing(&steps, &found, cuda(m))
                .iter()
                .map(done)
                .collect::<Vec<_>>()
        };
        assert_eq!(on(None), [true, true], "every model's records count");
        assert_eq!(on(Some("h100")), [true, false]);
        assert_eq!(on(Some("nvidia-h200")), [false, true]);
        assert_eq!(on(Some("b200")), [false, false]);
        // A record written before the model was recorded counts only for every model.
        let old = r#"{"format":"ptx-litmus-campaign-step/1","step":"a","command":"","backend":"cuda",
            "machine":"m","run":"a-1","started":"1","elapsed_s":1.0,"complete":true,"exits":[0],
            "notes":[]}"#;
        let old: StepRecord = serde_json::from_str(old).unwrap();
        assert!(cuda(None).counts(&old) && !cuda(Some("h100")).counts(&old));
    }

    #[test]
    fn a_step_whose_latest_try_failed_by_itself_waits_for_a_look() {
        let steps = manifest::parse("a 1 run x\nb 1 run x\nc 1 run x\n", Path::new("m")).unwrap();
        let found = [
            // a: stopped at its deadline, then failed by itself (listed out of time order).
            tried("a", "2", false, false),
            tried("a", "1", false, true),
            // b: failed by itself, then stopped: it runs again.
            tried("b", "1", false, false),
            tried("b", "2", false, true),
            // c: failed by itself, then complete.
            tried("c", "1", false, false),
            tried("c", "2", true, false),
        ];
        let s = standing(&steps, &found, cuda(None));
        let Standing::Failed(a) = &s[0] else {
            panic!("{:?}", s[0]);
        };
        assert_eq!(
            a.last().unwrap(),
            Path::new("m/a-2"),
            "the failed try comes last"
        );
        assert!(matches!(&s[1], Standing::Todo(t) if t.last().unwrap().ends_with("b-2")));
        assert!(matches!(&s[2], Standing::Done(d) if d.ends_with("c-2")));
        // A record written before `stopped` was recorded reads as not stopped.
        let old = r#"{"format":"ptx-litmus-campaign-step/1","step":"a","command":"","backend":"cuda",
            "machine":"m","run":"a-1","started":"1","elapsed_s":1.0,"complete":false,"exits":[1],
            "notes":[]}"#;
        assert!(!serde_json::from_str::<StepRecord>(old).unwrap().stopped);
    }

    #[test]
    fn records_on_disk_decide_what_is_done() {
        let root = std::env::temp_dir().join(format!("progress-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let put = |dir: &str, r: &StepRecord| {
            let d = root.join(dir);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(RECORD), serde_json::to_string(r).unwrap()).unwrap();
        };
        put("gpu/a-1", &record("a", "cuda", true));
        put("gpu/b-1", &record("b", "cuda", false));
        put("cpu/c-1", &record("c", "cpu", true));
        std::fs::create_dir_all(root.join("gpu/bad")).unwrap();
        std::fs::write(root.join("gpu/bad").join(RECORD), "{").unwrap();
        let steps = manifest::parse(
            "a 1 run x\nb 1 run x\nc 1 run x\nd 1 run x\n",
            Path::new("m"),
        )
        .unwrap();
        let (found, warnings) = found(&root);
        assert_eq!(found.len(), 3);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let s = standing(&steps, &found, cuda(None));
        assert!(matches!(&s[0], Standing::Done(d) if d.ends_with("gpu/a-1")));
        assert!(matches!(&s[1], Standing::Todo(t) if t.len() == 1));
        // Done on the CPU is not done on the GPU.
        assert!(matches!(&s[2], Standing::Todo(t) if t.is_empty()));
        assert!(matches!(&s[3], Standing::Todo(t) if t.is_empty()));
        assert!(matches!(
            &standing(
                &steps,
                &found,
                Scope {
                    backend: "cpu",
                    model: None
                }
            )[2],
            Standing::Done(_)
        ));
        let _ = std::fs::remove_dir_all(&root);
    }

    fn timed(step: &str, estimate: u32, elapsed_s: f64, complete: bool) -> Found {
        let mut r = record(step, "cuda", complete);
        r.command = format!("{step} {estimate} run x");
        r.elapsed_s = elapsed_s;
        Found {
            record: r,
            dir: PathBuf::from(step),
        }
    }

    #[test]
    fn the_pace_is_the_median_of_complete_steps_kept_within_bounds() {
        let two = [timed("a", 100, 150.0, true), timed("b", 10, 20.0, true)];
        assert_eq!(pace(&two, cuda(None)), None);
        let mut three = two.to_vec();
        three.push(timed("c", 50, 55.0, true));
        // An incomplete step (cut at its deadline), a script step, a resumed one (its time is
        // only the rest's) and another backend's do not count.
        three.push(timed("d", 10, 1000.0, false));
        let mut script = timed("e", 10, 1000.0, true);
        script.record.command = "e 10 script x.sh".into();
        three.push(script);
        let mut resumed = timed("f", 100, 1.0, true);
        resumed.record.notes = vec![format!("{RESUMED} x: 1 of 2 tests were recorded there")];
        three.push(resumed);
        let p = pace(&three, cuda(None)).unwrap();
        assert_eq!(p.steps, 3);
        assert!((p.factor - 1.5).abs() < 1e-12, "{p:?}");
        let cpu = Scope {
            backend: "cpu",
            model: None,
        };
        assert_eq!(pace(&three, cpu), None);
        let quick: Vec<Found> = (0..3)
            .map(|k| timed(&format!("q{k}"), 100, 1.0, true))
            .collect();
        assert_eq!(pace(&quick, cuda(None)).unwrap().factor, PACE_BOUNDS.0);
    }

    #[test]
    fn a_model_s_own_pace_counts_once_it_has_enough_steps_else_the_backend_s() {
        let slow: Vec<Found> = (0..3)
            .map(|k| timed(&format!("s{k}"), 100, 200.0, true))
            .collect();
        let on_h100 = |k: u32| {
            let mut f = timed(&format!("h{k}"), 100, 100.0, true);
            f.record.model = "nvidia-h100-80gb-hbm3".into();
            f
        };
        let mut found = slow.clone();
        found.extend((0..2).map(on_h100));
        // Two H100 steps are too few: the backend's five give the median, 2.
        let p = pace(&found, cuda(Some("h100"))).unwrap();
        assert_eq!((p.factor, p.steps, p.of_model), (2.0, 5, false));
        found.push(on_h100(2));
        let p = pace(&found, cuda(Some("h100"))).unwrap();
        assert_eq!((p.factor, p.steps, p.of_model), (1.0, 3, true));
        let p = pace(&found, cuda(Some("h200"))).unwrap();
        assert_eq!((p.factor, p.steps, p.of_model), (2.0, 3, true));
    }
}
