//! Command-line types (clap). Only declarations live here; `app` does the work.

use crate::codegen::{Stress, DEFAULT_PRESET};
use crate::harness::Backend;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// The default bound of one test's model check, in seconds: far above any published test
/// (the slowest takes milliseconds, 8-thread generated ones seconds).
pub const MODEL_TIMEOUT_S: f64 = 300.0;

/// Tests NVIDIA GPUs against the PTX memory consistency model.
///
/// Litmus tests (the Dat3M PTX dialect, see litmus/README.md) are checked against the PTX model
/// on the CPU, compiled to PTX kernels, and run on the GPU (or on the CPU's own threads); the
/// observed outcomes are judged against what the model allows.
///
/// Exit codes: 0 success, 1 a finding (such as a model violation observed; it comes before the
/// others), 2 an error, 3 partial (stopped early by a signal, the results so far kept; or shards
/// left to rerun), 4 the GPU became unusable (the tests after it left for a fresh process).
#[derive(Debug, Parser)]
#[command(name = "ptx-litmus", version, about, long_about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the litmus tests found under PATHS, with thread count, scopes and features.
    ///
    /// One line per test: path, name, thread count, the scopes its operations synchronise at,
    /// and the features it uses (fence.sc, atom, bar, proxy, alias, cluster, shared, branch,
    /// dep, ...), then a count line. A file that does not parse is reported on stderr as
    /// `path:line:col: found X, expected Y` and the listing goes on; the exit code is then 2.
    List(ListArgs),
    /// Print a test in canonical form, followed by its hash.
    ///
    /// The canonical form spells every instruction in full (`atom.add` as `atom.relaxed.add`,
    /// `bar.sync` as `bar.cta.sync`), declares every location and aligns the thread columns; it
    /// parses back to the same test. The last line, `(* hash H *)`, is a comment holding the
    /// test hash: 16 hex digits that ignore formatting, comments, name and doc strings.
    Show(ShowArgs),
    /// Render report.html, report.md and plots/*.png for a result set.
    Report(ReportArgs),
    /// Compare result sets: two side by side, or N as a matrix of tests × sets; exit 1 when
    /// a later set has a violation that the first did not.
    ///
    /// Weak rates are compared with the part of a run as the unit, or the whole run when a set
    /// merges repeated runs of a test (`merge`), so that the drift between runs of one setup is
    /// not called a change.
    Diff(DiffArgs),
    /// Combine result sets of one experiment (shards, repeated runs with any seeds or
    /// budgets) into one, summing each test's counts; each run's seed, budget and provenance
    /// is kept in run.json's `merged_parts`. Sets with a different preset, incantations or
    /// backend options are different experiments and are refused (compare them with `diff`).
    ///
    /// Each test keeps which of its parts came from which run, so `diff` of merged sets compares
    /// runs; `merge` prints how far the runs scatter against the parts of one run.
    Merge(MergeArgs),
    /// Run tests on a backend, judge the outcomes against the PTX model, write a result set.
    Run(RunArgs),
    /// Measure throughput (prints a table; no result set).
    Bench(BenchArgs),
    /// Search for the configuration that shows the most weak outcomes per second, per shape
    /// family, and write it as a tuned file.
    ///
    /// On the GPU the stress incantations are searched (docs/stress.md), on the CPU the
    /// backend's own options (sync, batch, pack). The search measures the baseline (the
    /// `stress` preset, or the CPU's defaults), then --random configurations drawn from
    /// --seed, then --local perturbations of the best few; each configuration runs in chunks
    /// until its 99 % interval of weak/s falls below the best one's lower bound, or
    /// --max-chunks. The baseline, its neighbours and the best few then race afresh, side by
    /// side, compared round by round; the winner is the one nearest the baseline that nothing
    /// beat by 10 %, so the baseline stays unless beaten on evidence. Writes
    /// FAMILY.stress (read by `run --stress tuned:FILE`) and FAMILY.search.json per family
    /// (docs/tune.md).
    Tune(TuneArgs),
    /// Compute the outcomes the PTX model allows for each test under PATHS.
    ///
    /// Per test, herd-style: the allowed states (each marked SC or weak), `Ok`/`No` for the
    /// quantified condition (as herd and the Dat3M CSVs mean it), positive/negative counts,
    /// whether an allowed state satisfies the condition's proposition (`Allowed`/`Forbidden`),
    /// candidate and consistent execution counts and the test hash. A test that does not parse
    /// or uses something the model cannot decide is reported and the batch goes on (exit 2).
    Check(CheckArgs),
    /// Compare the built-in checker with a cat model on seeded random tests, or on PATHS.
    ///
    /// Tests `0..N` of the random stream of SEED (2–4 threads over three CTAs; ld, st, fence,
    /// atom, red with every semantics and scope), or the tests under PATHS, are checked by
    /// both; prints how many agree (same allowed outcomes) and the disagreements by class:
    /// which side allows more, and the axiom or check that excludes the outcome on the other
    /// side. Exit 1 on a disagreement, 2 when a test under PATHS does not parse (it is named,
    /// and the rest are compared).
    ModelDiff(ModelDiffArgs),
    /// Generate the PTX kernel of a test (print it, or write it to a file).
    Emit(EmitArgs),
    /// Assemble tests' kernels with ptxas, disassemble them, and check that every memory
    /// operation and fence of each role survives in order with its strength and scope.
    Sass(SassArgs),
    /// Install or list ptxas versions in the toolchain store (`.tools/`, or
    /// $PTX_LITMUS_TOOLCHAINS), for `sass --ptxas`.
    Toolchains(ToolchainsArgs),
    /// Generate litmus tests from cycles (diy-style), from a family file, or from the random
    /// stream of `model-diff`.
    ///
    /// With FAMILIES (family.txt files, or folders searched for them; default
    /// litmus/generated), writes each family's tests into its folder (or --out/<family>),
    /// removing `.litmus` files the family no longer holds; --check compares instead and exits
    /// 1 on any difference. With --cycle, prints the tests of one cycle pattern. With
    /// --enumerate SIZE, prints (or with --out writes) the tests of every critical cycle of up
    /// to SIZE edges over the --relax and --safe edges, as diy7's -size does. With --tests N,
    /// writes random tests 0..N of --seed into --out. The cycle language and family files are
    /// described in docs/generated.md, the random stream in docs/model.md.
    Gen(GenArgs),
    /// Compare the model's verdicts with a published cuda-litmus results.csv, row by row.
    ///
    /// Every test under PATHS (default litmus/generated) named like a row of CSV is checked;
    /// the condition's outcome Allowed is compared with INSTANCE, Forbidden with UNSAT in the
    /// chosen column. Prints a table per kernel and every disagreement; exits 1 when a row of
    /// the CSV has no test.
    Agree(AgreeArgs),
    /// Print the JSON Schema of a result set's files (run.json, tests/*.json), as checked in
    /// at docs/result-set.schema.json, or validate result sets against it.
    Schema(SchemaArgs),
    /// Run, report on and unpack a hardware campaign: the steps of a manifest, run within a
    /// time budget on a GPU machine, each brought back as one archive.
    #[command(subcommand)]
    Campaign(CampaignCommand),
}

