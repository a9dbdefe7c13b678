//! Running pip and the tools a wheel holds: the one Python the store's installs go through,
//! and a command's output or, when it fails, an error that keeps what it printed.

use std::process::Command;

/// The Python that runs pip: `$PYTHON`, else `python3`.
pub fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Runs a command and returns its standard output, or an error holding what it printed.
pub fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end(),
            String::from_utf8_lossy(&out.stdout).trim_end()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
