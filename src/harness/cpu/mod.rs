//! The CPU backend: runs a test's threads as OS threads with Rust atomics, many instances per
//! round, and counts the final states in the same [`Histogram`] the GPU backend fills.
//!
//! # Mapping
//!
//! | PTX | Rust |
//! |---|---|
//! | `ld`/`st` `.weak`, `.relaxed`, `.volatile` | `load`/`store(Relaxed)` |
//! | `ld.acquire` / `st.release` | `load(Acquire)` / `store(Release)` |
//! | `atom`/`red` `.sem` | `fetch_*`/`swap`/`compare_exchange`/`fetch_update` with `.sem`'s ordering |
//! | `fence.sc`, `membar.*` | `fence(SeqCst)` |
//! | `fence.acq_rel`, `fence.acquire`, `fence.release` | `fence(AcqRel/Acquire/Release)` |
//! | `bar.cta.sync` / `bar.cta.arrive` | publish id, count, occurrence: `store(Release)`; a `sync` waits for each possible partner's publication with `load(Acquire)` |
//! | `bar.cta.red.{popc,and,or}` | as `bar.cta.sync`, also publishing the predicate; the result reduces the predicates of the `bar.cta.red`s met |
//! | `barrier.cluster.arrive{,.relaxed}` / `.wait` | the `k`-th arrival: `store(Release/Relaxed)`; the `k`-th wait reads the `k`-th arrival of each other role of the cluster with `load(Acquire)` |
//!
//! Scopes are ignored (every operation behaves as `.sys`). A test with aliases or proxies runs
//! as its resolved form (aliases as their target, proxies generic, proxy fences dropped) only
//! when the model allows no more for it than for the test itself ([`resolve`]).
//! Barriers inside loops are refused with a reason ([`RunError::Unsupported`]), never
//! approximated.
//!
//! # Why everything the CPU shows is allowed by PTX (summary of `docs/cpu-backend.md`)
//!
//! Each memory instruction is one atomic operation, executed in program order by an
//! interpreter that the compiler cannot reorder across (the next instruction is data). So an
//! observed execution is an execution of the hardware's own model (x86-TSO on x86-64) of the
//! same program with every access a full-width atomic, every scope `.sys`, every weak access
//! relaxed. Take PTX's coherence order to be the hardware's (total) one. Then every axiom holds:
//! `sc_per_location` and `coherence` because the hardware is coherent for all accesses (a
//! stronger property, over more pairs); `atomicity` because RMWs are locked instructions;
//! `no_thin_air` because hardware reads only return values already written; `fence_sc` and
//! `causality` because x86-TSO only reorders a store with a later load, and each PTX
//! synchronisation source (release/acquire patterns, `fence.sc`, barriers) is realised by a
//! store buffer drain or TSO's ordering of the remaining pairs (a barrier's by a store the
//! partner waits to read). Ignoring scopes and weak accesses only makes more pairs morally
//! strong, which removes executions, never adds one.
//! Hence a forbidden outcome observed on the CPU is a bug in this mapping, in the model
//! checker, or in the harness; `run` names the test and outcome.

mod barrier_plan;
mod collect;
mod exec;
mod layout;
pub mod link;
pub mod load;
mod options;
mod program;
mod provenance;
pub mod resolve;
mod rounds;
mod wait;

pub use options::{sync_name, CpuOptions, Sync};
pub use provenance::{cores, provenance};

use crate::harness::notes;
use crate::harness::BackendOptions;
use crate::harness::{Control, Counts, Progress, RunError, RunInfo, RunParams, TestRun};
use crate::litmus::ast::Test;
use layout::Layout;

/// Whether the CPU backend can run `test`, and if not, why.
pub fn supports(test: &Test) -> Result<(), RunError> {
    let layout = Layout::new(test.locations.len(), false);
    program::compile(test, &layout)
        .map(|_| ())
        .map_err(RunError::Unsupported)
}

