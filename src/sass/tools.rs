//! Finding and running the NVIDIA tools from PyPI: `ptxas` (wheel `nvidia-cuda-nvcc`),
//! `nvdisasm` (`nvidia-cuda-nvdisasm`) and `cuobjdump` (`nvidia-cuda-cuobjdump`).
//!
//! Search order: the environment variable (`PTX_LITMUS_PTXAS`, `PTX_LITMUS_NVDISASM`,
//! `PTX_LITMUS_CUOBJDUMP`), then `.venv` of the current directory or any parent (where
//! `scripts/setup-tools` installs them), then `.venv` of the source tree this binary was built
//! from, then `PATH`, then `$CUDA_HOME/bin` and `/usr/local/cuda/bin`. Every run has a time
//! limit ([`PATIENCE`]): a tool that hangs on some input is stopped, and says so.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One of the external tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tool {
    /// The PTX assembler.
    Ptxas,
    /// The SASS disassembler that labels every function.
    Nvdisasm,
    /// The object dumper (`cuobjdump -sass`).
    Cuobjdump,
}

impl Tool {
    /// The executable's name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Ptxas => "ptxas",
            Tool::Nvdisasm => "nvdisasm",
            Tool::Cuobjdump => "cuobjdump",
        }
    }

    /// The environment variable that overrides the search.
    pub fn env_var(self) -> &'static str {
        match self {
            Tool::Ptxas => "PTX_LITMUS_PTXAS",
            Tool::Nvdisasm => "PTX_LITMUS_NVDISASM",
            Tool::Cuobjdump => "PTX_LITMUS_CUOBJDUMP",
        }
    }

    /// The PyPI package that ships it.
    pub fn package(self) -> &'static str {
        match self {
            Tool::Ptxas => "nvidia-cuda-nvcc",
            Tool::Nvdisasm => "nvidia-cuda-nvdisasm",
            Tool::Cuobjdump => "nvidia-cuda-cuobjdump",
        }
    }
}

/// A tool that is missing or failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolError {
    /// Not found anywhere; the message says how to install it.
    Missing(Tool),
    /// It ran and failed; its output is kept.
    Failed {
        /// Which tool.
        tool: Tool,
        /// What it printed.
        log: String,
    },
    /// It could not be run or its files not handled.
    Io(String),
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Missing(t) => write!(
                f,
                "{} not found: run scripts/setup-tools (it installs {} from PyPI into .venv), \
                 or `pip install {}` and put it on PATH, or set {} to its path",
                t.name(),
                t.package(),
                t.package(),
                t.env_var()
            ),
            ToolError::Failed { tool, log } => {
                write!(f, "{} failed:\n{}", tool.name(), log.trim_end())
            }
            ToolError::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ToolError {}

/// The `bin` folders of PyPI's CUDA wheels inside a virtual environment.
fn venv_bins(venv: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(libs) = std::fs::read_dir(venv.join("lib")) else {
        return out;
    };
    for py in libs.flatten() {
        let nvidia = py.path().join("site-packages").join("nvidia");
        let Ok(dirs) = std::fs::read_dir(&nvidia) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = dirs.flatten().map(|d| d.path().join("bin")).collect();
        dirs.sort();
        out.extend(dirs);
        out.push(nvidia.join("cuda_nvcc").join("bin"));
    }
    out
}

/// Where `tool` is, or how to install it.
pub fn find(tool: Tool) -> Result<PathBuf, ToolError> {
    if let Some(p) = std::env::var_os(tool.env_var()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(ToolError::Io(format!(
                "{} points to {}, which is not a file",
                tool.env_var(),
                p.display()
            )))
        };
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.extend(cwd.ancestors().map(Path::to_path_buf));
    }
    roots.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    for root in roots {
        for bin in venv_bins(&root.join(".venv")) {
            let p = bin.join(tool.name());
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    // Where a CUDA toolkit puts its tools when PATH does not name them (a GPU machine's
    // nvdisasm, for the check of the code a run's JIT made).
    dirs.extend(std::env::var_os("CUDA_HOME").map(|h| PathBuf::from(h).join("bin")));
    dirs.push(PathBuf::from("/usr/local/cuda/bin"));
    dirs.into_iter()
        .map(|d| d.join(tool.name()))
        .find(|p| p.is_file())
        .ok_or(ToolError::Missing(tool))
}

/// The first line of `tool --version` that names a release, for provenance.
pub fn version(tool: Tool) -> Result<String, ToolError> {
    version_at(tool, &find(tool)?)
}

/// The release line of the copy of `tool` at `path`.
pub fn version_at(tool: Tool, path: &Path) -> Result<String, ToolError> {
    let text = run_at(tool, path, &["--version".as_ref()])?;
    Ok(text
        .lines()
        .find(|l| l.contains("release"))
        .unwrap_or_else(|| text.lines().last().unwrap_or(""))
        .trim()
        .to_string())
}

/// A scratch directory for one assembly, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, ToolError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ptx-litmus-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| ToolError::Io(format!("cannot create {}: {e}", dir.display())))?;
        Ok(Scratch(dir))
    }
}

