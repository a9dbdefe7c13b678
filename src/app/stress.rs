//! The stress configuration of `--stress`, `--stress-file` and `--stress-set`: the preset,
//! then the file's settings in order, then each `--stress-set`, validated once at the end.

use super::AppError;
use crate::cli::StressArgs;
use crate::codegen::{parse_settings, split_setting, Stress};
use std::path::Path;

/// The configuration the flags describe; a bad setting names its file and line, or the flag.
pub fn resolve(args: &StressArgs) -> Result<Stress, AppError> {
    let mut stress = args.stress.clone();
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

/// Applies a settings file, each error as `file:line: cause`.
fn apply_file(stress: &mut Stress, path: &Path) -> Result<(), AppError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--stress-file {shown}: cannot read: {e}"))?;
    let settings = parse_settings(&text).map_err(|(line, e)| format!("{shown}:{line}: {e}"))?;
    for s in settings {
        stress
            .set(&s.key, &s.value)
            .map_err(|e| format!("{shown}:{}: {e}", s.line))?;
    }
    Ok(())
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
