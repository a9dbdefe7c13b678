//! The SASS check ("optcheck"): assemble a kernel with ptxas, disassemble it, and confirm that
//! every role's memory operations, fences and barriers survive in program order with the
//! strength and scope the PTX asked for. Works with no GPU: the tools come from PyPI.

pub mod check;
pub mod cubin;
pub mod deviation;
pub mod disasm;
pub mod matrix;
pub mod matrix_html;
pub mod matrix_report;
pub mod shrink;
pub mod signature;
pub mod tools;
pub mod usage;

use crate::codegen::Kernel;
use check::{check_role, RoleCheck};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
pub use tools::{Tool, ToolError};

/// The result of checking one kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelCheck {
    /// The test's name.
    pub test: String,
    /// One verdict per role.
    pub roles: Vec<RoleCheck>,
    /// Problems of the software barrier functions, when the kernel has them.
    #[serde(default)]
    pub fragment_errors: Vec<String>,
}

impl KernelCheck {
    /// Whether every role passed.
    pub fn ok(&self) -> bool {
        self.roles.iter().all(|r| r.error.is_none()) && self.fragment_errors.is_empty()
    }

    /// The problems found, one line each.
    pub fn errors(&self) -> Vec<String> {
        self.roles
            .iter()
            .filter_map(|r| r.error.clone())
            .chain(self.fragment_errors.iter().cloned())
            .collect()
    }
}

/// Checks `kernel`'s roles against a disassembly (`nvdisasm -c` text).
pub fn check_sass(kernel: &Kernel, sass: &str) -> KernelCheck {
    check_functions(kernel, &disasm::functions(sass), "")
}

/// Checks `kernel`'s roles against parsed functions whose names carry `prefix`.
pub(crate) fn check_functions(
    kernel: &Kernel,
    funcs: &BTreeMap<String, Vec<disasm::SassInstr>>,
    prefix: &str,
) -> KernelCheck {
    KernelCheck {
        test: kernel.layout.test.clone(),
        roles: kernel
            .roles
            .iter()
            .map(|r| {
                let name = format!("{prefix}{}", r.func);
                check_role(r, funcs.get(&name).map(Vec::as_slice))
            })
            .collect(),
        fragment_errors: soft_barrier_errors(kernel, funcs, prefix),
    }
}

/// Checks the software barrier functions a kernel calls (ptxas drops the ones it does not).
fn soft_barrier_errors(
    kernel: &Kernel,
    funcs: &BTreeMap<String, Vec<disasm::SassInstr>>,
    prefix: &str,
) -> Vec<String> {
    let soft = &kernel.layout.shape.soft_barriers;
    [(false, "litmus_soft_sync"), (true, "litmus_soft_arrive")]
        .into_iter()
        .filter(|(arrive, _)| soft.iter().any(|b| b.arrive == *arrive))
        .filter_map(|(arrive, f)| {
            let name = format!("{prefix}{f}");
            check::check_soft_barrier(f, arrive, funcs.get(&name).map(Vec::as_slice))
        })
        .collect()
}

/// Kernels assembled together by [`check_many`]: the tools' start-up, not the kernels,
/// dominates the cost of one call.
pub const BATCH: usize = 24;

/// One PTX module holding several kernels, each one's symbols prefixed `b<i>_` (every symbol
/// of a generated kernel starts with `litmus_`).
pub fn batch_module(kernels: &[&Kernel]) -> String {
    let version = kernels
        .iter()
        .map(|k| k.ptx_version)
        .max()
        .unwrap_or((8, 0));
    let mut out = format!(
        ".version {}.{}\n.target sm_90\n.address_size 64\n",
        version.0, version.1
    );
    for (i, k) in kernels.iter().enumerate() {
        for line in k.ptx.lines() {
            let t = line.trim_start();
            if t.starts_with(".version")
                || t.starts_with(".target")
                || t.starts_with(".address_size")
            {
                continue;
            }
            out.push_str(&line.replace("litmus_", &format!("b{i}_litmus_")));
            out.push('\n');
        }
    }
    out
}

/// Checks many kernels, assembling them [`BATCH`] at a time on all cores; a batch that does
/// not assemble is retried kernel by kernel so that the error names its kernel.
pub fn check_many(kernels: &[&Kernel], arch: &str) -> Vec<Result<KernelCheck, ToolError>> {
    check_many_counted(kernels, arch, |_| ())
}

/// [`check_many`], calling `done` with the number of kernels of each batch as it ends (for a
/// progress bar).
pub fn check_many_counted(
    kernels: &[&Kernel],
    arch: &str,
    done: impl Fn(u64) + Sync,
) -> Vec<Result<KernelCheck, ToolError>> {
    let batches: Vec<&[&Kernel]> = kernels.chunks(BATCH).collect();
    let results = parallel_map(&batches, |batch| {
        let checked = check_batch(batch, arch);
        done(batch.len() as u64);
        checked
    });
    results.into_iter().flatten().collect()
}

/// One batch of [`check_many`].
fn check_batch(batch: &[&Kernel], arch: &str) -> Vec<Result<KernelCheck, ToolError>> {
    let joint =
        tools::assemble(&batch_module(batch), arch).and_then(|cubin| tools::disassemble(&cubin));
    match joint {
        Ok(sass) => {
            let funcs = disasm::functions(&sass);
            batch
                .iter()
                .enumerate()
                .map(|(i, k)| Ok(check_functions(k, &funcs, &format!("b{i}_"))))
                .collect()
        }
        Err(_) => batch.iter().map(|k| check_kernel(k, arch)).collect(),
    }
}

/// Assembles `ptx` for `arch` and checks it against `kernel`'s expectations (`ptx` is normally
/// `kernel.ptx`; a different text lets a test plant a fault).
pub fn check_ptx(kernel: &Kernel, ptx: &str, arch: &str) -> Result<KernelCheck, ToolError> {
    let cubin = tools::assemble(ptx, arch)?;
    let sass = tools::disassemble(&cubin)?;
    Ok(check_sass(kernel, &sass))
}

/// Assembles and checks a kernel.
pub fn check_kernel(kernel: &Kernel, arch: &str) -> Result<KernelCheck, ToolError> {
    check_ptx(kernel, &kernel.ptx, arch)
}

/// Runs `f` over `items` on all cores, keeping the order of the results.
pub fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(items.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let slots: Vec<std::sync::Mutex<&mut Option<R>>> =
        out.iter_mut().map(std::sync::Mutex::new).collect();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= items.len() {
                    break;
                }
                let r = f(&items[i]);
                **slots[i]
                    .lock()
                    .expect("no worker panics while holding a slot") = Some(r);
            });
        }
    });
    drop(slots);
    out.into_iter()
        .map(|r| r.expect("every item was processed"))
        .collect()
}

/// PTX mnemonic → the SASS sequences seen for it, over many checks.
pub fn mapping_table(checks: &[KernelCheck]) -> BTreeMap<String, BTreeSet<String>> {
    let mut table: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for c in checks {
        for r in &c.roles {
            for m in &r.mappings {
                let sass: Vec<String> = m
                    .sass
                    .iter()
                    .map(|s| s.split(" [").next().unwrap_or(s).to_string())
                    .collect();
                let seq = if sass.is_empty() {
                    "(no instruction)".to_string()
                } else {
                    sass.join(" + ")
                };
                table.entry(m.mnemonic.clone()).or_default().insert(seq);
            }
        }
    }
    table
}
