//! The sink of the search: what every candidate execution of every combination shows —
//! allowed outcomes with a witness each, the axiom excluding each other outcome, value domains
//! and counts — within the model's budgets.

use super::goal::Goal;
use super::lower::{Program, Trace};
use super::relation::{bit, members, Rel, Set};
use super::relations::{Combo, Hang};
use super::sc::axiomatic::ScSink;
use super::search::{Parts, Sink};
use super::verdict::{Exclusion, ExecEvent, Execution, Relation};
use super::watch::Watch;
use super::{Axiom, ModelError};
use crate::litmus::ast::Value;
use crate::outcome::{Observable, Outcome};
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The most candidate executions one test may have before the checker gives up.
pub const MAX_CANDIDATES: u64 = 20_000_000;

/// The most bytes the outcomes found and their witness executions may take, by
/// [`footprint`]'s count: a test with millions of distinct outcomes would otherwise fill the
/// machine's memory before any time limit ends its check.
pub const MAX_KEPT_BYTES: u64 = 1 << 30;

/// What one allocation costs beyond its bytes (the allocator's header and rounding).
const ALLOCATION: usize = 16;

/// Where an observable's value comes from.
#[derive(Clone, Debug)]
enum Slot {
    /// A register: thread and register index (`None`: never written, keeps `init`).
    Reg {
        thread: usize,
        idx: Option<usize>,
        init: Value,
    },
    /// The final value of a memory.
    Loc(usize),
}

/// Accumulates the results of all candidate executions of a test.
pub struct Collector {
    slots: Vec<Slot>,
    no_locs: bool,
    /// Collect sequentially consistent outcomes (axiomatically) instead of PTX ones.
    pub sc_mode: bool,
    /// Outcomes of sequentially consistent candidates (in `sc_mode`).
    pub sc_found: BTreeSet<Outcome>,
    current: Vec<Value>,
    /// What [`Collector::settled`] answers, kept up to date (the search asks at every choice).
    settled: bool,
    /// Whether every outcome of the current combination is allowed or excluded already: the
    /// search asks once per reads-from choice, and the answer only turns true.
    all_explained: Cell<bool>,
    faulty: Option<ModelError>,
    /// Allowed outcomes with one witness each.
    pub allowed: BTreeMap<Outcome, Execution>,
    /// Outcomes seen in inconsistent candidates, with the first excluding axiom.
    pub excluded: BTreeMap<Outcome, Exclusion>,
    /// Per observable, the values seen in any candidate.
    pub domains: Vec<BTreeSet<Value>>,
    /// Candidate executions examined.
    pub candidates: u64,
    /// Consistent ones.
    pub consistent: u64,
    /// A consistent execution that reaches something undecidable.
    pub fault: Option<ModelError>,
    /// Shared with the caller, who may stop the search (a timeout, Ctrl-C): read, and told the
    /// candidates examined, every [`POLL_EVERY`] steps or candidates.
    pub watch: Option<Arc<Watch>>,
    /// Trace combinations visited.
    steps: u64,
    /// Bytes the outcomes and witnesses kept take, by [`footprint`]'s count.
    kept_bytes: u64,
    /// The most `kept_bytes` may reach ([`MAX_KEPT_BYTES`] unless a caller lowers it).
    pub kept_limit: u64,
    /// Barriers that hang some combination, with the most threads that arrive at each.
    pub hangs: BTreeMap<Hang, usize>,
    /// When set, only the condition is decided: the search stops at the first allowed
    /// outcome the goal holds of, skips what cannot give one and keeps no exclusions.
    pub goal: Option<Goal>,
    /// Whether an allowed outcome the goal holds of was found (its witness is in `allowed`).
    pub found: bool,
}

/// Trace combinations visited at most: the walk that pairs one trace per thread can grow as
/// the product of the threads' traces before a single candidate is built.
pub const MAX_COMBINATIONS: u64 = 50_000_000;

/// How often, in steps or candidates, the stop flag is read.
const POLL_EVERY: u64 = 1024;

