//! From a test to what its threads can do: locations resolved to physical memory and virtual
//! addresses, and every path of every thread through its branches and loops, with the value each
//! read returns fixed per path (a *trace*). Values come from a per-location domain computed as a
//! fixpoint of what the threads can write; traces whose read values no write can supply are
//! dropped later, when traces of all threads are put together.
//!
//! Loops: an iteration that writes no memory, passes no barrier and changes no register that is
//! live at the loop head can be cut out of any execution without changing the outcome or adding
//! an axiom violation (its events only add constraints), so a trace that takes a back edge after
//! such an iteration is dropped (a spin loop's executions are those whose final iteration exits;
//! Dat3M's unrolling bound 1 gives the same); any other iteration is unrolled, up to
//! [`MAX_LOOP_ITERATIONS`]. The writes a cut path made still count while the values are found:
//! when two threads each set a flag and then wait for the other's, each path that exits reads
//! a value only the other's cut path writes.

mod liveness;
mod provenance;
mod run;

use super::event::Event;
use super::ModelError;
use crate::litmus::ast::{
    BarRedOp, Instr, LocationKind, Placement, Proxy, Reg, Test, Thread, Value,
};
use provenance::Provenance;
use run::{Runner, State};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// How often one loop may be unrolled when its iterations have effects.
pub const MAX_LOOP_ITERATIONS: u32 = 16;
/// The most events one thread may produce on one path (dependencies are `u64` masks).
pub const MAX_THREAD_EVENTS: usize = 64;
/// The most paths one thread may have.
pub const MAX_TRACES: usize = 100_000;
/// Events held by all traces of a test at most: with about 150 bytes an event, this keeps the
/// model's traces under 1 GiB whatever the test.
pub const MAX_TRACE_EVENTS: usize = 6_000_000;

/// Per memory the values it can hold, and per thread its traces over those values.
pub type Domains = (Vec<BTreeSet<Value>>, Traces);

/// Each thread's traces.
pub type Traces = Vec<Vec<Trace>>;

/// A location name resolved: which physical memory it names and through which virtual address.
#[derive(Clone, Debug)]
pub struct LocRef {
    /// Index into [`Program::memories`].
    pub phys: usize,
    /// Virtual address id.
    pub vaddr: usize,
}

/// A memory location with storage of its own.
#[derive(Clone, Debug)]
pub struct Memory {
    /// Its name (shared with the initial write event of every combination).
    pub name: Arc<str>,
    /// Its initial value.
    pub init: Value,
}

/// A test resolved for the checker.
#[derive(Clone, Debug)]
pub struct Program {
    /// Physical memories (one per `Memory` location), in declaration order.
    pub memories: Vec<Memory>,
    /// Every location name.
    pub names: HashMap<String, LocRef>,
    /// Per thread: placement, body, labels and registers.
    pub threads: Vec<ThreadProg>,
}

/// One thread, ready to run.
#[derive(Clone, Debug)]
pub struct ThreadProg {
    /// Where it runs.
    pub place: Placement,
    /// Its instructions.
    pub body: Vec<Instr>,
    /// Label name -> index of the label in `body`.
    pub labels: HashMap<String, usize>,
    /// Register names; a register's index is its position here.
    pub regs: Vec<Reg>,
    /// Initial register values.
    pub reg_init: Vec<Value>,
    /// How many threads of the test share its CTA (for `bar.red.popc`).
    pub cta_size: usize,
    /// Per instruction: the registers (bit per index) whose value may still be read, by a later
    /// instruction or as a final value, before being overwritten.
    pub live_in: Vec<u64>,
}

/// A `bar.red` whose result was guessed and must be checked against the other participants.
#[derive(Clone, Copy, Debug)]
pub struct BarRedGuess {
    /// Local index of the barrier event.
    pub event: usize,
    /// The reduction.
    pub op: BarRedOp,
    /// This thread's predicate (non-zero is true).
    pub pred: bool,
    /// The guessed result.
    pub result: Value,
}

/// One path of one thread with the value of every read fixed.
#[derive(Clone, Debug)]
pub struct Trace {
    /// The events, in program order (thread-local indices).
    pub events: Vec<Event>,
    /// Per event: the local reads it depends on (address, data or control; an RMW's write
    /// always depends on its read, as in NVIDIA's ptx.als where `rmw` is part of `dep`).
    pub deps: Vec<u64>,
    /// Per event: the local reads its address is computed from.
    pub addr: Vec<u64>,
    /// Per event: the local reads the value it writes is computed from, through registers
    /// (an `exch` writes its operand, so its write has no data dependency on its read).
    pub data: Vec<u64>,
    /// Per event: the local reads a branch before it compared.
    pub ctrl: Vec<u64>,
    /// `(read, write)` halves of each atomic read-modify-write, local indices.
    pub rmw: Vec<(usize, usize)>,
    /// Final register values.
    pub regs: Vec<Value>,
    /// `bar.red` results to check.
    pub bar_red: Vec<BarRedGuess>,
    /// Why this path cannot be decided, if it reaches something undecidable; it stops there.
    pub fault: Option<ModelError>,
    /// A path an idle iteration cut: never combined as an execution that finishes (its writes
    /// count while the values are found), but as one that spins for ever there.
    pub spin: Option<Spin>,
}

