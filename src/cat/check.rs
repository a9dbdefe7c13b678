//! A model run on every candidate execution of a test: the skeletons the checker builds, every
//! reads-from choice, every Fence-SC order and every coherence order, each evaluated by the
//! interpreter. Coherence is any strict partial order per location with the initial write
//! first (the PTX ISA §8 coherence order is partial), so the allowed set is exact whatever the
//! model requires of `co`.

use super::ast::{Model, Stmt};
use super::base::{static_env, with_choices};
use super::eval::{bind, check_name, run_stage, stages, Env, Val};
use super::matrix::{members, Mat, Set};
use super::CatError;
use crate::fx::{FxHashMap, FxHashSet};
use crate::litmus::ast::{Quantifier, Test};
use crate::model::candidates::{for_each_skeleton, Skeleton};
use crate::model::event::{FenceKind, Kind};
use crate::model::{CheckResult, ModelError, Watch, MAX_CANDIDATES};
use crate::outcome::{Observable, Outcome};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::OnceLock;

/// The most writes to one location (their partial orders are enumerated: 130,023 for six).
pub const MAX_WRITES_PER_LOCATION: usize = 6;
/// The most coherence orders of one test, the product over its locations: more are refused
/// before they are built (each is a relation over every event).
const MAX_CO_ORDERS: usize = 200_000;
/// The most pairs of `fence.sc` of different threads to orient: more are refused at once
/// (their orders would pass [`MAX_FENCE_ORDERS`] long before they were all enumerated).
const MAX_FENCE_PAIRS: usize = 28;
/// The most Fence-SC orders of one combination of traces.
const MAX_FENCE_ORDERS: usize = 1 << 16;

/// What a model allows for a test.
#[derive(Clone, Debug)]
pub struct CatVerdict {
    /// The observables, in outcome order.
    pub observables: Vec<Observable>,
    /// The allowed outcomes.
    pub allowed: BTreeSet<Outcome>,
    /// Outcomes of inconsistent candidates only, with the first check one of them failed.
    pub excluded: BTreeMap<Outcome, String>,
    /// Candidate executions counted, one per choice of reads-from, Fence-SC and coherence order.
    pub candidates: u64,
    /// Consistent ones, of those evaluated: a candidate whose outcomes are all allowed
    /// already is counted but not evaluated.
    pub consistent: u64,
}

impl CatVerdict {
    /// Whether the test's condition holds under the model (as [`crate::model::check`] says).
    pub fn result(&self, test: &Test) -> CheckResult {
        let prop = &test.condition.prop;
        let holds = |o: &&Outcome| o.satisfies(&self.observables, prop);
        let ok = match test.condition.quantifier {
            Quantifier::Exists => self.allowed.iter().any(|o| holds(&o)),
            Quantifier::NotExists => !self.allowed.iter().any(|o| holds(&o)),
            Quantifier::Forall => self.allowed.iter().all(|o| holds(&o)),
        };
        if ok {
            CheckResult::Ok
        } else {
            CheckResult::No
        }
    }
}

/// Why a model could not be run on a test.
#[derive(Debug)]
pub enum CheckError {
    /// The test cannot be enumerated (unsupported, too large).
    Model(ModelError),
    /// The model fails to evaluate (unknown name, type error).
    Cat(CatError),
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Model(e) => write!(f, "{e}"),
            CheckError::Cat(e) => write!(f, "model, {e}"),
        }
    }
}

impl std::error::Error for CheckError {}

impl From<ModelError> for CheckError {
    fn from(e: ModelError) -> Self {
        CheckError::Model(e)
    }
}

fn too_large(what: String) -> CheckError {
    CheckError::Model(ModelError::TooLarge { what })
}

/// Runs `model` on every candidate execution of `test`.
pub fn check(model: &Model, test: &Test) -> Result<CatVerdict, CheckError> {
    check_until(model, test, None)
}

/// [`check`], giving up with [`ModelError::Stopped`] soon after `watch` is stopped (the
/// caller's timeout or Ctrl-C; it is read before each skeleton and each coherence order, and
/// told every candidate counted).
pub fn check_until(
    model: &Model,
    test: &Test,
    watch: Option<&Watch>,
) -> Result<CatVerdict, CheckError> {
    let mut v = Found::default();
    let mut failure: Option<CheckError> = None;
    let st = stages(model);
    let obs = for_each_skeleton(
        test,
        &mut |sk| match skeleton(model, &st, sk, &mut v, watch) {
            Ok(()) => Ok(()),
            Err(CheckError::Model(e)) => Err(e),
            Err(e) => {
                failure = Some(e);
                Err(ModelError::Stopped)
            }
        },
    );
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(v.verdict(model, obs?))
}