impl Collector {
    /// A collector for the observables of a test.
    pub fn new(prog: &Program, observables: &[Observable]) -> Result<Collector, ModelError> {
        let mut slots = Vec::new();
        for o in observables {
            slots.push(match o {
                Observable::Reg { thread, reg } => {
                    let t = prog
                        .threads
                        .get(*thread)
                        .ok_or_else(|| ModelError::Unsupported {
                            construct: format!("{o}"),
                            reason: format!("the test has no thread P{thread}"),
                        })?;
                    let idx = t.regs.iter().position(|r| r == reg);
                    Slot::Reg {
                        thread: *thread,
                        idx,
                        init: idx.map_or(0, |i| t.reg_init[i]),
                    }
                }
                Observable::Loc(name) => {
                    Slot::Loc(prog.phys_of(name).ok_or_else(|| ModelError::Unsupported {
                        construct: format!("{o}"),
                        reason: "the condition names a location the test does not have".into(),
                    })?)
                }
            });
        }
        let n = slots.len();
        let no_locs = !slots.iter().any(|s| matches!(s, Slot::Loc(_)));
        Ok(Collector {
            sc_mode: false,
            sc_found: BTreeSet::new(),
            no_locs,
            slots,
            current: vec![0; n],
            settled: false,
            all_explained: Cell::new(false),
            faulty: None,
            allowed: BTreeMap::new(),
            excluded: BTreeMap::new(),
            domains: vec![BTreeSet::new(); n],
            candidates: 0,
            consistent: 0,
            fault: None,
            watch: None,
            steps: 0,
            kept_bytes: 0,
            kept_limit: MAX_KEPT_BYTES,
            hangs: BTreeMap::new(),
            goal: None,
            found: false,
        })
    }

    /// Records a combination that hangs at barrier `h` (no final state).
    pub fn hang(&mut self, h: Hang) {
        let arrive = h.arrive;
        let key = Hang { arrive: 0, ..h };
        let most = self.hangs.entry(key).or_insert(0);
        *most = (*most).max(arrive);
    }

    /// Whether nothing more can be learnt from the current combination: its outcome (fixed by
    /// the traces when no final memory value is observed) is already allowed with a witness.
    pub fn settled(&self) -> bool {
        self.settled
    }

    /// Whether the goal was reached: nothing more is to be searched.
    pub fn finished(&self) -> bool {
        self.found
    }

    /// Whether the traces `chosen` for the first threads may still give an outcome the goal
    /// holds of (always, without a goal). A trace that stopped undecided leaves its registers
    /// unknown.
    pub fn may_reach(&self, chosen: &[&Trace]) -> bool {
        let Some(goal) = &self.goal else {
            return true;
        };
        goal.may_hold(&|i| match &self.slots[i] {
            Slot::Reg { thread, idx, init } => match (idx, chosen.get(*thread)) {
                (None, _) => Some(*init),
                (Some(r), Some(t)) if t.fault.is_none() => Some(t.regs[*r]),
                _ => None,
            },
            Slot::Loc(_) => None,
        })
    }

    /// Recomputes [`Collector::settled`] for the current combination.
    fn update_settled(&mut self) {
        if self.goal.is_some() {
            self.settled = self.found;
            return;
        }
        let o = Outcome(self.current.clone());
        self.settled = self.no_locs
            && if self.sc_mode {
                self.sc_found.contains(&o)
            } else {
                self.faulty.is_none() && self.allowed.contains_key(&o)
            };
    }

    /// Counts one candidate execution; fails past the budgets or when asked to stop.
    pub fn candidate(&mut self) -> Result<(), ModelError> {
        self.candidates += 1;
        if self.candidates > MAX_CANDIDATES {
            return Err(self.too_large(format!("more than {MAX_CANDIDATES} candidate executions")));
        }
        if self.kept_bytes > self.kept_limit {
            let outcomes = self.allowed.len() + self.excluded.len() + self.sc_found.len();
            return Err(self.too_large(format!(
                "its outcomes and their witness executions would take more than {} \
                 ({outcomes} kept so far)",
                binary_size(self.kept_limit)
            )));
        }
        if self.candidates % POLL_EVERY == 0 {
            if let Some(w) = &self.watch {
                w.add(POLL_EVERY);
            }
        }
        self.poll(self.candidates)
    }

    /// Counts one step of the trace-combination walk; fails past the budget or when asked to
    /// stop.
    pub fn step(&mut self) -> Result<(), ModelError> {
        self.steps += 1;
        if self.steps > MAX_COMBINATIONS {
            return Err(self.too_large(format!(
                "more than {MAX_COMBINATIONS} combinations of thread traces"
            )));
        }
        self.poll(self.steps)
    }

