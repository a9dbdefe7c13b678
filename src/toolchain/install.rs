//! Installing one exact version into the store: `pip download` of the version's nvcc wheel,
//! ptxas taken out of it (a wheel is a zip; Python's own zipfile reads it, so nothing new is
//! needed beyond the Python that pip runs on), checked to report the version asked for, then
//! moved into place. Only ptxas is kept (20–50 MB a version instead of the whole wheel); the
//! SASS of every version is read with the one nvdisasm of `.venv`, so that differences in a
//! matrix come from the assemblers, not from the disassemblers.

use super::pip::{python, run};
use super::store::{dir_name, ptxas_in};
use super::version::Version;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Prints the wheel member that is ptxas, extracts it, and prints the wheel's SHA-256.
const EXTRACT: &str = "\
import hashlib, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
z = zipfile.ZipFile(wheel)
names = [n for n in z.namelist() if n.endswith('/bin/ptxas')]
if len(names) != 1:
    sys.exit('expected one bin/ptxas in %s, found %d' % (wheel, len(names)))
with open(out, 'wb') as f:
    f.write(z.read(names[0]))
print(names[0])
print(hashlib.sha256(open(wheel, 'rb').read()).hexdigest())
";

/// Downloads the wheel of `v` into `dir` and returns its path.
fn download(v: &Version, dir: &Path) -> Result<PathBuf, String> {
    let req = format!("{}=={v}", v.nvcc_package());
    run(
        Command::new(python())
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--no-deps", "--only-binary=:all:", "--dest"])
            .arg(dir)
            .arg(&req),
        &format!("pip download {req}"),
    )?;
    let wheel = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"));
    wheel.ok_or_else(|| format!("pip download {req} left no wheel in {}", dir.display()))
}

/// Whether `ptxas --version` names exactly `v` (it prints `V12.4.131`).
pub fn reports_version(version_text: &str, v: &Version) -> bool {
    let want = format!("V{v}");
    version_text
        .split(|c: char| c.is_whitespace() || c == ',')
        .any(|w| w == want)
}

/// Fills `stage` with ptxas of version `v` and its `source.txt`.
fn fill(v: &Version, stage: &Path, date: &str) -> Result<(), String> {
    let wheels = stage.join("wheel");
    std::fs::create_dir_all(&wheels).map_err(|e| format!("{}: {e}", wheels.display()))?;
    let wheel = download(v, &wheels)?;
    let ptxas = ptxas_in(stage);
    std::fs::create_dir_all(ptxas.parent().expect("bin/ptxas has a parent"))
        .map_err(|e| format!("{}: {e}", stage.display()))?;
    let printed = run(
        Command::new(python())
            .args(["-c", EXTRACT])
            .arg(&wheel)
            .arg(&ptxas),
        "extracting ptxas",
    )?;
    set_executable(&ptxas)?;
    let said = run(Command::new(&ptxas).arg("--version"), "ptxas --version")?;
    if !reports_version(&said, v) {
        return Err(format!(
            "the wheel's ptxas is not version {v}; it says:\n{}",
            said.trim_end()
        ));
    }
    let mut lines = printed.lines();
    let source = format!(
        "package {}=={v}\nwheel {}\nmember {}\nsha256 {}\ninstalled {date}\n",
        v.nvcc_package(),
        wheel.file_name().unwrap_or_default().to_string_lossy(),
        lines.next().unwrap_or(""),
        lines.next().unwrap_or("")
    );
    std::fs::write(stage.join("source.txt"), source).map_err(|e| e.to_string())?;
    std::fs::remove_dir_all(&wheels).map_err(|e| format!("{}: {e}", wheels.display()))
}

fn set_executable(p: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", p.display()))
}

/// Installs version `v` into `root` unless it is there; returns its folder and whether it was
/// installed now. `date` goes into `source.txt`.
pub fn install(root: &Path, v: &Version, date: &str) -> Result<(PathBuf, bool), String> {
    let dir = root.join(dir_name(v));
    if ptxas_in(&dir).is_file() {
        return Ok((dir, false));
    }
    let stage = root.join(format!(".{}.partial-{}", dir_name(v), std::process::id()));
    let _ = std::fs::remove_dir_all(&stage);
    std::fs::create_dir_all(&stage).map_err(|e| format!("{}: {e}", stage.display()))?;
    if let Err(e) = fill(v, &stage, date) {
        let _ = std::fs::remove_dir_all(&stage);
        return Err(e);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&stage, &dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok((dir, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_check_wants_the_exact_build() {
        let said = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, \
                    V12.4.131\nBuild cuda_12.4.r12.4/compiler.34097967_0\n";
        assert!(reports_version(said, &"12.4.131".parse().unwrap()));
        assert!(!reports_version(said, &"12.4.13".parse().unwrap()));
        assert!(!reports_version(said, &"12.4.99".parse().unwrap()));
    }
}