/// The most memory one test's round may take: a large `-o batch` on a test with many
/// locations or observed registers is refused rather than allowed to exhaust the machine.
pub const MAX_ROUND_BYTES: usize = 2 << 30;

/// Refuses a batch whose round would need more than [`MAX_ROUND_BYTES`].
fn check_memory(prog: &program::Program, layout: &Layout, batch: usize) -> Result<(), RunError> {
    let per_instance = layout.block_words
        + prog.barrier_slots * program::SLOT_WORDS
        + prog
            .roles
            .iter()
            .map(|r| r.observed.len() + 1)
            .sum::<usize>();
    let bytes = per_instance.saturating_mul(8).saturating_mul(batch);
    if bytes > MAX_ROUND_BYTES {
        return Err(RunError::Failed(format!(
            "batch={batch} needs {:.1} GiB per round for this test (at most {} GiB); use a \
             smaller -o batch",
            bytes as f64 / f64::from(1u32 << 30),
            MAX_ROUND_BYTES >> 30
        )));
    }
    Ok(())
}

/// The provenance of a test's run: the machine's, with its threads, the cores' round trip
/// measured before it, and the cores' worth of CPU it got.
fn test_provenance(
    threads: usize,
    round_trip: Option<f64>,
    totals: &rounds::Totals,
) -> std::collections::BTreeMap<String, String> {
    let mut p = provenance();
    p.insert(notes::THREADS.into(), threads.to_string());
    if round_trip.is_some() {
        p.insert(notes::ROUND_TRIP_NS.into(), link::describe(round_trip));
    }
    // Cores' worth of CPU the process got while the test ran: the weak rate is for this much.
    if let Some(cpu_s) = totals.cpu_s.filter(|_| totals.elapsed_s > 0.0) {
        let used = cpu_s / totals.elapsed_s;
        p.insert(notes::CPU_USED.into(), format!("{used:.2}"));
    }
    p
}

/// Runs `test` on the CPU under `params` (options: see [`CpuOptions`]).
///
/// The result satisfies `histogram.total() + info.skipped == info.instances`. When
/// `control.cancel` is set the run stops after the current round and `info.partial` is true.
pub fn run(test: &Test, params: &RunParams, control: Control<'_>) -> Result<TestRun, RunError> {
    let BackendOptions::Cpu(opts) = params.options.backend else {
        return Err(RunError::Failed(
            "the CPU backend was given the CUDA backend's options".into(),
        ));
    };
    let layout = Layout::new(test.locations.len(), opts.pack);
    let prog = program::compile(test, &layout).map_err(RunError::Unsupported)?;
    if prog.roles.is_empty() {
        return Err(RunError::Unsupported("the test has no threads".into()));
    }
    check_memory(&prog, &layout, opts.batch)?;
    let cores = cores();
    let sync = opts.sync_for(prog.roles.len(), cores);
    let plan = rounds::Plan {
        batch: opts.batch,
        layout,
        sync,
        budget: params.budget,
        seed: params.seed,
    };
    // Before the roles start, so that the probe's threads do not compete with them.
    let round_trip = (prog.roles.len() > 1).then(link::round_trip_ns).flatten();
    let progress = control.progress;
    let totals = rounds::run(
        &prog,
        &plan,
        control.cancel,
        &mut |instances, elapsed_s, h| {
            progress(&Progress {
                instances,
                elapsed_s,
                histogram: h,
            })
        },
    );
    let mut resolved = params.clone();
    resolved.options.backend = BackendOptions::Cpu(CpuOptions {
        sync: Some(sync),
        ..opts
    });
    let provenance = test_provenance(prog.roles.len(), round_trip, &totals);
    Ok(TestRun {
        histogram: totals.histogram,
        parts: totals.parts,
        info: RunInfo::new(
            "cpu",
            Counts {
                instances: totals.instances,
                skipped: totals.skipped,
                elapsed_s: totals.elapsed_s,
                partial: totals.partial,
            },
            resolved,
            provenance,
        ),
    })
}
