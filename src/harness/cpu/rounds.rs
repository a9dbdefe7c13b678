//! The round loop: one OS thread per role, all instances of a round in flight at once.
//!
//! Each round: (1) every worker leaves the start barrier and plays the role the seeded
//! assignment gives it this round, over every instance of the round in the same order, waiting
//! at each instance for the other roles when `Sync::Instance`; (2) end barrier; (3) each worker
//! counts and resets its own slice of instances, so collection is parallel and no instance is
//! read while a role still runs it. Worker 0 decides, before the next start barrier, whether
//! another round runs and who plays which role.

use super::collect::LocalCounts;
use super::exec::{self, Status};
use super::layout::{Arena, Layout};
use super::load;
use super::options::Sync;
use super::program::{Program, Source, MAX_REGS, SLOT_WORDS};
use super::wait::{spin_for, wait_until, SpinBarrier};
use crate::harness::parts::Parts;
use crate::harness::Budget;
use crate::outcome::Histogram;
use crate::rng::Rng;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a finished (or stopped) run counted.
pub struct Totals {
    /// Outcome counts.
    pub histogram: Histogram,
    /// The same counts by consecutive rounds.
    pub parts: Vec<Histogram>,
    /// Instances given up.
    pub skipped: u64,
    /// Instances run (counted or skipped).
    pub instances: u64,
    /// Whether the run stopped on cancel before its budget.
    pub partial: bool,
    /// Seconds from the first round's start to the last round's end.
    pub elapsed_s: f64,
    /// CPU seconds the role threads got (the scheduler's count); `None` where it cannot be
    /// read.
    pub cpu_s: Option<f64>,
}

/// How a run is shaped.
pub struct Plan {
    /// Instances per round.
    pub batch: usize,
    /// Where locations live.
    pub layout: Layout,
    /// Start alignment.
    pub sync: Sync,
    /// When to stop.
    pub budget: Budget,
    /// Seed for role assignment.
    pub seed: u64,
}

struct Shared<'a> {
    prog: &'a Program,
    plan: &'a Plan,
    mem: Arena,
    /// Per instance, its barrier slots (`barrier_slots * SLOT_WORDS` words).
    bars: Vec<AtomicI64>,
    /// One arrival counter per alignment point of the round (reset with its first instance).
    starts: Vec<AtomicU32>,
    /// Set when a bounded wait of this round ran out: the round's remaining waits give up at
    /// once (their instances are skipped), so one missing role costs one timeout per round.
    abandon: AtomicBool,
    /// Per role: per instance its observed registers then its status.
    outs: Vec<Vec<AtomicI64>>,
    start: SpinBarrier,
    end: SpinBarrier,
    /// Worker → role for the current round.
    assignment: Vec<AtomicUsize>,
    /// Instances in the current round (0 = stop).
    count: AtomicUsize,
    totals: Mutex<Tally>,
    done_instances: AtomicU64,
    finished: AtomicBool,
    /// Whether the roles outnumber the cores this process may use (waits then yield sooner).
    oversubscribed: bool,
    /// The thread that watches the run, woken when it finishes: a test shorter than the
    /// watch's period then ends when its workers do, and its CPU use is measured over its
    /// own time.
    watcher: std::thread::Thread,
}

/// What the workers counted: the finished rounds, and the round they are flushing.
#[derive(Default)]
struct Tally {
    histogram: Histogram,
    skipped: u64,
    parts: Parts,
    /// The round being flushed, and how many workers flushed it so far.
    round: Histogram,
    flushed: usize,
}

impl Tally {
    /// Takes one worker's counts of the current round; the last of `workers` closes the round.
    fn flush(&mut self, local: &mut LocalCounts, workers: usize) {
        local.flush(&mut self.round, &mut self.skipped);
        self.flushed += 1;
        if self.flushed == workers {
            self.histogram.merge(&self.round);
            self.parts.push(&self.round);
            self.round = Histogram::default();
            self.flushed = 0;
        }
    }
}