impl Trace {
    /// The trace of a thread that stops for ever before its local event `k`.
    pub fn prefix(&self, k: usize) -> Trace {
        Trace {
            events: self.events[..k].to_vec(),
            deps: self.deps[..k].to_vec(),
            addr: self.addr[..k].to_vec(),
            data: self.data[..k].to_vec(),
            ctrl: self.ctrl[..k].to_vec(),
            rmw: self.rmw.iter().copied().filter(|&(_, w)| w < k).collect(),
            regs: self.regs.clone(),
            bar_red: self
                .bar_red
                .iter()
                .filter(|g| g.event < k)
                .cloned()
                .collect(),
            fault: self.fault.clone(),
            spin: None,
        }
    }
}

/// Where a cut path spins: the idle iteration that would repeat for ever.
#[derive(Clone, Debug)]
pub struct Spin {
    /// Local index of the iteration's first event.
    pub from: usize,
    /// The label the loop branches back to.
    pub label: String,
}

/// The locations of a test as they are resolved: names to memories and virtual addresses.
#[derive(Default)]
struct Locations {
    memories: Vec<Memory>,
    names: HashMap<String, LocRef>,
    vaddrs: usize,
}

impl Locations {
    /// Gives `name` a memory (and a virtual address) of its own.
    fn add_memory(&mut self, name: &str, init: Value) {
        let r = LocRef {
            phys: self.memories.len(),
            vaddr: self.new_vaddr(),
        };
        self.names.insert(name.to_string(), r);
        self.memories.push(Memory {
            name: name.into(),
            init,
        });
    }

    fn new_vaddr(&mut self) -> usize {
        self.vaddrs += 1;
        self.vaddrs - 1
    }

    /// Resolves the aliases of `test`, which may name aliases declared later: resolved until
    /// nothing changes. A generic alias is a virtual address of its own; a texture, surface or
    /// constant one shares its target's.
    fn resolve_aliases(&mut self, test: &Test) -> Result<(), ModelError> {
        loop {
            let mut progress = false;
            let mut pending = false;
            for l in &test.locations {
                let LocationKind::Alias { proxy, target } = &l.kind else {
                    continue;
                };
                if self.names.contains_key(&l.name) {
                    continue;
                }
                let Some(t) = self.names.get(target).cloned() else {
                    pending = true;
                    continue;
                };
                let vaddr = if *proxy == Proxy::Generic {
                    self.new_vaddr()
                } else {
                    t.vaddr
                };
                let r = LocRef {
                    phys: t.phys,
                    vaddr,
                };
                self.names.insert(l.name.clone(), r);
                progress = true;
            }
            if !pending {
                return Ok(());
            }
            if !progress {
                return Err(ModelError::Unsupported {
                    construct: "location aliases".into(),
                    reason: "an alias names no memory (cycle or missing target)".into(),
                });
            }
        }
    }
}

impl Program {
    /// Resolves a test.
    pub fn new(test: &Test) -> Result<Program, ModelError> {
        let mut locs = Locations::default();
        for l in &test.locations {
            if let LocationKind::Memory { init, .. } = l.kind {
                locs.add_memory(&l.name, init);
            }
        }
        locs.resolve_aliases(test)?;
        let threads = test
            .threads
            .iter()
            .map(|t| thread_prog(test, t, &mut locs))
            .collect::<Result<_, _>>()?;
        Ok(Program {
            memories: locs.memories,
            names: locs.names,
            threads,
        })
    }

    /// The physical memory a name refers to.
    pub fn phys_of(&self, name: &str) -> Option<usize> {
        self.names.get(name).map(|l| l.phys)
    }

    /// Runs again, with read values drawn from `domains` (per memory), every thread that
    /// `stale` names, keeping the other threads' traces; refused past [`MAX_TRACE_EVENTS`]
    /// events in all, the model's memory cap.
    fn update_traces(
        &self,
        domains: &[BTreeSet<Value>],
        traces: &mut [Vec<Trace>],
        stale: impl Fn(usize) -> bool,
    ) -> Result<(), ModelError> {
        let mut events = 0usize;
        for (i, t) in self.threads.iter().enumerate() {
            if stale(i) {
                traces[i].clear();
                Runner {
                    prog: self,
                    thread: t,
                    tid: i,
                    domains,
                    no_name: Arc::from(""),
                }
                .run(State::new(t), &mut traces[i])?;
            }
            events += traces[i].iter().map(|tr| tr.events.len()).sum::<usize>();
            if events > MAX_TRACE_EVENTS {
                return Err(ModelError::TooLarge {
                    what: format!(
                        "the threads' traces hold more than {MAX_TRACE_EVENTS} events (the \
                         model's memory cap)"
                    ),
                });
            }
        }
        Ok(())
    }