/// Arguments of `toolchains`.
#[derive(Debug, Args)]
pub struct ToolchainsArgs {
    /// What to do with the store.
    #[command(subcommand)]
    pub action: ToolchainsAction,
}

/// What `toolchains` does.
#[derive(Debug, Subcommand)]
pub enum ToolchainsAction {
    /// The installed versions: version, ptxas path, the wheel each came from.
    List,
    /// Download each version's nvcc wheel from PyPI (pip) and keep its ptxas.
    Install {
        /// Exact builds (11.8.89, 12.4.131), minor releases (12.6: its newest build on PyPI),
        /// or `all` (the newest build of every minor release from 11.8, the first with sm_90).
        #[arg(required = true)]
        versions: Vec<String>,
    },
    /// List the builds PyPI publishes (pip index versions): the newest of each minor release
    /// from 11.8, whether it is installed, and the others.
    Available,
    /// Print the ptxas path of each installed version a specification selects (`12.4`, `all`).
    Path {
        /// Comma-separated specifications.
        spec: String,
    },
    /// Assemble the tests' kernels with each selected version into the store (`cubins/`, and
    /// the PTX of each in `ptx/`), so that `run --compiler ptxas:VERSION` works where the
    /// store's `cubins/` travel without its ptxas.
    Prebuild {
        /// Comma-separated specifications (`12.4,13.0`, `all`).
        spec: String,
        /// Test files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The kernels' stress configuration.
        #[command(flatten)]
        stress: StressArgs,
        /// The GPU architecture.
        #[arg(long, default_value = "sm_90")]
        arch: String,
        /// Remove the version's other cubins for the architecture (older kernels'), so that
        /// only these kernels' travel.
        #[arg(long)]
        prune: bool,
    },
}

/// Arguments of `gen`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("pattern").args(["cycle", "enumerate"])))]
pub struct GenArgs {
    /// Family files, or folders searched recursively for `family.txt`.
    pub families: Vec<PathBuf>,
    /// Compare the generated tests with the files on disk instead of writing them.
    #[arg(long, conflicts_with = "pattern")]
    pub check: bool,
    /// Write each family into DIR/<family> instead of beside its family file; with --cycle
    /// or --enumerate, write the tests into DIR instead of printing them.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the tests of this cycle pattern (`PodWW Rfe {rlx|acq} PodRR Fre`) instead.
    #[arg(long, value_name = "PATTERN")]
    pub cycle: Option<String>,
    /// With --cycle: the shape's name in test names (default: the cycle's classic name, such
    /// as MP or IRIW, else its edges spelled out).
    #[arg(long, requires = "cycle")]
    pub shape: Option<String>,
    /// Print (or with --out write) the tests of every critical cycle of 2 to SIZE edges
    /// (at most 8) that uses a --relax edge and otherwise --safe ones.
    #[arg(long, value_name = "SIZE", requires = "relax")]
    pub enumerate: Option<String>,
    /// With --enumerate: the edges every cycle uses one of, space-separated (`PodWR
    /// Fence(sc)dWR`), each maybe with the annotation of the event it leaves (`acq:PodRR`).
    #[arg(long, value_name = "EDGES", requires = "enumerate")]
    pub relax: Option<String>,
    /// With --enumerate: the edges cycles may use besides, space-separated (`Rfe Fre Coe
    /// rel:Rfe`).
    #[arg(
        long,
        value_name = "EDGES",
        default_value = "Rfe Fre Coe",
        requires = "enumerate"
    )]
    pub safe: String,
    /// With --enumerate: the most threads in a cycle.
    #[arg(long, value_name = "N", default_value_t = 4, requires = "enumerate")]
    pub threads: usize,
    /// With --cycle or --enumerate: scopes, space-separated.
    #[arg(long, default_value = "gpu", requires = "pattern")]
    pub scope: String,
    /// With --cycle or --enumerate: placements, space-separated (samewarp samecta diffcta
    /// samecluster diffcluster TB_<groups> CL_<groups>).
    #[arg(long, default_value = "diffcta", requires = "pattern")]
    pub placement: String,
    /// With --cycle or --enumerate: memory spaces, space-separated (global shared).
    #[arg(long, default_value = "global", requires = "pattern")]
    pub space: String,
    /// Write random tests 0..N of the stream of --seed (those `model-diff` compares) into
    /// --out as `R<seed>-<index>.litmus`, for `run`, `sass` or another tool.
    #[arg(long, value_name = "N", requires = "out", conflicts_with_all = ["pattern", "check", "families"])]
    pub tests: Option<u64>,
    /// With --tests: the seed of the random stream.
    #[arg(long, default_value_t = 1, requires = "tests")]
    pub seed: u64,
    /// With --tests: use the barrier stream (`RB<seed>-<index>`, each test with one CTA's
    /// threads meeting at a CTA barrier).
    #[arg(long, requires = "tests")]
    pub barriers: bool,
    /// With --tests: use the proxy stream (`RP<seed>-<index>`, weak accesses through aliases
    /// and other proxies, and proxy fences).
    #[arg(long, requires = "tests", conflicts_with = "barriers")]
    pub proxies: bool,
}