/// What the candidates evaluated so far show, in hash tables (every candidate looks its
/// outcomes up), sorted into a [`CatVerdict`] at the end.
#[derive(Default)]
struct Found {
    allowed: FxHashSet<Outcome>,
    /// Outcomes of inconsistent candidates, with the first check one of them failed (its
    /// statement's index); some may be allowed by a later candidate.
    excluded: FxHashMap<Outcome, usize>,
    candidates: u64,
    consistent: u64,
}

impl Found {
    /// Records outcomes excluded by the check that is statement `check` of the model.
    fn exclude(&mut self, outcomes: Vec<Outcome>, check: usize) {
        for o in outcomes {
            self.excluded.entry(o).or_insert(check);
        }
    }

    /// Whether each of `outcomes` is allowed already.
    fn all_allowed(&self, outcomes: &[Outcome]) -> bool {
        outcomes.iter().all(|o| self.allowed.contains(o))
    }

    /// The verdict: the allowed outcomes, and the others with the check that excludes each.
    fn verdict(self, model: &Model, observables: Vec<Observable>) -> CatVerdict {
        let allowed = self.allowed;
        let excluded = self
            .excluded
            .into_iter()
            .filter(|(o, _)| !allowed.contains(o));
        CatVerdict {
            observables,
            excluded: excluded.map(|(o, i)| (o, check_name(model, i))).collect(),
            allowed: allowed.into_iter().collect(),
            candidates: self.candidates,
            consistent: self.consistent,
        }
    }
}

/// Stops the walk once the caller's watch is stopped.
fn stopped(watch: Option<&Watch>) -> Result<(), CheckError> {
    match watch {
        Some(w) if w.stopped() => Err(CheckError::Model(ModelError::Stopped)),
        _ => Ok(()),
    }
}

/// Counts `k` candidates against the checker's budget ([`MAX_CANDIDATES`]), and on the
/// caller's watch.
fn count(v: &mut Found, k: u64, watch: Option<&Watch>) -> Result<(), CheckError> {
    v.candidates += k;
    if let Some(w) = watch {
        w.add(k);
    }
    if v.candidates > MAX_CANDIDATES {
        return Err(too_large(format!(
            "more than {MAX_CANDIDATES} candidate executions"
        )));
    }
    Ok(())
}

/// Every candidate of one skeleton: what the program fixes is evaluated once per choice of
/// the barriers a quorum synchronises, what reads-from and Fence-SC order fix once per such
/// choice, the rest per coherence order.
fn skeleton(
    model: &Model,
    st: &[u8],
    sk: &Skeleton,
    v: &mut Found,
    watch: Option<&Watch>,
) -> Result<(), CheckError> {
    stopped(watch)?;
    // Every coherence order puts the initial writes first, so one is final only alone.
    let mut init_first = vec![0; sk.events.len()];
    for (w, e) in sk.events.iter().enumerate().skip(sk.nlocs) {
        if e.is_write() {
            init_first[e.loc] |= 1 << w;
        }
    }
    let every = sk.outcomes(&init_first);
    if v.all_allowed(&every) {
        return Ok(());
    }
    let fences = fence_orders(sk)?;
    let cos = co_orders(sk)?;
    let co_stage = CoStage {
        model,
        st,
        sk,
        watch,
        rebound: bound_from(model, st, 2),
    };
    for syncbar in &sk.syncbars {
        co_stage.barrier_choice(syncbar, &fences, &cos, &every, v)?;
    }
    Ok(())
}

/// The last stage of one skeleton's candidates: what depends on the coherence order.
struct CoStage<'a> {
    model: &'a Model,
    st: &'a [u8],
    sk: &'a Skeleton,
    watch: Option<&'a Watch>,
    /// The names the stage binds.
    rebound: Vec<&'a String>,
}