    /// A budget passed: a full check names `--verdict-only`, whose search stops at the first
    /// execution that decides the condition and so often ends far inside the budgets.
    fn too_large(&self, what: String) -> ModelError {
        let what = match self.goal {
            Some(_) => what,
            None => format!("{what}; `check --verdict-only` may still decide the condition"),
        };
        ModelError::TooLarge { what }
    }

    fn poll(&self, count: u64) -> Result<(), ModelError> {
        match &self.watch {
            Some(w) if count % POLL_EVERY == 0 && w.stopped() => Err(ModelError::Stopped),
            _ => Ok(()),
        }
    }

    /// Starts a combination: the registers its traces end with, the values its writes give.
    pub fn start_combo(&mut self, combo: &Combo, traces: &[&Trace]) {
        for (i, s) in self.slots.iter().enumerate() {
            match s {
                Slot::Reg { thread, idx, init } => {
                    let v = idx.map_or(*init, |r| traces[*thread].regs[r]);
                    self.current[i] = v;
                    self.domains[i].insert(v);
                }
                Slot::Loc(l) => {
                    for w in members(finals(combo, *l, None)) {
                        self.domains[i].insert(combo.events[w].value);
                    }
                }
            }
        }
        self.faulty = traces.iter().find_map(|t| t.fault.clone());
        self.all_explained.set(false);
        self.update_settled();
    }

    /// The outcomes a candidate gives: the final values of its [`finals`].
    fn outcomes(&self, combo: &Combo, co: Option<&Rel>) -> Vec<Outcome> {
        let mut outs = vec![self.current.clone()];
        for (i, s) in self.slots.iter().enumerate() {
            if let Slot::Loc(l) = s {
                let vals: BTreeSet<Value> = members(finals(combo, *l, co))
                    .map(|w| combo.events[w].value)
                    .collect();
                let mut next = Vec::new();
                for o in &outs {
                    for v in &vals {
                        let mut o2 = o.clone();
                        o2[i] = *v;
                        next.push(o2);
                    }
                }
                outs = next;
            }
        }
        outs.into_iter().map(Outcome).collect()
    }
}

/// The writes to memory `l` that may be final in a candidate with coherence `co`: the
/// `co`-maximal ones (any, when `co` is not given: some coherence order puts each last), but
/// never the initial write while another exists, since every coherence order puts it first.
fn finals(combo: &Combo, l: usize, co: Option<&Rel>) -> Set {
    let ws = combo.writes_of(l);
    let init = bit(l);
    let last = members(ws)
        .filter(|&w| co.is_none_or(|co| co.row(w) & ws == 0))
        .fold(0, |acc, w| acc | bit(w));
    if ws == init {
        last
    } else {
        last & !init
    }
}

impl Sink for Collector {
    fn settled(&self) -> bool {
        Collector::settled(self)
    }

    fn candidate(&mut self) -> Result<(), ModelError> {
        Collector::candidate(self)
    }

    fn explained(&self, combo: &Combo, co: Option<&Rel>) -> bool {
        if self.faulty.is_some() || self.goal.is_some() || self.all_explained.get() {
            return true;
        }
        let all = self
            .outcomes(combo, co)
            .iter()
            .all(|o| self.allowed.contains_key(o) || self.excluded.contains_key(o));
        if all && co.is_none() {
            self.all_explained.set(true);
        }
        all
    }

    /// Records a consistent execution.
    fn allow(&mut self, combo: &Combo, parts: &Parts, fr: &Rel) {
        self.consistent += 1;
        if let Some(f) = &self.faulty {
            if self.fault.is_none() {
                self.fault = Some(f.clone());
            }
            return;
        }
        if let Some(goal) = &self.goal {
            if let Some(o) = self
                .outcomes(combo, parts.co)
                .into_iter()
                .find(|o| goal.holds(o))
            {
                let ex = execution(combo, parts, Some(fr), o.clone(), &[]);
                self.allowed.insert(o, ex);
                self.found = true;
                self.settled = true;
            }
            return;
        }
        for o in self.outcomes(combo, parts.co) {
            if let std::collections::btree_map::Entry::Vacant(slot) = self.allowed.entry(o) {
                let ex = execution(combo, parts, Some(fr), slot.key().clone(), &[]);
                self.kept_bytes += footprint(&ex) + outcome_bytes(slot.key());
                slot.insert(ex);
            }
        }
        self.update_settled();
    }