/// Arguments of `agree`.
#[derive(Debug, Args)]
pub struct AgreeArgs {
    /// cuda-litmus's pldi26-output/results.csv (not part of this project: pass its path).
    pub csv: PathBuf,
    /// Test files or folders (default litmus/generated).
    pub paths: Vec<PathBuf>,
    /// The CSV column holding the verdict compared with.
    #[arg(long, default_value = "base")]
    pub column: String,
    /// Give up on a test whose check takes longer than this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = MODEL_TIMEOUT_S)]
    pub timeout: f64,
}

/// The `campaign` subcommands.
#[derive(Debug, Subcommand)]
pub enum CampaignCommand {
    /// Run the next steps not yet done (according to --results) within --budget, writing one
    /// archive per step and summary.txt into --out.
    ///
    /// Steps are taken in manifest order; one whose estimate does not fit what is left of the
    /// budget waits for the next window while shorter ones after it run. A `run` step an
    /// earlier window cut short resumes with only the tests it left on this GPU.
    ///
    /// A `run` step whose device is lost (a test timed out or met a sticky error) goes on with
    /// its remaining tests in a fresh process. A step is stopped (SIGTERM, then SIGKILL) when
    /// the budget runs out; what it finished is archived, marked incomplete.
    Run(CampaignRunArgs),
    /// Say, from the step records under --results, which steps are done and which come next,
    /// and plan the rest over windows of --budget.
    Status(CampaignStatusArgs),
    /// Print the README's Results tables in Markdown from the step records under --results:
    /// per machine, per shape and preset the median instances/s and the test with the most
    /// weak/s (beside cuda-litmus's published figures), then the bench step's tables.
    Table(CampaignTableArgs),
    /// Unpack step archives into --results/<machine>/<run>/ and render each result set's
    /// report.
    Unpack(CampaignUnpackArgs),
    /// Print the machine folder results of --backend go into (used by `campaign run`).
    #[command(hide = true)]
    Machine(CampaignMachineArgs),
    /// Submit a `run` step of the manifest to Slurm as a job array of --tasks shards (writes
    /// DIR/STEP.sbatch and runs sbatch; --dry-run only writes it).
    Submit(CampaignSubmitArgs),
    /// Run one shard of a step (what each array task runs): only the shard's tests not yet
    /// recorded in DIR, so a rerun of a complete shard does nothing and a preempted one
    /// resumes.
    Task(CampaignTaskArgs),
    /// Merge the shards of a submitted step into DIR/merged/STEP and render its report, or
    /// list the shards missing or incomplete with the command that reruns only those.
    Collect(CampaignCollectArgs),
}

/// Which step of which manifest, split how, kept where: what submit, task and collect share.
#[derive(Debug, Args)]
pub struct CampaignShards {
    /// The campaign manifest.
    #[arg(long, default_value = "campaign/manifest.txt")]
    pub manifest: PathBuf,
    /// The manifest's `run` step.
    #[arg(long)]
    pub step: String,
    /// Number of shards (array tasks).
    #[arg(long)]
    pub tasks: u32,
    /// The campaign folder on a file system every node sees.
    #[arg(long)]
    pub dir: PathBuf,
    /// The backend the tasks run on.
    #[arg(long, value_enum, default_value = "cuda")]
    pub backend: Backend,
}

/// Arguments of `campaign submit`.
#[derive(Debug, Args)]
pub struct CampaignSubmitArgs {
    /// The manifest, its step, the shard count, the shared folder and the backend.
    #[command(flatten)]
    pub shards: CampaignShards,
    /// Generic resources per task (default `gpu:1` on the cuda backend, none on the cpu one).
    #[arg(long)]
    pub gres: Option<String>,
    /// Further `#SBATCH` options, each as one argument (`--partition=gpu`, `--time=01:00:00`).
    #[arg(long = "sbatch", allow_hyphen_values = true)]
    pub sbatch: Vec<String>,
    /// Options for this submission only, given to sbatch (`--hold`).
    #[arg(long = "submit-option", allow_hyphen_values = true)]
    pub submit_options: Vec<String>,
    /// Write the batch script without submitting it.
    #[arg(long)]
    pub dry_run: bool,
}