impl CoStage<'_> {
    /// The candidates of one barrier synchronisation `syncbar`: each reads-from choice, then
    /// each Fence-SC order of `fences` and coherence order of `cos`; `every` holds every
    /// outcome of the skeleton.
    fn barrier_choice(
        &self,
        syncbar: &[Set],
        fences: &[Mat],
        cos: &[Mat],
        every: &[Outcome],
        v: &mut Found,
    ) -> Result<(), CheckError> {
        let (model, st, sk, watch) = (self.model, self.st, self.sk, self.watch);
        let n = sk.events.len();
        let per_rf = (fences.len() * cos.len()) as u64;
        let mut env0 = static_env(sk, syncbar);
        if let Some(check) = run_stage(model, st, 0, n, &mut env0).map_err(CheckError::Cat)? {
            let rfs: u64 = sk.rf_choices.iter().map(|(_, w)| w.len() as u64).product();
            count(v, rfs * per_rf, watch)?;
            v.exclude(every.to_vec(), check);
            return Ok(());
        }
        // The later stages run in place in one environment; before each choice of reads-from
        // and Fence-SC order, the names they bind get back their values after stage 0.
        let later = bound_from(model, st, 1);
        let after_stage_0 = Saved::of(&later, &env0);
        let mut env = env0;
        let mut rf = Mat::empty(n);
        let mut pick = vec![0usize; sk.rf_choices.len()];
        loop {
            stopped(watch)?;
            if v.all_allowed(every) {
                return Ok(());
            }
            for (k, (r, ws)) in sk.rf_choices.iter().enumerate() {
                rf.rows.iter_mut().for_each(|row| *row &= !(1u128 << r));
                rf.rows[ws[pick[k]]] |= 1 << r;
            }
            for sf in fences {
                after_stage_0.restore(&mut env);
                with_choices(&mut env, &rf, &Mat::empty(n), sf);
                if let Some(check) =
                    run_stage(model, st, 1, n, &mut env).map_err(CheckError::Cat)?
                {
                    count(v, cos.len() as u64, watch)?;
                    v.exclude(every.to_vec(), check);
                    continue;
                }
                self.run(&mut env, &rf, sf, cos, v)?;
            }
            if !advance(&mut pick, sk.rf_choices.iter().map(|(_, ws)| ws.len())) {
                return Ok(());
            }
        }
    }

    /// Evaluates each coherence order of `cos` in `env`, where the earlier stages ran for
    /// reads-from `rf` and Fence-SC order `sf`, adding each to `v`.
    fn run(
        &self,
        env: &mut Env,
        rf: &Mat,
        sf: &Mat,
        cos: &[Mat],
        v: &mut Found,
    ) -> Result<(), CheckError> {
        // The stage runs in place; the names it binds get their earlier values back before
        // each coherence order.
        let saved = Saved::of(&self.rebound, env);
        let n = self.sk.events.len();
        for co in cos {
            count(v, 1, self.watch)?;
            stopped(self.watch)?;
            let outcomes = self.sk.outcomes(&co.rows);
            if self.sk.fault.is_none() && v.all_allowed(&outcomes) {
                // Whatever the model says of this candidate, the verdict stays the same.
                continue;
            }
            saved.restore(env);
            with_choices(env, rf, co, sf);
            match run_stage(self.model, self.st, 2, n, env).map_err(CheckError::Cat)? {
                None => {
                    if let Some(f) = &self.sk.fault {
                        return Err(f.clone().into());
                    }
                    v.consistent += 1;
                    v.allowed.extend(outcomes);
                }
                Some(check) => v.exclude(outcomes, check),
            }
        }
        Ok(())
    }
}

/// The values some names have at one point of a stage's evaluation, to give back: a stage
/// runs in place, and its statements may read a name that it or a later stage rebinds.
struct Saved<'a>(Vec<(&'a String, Option<Val>)>);

impl<'a> Saved<'a> {
    /// The values of `names` in `env` now.
    fn of(names: &[&'a String], env: &Env) -> Saved<'a> {
        Saved(names.iter().map(|k| (*k, env.get(*k).cloned())).collect())
    }

    /// Gives each name its saved value back (unbinds one that had none).
    fn restore(&self, env: &mut Env) {
        for (k, val) in &self.0 {
            match val {
                Some(x) => bind(env, k, x.clone()),
                None => drop(env.remove(*k)),
            }
        }
    }
}

/// The names the statements of stage `from` and later stages bind.
fn bound_from<'a>(model: &'a Model, st: &[u8], from: u8) -> Vec<&'a String> {
    let mut out = Vec::new();
    for (stmt, _) in model.stmts.iter().zip(st).filter(|(_, k)| **k >= from) {
        match stmt {
            Stmt::Let(name, _) => out.push(name),
            Stmt::LetRec(binds) => out.extend(binds.iter().map(|(n, _)| n)),
            Stmt::Check { .. } => {}
        }
    }
    out
}