    /// Records an inconsistent candidate and the axiom it violates.
    fn exclude(&mut self, combo: &Combo, parts: &Parts, axiom: Axiom, cycle: &[usize]) {
        if self.faulty.is_some() || self.goal.is_some() {
            return;
        }
        let mut shared: Option<Arc<Execution>> = None;
        for o in self.outcomes(combo, parts.co) {
            if self.excluded.contains_key(&o) {
                continue;
            }
            let ex = shared.get_or_insert_with(|| {
                let ex = execution(combo, parts, None, o.clone(), cycle);
                self.kept_bytes += footprint(&ex) + ALLOCATION as u64;
                Arc::new(ex)
            });
            let cycle_bytes = size_of_val(cycle) + ALLOCATION;
            self.kept_bytes += 2 * outcome_bytes(&o) + cycle_bytes as u64;
            let exclusion = Exclusion {
                outcome: o.clone(),
                axiom,
                cycle: cycle.to_vec(),
                execution: Arc::clone(ex),
            };
            self.excluded.insert(o, exclusion);
        }
    }
}

impl ScSink for Collector {
    fn settled(&self) -> bool {
        Collector::settled(self)
    }

    fn candidate(&mut self) -> Result<(), ModelError> {
        Collector::candidate(self)
    }

    /// Records a sequentially consistent candidate whose coherence order is total.
    fn allow_sc(&mut self, combo: &Combo, co: &Rel) {
        if self.faulty.is_some() {
            return;
        }
        for o in self.outcomes(combo, Some(co)) {
            let bytes = outcome_bytes(&o);
            if self.sc_found.insert(o) {
                self.kept_bytes += bytes;
            }
        }
        self.update_settled();
    }
}

/// `bytes` in whole MiB, or in KiB below one MiB.
fn binary_size(bytes: u64) -> String {
    match bytes >> 20 {
        0 => format!("{} KiB", bytes >> 10),
        mib => format!("{mib} MiB"),
    }
}

/// Bytes an outcome kept as a map key takes: its values, one allocation, and its share of
/// the map's node.
fn outcome_bytes(o: &Outcome) -> u64 {
    (size_of::<Outcome>() * 2 + o.0.len() * size_of::<Value>() + ALLOCATION) as u64
}

/// Bytes a witness execution takes beyond its outcome: its events, each label an allocation of
/// its own, and its edges.
fn footprint(ex: &Execution) -> u64 {
    let events: usize = ex
        .events
        .iter()
        .map(|e| e.label.capacity() + ALLOCATION)
        .sum();
    let vectors = ex.events.len() * size_of::<ExecEvent>()
        + ex.edges.len() * size_of::<(Relation, usize, usize)>()
        + 3 * ALLOCATION;
    (events + vectors) as u64 + outcome_bytes(&ex.outcome)
}

/// Builds the reportable graph of a candidate; `cycle` is the offending cycle of an excluded
/// one (empty for an allowed one).
pub(super) fn execution(
    combo: &Combo,
    parts: &Parts,
    fr: Option<&Rel>,
    outcome: Outcome,
    cycle: &[usize],
) -> Execution {
    let events = combo
        .events
        .iter()
        .map(|e| ExecEvent {
            thread: e.thread,
            instr: e.instr,
            label: e.label(),
        })
        .collect();
    let mut edges = Vec::new();
    let mut push = |name: Relation, r: &Rel| {
        edges.extend(r.pairs().map(|(a, b)| (name, a, b)));
    };
    push(
        Relation::Po,
        &with_steps(combo.po_imm.clone(), &combo.po, cycle),
    );
    push(Relation::Rf, parts.rf);
    if let Some(co) = parts.co {
        push(
            Relation::Co,
            &with_steps(immediate_co(combo, co), co, cycle),
        );
    }
    let computed;
    let fr = match (fr, parts.co) {
        (Some(fr), _) => Some(fr),
        (None, Some(co)) => {
            computed = combo.fr(parts.rf, co);
            Some(&computed)
        }
        (None, None) => None,
    };
    if let Some(fr) = fr {
        push(Relation::Fr, &with_steps(drawn_fr(fr, parts.co), fr, cycle));
    }
    push(Relation::Rmw, &combo.rmw);
    push(Relation::Dep, &combo.dep);
    let mut sync = parts.sync.clone();
    for (a, b) in parts.sync.pairs() {
        if combo.po.has(a, b) || parts.fsc.has(a, b) {
            sync.remove(a, b);
        }
    }
    push(Relation::Sync, &sync);
    push(Relation::Fsc, parts.fsc);
    if let Some(cause) = parts.cause {
        let drawn = drawn_cause(combo, cause, &edges, cycle);
        edges.extend(drawn.pairs().map(|(a, b)| (Relation::Cause, a, b)));
    }
    Execution {
        outcome,
        events,
        edges,
    }
}

