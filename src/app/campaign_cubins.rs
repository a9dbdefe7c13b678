//! Whether a compiler step's carried cubins are its kernels'. A cubin is found by the hash of
//! the PTX it was made of, so cubins prebuilt before a change to the code generator match no
//! kernel of today's: every test of the step would be refused on the GPU machine, a step's
//! window time spent for nothing. The campaign asks this before starting such a step.

use crate::cli::{Cli, Command};
use crate::codegen;
use crate::toolchain::store::Installed;
use clap::Parser;

/// `Some(why)` when `store` has no ptxas and none of the kernels of the `run` step with
/// arguments `args` has a cubin in it; `None` when one has, or the question does not arise
/// (a ptxas is there, or the step's tests or flags do not read: the step's own run says so).
pub fn stale(args: &[String], store: &Installed) -> Option<String> {
    if store.has_ptxas() {
        return None;
    }
    let words = ["ptx-litmus", "run"].into_iter().map(String::from);
    let Command::Run(run) = Cli::try_parse_from(words.chain(args.iter().cloned()))
        .ok()?
        .command
    else {
        return None;
    };
    let stress = super::stress::resolve(&run.stress).ok()?;
    let kernels: Vec<codegen::Kernel> = super::suite::load(&run.paths)
        .ok()?
        .into_iter()
        .filter_map(|(_, test)| codegen::build(&test.ok()?, &stress).ok())
        .collect();
    if kernels.is_empty() || kernels.iter().any(|k| store.has_cubin_of(&k.ptx)) {
        return None;
    }
    Some(format!(
        "its carried cubins are none of its {} kernels' (made from other PTX, as before a \
         change to the code generator): run `ptx-litmus toolchains prebuild {} ... --prune` \
         where ptxas is, and carry them again",
        kernels.len(),
        store.version
    ))
}