/// Steps a mixed-radix counter; false after the last value.
fn advance(pick: &mut [usize], radix: impl Iterator<Item = usize>) -> bool {
    for (p, r) in pick.iter_mut().zip(radix) {
        *p += 1;
        if *p < r {
            return true;
        }
        *p = 0;
    }
    false
}

/// Every Fence-SC order: one orientation for each pair of `fence.sc` of different threads
/// whose scopes include each other's thread, acyclic; pairs of one thread in program order.
fn fence_orders(sk: &Skeleton) -> Result<Vec<Mat>, CheckError> {
    let n = sk.events.len();
    let ev = &sk.events;
    let sc: Vec<usize> = (0..n)
        .filter(|&i| ev[i].kind == Kind::Fence(FenceKind::Sc))
        .collect();
    let mut fixed = Mat::empty(n);
    let mut free = Vec::new();
    for (k, &a) in sc.iter().enumerate() {
        for &b in &sc[k + 1..] {
            let (pa, pb) = (sk.places[a].expect("fence"), sk.places[b].expect("fence"));
            if ev[a].thread == ev[b].thread {
                fixed.rows[a] |= 1 << b;
            } else if pa.scope_includes(ev[a].scope, &pb) && pb.scope_includes(ev[b].scope, &pa) {
                free.push((a, b));
            }
        }
    }
    if free.len() > MAX_FENCE_PAIRS {
        return Err(too_large(format!(
            "{} pairs of fence.sc to order",
            free.len()
        )));
    }
    let mut out = Vec::new();
    let reach = fixed.plus();
    orient(&free, fixed, reach, &mut out)?;
    Ok(out)
}

/// Appends to `out` each way of orienting every pair of `free` in `order` (whose transitive
/// closure is `reach`) without a cycle: the last pair is chosen first, `a → b` before
/// `b → a`. An orientation that closes a cycle is dropped with everything below it, so the
/// work follows the orders found, not the 2^k orientations.
fn orient(
    free: &[(usize, usize)],
    order: Mat,
    reach: Mat,
    out: &mut Vec<Mat>,
) -> Result<(), CheckError> {
    let Some((&(a, b), rest)) = free.split_last() else {
        if out.len() == MAX_FENCE_ORDERS {
            return Err(too_large(format!(
                "more than {MAX_FENCE_ORDERS} Fence-SC orders"
            )));
        }
        out.push(order);
        return Ok(());
    };
    for (x, y) in [(a, b), (b, a)] {
        if reach.has(y, x) {
            continue;
        }
        let mut o = order.clone();
        o.rows[x] |= 1 << y;
        // Whatever reaches `x` (and `x`) now reaches `y` and all `y` reaches.
        let mut r = reach.clone();
        let to = r.rows[y] | 1 << y;
        for i in 0..r.len() {
            if i == x || r.rows[i] >> x & 1 != 0 {
                r.rows[i] |= to;
            }
        }
        orient(rest, o, r, out)?;
    }
    Ok(())
}

/// Every coherence order: per location, the initial write before every other write and any
/// strict partial order among the others; closed transitively.
fn co_orders(sk: &Skeleton) -> Result<Vec<Mat>, CheckError> {
    let n = sk.events.len();
    let writes: Vec<Vec<usize>> = (0..sk.nlocs)
        .map(|l| {
            (sk.nlocs..n)
                .filter(|&w| sk.events[w].is_write() && sk.events[w].loc == l)
                .collect()
        })
        .collect();
    let mut total = 1usize;
    for (l, ws) in writes.iter().enumerate() {
        if ws.len() > MAX_WRITES_PER_LOCATION {
            return Err(too_large(format!(
                "{} writes to {} (at most {MAX_WRITES_PER_LOCATION})",
                ws.len(),
                sk.events[l].loc_name
            )));
        }
        total = total.saturating_mul(partial_orders(ws.len()).len());
    }
    if total > MAX_CO_ORDERS {
        return Err(too_large(format!(
            "{total} coherence orders (at most {MAX_CO_ORDERS})"
        )));
    }
    let mut out = vec![Mat::empty(n)];
    for (l, ws) in writes.iter().enumerate() {
        let init_row: Set = ws.iter().fold(0, |s, w| s | 1 << w);
        let mut next = Vec::new();
        for order in partial_orders(ws.len()) {
            for base in &out {
                let mut m = base.clone();
                m.rows[l] |= init_row;
                for (i, row) in order.iter().enumerate() {
                    for j in members(*row as Set) {
                        m.rows[ws[i]] |= 1 << ws[j];
                    }
                }
                next.push(m);
            }
        }
        out = next;
    }
    Ok(out)
}