/// The causality-order edges worth drawing, as herd7 users read a derived relation: the
/// immediate ones (`cause` minus `cause;cause`: it contains `po-loc` and is mostly transitive,
/// so drawing all of it would bury the graph) that no other drawn edge already joins,
/// none from an initial write (they cause every later access of a thread that reads them,
/// which says nothing), plus every step of `cycle` that only `cause` joins: the edge a
/// `causality` violation closes its cycle with, usually a transitive one.
fn drawn_cause(
    combo: &Combo,
    cause: &Rel,
    drawn: &[(Relation, usize, usize)],
    cycle: &[usize],
) -> Rel {
    let joined = |a: usize, b: usize| drawn.iter().any(|&(_, x, y)| x == a && y == b);
    let mut out = cause.clone();
    let two = cause.seq(cause);
    for (a, b) in cause.pairs() {
        if two.has(a, b) || a < combo.nlocs || joined(a, b) {
            out.remove(a, b);
        }
    }
    let steps = with_steps(Rel::new(cause.len()), cause, cycle);
    for (a, b) in steps.pairs() {
        if !joined(a, b) {
            out.add(a, b);
        }
    }
    out
}

/// `drawn` with every step of `cycle` that `full` holds: an edge left out as implied by
/// others is drawn when the cycle takes it, so that each step has its edge.
fn with_steps(mut drawn: Rel, full: &Rel, cycle: &[usize]) -> Rel {
    if cycle.len() > 1 {
        for (i, &a) in cycle.iter().enumerate() {
            let b = cycle[(i + 1) % cycle.len()];
            if full.has(a, b) {
                drawn.add(a, b);
            }
        }
    }
    drawn
}

/// Only the immediate coherence edges; initial writes are first anyway.
fn immediate_co(combo: &Combo, co: &Rel) -> Rel {
    let mut imm = co.clone();
    let two = co.seq(co);
    for (a, b) in co.pairs() {
        if two.has(a, b) || a < combo.nlocs {
            imm.remove(a, b);
        }
    }
    imm
}

/// The from-reads edges worth drawing: those implied by `fr;co` are left out.
fn drawn_fr(fr: &Rel, co: Option<&Rel>) -> Rel {
    let mut f = fr.clone();
    if let Some(co) = co {
        let two = fr.seq(co);
        for (a, b) in fr.pairs() {
            if two.has(a, b) {
                f.remove(a, b);
            }
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::observables;

    /// Past a budget, a full check names `--verdict-only`; a check that already decides the
    /// condition alone does not send the user to itself.
    #[test]
    fn a_full_check_past_a_budget_names_verdict_only() {
        let text = "PTX MP\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
                    st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, y ;\n \
                    st.relaxed.gpu y, 1 | ld.relaxed.gpu r1, x ;\n\
                    exists (P1:r0 == 1 /\\ P1:r1 == 0)\n";
        let test = crate::litmus::parse(text, std::path::Path::new("mp.litmus")).unwrap();
        let prog = Program::new(&test).unwrap();
        let obs = observables(&test);
        let past = |goal: bool, candidates: bool| {
            let mut c = Collector::new(&prog, &obs).unwrap();
            c.goal = goal.then(|| Goal::of(&test, &obs));
            let e = if candidates {
                c.candidates = MAX_CANDIDATES;
                c.candidate()
            } else {
                c.steps = MAX_COMBINATIONS;
                c.step()
            };
            match e {
                Err(ModelError::TooLarge { what }) => what,
                other => panic!("not refused: {other:?}"),
            }
        };
        for candidates in [false, true] {
            let full = past(false, candidates);
            assert!(
                full.contains("`check --verdict-only` may still decide"),
                "{full}"
            );
            let decide = past(true, candidates);
            assert!(
                decide.starts_with("more than ") && !decide.contains("verdict"),
                "{decide}"
            );
        }
    }
}