/// Arguments of `campaign task`.
#[derive(Debug, Args)]
pub struct CampaignTaskArgs {
    /// The manifest, its step, the shard count, the shared folder and the backend.
    #[command(flatten)]
    pub shards: CampaignShards,
    /// Which shard, from 0 (`$SLURM_ARRAY_TASK_ID`).
    #[arg(long)]
    pub index: u32,
}

/// Arguments of `campaign collect`.
#[derive(Debug, Args)]
pub struct CampaignCollectArgs {
    /// The manifest, its step, the shard count, the shared folder and the backend.
    #[command(flatten)]
    pub shards: CampaignShards,
    /// First wait until this Slurm job has left the queue (`squeue`).
    #[arg(long)]
    pub wait: Option<String>,
    /// Longest wait, in seconds.
    #[arg(long, default_value_t = 3600.0)]
    pub wait_timeout: f64,
}

/// Arguments every campaign subcommand shares.
#[derive(Debug, Args)]
pub struct CampaignCommon {
    /// The campaign manifest.
    #[arg(long, default_value = "campaign/manifest.txt")]
    pub manifest: PathBuf,
    /// The results folder whose step records say what is done.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// The backend the steps run on.
    #[arg(long, value_enum, default_value = "cuda")]
    pub backend: Backend,
}

/// Arguments of `campaign run`.
#[derive(Debug, Args)]
pub struct CampaignRunArgs {
    /// The manifest, the results folder and the backend.
    #[command(flatten)]
    pub common: CampaignCommon,
    /// Wall-clock budget for everything: `540s`, `9m` or seconds.
    #[arg(long)]
    pub budget: String,
    /// Write the archives and summary.txt into this folder (created; must hold nothing else).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// How many files may come back from --out: 8, the device's limit, unless other files
    /// share the call's $OUT (`campaign/window.sh` keeps 2 for the smoke's).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(2..=8))]
    pub files: u16,
    /// Scratch folder for the steps' result sets, kept (default: a fresh one under the temp
    /// dir, removed at the end).
    #[arg(long)]
    pub work: Option<PathBuf>,
    /// Run only these steps (in manifest order), done or not: repeated, or a comma-separated
    /// list (`--only compiler-jit,compiler-jit-2`).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
}

/// Arguments of `campaign table`.
#[derive(Debug, Args)]
pub struct CampaignTableArgs {
    /// The manifest, the results folder and the backend.
    #[command(flatten)]
    pub common: CampaignCommon,
    /// The `run` steps whose latest complete result sets the shape table reads, one preset
    /// each, in the order their rows come.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "litmus-basic,litmus-interleave,litmus-stress"
    )]
    pub steps: Vec<String>,
    /// The step whose `bench-*.txt` tables follow.
    #[arg(long, default_value = "bench")]
    pub bench_step: String,
    /// The step whose tuned folder's search records give the Tuned table, last.
    #[arg(long, default_value = "tune")]
    pub tune_step: String,
}

/// Arguments of `campaign status`.
#[derive(Debug, Args)]
pub struct CampaignStatusArgs {
    /// The manifest, the results folder and the backend.
    #[command(flatten)]
    pub common: CampaignCommon,
    /// The budget of one window's `campaign run` (`480s`, `9m` or seconds): the steps still
    /// to do are planned over windows of it, as estimated.
    #[arg(long, default_value = "480s")]
    pub budget: String,
    /// Count only the steps done on hardware whose model contains this (`h100`, `h200`): what
    /// a `campaign run` on that GPU would do next (default: every model's steps count).
    #[arg(long, value_name = "MODEL")]
    pub hardware: Option<String>,
}

