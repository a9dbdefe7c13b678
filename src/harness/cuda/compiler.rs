//! Which compiler turns a kernel's PTX into the machine code that runs: the driver's JIT (the
//! default), or a ptxas of the toolchain store (`compiler=ptxas:12.4`), whose cubin is loaded
//! as it is: the one `toolchains prebuild` left in the store when there is one (a GPU machine
//! may have no ptxas), else one made now. Everything here but [`load`] is pure or runs only ptxas, so it is tested without
//! a GPU.

use super::module::Module;
use crate::sass::matrix::lower_isa;
use crate::sass::{tools, ToolError};
use crate::toolchain::{store, Installed, Spec};
use std::fmt;
use std::str::FromStr;

/// The compiler of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Compiler {
    /// The driver compiles the PTX when the module is loaded.
    #[default]
    Jit,
    /// A ptxas of the toolchain store compiles it beforehand.
    Ptxas(Spec),
}

impl FromStr for Compiler {
    type Err = String;

    fn from_str(s: &str) -> Result<Compiler, String> {
        if s == "jit" {
            return Ok(Compiler::Jit);
        }
        match s.strip_prefix("ptxas:").map(str::parse::<Spec>) {
            Some(Ok(Spec::All)) | None => Err(format!(
                "compiler `{s}`: expected `jit` or `ptxas:VERSION` (12.4, 12.4.131, ...)"
            )),
            Some(Ok(spec)) => Ok(Compiler::Ptxas(spec)),
            Some(Err(e)) => Err(format!("compiler `{s}`: {e}")),
        }
    }
}

impl fmt::Display for Compiler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Compiler::Jit => f.write_str("jit"),
            Compiler::Ptxas(s) => write!(f, "ptxas:{s}"),
        }
    }
}

impl Compiler {
    /// The installed ptxas this names (`None` for the JIT), or why there is none.
    pub fn resolve(&self) -> Result<Option<Installed>, String> {
        match self {
            Compiler::Jit => Ok(None),
            Compiler::Ptxas(spec) => {
                let found = store::resolve(&store::root(), std::slice::from_ref(spec))?;
                Ok(found.into_iter().last())
            }
        }
    }
}

/// The SASS architecture of a compute capability: (9, 0) → `sm_90`, (10, 0) → `sm_100`.
pub fn arch_of(compute: (i32, i32)) -> String {
    format!("sm_{}{}", compute.0, compute.1)
}

/// Why ptxas made no cubin of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfflineError {
    /// Whether ptxas ran and refused the PTX (an instruction or ISA newer than it accepts):
    /// a fact of that version, not a failure of the tool.
    pub refused: bool,
    /// The message, naming the version and architecture.
    pub message: String,
}

impl fmt::Display for OfflineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A cubin made offline by `ptxas` for `arch`, with `.version` lowered once when that ptxas
/// names an older PTX ISA it accepts; returns the cubin and the ISA it was lowered to.
pub fn offline_cubin(
    ptxas: &Installed,
    ptx: &str,
    arch: &str,
) -> Result<(Vec<u8>, Option<String>), OfflineError> {
    let describe = |e: ToolError| OfflineError {
        refused: matches!(e, ToolError::Failed { .. }),
        message: format!("ptxas {} for {arch}: {e}", ptxas.version),
    };
    match tools::assemble_with(&ptxas.ptxas(), ptx, arch) {
        Ok(cubin) => Ok((cubin, None)),
        Err(ToolError::Failed { log, .. }) if lower_isa(ptx, &log).is_some() => {
            let (lowered, v) = lower_isa(ptx, &log).expect("checked above");
            let cubin = tools::assemble_with(&ptxas.ptxas(), &lowered, arch).map_err(describe)?;
            Ok((cubin, Some(v)))
        }
        Err(e) => Err(describe(e)),
    }
}

/// Compiles and loads `ptx` with `compiler` for a device of `compute`; returns the module and
/// the facts to record (`kernel.compiler`, and `kernel.ptx_isa_lowered` when it was).
pub fn load(
    ptx: &str,
    test: &str,
    compute: (i32, i32),
    compiler: &Compiler,
) -> Result<(Module, Vec<(String, String)>), String> {
    let Some(ptxas) = compiler.resolve()? else {
        let m = Module::load(ptx, test)?;
        return Ok((m, vec![("kernel.compiler".into(), "driver JIT".into())]));
    };
    let arch = arch_of(compute);
    let prebuilt = ptxas.cubin_path(&arch, ptx);
    if prebuilt.is_file() {
        let cubin = std::fs::read(&prebuilt).map_err(|e| format!("{}: {e}", prebuilt.display()))?;
        let label = format!("ptxas {} (prebuilt)", ptxas.version);
        return Ok((
            Module::load_cubin(cubin, test)?,
            vec![("kernel.compiler".into(), label)],
        ));
    }
    if !ptxas.has_ptxas() {
        return Err(format!(
            "the store has no ptxas {} and no cubin of {test} prebuilt for {arch}: run \
             `ptx-litmus toolchains prebuild {} PATHS --stress PRESET --arch {arch}` where it is",
            ptxas.version, ptxas.version
        ));
    }
    let (cubin, lowered) = offline_cubin(&ptxas, ptx, &arch).map_err(|e| e.message)?;
    let mut facts = vec![(
        "kernel.compiler".to_string(),
        format!("ptxas {}", ptxas.version),
    )];
    if let Some(v) = lowered {
        facts.push(("kernel.ptx_isa_lowered".into(), v));
    }
    Ok((Module::load_cubin(cubin, test)?, facts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compilers_parse_and_print() {
        assert_eq!("jit".parse::<Compiler>(), Ok(Compiler::Jit));
        let c: Compiler = "ptxas:12.4".parse().unwrap();
        assert_eq!(c, Compiler::Ptxas(Spec::Prefix(vec![12, 4])));
        assert_eq!(c.to_string(), "ptxas:12.4");
        for bad in ["ptxas:all", "ptxas", "nvcc:12", "ptxas:12.x", ""] {
            assert!(bad.parse::<Compiler>().is_err(), "{bad}");
        }
    }

    #[test]
    fn architectures_follow_the_compute_capability() {
        assert_eq!(arch_of((9, 0)), "sm_90");
        assert_eq!(arch_of((10, 0)), "sm_100");
        assert_eq!(arch_of((12, 0)), "sm_120");
    }
}