impl Scratch {
    /// `e` with this folder's path left out of a tool's log (`kernel.ptx, line 3`), so that
    /// a message names the file the same way in every run.
    fn relative(&self, e: ToolError) -> ToolError {
        match e {
            ToolError::Failed { tool, log } => {
                let prefix = format!("{}/", self.0.display());
                let log = log.replace(&prefix, "");
                ToolError::Failed { tool, log }
            }
            other => other,
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(tool: Tool, args: &[&std::ffi::OsStr]) -> Result<String, ToolError> {
    run_at(tool, &find(tool)?, args)
}

/// The longest one run of a tool may take: far above any kernel's assembly (about a second for
/// a batch of kernels), so only a tool that hangs meets it.
pub const PATIENCE: Duration = Duration::from_secs(300);

/// Runs the copy of `tool` at `path`, stopped after [`PATIENCE`]; its standard output.
fn run_at(tool: Tool, path: &Path, args: &[&std::ffi::OsStr]) -> Result<String, ToolError> {
    run_within(tool, path, args, PATIENCE).map(|(out, _)| out)
}

/// Runs the copy of `tool` at `path` with `args`, stopped once it has taken `limit`; its
/// standard output and standard error.
fn run_within(
    tool: Tool,
    path: &Path,
    args: &[&std::ffi::OsStr],
    limit: Duration,
) -> Result<(String, String), ToolError> {
    let cannot = |e: std::io::Error| ToolError::Io(format!("cannot run {}: {e}", path.display()));
    let mut child = Command::new(path)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(cannot)?;
    // Read beside the wait, so that a tool writing more than a pipe holds never blocks.
    let (mut so, mut se) = (child.stdout.take(), child.stderr.take());
    let stdout = std::thread::spawn(move || drain(so.as_mut()));
    let stderr = std::thread::spawn(move || drain(se.as_mut()));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(cannot)? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ToolError::Io(format!(
                "{} ran over {limit:?} and was stopped",
                tool.name()
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let out = std::process::Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    if !out.status.success() {
        let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
        log.push_str(&String::from_utf8_lossy(&out.stdout));
        return Err(ToolError::Failed { tool, log });
    }
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok((text(&out.stdout), text(&out.stderr)))
}

/// All of a pipe's bytes (none when there is no pipe).
fn drain(pipe: Option<&mut impl Read>) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let Some(p) = pipe {
        let _ = p.read_to_end(&mut bytes);
    }
    bytes
}

/// Assembles `ptx` for `arch` (e.g. `sm_90`) and returns the cubin.
pub fn assemble(ptx: &str, arch: &str) -> Result<Vec<u8>, ToolError> {
    assemble_with(&find(Tool::Ptxas)?, ptx, arch)
}

/// Assembles `ptx` for `arch` with the ptxas at `ptxas` (one of the toolchain store's).
pub fn assemble_with(ptxas: &Path, ptx: &str, arch: &str) -> Result<Vec<u8>, ToolError> {
    ptxas_run(ptxas, ptx, arch, false).map(|(cubin, _)| cubin)
}

/// What `ptxas -v` says while it assembles `ptx` for `arch` (its standard error, then its
/// standard output): the registers and memory of each entry.
pub fn assemble_verbose(ptx: &str, arch: &str) -> Result<String, ToolError> {
    ptxas_run(&find(Tool::Ptxas)?, ptx, arch, true).map(|(_, log)| log)
}

/// Runs the ptxas at `ptxas` on `ptx` for `arch` (`-v` when `verbose`) in a scratch folder;
/// the cubin, and what ptxas said (standard error, then standard output).
fn ptxas_run(
    ptxas: &Path,
    ptx: &str,
    arch: &str,
    verbose: bool,
) -> Result<(Vec<u8>, String), ToolError> {
    let dir = Scratch::new()?;
    let src = dir.0.join("kernel.ptx");
    let bin = dir.0.join("kernel.cubin");
    std::fs::write(&src, ptx).map_err(|e| ToolError::Io(format!("cannot write PTX: {e}")))?;
    let arch = format!("-arch={arch}");
    let mut args: Vec<&std::ffi::OsStr> = Vec::new();
    if verbose {
        args.push("-v".as_ref());
    }
    args.extend([
        arch.as_ref(),
        src.as_os_str(),
        "-o".as_ref(),
        bin.as_os_str(),
    ]);
    let (out, err) =
        run_within(Tool::Ptxas, ptxas, &args, PATIENCE).map_err(|e| dir.relative(e))?;
    let cubin =
        std::fs::read(&bin).map_err(|e| ToolError::Io(format!("cannot read cubin: {e}")))?;
    Ok((cubin, format!("{err}{out}")))
}

/// The SASS of a cubin, with every function labelled (`nvdisasm -c`).
pub fn disassemble(cubin: &[u8]) -> Result<String, ToolError> {
    let dir = Scratch::new()?;
    let bin = dir.0.join("kernel.cubin");
    std::fs::write(&bin, cubin).map_err(|e| ToolError::Io(format!("cannot write cubin: {e}")))?;
    run(Tool::Nvdisasm, &["-c".as_ref(), bin.as_os_str()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_that_hangs_is_stopped_and_one_that_writes_much_is_read_whole() {
        let sh = Path::new("/bin/sh");
        let args = |s: &'static str| ["-c".as_ref(), s.as_ref()];
        let t0 = Instant::now();
        let hung = run_within(
            Tool::Nvdisasm,
            sh,
            &args("sleep 30"),
            Duration::from_millis(200),
        );
        assert!(t0.elapsed() < Duration::from_secs(10));
        let Err(ToolError::Io(why)) = hung else {
            panic!("{hung:?}")
        };
        assert_eq!(why, "nvdisasm ran over 200ms and was stopped");
        // Over a pipe's 64 KiB on each stream: both are read while the tool runs.
        let much = "head -c 300000 /dev/zero; head -c 300000 /dev/zero >&2";
        let (out, err) = run_within(Tool::Ptxas, sh, &args(much), Duration::from_secs(60)).unwrap();
        assert_eq!((out.len(), err.len()), (300_000, 300_000));
        let failed = run_within(Tool::Ptxas, sh, &args("echo bad >&2; exit 3"), PATIENCE);
        let Err(ToolError::Failed { log, .. }) = failed else {
            panic!("{failed:?}")
        };
        assert_eq!(log.trim(), "bad");
    }
}