/// Arguments of `campaign unpack`.
#[derive(Debug, Args)]
pub struct CampaignUnpackArgs {
    /// Step archives (`STEP.tar` or `STEP.tar.gz`) written by `campaign run`.
    #[arg(required = true)]
    pub archives: Vec<PathBuf>,
    /// The results folder to unpack into.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Overwrite a result folder that already exists.
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `campaign machine`.
#[derive(Debug, Args)]
pub struct CampaignMachineArgs {
    /// The backend.
    #[arg(long, value_enum, default_value = "cuda")]
    pub backend: Backend,
    /// Print the hardware model the folder's name starts with instead (the GPU's or CPU's
    /// name without the driver): a step done on one model is still to do on another.
    #[arg(long)]
    pub hardware: bool,
}

/// Arguments of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files, directories (searched recursively for `*.litmus`) or test names of the built-in
    /// suite; default: the built-in suite (see `show`).
    pub paths: Vec<PathBuf>,
    /// One JSON object per test per line instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print a witness execution for an allowed condition, or the excluding axiom and its
    /// offending cycle for each state of a forbidden one.
    #[arg(long)]
    pub explain: bool,
    /// Write the execution graphs that `--explain` describes, in Graphviz format, into DIR.
    #[arg(long, value_name = "DIR")]
    pub dot: Option<PathBuf>,
    /// Give up on a test whose check takes longer than this many seconds (it is reported as
    /// timed out and the batch goes on).
    #[arg(long, value_name = "SECONDS", default_value_t = MODEL_TIMEOUT_S)]
    pub timeout: f64,
    /// Judge with a cat model instead of the built-in checker: a `.cat` file (herd7's `-cat`)
    /// or a built-in transcription, `ptx-7.5` or `ptx-6.0` (`models/`). Not with --explain or
    /// --dot.
    #[arg(long, value_name = "FILE.cat|ptx-7.5|ptx-6.0")]
    pub model: Option<String>,
    /// Compare each test's verdict with an expectations file instead of printing it: rows
    /// `TEST<TAB>Allowed|Forbidden<TAB>REASON` (as `litmus/expectations.tsv`), TEST relative
    /// to the file's folder, Allowed when some allowed outcome satisfies the condition's
    /// proposition. Checks PATHS (default: every test the file lists); prints each mismatch
    /// and a pass/fail summary; exit 1 on a mismatch.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["json", "explain", "dot", "model"])]
    pub expect: Option<PathBuf>,
    /// Decide each test's condition only: no final states listed or labelled SC, the search
    /// stopping at the first execution that decides it (large tests in seconds rather than
    /// minutes). Prints the test, the condition, the verdict and the deciding outcome.
    #[arg(long, conflicts_with_all = ["explain", "dot", "model", "expect"])]
    pub verdict_only: bool,
    /// Print herd7's log layout instead of the model's words: `Test NAME Allowed|Forbidden|
    /// Required` (the condition's kind, not the verdict), states as `1:r0=1;`, `Ok`/`No`,
    /// `Observation NAME Never|Sometimes|Always P N` (witnesses counted in states); the hash
    /// is ptx-litmus's, not herd7's digest.
    #[arg(long, conflicts_with_all = ["json", "expect", "verdict_only"])]
    pub herd: bool,
    /// Check this many tests at once, on as many threads (each check keeps its own time and
    /// memory bounds, so N at once may use N times the memory); the output is the same, in the
    /// same order. Not with --expect.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256), conflicts_with = "expect")]
    pub jobs: u16,
}

/// Arguments of `model-diff`.
#[derive(Debug, Args)]
pub struct ModelDiffArgs {
    /// Test files, or folders searched for `.litmus` files, to compare on instead of the
    /// random stream (a `gen --enumerate --out` folder, the corpus).
    #[arg(value_name = "PATHS", conflicts_with_all = ["tests", "seed", "first", "barriers", "proxies"])]
    pub paths: Vec<PathBuf>,
    /// The cat model to compare with: a `.cat` file or `ptx-7.5`, `ptx-6.0`.
    #[arg(
        long,
        value_name = "FILE.cat|ptx-7.5|ptx-6.0",
        default_value = "ptx-7.5"
    )]
    pub model: String,
    /// How many random tests.
    #[arg(long, default_value_t = 1000)]
    pub tests: u64,
    /// The seed of the random stream.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The index of the first test: tests FIRST..FIRST+N of the stream (to split a long run).
    #[arg(long, default_value_t = 0)]
    pub first: u64,
    /// Give up on a test when either side takes longer than this many seconds (it is counted
    /// as undecided, with the side named, and the run goes on).
    #[arg(long, value_name = "SECONDS", default_value_t = MODEL_TIMEOUT_S)]
    pub timeout: f64,
    /// Print the first test of each class.
    #[arg(long)]
    pub examples: bool,
    /// Compare this many tests at once, on as many threads (each check keeps its own time and
    /// memory bounds, so N at once may use N times the memory); the summary is the same.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,
    /// Use the barrier stream: each random test with every thread of one CTA meeting at
    /// `bar.cta.sync` or `bar.cta.arrive`, once or twice, sometimes with a quorum (tests
    /// `RB<seed>-<index>`: test `R<seed>-<index>` with the barriers added).
    #[arg(long)]
    pub barriers: bool,
    /// Use the proxy stream: each random test with some weak accesses through a generic alias
    /// or the surface, texture or constant proxy, and proxy fences (tests `RP<seed>-<index>`).
    #[arg(long, conflicts_with = "barriers")]
    pub proxies: bool,
    /// Write every test that disagrees or is undecided into DIR as `R<seed>-<index>.litmus` (`RB…` in the barrier stream),
    /// to check it again alone (`check`, `check --model`) or hand it to another tool.
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
}

/// Arguments of `bench model`.
#[derive(Debug, Args)]
pub struct BenchModelArgs {
    /// Suites to time (default: `litmus` and `../shared/corpus`, each where present).
    pub paths: Vec<PathBuf>,
    /// Runs per test; the median run counts.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Give up on a test whose check takes longer than this many seconds (counted as an
    /// error, named on stderr).
    #[arg(long, value_name = "SECONDS", default_value_t = MODEL_TIMEOUT_S)]
    pub timeout: f64,
    /// Time deciding each test's condition only (`check --verdict-only`) rather than the full
    /// check (every allowed outcome, SC labels, exclusions).
    #[arg(long, conflicts_with = "model")]
    pub verdict_only: bool,
    /// Time the cat interpreter running this cat model (`check --model`) instead of the
    /// built-in checker: a `.cat` file or a built-in transcription, `ptx-7.5` or `ptx-6.0`.
    #[arg(long, value_name = "FILE.cat|ptx-7.5|ptx-6.0")]
    pub model: Option<String>,
}