    /// The memories each thread's instructions name. A thread reads values from the domains
    /// of these alone, so its traces change only when one of them grows.
    fn accessed(&self) -> Vec<Vec<usize>> {
        self.threads
            .iter()
            .map(|t| {
                t.body
                    .iter()
                    .filter_map(|i| i.addr().and_then(|a| self.phys_of(&a.loc)))
                    .collect()
            })
            .collect()
    }

    /// The values each memory can hold and each thread's traces over them (see
    /// [`Program::fixpoint`]), without the paths cut while they were found.
    pub fn domains(&self) -> Result<Domains, ModelError> {
        let (domains, traces, _) = self.domains_and_spins()?;
        Ok((domains, traces))
    }

    /// [`Program::domains`], and apart each thread's paths that an idle iteration cut: those
    /// that may spin for ever.
    pub fn domains_and_spins(&self) -> Result<(Vec<BTreeSet<Value>>, Traces, Traces), ModelError> {
        let (domains, traces) = self.fixpoint()?;
        let (finish, spin) = traces
            .into_iter()
            .map(|per_thread| per_thread.into_iter().partition(|tr| tr.spin.is_none()))
            .unzip();
        Ok((domains, finish, spin))
    }

    /// The values each memory can hold in an execution free of thin air: initial values, then
    /// what the threads write when reading values found so far, on any path, even one an idle
    /// iteration cuts later, each through a chain of writes that no execution's writes
    /// outnumber ([`provenance`]); as a backstop, no more rounds than an execution has writes.
    /// Each round runs again only the threads that read a memory whose values grew.
    fn fixpoint(&self) -> Result<Domains, ModelError> {
        let inits: Vec<Value> = self.memories.iter().map(|m| m.init).collect();
        let mut found = Provenance::new(self.threads.len(), &inits);
        let mut domains: Vec<BTreeSet<Value>> =
            inits.iter().map(|&v| BTreeSet::from([v])).collect();
        let accessed = self.accessed();
        let mut traces = vec![Vec::new(); self.threads.len()];
        let mut grew = vec![true; self.memories.len()];
        let mut round = 0usize;
        loop {
            let stale = |t: usize| accessed[t].iter().any(|&l| grew[l]) || round == 0;
            self.update_traces(&domains, &mut traces, stale)?;
            found.derive(&traces);
            for (l, d) in domains.iter_mut().enumerate() {
                let before = d.len();
                d.extend(found.values(l));
                grew[l] = d.len() > before;
            }
            round += 1;
            if !grew.contains(&true) {
                return Ok((domains, traces));
            }
            if round > max_writes(&traces) + 1 {
                self.update_traces(&domains, &mut traces, |t| {
                    accessed[t].iter().any(|&l| grew[l])
                })?;
                return Ok((domains, traces));
            }
        }
    }
}

/// The most writes an execution makes: per thread, the most of one of its traces, summed.
fn max_writes(traces: &[Vec<Trace>]) -> usize {
    let writes = |tr: &Trace| tr.events.iter().filter(|e| e.is_write()).count();
    traces
        .iter()
        .map(|per_thread| per_thread.iter().map(writes).max().unwrap_or(0))
        .sum()
}

/// Thread `t` of `test` ready to run; the locations it uses that the test does not declare
/// become memories of their own, initially 0.
fn thread_prog(test: &Test, t: &Thread, locs: &mut Locations) -> Result<ThreadProg, ModelError> {
    let mut labels = HashMap::new();
    let mut regs: Vec<Reg> = Vec::new();
    let inits = test.reg_init.iter().filter(|ri| ri.thread == t.id);
    let named = t.body.iter().flat_map(Instr::registers);
    for r in inits.map(|ri| &ri.reg).chain(named) {
        if !regs.contains(r) {
            regs.push(r.clone());
        }
    }
    for (i, ins) in t.body.iter().enumerate() {
        if let Instr::Label(l) = ins {
            labels.insert(l.0.clone(), i);
        }
    }
    for ins in &t.body {
        if let Instr::Branch { target, .. } = ins {
            if !labels.contains_key(&target.0) {
                return Err(ModelError::Unsupported {
                    construct: format!("branch to {}", target.0),
                    reason: format!("P{} has no such label", t.id),
                });
            }
        }
        if let Some(a) = ins.addr() {
            if !locs.names.contains_key(&a.loc) {
                locs.add_memory(&a.loc, 0);
            }
        }
    }
    let reg_init = regs
        .iter()
        .map(|r| {
            test.reg_init
                .iter()
                .rev()
                .find(|ri| ri.thread == t.id && &ri.reg == r)
                .map_or(0, |ri| ri.value)
        })
        .collect();
    let cta_size = test
        .threads
        .iter()
        .filter(|o| o.place.same_cta(&t.place))
        .count();
    let live_in = liveness::liveness(&t.body, &labels, &regs);
    Ok(ThreadProg {
        place: t.place,
        body: t.body.clone(),
        labels,
        regs,
        reg_init,
        cta_size,
        live_in,
    })
}