/// Every strict partial order on `k` elements (transitive, irreflexive), as rows of bits
/// (`rows[i]` holds the elements above `i`).
fn partial_orders(k: usize) -> &'static [Vec<u8>] {
    static CACHE: [OnceLock<Vec<Vec<u8>>>; MAX_WRITES_PER_LOCATION + 1] =
        [const { OnceLock::new() }; MAX_WRITES_PER_LOCATION + 1];
    CACHE[k].get_or_init(|| match k {
        0 => vec![Vec::new()],
        _ => partial_orders(k - 1)
            .iter()
            .flat_map(|p| extensions(p))
            .collect(),
    })
}

/// Every strict partial order on one element more than `p` that orders the others as `p`
/// does: the new element goes above a down-closed set `below` and under an up-closed set
/// `above`, each of `below` already under each of `above` (so that the order stays
/// transitive); each such pair is one order, and every order arises from exactly one.
fn extensions(p: &[u8]) -> Vec<Vec<u8>> {
    let k = p.len();
    let new = 1u8 << k;
    let down_closed = |s: u8| {
        (0..k).all(|i| s >> i & 1 == 0 || (0..k).all(|j| p[j] >> i & 1 == 0 || s >> j & 1 == 1))
    };
    let up_closed = |s: u8| (0..k).all(|i| s >> i & 1 == 0 || p[i] & !s == 0);
    let mut out = Vec::new();
    for below in (0..new).filter(|&s| down_closed(s)) {
        for above in (0..new).filter(|&s| s & below == 0 && up_closed(s)) {
            if (0..k).any(|i| below >> i & 1 == 1 && p[i] & above != above) {
                continue;
            }
            let mut rows: Vec<u8> = p.to_vec();
            for (i, row) in rows.iter_mut().enumerate() {
                if below >> i & 1 == 1 {
                    *row |= new;
                }
            }
            rows.push(above);
            out.push(rows);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_orders_are_counted_as_known() {
        // The number of labelled posets on 0..6 elements (OEIS A001035).
        let counts: Vec<usize> = (0..7).map(|k| partial_orders(k).len()).collect();
        assert_eq!(counts, vec![1, 1, 3, 19, 219, 4231, 130_023]);
        // Each is transitive and irreflexive, and none comes twice.
        for k in 0..6 {
            let all = partial_orders(k);
            for rows in all {
                for i in 0..k {
                    assert_eq!(rows[i] >> i & 1, 0, "{rows:?}");
                    for j in members(Set::from(rows[i])) {
                        assert_eq!(rows[j] & !rows[i], 0, "{rows:?}");
                    }
                }
            }
            let unique: std::collections::BTreeSet<&Vec<u8>> = all.iter().collect();
            assert_eq!(unique.len(), all.len());
        }
    }

    #[test]
    fn coherence_orders_past_their_bounds_are_refused_before_they_are_built() {
        let model = crate::cat::load(crate::cat::builtin::PTX_7_5).unwrap();
        let run = |writes: &str| {
            let text = format!(
                "PTX W\n{{ x=0; y=0; }}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n{writes}exists (x == 1)\n"
            );
            let test = crate::litmus::parse(&text, std::path::Path::new("W.litmus")).unwrap();
            check(&model, &test)
                .map(|v| v.allowed.len())
                .map_err(|e| e.to_string())
        };
        let six_x = " st.weak x, 1 | st.weak x, 4 ;\n st.weak x, 2 | st.weak x, 5 ;\n \
                     st.weak x, 3 | st.weak x, 6 ;\n";
        assert_eq!(
            run(six_x),
            Ok(2),
            "either thread's last write ends coherence"
        );
        let e = run(&format!(
            "{six_x} st.weak y, 1 | st.weak y, 2 ;\n st.weak y, 3 | ;\n"
        ))
        .unwrap_err();
        assert!(
            e.contains("2470437 coherence orders (at most 200000)"),
            "{e}"
        );
        let e = run(&format!("{six_x} st.weak x, 7 | ;\n")).unwrap_err();
        assert!(e.contains("7 writes to x (at most 6)"), "{e}");
    }

    #[test]
    fn a_name_a_later_stage_rebinds_reads_its_earlier_value_at_every_choice() {
        // LB with a third thread writing x = 1 too, so P0's read of 1 has two writes to read
        // from: P1's (no cycle, but `not_from_lone` excludes it) and then P2's (the LB cycle).
        // `b` reads `a` before `let a = co` rebinds it; the stages run in place, so the
        // second choice must see `a = po` again, not the first choice's `co`, under which
        // its cycle would go unseen and the outcome be allowed.
        let lb = "PTX LB3\n{ x=0; y=0; }\n \
                  P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 ;\n \
                  ld.relaxed.gpu r0, x | st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, y ;\n \
                  st.relaxed.gpu y, 1 | | st.relaxed.gpu x, 1 ;\n\
                  exists (P0:r0 == 1 /\\ P2:r0 == 1)\n";
        let test = crate::litmus::parse(lb, std::path::Path::new("LB3.litmus")).unwrap();
        let text = "M\nlet a = po\nlet b = rf | a\nlet a = co\nacyclic b as no_lb\n\
                    let lone = W \\ IW \\ domain(po) \\ range(po)\n\
                    empty [lone] ; rf ; co? as not_from_lone\n";
        let model = crate::cat::parser::parse(text).unwrap();
        let v = check(&model, &test).unwrap();
        let both_one = Outcome(vec![1, 1]);
        assert!(!v.allowed.contains(&both_one), "{:?}", v.allowed);
        assert_eq!(v.allowed.len(), 3, "{:?}", v.allowed);
    }

    #[test]
    fn fence_sc_orders_are_the_linear_orders_that_keep_program_order() {
        // IRIW-SC-SC: six `fence.sc` of four threads, two threads with two each; every pair
        // of different threads is ordered, so the orders are the 6! / (2 * 2) = 180
        // interleavings of the threads' fences.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/litmus/pomset/IRIW-SC-SC.litmus"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let test = crate::litmus::parse(&text, std::path::Path::new(path)).unwrap();
        let mut skeletons = 0;
        for_each_skeleton(&test, &mut |sk| {
            skeletons += 1;
            let orders = fence_orders(sk).unwrap();
            assert_eq!(orders.len(), 180);
            assert!(orders.iter().all(Mat::acyclic));
            let distinct: BTreeSet<Vec<u128>> = orders.iter().map(|m| m.rows.to_vec()).collect();
            assert_eq!(distinct.len(), 180, "each order once");
            Ok(())
        })
        .unwrap();
        assert!(skeletons > 0);
    }

    #[test]
    fn a_barrier_quorum_is_a_choice_of_the_barriers_it_synchronises() {
        // A quorum of 2 among 4 lets P1 synchronise without P0 and miss its store; a quorum
        // of every thread does not; a quorum of 4 among 3 never completes, so nothing is
        // allowed. Our ptx-7.5 model must agree with the built-in checker.
        let model = crate::cat::load(crate::cat::builtin::PTX_7_5).unwrap();
        for (name, stale, states) in [
            ("MP+bar.q2of4", true, 2),
            ("MP+bar.q3of3", false, 1),
            ("MP+bar.q4of3-hang", false, 0),
        ] {
            let path = format!(
                "{}/litmus/barrier-quorum/{name}.litmus",
                env!("CARGO_MANIFEST_DIR")
            );
            let text = std::fs::read_to_string(&path).unwrap();
            let test = crate::litmus::parse(&text, std::path::Path::new(&path)).unwrap();
            let v = check(&model, &test).unwrap();
            assert_eq!(v.allowed.contains(&Outcome(vec![0])), stale, "{name}");
            assert_eq!(v.allowed.len(), states, "{name}");
            let builtin = crate::model::check(&test).unwrap();
            assert_eq!(v.allowed, builtin.allowed, "{name}");
        }
    }

    #[test]
    fn a_counter_visits_every_choice_once() {
        let mut pick = vec![0, 0];
        let mut seen = 1;
        while advance(&mut pick, [2usize, 3].into_iter()) {
            seen += 1;
        }
        assert_eq!(seen, 6);
    }
}