/// Arguments of `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Files, directories (searched recursively for `*.litmus`) or test names of the built-in
    /// suite; default: the built-in suite (see `show`).
    pub paths: Vec<PathBuf>,
    /// One JSON object per test per line (path, name, threads, scopes, features) instead of
    /// the table; a file that does not parse is still reported on stderr.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Validate these result sets (folders holding run.json) or record files against the
    /// schema instead of printing it; exit 1 when one does not conform.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub validate: Vec<PathBuf>,
}

/// Arguments of `show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The test file, or the name of a test of the built-in suite (its file name without
    /// `.litmus`). The suite is `$PTX_LITMUS_SUITE`, else `./litmus`, else `litmus/` beside the
    /// executable or in the checkout it was built in; every command resolves names so.
    pub test: PathBuf,
}

/// Arguments of `report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The result set (a directory holding run.json).
    pub results: PathBuf,
    /// Write the report into this folder (default: the result set itself).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Overwrite an existing report.
    #[arg(long)]
    pub force: bool,
    /// Print one CSV row per test (counts, rates, status, cpu used) on stdout instead of
    /// writing the report.
    #[arg(long)]
    pub csv: bool,
}

/// Arguments of `diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The result sets: the baseline first. Two are compared side by side; three or more (or
    /// two with --matrix) as one table of tests × sets.
    #[arg(required = true, num_args = 2.., value_name = "SET")]
    pub sets: Vec<PathBuf>,
    /// One table of tests × sets (seen, unseen, violation, weak rates with 95 % intervals)
    /// even for two sets.
    #[arg(long)]
    pub matrix: bool,
    /// Also write the comparison as a self-contained HTML page here.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// The comparison as one JSON document on stdout instead of the text, for scripts: format
    /// `ptx-litmus-diff/1` (two sets) or `ptx-litmus-compare/1` (the table of N), with every
    /// field the text shows.
    #[arg(long)]
    pub json: bool,
    /// Overwrite the HTML file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The result sets to combine.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Write the merged result set into this folder; its last component becomes the run id.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Overwrite an existing result set there.
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Files, directories (searched recursively for `*.litmus`) or test names of the built-in
    /// suite; default: the built-in suite (see `show`).
    pub paths: Vec<PathBuf>,
    /// The backend to run on (default auto): `auto` takes the GPU when one is usable, else
    /// the CPU (and says so); with --replay, the recorded backend.
    #[arg(long, value_enum)]
    pub backend: Option<Backend>,
    /// Instances per test, at least 1 (rounded up to whole launches on the GPU and whole
    /// rounds on the CPU; run.json's `iterations` counts those launches or rounds).
    /// `--iterations` is an old name of this flag.
    #[arg(long, alias = "iterations", value_name = "N", conflicts_with = "time",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub instances: Option<u64>,
    /// Seconds per test (when neither this nor --instances is given: 100000 instances).
    #[arg(long)]
    pub time: Option<f64>,
    /// The kernels' stress configuration (the CPU backend records it and ignores GPU knobs).
    #[command(flatten)]
    pub stress: StressArgs,
    /// Seed of every random choice (default: from the clock, recorded in run.json).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Backend option `key=value` (CPU: batch=N, pack=true, sync=instance|round|auto|N; CUDA:
    /// device=N, batch=N, wait_s=S, grid=fill|preset, graph=K|off, sass_check=on|off,
    /// sass_dir=DIR, compiler=jit|ptxas:VERSION); repeatable.
    #[arg(long = "option", short = 'o', value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// What compiles the PTX on the GPU: `jit` (the driver, the default) or `ptxas:VERSION`
    /// (a ptxas of the toolchain store, `12.4` or `12.4.131`, whose cubin is loaded as it is);
    /// recorded per test with the SASS hash. CUDA backend only.
    #[arg(long, value_name = "jit|ptxas:VERSION", conflicts_with = "replay")]
    pub compiler: Option<String>,
    /// The results folder: the result set is written into RESULTS/<machine>/<run id>
    /// (`--out` is an old name of this flag).
    #[arg(long, alias = "out", value_name = "RESULTS", default_value = "results")]
    pub results: PathBuf,
    /// Overwrite an existing result set of the same run id.
    #[arg(long)]
    pub force: bool,
    /// Run only part i of n of the sorted suite (`0/4`): deterministic, for job arrays.
    #[arg(long)]
    pub shard: Option<String>,
    /// Re-run with the parameters, seed and tests recorded in this `run.json`.
    #[arg(long, value_name = "RUN_JSON", conflicts_with_all = ["instances", "time", "seed", "stress", "stress_set", "stress_file"])]
    pub replay: Option<PathBuf>,
    /// Run id, the result set's directory name (default: time and seed, with `-2`, `-3`, ... when a set of that name exists).
    #[arg(long)]
    pub run_id: Option<String>,
    /// Give up on a test whose model check takes longer than this many seconds (it is
    /// reported as timed out, and the batch goes on).
    #[arg(long, value_name = "SECONDS", default_value_t = MODEL_TIMEOUT_S)]
    pub timeout: f64,
    /// Judge with a cat model instead of the built-in checker (PTX v7.5, the default): a `.cat`
    /// file (herd7's `-cat`) or a built-in transcription, `ptx-7.5` or `ptx-6.0` (`models/`),
    /// as `check --model` runs it; recorded in run.json (name, file, hash of its text). With
    /// --replay: the recorded model unless this is given.
    #[arg(long, value_name = "FILE.cat|ptx-7.5|ptx-6.0")]
    pub model: Option<String>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// JSON lines on stdout instead of the table: each test's record as it is written
    /// (tests/*.json), then the run's (run.json); both conform to `ptx-litmus schema`.
    #[arg(long)]
    pub json: bool,
}

