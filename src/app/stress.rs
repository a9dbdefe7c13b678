//! The stress configuration of `--stress`, `--stress-file` and `--stress-set`: the preset,
//! then the file's settings in order, then each `--stress-set`, validated once at the end.

use super::AppError;
use crate::cli::{StressArgs, StressChoice};
use crate::codegen::{parse_settings, split_setting, Setting, Stress};
use crate::tune::tuned_file;
use std::collections::BTreeMap;
use std::path::Path;

/// The configuration the flags describe; a bad setting names its file and line, or the flag.
pub fn resolve(args: &StressArgs) -> Result<Stress, AppError> {
    let mut stress = match &args.stress {
        StressChoice::Preset(s) => s.clone(),
        StressChoice::Tuned(path) => {
            let mut s = Stress::full_stress();
            let (settings, _) = tuned_file::split(read_settings(path, "--stress tuned:")?);
            apply(&mut s, path, settings)?;
            s
        }
    };
    if let Some(path) = &args.stress_file {
        apply_file(&mut stress, path)?;
    }
    for s in &args.stress_set {
        let (k, v) = split_setting(s).map_err(|e| format!("--stress-set {e}"))?;
        stress
            .set(&k, &v)
            .map_err(|e| format!("--stress-set {s}: {e}"))?;
    }
    stress
        .validate()
        .map_err(|e| format!("stress configuration: {e}"))?;
    Ok(stress)
}

/// The CPU backend options of `--stress tuned:FILE` (its `cpu.KEY = VALUE` lines), none for a
/// preset.
pub fn tuned_cpu_options(args: &StressArgs) -> Result<BTreeMap<String, String>, AppError> {
    let StressChoice::Tuned(path) = &args.stress else {
        return Ok(BTreeMap::new());
    };
    let (_, cpu) = tuned_file::split(read_settings(path, "--stress tuned:")?);
    Ok(cpu.into_iter().map(|s| (s.key, s.value)).collect())
}

/// The largest settings file read: one line per stress key (a few hundred bytes).
const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// A settings file's lines, each error as `file:line: cause`.
fn read_settings(path: &Path, flag: &str) -> Result<Vec<Setting>, AppError> {
    let shown = path.display();
    let text = crate::input::text_of(path, MAX_SETTINGS_BYTES, "a settings file")
        .map_err(|e| format!("{flag}{e}"))?;
    Ok(parse_settings(&text).map_err(|(line, e)| format!("{shown}:{line}: {e}"))?)
}

/// Applies settings read from `path`, each error as `file:line: cause`.
fn apply(stress: &mut Stress, path: &Path, settings: Vec<Setting>) -> Result<(), AppError> {
    for s in settings {
        stress
            .set(&s.key, &s.value)
            .map_err(|e| format!("{}:{}: {e}", path.display(), s.line))?;
    }
    Ok(())
}

/// Applies a settings file; a CPU option line (`cpu.KEY`, from a tuned file) is refused with
/// the flag that reads it.
fn apply_file(stress: &mut Stress, path: &Path) -> Result<(), AppError> {
    let (settings, cpu) = tuned_file::split(read_settings(path, "--stress-file ")?);
    if let Some(s) = cpu.first() {
        return Err(format!(
            "{}:{}: `{}{}` is a CPU backend option, not an incantation: read the file with \
             --stress tuned:{} (or give -o {}={})",
            path.display(),
            s.line,
            tuned_file::CPU_PREFIX,
            s.key,
            path.display(),
            s.key,
            s.value
        )
        .into());
    }
    apply(stress, path, settings)
}

/// Re-applies recorded settings (`run.json`'s `stress_set`) on top of their preset.
pub fn replayed(
    preset: &str,
    set: &std::collections::BTreeMap<String, String>,
    run_json: &Path,
) -> Result<Stress, AppError> {
    let mut stress: Stress = preset
        .parse()
        .map_err(|e| format!("{}: {e}", run_json.display()))?;
    for (k, v) in set {
        stress
            .set(k, v)
            .map_err(|e| format!("{}: stress_set: {e}", run_json.display()))?;
    }
    Ok(stress)
}
