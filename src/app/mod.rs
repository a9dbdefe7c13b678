//! Wiring: runs a parsed command line and maps its result to an exit code.

use crate::cli::{BenchTarget, CampaignCommand, Cli, Command};
use clap::Parser;

mod agree;
mod bar;
mod bench_cpu;
mod bench_gpu;
mod bench_model;
mod bench_plan;
mod bench_shapes;
mod bounded_check;
mod campaign;
mod campaign_child;
mod campaign_cubins;
mod campaign_pack;
mod campaign_replay;
mod campaign_resume;
mod campaign_run;
mod campaign_shard;
mod campaign_slurm;
mod campaign_table;
mod campaign_tests;
mod check;
mod check_cat;
mod check_herd;
mod check_verdict;
mod diff;
mod emit;
mod expect;
mod gen;
mod interrupt;
mod list;
mod merge;
mod model_diff;
mod ordered;
mod report;
mod run;
mod run_model;
mod sass;
mod sass_matrix;
mod schema;
mod show;
mod stress;
mod suite;
mod toolchains;
mod tune;
mod tune_measure;

/// How a command ended, as the process exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Everything went as asked.
    Success = 0,
    /// A finding: something the user must look at (a model violation observed, a regression).
    Finding = 1,
    /// An error: bad input, a missing tool or driver, a failed write.
    Error = 2,
    /// Stopped early (a stop signal) with no finding and no error: the results are partial.
    Partial = 3,
    /// The device became unusable (a test timed out or met a sticky device error); the tests
    /// after it did not run and must run in a fresh process.
    DeviceLost = 4,
}

/// An error that ends a command, already phrased for the user.
pub type AppError = Box<dyn std::error::Error>;

/// Parses the command line, runs the command, and returns the exit code.
pub fn main() -> i32 {
    interrupt::default_sigpipe();
    let cli = Cli::parse();
    match run(cli) {
        Ok(exit) => exit as i32,
        Err(e) => {
            eprintln!("ptx-litmus: error: {e}");
            Exit::Error as i32
        }
    }
}

/// Runs one command.
pub fn run(cli: Cli) -> Result<Exit, AppError> {
    match cli.command {
        Command::List(args) => list::run(&args),
        Command::Show(args) => show::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Merge(args) => merge::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Check(args) if args.model.is_some() => check_cat::run(&args),
        Command::Check(args) if args.expect.is_some() => expect::run(&args),
        Command::Check(args) if args.verdict_only => check_verdict::run(&args),
        Command::Check(args) => check::run(&args),
        Command::ModelDiff(args) => model_diff::run(&args),
        Command::Bench(args) => match args.target {
            BenchTarget::Cpu(a) => bench_cpu::run(&a),
            BenchTarget::Gpu(a) => bench_gpu::run(&a),
            BenchTarget::Model(a) => bench_model::run(&a),
        },
        Command::Tune(args) => tune::run(&args),
        Command::Emit(args) => emit::run(&args),
        Command::Sass(args) if args.ptxas.is_some() || args.diff.is_some() => {
            sass_matrix::run(&args)
        }
        Command::Sass(args) => sass::run(&args),
        Command::Toolchains(args) => toolchains::run(&args),
        Command::Gen(args) => gen::run(&args),
        Command::Agree(args) => agree::run(&args),
        Command::Schema(args) => schema::run(&args),
        Command::Campaign(c) => match c {
            CampaignCommand::Run(a) => campaign_run::run(&a),
            CampaignCommand::Status(a) => campaign::status(&a),
            CampaignCommand::Table(a) => campaign_table::table(&a),
            CampaignCommand::Unpack(a) => campaign_pack::unpack(&a),
            CampaignCommand::Machine(a) => campaign::machine(&a),
            CampaignCommand::Submit(a) => campaign_slurm::submit(&a),
            CampaignCommand::Task(a) => campaign_shard::task(&a),
            CampaignCommand::Collect(a) => campaign_slurm::collect(&a),
        },
    }
}

/// `-o key=value` options parsed for `backend`, one error for a bad one before anything runs.
pub fn backend_options(
    backend: crate::harness::Backend,
    options: &[String],
) -> Result<crate::harness::Options, AppError> {
    crate::harness::Options::parse(backend, &options_map(options)?)
        .map_err(|e| format!("-o: {e}").into())
}

/// Backend options from repeated `-o key=value` flags (a bare `key` means `key=true`).
pub fn options_map(
    options: &[String],
) -> Result<std::collections::BTreeMap<String, String>, AppError> {
    let mut out = std::collections::BTreeMap::new();
    for o in options {
        let (k, v) = o.split_once('=').unwrap_or((o.as_str(), "true"));
        if k.is_empty() {
            return Err(format!("option `{o}`: expected KEY=VALUE").into());
        }
        out.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(out)
}