/// What `--stress` names: a preset, or a tuned file.
#[derive(Clone, Debug, PartialEq)]
pub enum StressChoice {
    /// A named preset (`stress`, `random-7`, ...).
    Preset(Stress),
    /// `tuned:FILE`: the settings `tune` wrote, on top of the default preset.
    Tuned(PathBuf),
}

/// The prefix of `--stress tuned:FILE`.
pub const TUNED_PREFIX: &str = "tuned:";

impl std::str::FromStr for StressChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<StressChoice, String> {
        match s.strip_prefix(TUNED_PREFIX) {
            Some("") => Err("tuned: needs a file (tuned:results/<machine>/tuned/SB.stress)".into()),
            Some(file) => Ok(StressChoice::Tuned(PathBuf::from(file))),
            None => s.parse().map(StressChoice::Preset),
        }
    }
}

/// A kernel's stress configuration: a preset, then a file of settings, then single settings
/// (each later one wins). `run`, `emit`, `sass` and `toolchains prebuild` share it, so the
/// kernel checked is the kernel launched.
#[derive(Debug, Args)]
pub struct StressArgs {
    /// Stress preset: basic (no stress, fixed placement), interleave (shuffled placement, spin
    /// barrier, no memory stress), stress (everything on), random-<seed> (every incantation
    /// drawn from the seed) or tuned:FILE (a file `tune` wrote: the stress preset with the
    /// file's settings, and on the CPU its `cpu.` options). The default is `run`'s, so the
    /// kernel `emit` and `sass` check is the kernel `run` launches.
    #[arg(long, default_value = DEFAULT_PRESET)]
    pub stress: StressChoice,
    /// Set one incantation on top of the preset and the --stress-file, as KEY=VALUE
    /// (repeatable). Keys: testing_ctas, max_ctas, cta_size, shuffle_pct, barrier_pct,
    /// mem_stride, mem_stress_pct, mem_stress_iterations, mem_stress_pattern, pre_stress_pct,
    /// pre_stress_iterations, pre_stress_pattern, stress_line_size, stress_target_lines,
    /// stress_strategy_balance_pct, permute_first, permute_second, aliased_memory,
    /// partner_distances, spin_group (cuda-litmus's camelCase names are accepted too; docs/stress.md says what each does).
    /// Recorded in run.json as `stress_set`.
    #[arg(long = "stress-set", value_name = "KEY=VALUE")]
    pub stress_set: Vec<String>,
    /// Read incantations from FILE, one KEY=VALUE a line (`#` starts a comment), applied on
    /// top of the preset and before --stress-set.
    #[arg(long = "stress-file", value_name = "FILE")]
    pub stress_file: Option<PathBuf>,
}

/// Arguments of `tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Tests to tune for, grouped into families by the name before the first `+` (`2+2W`
    /// for 2+2W tests; default: the bench shapes of --shapes, each its own family).
    pub paths: Vec<PathBuf>,
    /// Bench shapes to tune for when no PATHS are given, comma-separated.
    #[arg(long, default_value = "SB,MP,LB,2+2W,WRC,IRIW", value_delimiter = ',')]
    pub shapes: Vec<String>,
    /// The backend: auto (the GPU when one is usable), cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub backend: Backend,
    /// Seed of every configuration drawn and every chunk's run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The time budget of the whole search in seconds, shared by the families (a family's
    /// unused time goes to the next); a search cut by it says so in its files.
    #[arg(long, default_value_t = 300.0)]
    pub budget: f64,
    /// Random configurations per family after the baseline.
    #[arg(long, default_value_t = 24)]
    pub random: usize,
    /// Local-search configurations per family after the random ones.
    #[arg(long, default_value_t = 16)]
    pub local: usize,
    /// How many of the best configurations the local search perturbs in turn.
    #[arg(long, default_value_t = 3)]
    pub parents: usize,
    /// Chunks a configuration runs before it may be stopped early.
    #[arg(long, default_value_t = 3)]
    pub min_chunks: usize,
    /// Chunks a configuration runs at most.
    #[arg(long, default_value_t = 6)]
    pub max_chunks: usize,
    /// Finalists of the final race, the baseline included: the best-ranked and then the
    /// contenders nearest the baseline, measured again side by side (in a small space, the
    /// CPU's, the baseline's neighbours race too); the one nearest the baseline among those
    /// none beats significantly wins (below 2: no final race, the search's own winner stands).
    #[arg(long, default_value_t = 4)]
    pub finalists: usize,
    /// Rounds of the final race in one machine state (one chunk per finalist each; the
    /// round-by-round ratios' intervals need 8 before a finalist can leave; up to twice as
    /// many while a median ratio is past 10 % and its interval not yet; on the CPU, rounds in
    /// another state of the host's core placement are left out, up to three times as many).
    #[arg(long, default_value_t = 16)]
    pub final_rounds: usize,
    /// Seconds of one chunk on the GPU (per test of the family).
    #[arg(long, default_value_t = 0.2)]
    pub chunk_time: f64,
    /// Instances of one chunk on the CPU (per test of the family): a fixed count, so the
    /// search's shape does not depend on the machine's speed.
    #[arg(long, default_value_t = 20_000)]
    pub chunk_instances: u64,
    /// The stress preset the GPU search applies its settings on (the keys it does not search
    /// keep the preset's values).
    #[arg(long, default_value = DEFAULT_PRESET)]
    pub stress: Stress,
    /// Backend option `key=value` kept fixed during the search (device=N); repeatable.
    #[arg(long = "option", short = 'o', value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Write the tuned files into this folder (default: results/<machine>/tuned).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Arguments of `bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// What to measure.
    #[command(subcommand)]
    pub target: BenchTarget,
}