/// Runs `prog` under `plan` until the budget is spent or `cancel` is set, calling `tick` with
/// a snapshot about every 100 ms from the calling thread.
pub fn run(
    prog: &Program,
    plan: &Plan,
    cancel: &AtomicBool,
    tick: &mut dyn FnMut(u64, f64, &Histogram),
) -> Totals {
    let roles = prog.roles.len();
    let sh = Shared::new(prog, plan);
    for i in 0..plan.batch {
        reset(&sh, i);
    }
    let started = Instant::now();
    let partial = AtomicBool::new(false);
    let cpu_ns = AtomicU64::new(0);
    let cpu_known = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for w in 0..roles {
            let sh = &sh;
            let partial = &partial;
            let (cpu_ns, cpu_known) = (&cpu_ns, &cpu_known);
            s.spawn(move || {
                let before = load::thread_cpu_ns();
                worker(w, sh, cancel, partial, started);
                if let (Some(a), Some(b)) = (before, load::thread_cpu_ns()) {
                    cpu_ns.fetch_add(b.saturating_sub(a), Ordering::Relaxed);
                    cpu_known.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        watch(&sh, started, tick);
    });
    let elapsed_s = started.elapsed().as_secs_f64();
    let tally = sh.totals.into_inner().expect("workers joined");
    let instances = sh.done_instances.load(Ordering::Relaxed);
    tick(instances, elapsed_s, &tally.histogram);
    Totals {
        histogram: tally.histogram,
        parts: tally.parts.into_histograms(),
        skipped: tally.skipped,
        instances,
        partial: partial.load(Ordering::Relaxed),
        elapsed_s,
        cpu_s: (cpu_known.into_inner() == roles).then(|| cpu_ns.into_inner() as f64 * 1e-9),
    }
}

/// Reports progress every 100 ms until the workers finish (the last wakes it).
fn watch(sh: &Shared<'_>, started: Instant, tick: &mut dyn FnMut(u64, f64, &Histogram)) {
    let mut last_tick = Instant::now();
    while !sh.finished.load(Ordering::Acquire) {
        std::thread::park_timeout(Duration::from_millis(10));
        if last_tick.elapsed() >= Duration::from_millis(100) {
            last_tick = Instant::now();
            let t = sh.totals.lock().expect("no worker panics holding the lock");
            tick(
                sh.done_instances.load(Ordering::Relaxed),
                started.elapsed().as_secs_f64(),
                &t.histogram,
            );
        }
    }
}

impl<'a> Shared<'a> {
    /// The state the workers of a run of `prog` under `plan` share: memory, barrier slots,
    /// start flags and result words for each instance of a batch (each then `reset`).
    fn new(prog: &'a Program, plan: &'a Plan) -> Shared<'a> {
        let roles = prog.roles.len();
        let batch = plan.batch;
        let outs = prog
            .roles
            .iter()
            .map(|r| {
                (0..batch * (r.observed.len() + 1))
                    .map(|_| AtomicI64::new(0))
                    .collect()
            })
            .collect();
        Shared {
            prog,
            plan,
            mem: Arena::new(batch, &plan.layout),
            bars: (0..batch * prog.barrier_slots * SLOT_WORDS)
                .map(|_| AtomicI64::new(0))
                .collect(),
            starts: (0..match plan.sync {
                Sync::Every(n) => batch.div_ceil(n as usize),
                Sync::Round => 0,
            })
                .map(|_| AtomicU32::new(0))
                .collect(),
            abandon: AtomicBool::new(false),
            outs,
            start: SpinBarrier::new(roles),
            end: SpinBarrier::new(roles),
            assignment: (0..roles).map(AtomicUsize::new).collect(),
            count: AtomicUsize::new(0),
            totals: Mutex::new(Tally::default()),
            done_instances: AtomicU64::new(0),
            finished: AtomicBool::new(false),
            oversubscribed: roles > super::provenance::cores(),
            watcher: std::thread::current(),
        }
    }
}

/// Worker 0's decision for the next round: how many instances (0 = stop) and who plays what.
fn plan_round(
    sh: &Shared,
    rng: &mut Rng,
    done: u64,
    started: Instant,
    cancel: &AtomicBool,
    partial: &AtomicBool,
) {
    let batch = sh.plan.batch as u64;
    let n = if cancel.load(Ordering::Relaxed) {
        partial.store(true, Ordering::Relaxed);
        0
    } else {
        match sh.plan.budget {
            Budget::Instances(total) => total.saturating_sub(done).min(batch),
            Budget::Seconds(s) => {
                if started.elapsed().as_secs_f64() < s {
                    batch
                } else {
                    0
                }
            }
        }
    };
    let mut roles: Vec<usize> = (0..sh.assignment.len()).collect();
    rng.shuffle(&mut roles);
    for (w, r) in roles.into_iter().enumerate() {
        sh.assignment[w].store(r, Ordering::Relaxed);
    }
    sh.count.store(n as usize, Ordering::Relaxed);
    sh.abandon.store(false, Ordering::Relaxed);
}

// Out of line: one function per role thread keeps the hot loop laid out the same whatever
// the spawning code around it.
#[inline(never)]
fn worker(w: usize, sh: &Shared, cancel: &AtomicBool, partial: &AtomicBool, started: Instant) {
    let workers = sh.assignment.len();
    spin_for(sh.oversubscribed);
    let mut rng = Rng::new(sh.plan.seed);
    let mut local = LocalCounts::default();
    let mut values = vec![0i64; sh.prog.sources.len()];
    let mut done = 0u64;
    loop {
        if w == 0 {
            plan_round(sh, &mut rng, done, started, cancel, partial);
        }
        sh.start.wait();
        let n = sh.count.load(Ordering::Relaxed);
        if n == 0 {
            break;
        }
        let role_id = sh.assignment[w].load(Ordering::Relaxed);
        play(sh, role_id, n);
        sh.end.wait();
        // Collect and reset this worker's slice of the round.
        let lo = n * w / workers;
        let hi = n * (w + 1) / workers;
        for i in lo..hi {
            collect(sh, i, &mut local, &mut values);
            reset(sh, i);
        }
        sh.totals
            .lock()
            .expect("no worker panics holding the lock")
            .flush(&mut local, workers);
        done += n as u64;
        if w == 0 {
            sh.done_instances.store(done, Ordering::Relaxed);
        }
    }
    if w == 0 {
        sh.finished.store(true, Ordering::Release);
        sh.watcher.unpark();
    }
}

/// Plays role `role_id` over the first `n` instances of the arena.
fn play(sh: &Shared, role_id: usize, n: usize) {
    let role = &sh.prog.roles[role_id];
    let words = sh.mem.words();
    let block = sh.plan.layout.block_words;
    let slots = sh.prog.barrier_slots * SLOT_WORDS;
    let mut keys = vec![None; role.bars.len()];
    let out = &sh.outs[role_id];
    let stride = role.observed.len() + 1;
    let roles = sh.prog.roles.len() as u32;
    let every = match sh.plan.sync {
        Sync::Every(e) => e as usize,
        Sync::Round => 0,
    };
    for i in 0..n {
        if every > 0 && i % every == 0 {
            // Arrive (a locked increment) and wait for the other roles, so that all start the
            // next instances together.
            let s = &sh.starts[i / every];
            s.fetch_add(1, Ordering::AcqRel);
            if !wait_until(&sh.abandon, || s.load(Ordering::Acquire) >= roles) {
                out[i * stride + stride - 1].store(Status::GaveUp as i64, Ordering::Relaxed);
                continue;
            }
        }
        let mut regs: [i64; MAX_REGS] = role.init;
        let status = exec::run(
            role,
            &words[i * block..(i + 1) * block],
            &sh.bars[i * slots..(i + 1) * slots],
            &mut keys,
            &mut regs,
            &sh.abandon,
        );
        let o = &out[i * stride..(i + 1) * stride];
        for (k, &r) in role.observed.iter().enumerate() {
            o[k].store(regs[r as usize], Ordering::Relaxed);
        }
        o[stride - 1].store(status as i64, Ordering::Relaxed);
    }
}

fn collect(sh: &Shared, i: usize, local: &mut LocalCounts, values: &mut [i64]) {
    let mut status = Status::Done as i64;
    for (r, role) in sh.prog.roles.iter().enumerate() {
        let stride = role.observed.len() + 1;
        status = status.max(sh.outs[r][i * stride + stride - 1].load(Ordering::Relaxed));
    }
    if status == Status::GaveUp as i64 {
        local.skipped += 1;
        return;
    }
    if status == Status::Unexpected as i64 {
        local.unexpected += 1;
        return;
    }
    let block = sh.plan.layout.block_words;
    let words = sh.mem.words();
    for (v, src) in values.iter_mut().zip(&sh.prog.sources) {
        *v = match *src {
            Source::Reg { role, index } => {
                let stride = sh.prog.roles[role].observed.len() + 1;
                sh.outs[role][i * stride + index].load(Ordering::Relaxed)
            }
            Source::Mem(w) => words[i * block + w as usize].load(Ordering::Relaxed),
        };
    }
    local.add(values);
}

/// Puts instance `i` back in its initial state.
fn reset(sh: &Shared, i: usize) {
    let block = sh.plan.layout.block_words;
    let words = &sh.mem.words()[i * block..(i + 1) * block];
    for &(w, v) in &sh.prog.init_words {
        words[w as usize].store(v, Ordering::Relaxed);
    }
    let slots = sh.prog.barrier_slots * SLOT_WORDS;
    for b in sh.bars[i * slots..(i + 1) * slots]
        .iter()
        .step_by(SLOT_WORDS)
    {
        // Unpublished: the key words are only read once the state says they were written.
        b.store(0, Ordering::Relaxed);
    }
    if let Sync::Every(e) = sh.plan.sync {
        if i % e as usize == 0 {
            sh.starts[i / e as usize].store(0, Ordering::Relaxed);
        }
    }
    for (r, role) in sh.prog.roles.iter().enumerate() {
        let stride = role.observed.len() + 1;
        sh.outs[r][i * stride + stride - 1].store(Status::Done as i64, Ordering::Relaxed);
    }
}