/// What `bench` measures.
#[derive(Debug, Subcommand)]
pub enum BenchTarget {
    /// CPU backend throughput per test shape: instances/s, weak/s, weak rate.
    Cpu(BenchCpuArgs),
    /// Time the model checker on every test of `litmus/` and `../shared/corpus` (one core).
    Model(BenchModelArgs),
    /// CUDA backend throughput of every shape (2-, 3-, 4-thread, shared memory, a cluster) under
    /// every preset: instances/s, weak/s, GPU and host time per launch, occupancy and the
    /// memory-bandwidth roofline (exit 2 with the reason when no GPU is usable; `--dry-run`
    /// plans the launches without one).
    Gpu(BenchGpuArgs),
}

/// Arguments of `bench gpu`.
#[derive(Debug, Args)]
pub struct BenchGpuArgs {
    /// Seconds per shape.
    #[arg(long, default_value_t = 2.0)]
    pub time: f64,
    /// Stress preset: basic, interleave, stress or random-<seed> (default: every named preset,
    /// one table each).
    #[arg(long)]
    pub stress: Option<Stress>,
    /// Backend option `key=value` (device=N, batch=N launches per synchronisation,
    /// grid=fill|preset, graph=K|off launches per CUDA graph); repeatable.
    #[arg(long = "option", short = 'o', value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Seed of the launch seeds.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only shapes whose name contains this.
    #[arg(long)]
    pub only: Option<String>,
    /// Print the plan of every row without submitting anything to a GPU: each shape's launch
    /// under each preset (registers from ptxas -v, CTAs per SM and what limits them, the grid
    /// sized to one full wave, instances per launch, occupancy, the memory-bandwidth bound).
    #[arg(long)]
    pub dry_run: bool,
    /// The device model whose limits a dry run plans for: h100 (H100 SXM) or h200.
    #[arg(
        long,
        value_name = "h100|h200",
        default_value = "h100",
        requires = "dry_run"
    )]
    pub device_model: String,
}

/// Arguments of `bench cpu`.
#[derive(Debug, Args)]
pub struct BenchCpuArgs {
    /// Seconds per shape.
    #[arg(long, default_value_t = 2.0)]
    pub time: f64,
    /// Backend option `key=value` (batch=N, pack=true, sync=instance|round|auto|N); repeatable.
    #[arg(long = "option", short = 'o', value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only shapes whose name contains this.
    #[arg(long)]
    pub only: Option<String>,
}

/// Arguments of `emit`.
#[derive(Debug, Args)]
pub struct EmitArgs {
    /// The test file, or a test name of the built-in suite.
    pub test: PathBuf,
    /// The kernel's stress configuration.
    #[command(flatten)]
    pub stress: StressArgs,
    /// Write the kernel into this file instead of printing it (`--output` is an old name of
    /// this flag).
    #[arg(long, alias = "output", value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Arguments of `sass`.
#[derive(Debug, Args)]
pub struct SassArgs {
    /// Test files, directories (searched recursively for `*.litmus`) or test names of the
    /// built-in suite.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The GPU architecture to assemble for; with --ptxas or --diff a comma-separated list
    /// (`sm_90,sm_90a,sm_100`) makes one column per version and architecture.
    #[arg(long, default_value = "sm_90")]
    pub arch: String,
    /// The kernels' stress configuration.
    #[command(flatten)]
    pub stress: StressArgs,
    /// Print the SASS of every role beside the mapping.
    #[arg(long)]
    pub verbose: bool,
    /// Assemble with these versions of the toolchain store (`all`, `12.4`, `11.8,13`; `toolchains
    /// install all` fills it) and print the matrix of verdicts: per test and version, the
    /// check's verdict and SASS hash.
    #[arg(long, value_name = "VERSIONS")]
    pub ptxas: Option<String>,
    /// List the tests whose verdict, memory ops or SASS changed between two store versions.
    #[arg(long, num_args = 2, value_names = ["A", "B"], conflicts_with = "ptxas")]
    pub diff: Option<Vec<String>>,
    /// With --ptxas: write the matrix as matrix.md and matrix.json into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Overwrite matrix.md and matrix.json there.
    #[arg(long)]
    pub force: bool,
}

/// The random stream that `--barriers` and `--proxies` choose.
fn stream(barriers: bool, proxies: bool) -> crate::gen::random::Stream {
    use crate::gen::random::Stream;
    match (barriers, proxies) {
        (true, _) => Stream::Barriers,
        (_, true) => Stream::Proxies,
        _ => Stream::Plain,
    }
}

impl ModelDiffArgs {
    /// The random stream compared.
    pub fn stream(&self) -> crate::gen::random::Stream {
        stream(self.barriers, self.proxies)
    }
}

impl GenArgs {
    /// The random stream `--tests` writes.
    pub fn stream(&self) -> crate::gen::random::Stream {
        stream(self.barriers, self.proxies)
    }
}
