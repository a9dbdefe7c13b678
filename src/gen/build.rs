//! One generated test: the annotated cycle, the placement and the memory space turned into
//! litmus text (threads, instructions, the condition that holds exactly when the cycle
//! happens), parsed back and printed in canonical form.

use super::annot::{Access, Annot, Dir, Via};
use super::cycle::{Cycle, Dep, EdgeKind};
use super::place::Place;
use super::skeleton::{loc_name, Event, Skeleton};
use super::GenError;
use crate::litmus::{self, ast::AtomOp, ast::Placement, ast::Sem, ast::Spelled, ast::Test};
use std::fmt::Write;
use std::path::Path;

/// Where the test's locations live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// Global memory.
    Global,
    /// Shared memory of thread 0's CTA (`.shared::cta` there, `.shared::cluster` from the
    /// other CTAs of its cluster).
    Shared,
}

impl Space {
    /// Parses `global` or `shared`.
    pub fn parse(word: &str) -> Result<Space, GenError> {
        match word {
            "global" => Ok(Space::Global),
            "shared" => Ok(Space::Shared),
            _ => Err(GenError::msg(format!(
                "space `{word}`: expected global or shared"
            ))),
        }
    }

    /// Whether every thread of `places` can reach shared memory of thread 0's CTA.
    pub fn reachable(self, places: &[Placement]) -> bool {
        self == Space::Global || places.iter().all(|p| p.same_cluster(&places[0]))
    }
}

/// Everything that defines one generated test.
#[derive(Clone, Debug)]
pub struct Variant {
    /// The test name.
    pub name: String,
    /// The shape's name (`MP`, `iriw`).
    pub shape: String,
    /// The cycle, every scope filled in.
    pub cycle: Cycle,
    /// Where the threads run.
    pub place: Place,
    /// Where the locations live.
    pub space: Space,
    /// A note for the comment line (where the variant comes from).
    pub note: String,
}

/// A generated test: the parsed test and its file text.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The test.
    pub test: Test,
    /// The file's text (a comment line, then the canonical print).
    pub text: String,
}

/// Per-thread instruction emitter: registers and labels numbered as they are used.
struct ThreadCode {
    cells: Vec<String>,
    next_reg: usize,
    next_label: usize,
}

impl ThreadCode {
    fn reg(&mut self) -> String {
        self.next_reg += 1;
        format!("r{}", self.next_reg - 1)
    }
}

/// The `.scope` an access of annotation `a` is written with, or nothing.
fn scope_suffix(a: &Annot) -> String {
    a.scope
        .map_or(String::new(), |s| format!(".{}", s.as_str()))
}

fn access_instr(a: &Annot, dir: Dir, reg: Option<&str>, addr: &str, value: &str) -> String {
    let scope = scope_suffix(a);
    let reg = reg.unwrap_or("r_");
    match (a.access, dir) {
        (Access::Rmw(k), _) => format!("atom.{}{scope}.exch {reg}, {addr}, {value}", k.as_str()),
        (Access::Via(v), Dir::R) => format!("{}.weak {reg}, {addr}", mnemonic(v, dir)),
        (Access::Via(v), Dir::W) => format!("{}.weak {addr}, {value}", mnemonic(v, dir)),
        (acc, Dir::R) => format!("ld.{}{scope} {reg}, {addr}", sem_word(acc)),
        (acc, Dir::W) => format!("st.{}{scope} {addr}, {value}", sem_word(acc)),
    }
}

fn mnemonic(v: Via, dir: Dir) -> &'static str {
    v.mnemonic(dir)
        .expect("the cycle's check admits only accesses the proxy has")
}

/// The name through which an access reaches location `loc`: the location's own, or its alias
/// for the proxy (`x_tex @ texture aliases x`).
pub fn access_name(loc: usize, access: Access) -> String {
    match access {
        Access::Via(v) => format!("{}_{}", loc_name(loc), v.short()),
        _ => loc_name(loc),
    }
}

/// The semantics a load or store of access `a` is written with.
fn sem_word(a: Access) -> &'static str {
    let sem = match a {
        Access::Via(_) | Access::Weak => Sem::Weak,
        Access::Relaxed | Access::Rmw(_) => Sem::Relaxed,
        Access::Acquire => Sem::Acquire,
        Access::Release => Sem::Release,
        Access::Volatile => Sem::Volatile,
    };
    sem.as_str()
}

/// The instructions of event `ev`, given the dependency that reaches it (with the register it
/// starts from) and, for the write of an RMW pair, its operation and the value its read must
/// return; returns the register the access wrote (a read's, or an `atom`'s).
fn emit_event(
    code: &mut ThreadCode,
    annot: &Annot,
    ev: &Event,
    dep: Option<(Dep, &str)>,
    rmw: Option<(AtomOp, i64)>,
) -> Option<String> {
    if let Some(f) = annot.before {
        code.cells.push(f.instr());
    }
    let mut addr = access_name(ev.loc, annot.access);
    let mut value = ev.value.to_string();
    match dep {
        // `and` with 0 keeps the syntactic dependency and gives the kernel's value analysis a
        // single value (an `xor` of a register with itself looks like any value to it).
        Some((Dep::Addr, src)) => {
            let t = code.reg();
            code.cells.push(format!("and {t}, {src}, 0"));
            addr = format!("{addr}+{t}");
        }
        Some((Dep::Data, src)) => {
            let t = code.reg();
            code.cells.push(format!("and {t}, {src}, 0"));
            code.cells.push(format!("add {t}, {t}, {value}"));
            value = t;
        }
        Some((Dep::Ctrl, src)) => {
            let l = format!("LC{:02}", code.next_label);
            code.next_label += 1;
            code.cells.push(format!("beq {src}, -1, {l}"));
            code.cells.push(format!("{l}:"));
        }
        None => {}
    }
    let reg = (ev.dir == Dir::R || matches!(annot.access, Access::Rmw(_))).then(|| code.reg());
    let instr = match rmw {
        Some((op, read)) => rmw_instr(annot, op, reg.as_deref(), &addr, read, &value),
        None => access_instr(annot, ev.dir, reg.as_deref(), &addr, &value),
    };
    code.cells.push(instr);
    reg
}

/// The `atom` of an RMW pair: an exchange stores `value`, a `cas` expects the value `read` and
/// stores `value`, an `add` adds what takes `read` to `value`.
fn rmw_instr(
    a: &Annot,
    op: AtomOp,
    reg: Option<&str>,
    addr: &str,
    read: i64,
    value: &str,
) -> String {
    let Access::Rmw(k) = a.access else {
        unreachable!("an RMW pair's annotation is an RMW's")
    };
    let (sem, scope) = (k.as_str(), scope_suffix(a));
    let reg = reg.unwrap_or("r_");
    let operands = match op {
        AtomOp::Cas => format!("{read}, {value}"),
        AtomOp::Add => {
            let v: i64 = value.parse().expect("no dependency reaches an RMW's write");
            (v - read).to_string()
        }
        _ => value.to_string(),
    };
    format!(
        "atom.{sem}{scope}.{} {reg}, {addr}, {operands}",
        op.as_str()
    )
}

/// The threads' instruction cells and the condition's conjuncts.
fn threads_and_condition(cycle: &Cycle, sk: &Skeleton) -> (Vec<Vec<String>>, Vec<String>) {
    let mut code: Vec<ThreadCode> = (0..sk.threads)
        .map(|_| ThreadCode {
            cells: Vec::new(),
            next_reg: 0,
            next_label: 0,
        })
        .collect();
    let mut conds = Vec::new();
    let mut last_read: Option<String> = None;
    // The read of an RMW waits for its write: the two are one `atom`.
    let mut rmw_read: Option<(usize, Option<(Dep, String)>)> = None;
    for (i, ev) in sk.events.iter().enumerate() {
        let into = (i > 0 && !cycle.edges[i - 1].external()).then(|| cycle.edges[i - 1].kind);
        let dep = match into {
            Some(EdgeKind::Dp(d)) => last_read.as_deref().map(|r| (d, r.to_string())),
            _ => None,
        };
        if let Some(EdgeKind::Fenced(f)) = into {
            code[ev.thread].cells.push(f.instr());
        }
        if cycle.edges[i].is_rmw() {
            rmw_read = Some((i, dep));
            continue;
        }
        let (annot, read, dep) = match rmw_read.take() {
            Some((r, dep)) => {
                let annot = Annot::rmw_of(cycle.events[r], cycle.events[i]).expect("checked");
                let EdgeKind::Rmw(op) = cycle.edges[r].kind else {
                    unreachable!("an RMW's read leaves by its Rmw edge")
                };
                (annot, Some((op, sk.events[r].value)), dep)
            }
            None => (cycle.events[i], None, dep),
        };
        let dep = dep.as_ref().map(|(d, r)| (*d, r.as_str()));
        let reg = emit_event(&mut code[ev.thread], &annot, ev, dep, read)
            .filter(|_| ev.dir == Dir::R || read.is_some());
        if let Some(r) = &reg {
            let value = read.map_or(ev.value, |(_, v)| v);
            conds.push(format!("P{}:{r} == {value}", ev.thread));
        }
        last_read = reg;
    }
    for (l, v) in &sk.finals {
        conds.push(format!("{} == {v}", loc_name(*l)));
    }
    (code.into_iter().map(|c| c.cells).collect(), conds)
}

/// Thread `t`'s header: `P1@warp 0,cta 1,gpu 0` for its placement `p`.
fn header(t: usize, p: &Placement) -> String {
    let mut s = format!("P{t}@");
    if let Some(w) = p.warp {
        let _ = write!(s, "warp {w},");
    }
    let _ = write!(s, "cta {},", p.cta);
    if let Some(c) = p.cluster {
        let _ = write!(s, "cluster {c},");
    }
    let _ = write!(s, "gpu {}", p.gpu);
    s
}

/// The variant's test, or why it cannot be one.
pub fn render(v: &Variant) -> Result<Generated, GenError> {
    let sk = Skeleton::of(&v.cycle)?;
    let places = v.place.threads(sk.threads)?;
    if !v.space.reachable(&places) {
        return Err(GenError::msg(format!(
            "{}: shared memory is out of reach of some thread",
            v.name
        )));
    }
    let aliases = aliases(&v.cycle, &sk);
    if v.space == Space::Shared && !aliases.is_empty() {
        return Err(GenError::msg(format!(
            "{}: proxies and aliases name global memory only",
            v.name
        )));
    }
    let (cells, conds) = threads_and_condition(&v.cycle, &sk);
    let mut src = format!("PTX {}\n\"Cycle: {}\"\n{{\n", v.name, v.cycle.text());
    declarations(&mut src, sk.locations, v.space, aliases);
    threads_table(&mut src, &places, &cells, &conds);
    let note = format!("{}: {}; {}", v.shape, describe(&v.place, v.space), v.note);
    finish(&v.name, &src, &note)
}

/// Appends the threads to `src`: a header for each at its placement, their instructions
/// (`cells`, one column a thread) row by row, then `exists` over `conds`.
pub(super) fn threads_table(
    src: &mut String,
    places: &[Placement],
    cells: &[Vec<String>],
    conds: &[String],
) {
    let heads: Vec<String> = places
        .iter()
        .enumerate()
        .map(|(t, p)| header(t, p))
        .collect();
    let _ = writeln!(src, "{} ;", heads.join(" | "));
    let rows = cells.iter().map(Vec::len).max().unwrap_or(0);
    for r in 0..rows {
        let row: Vec<&str> = cells
            .iter()
            .map(|c| c.get(r).map_or("", String::as_str))
            .collect();
        let _ = writeln!(src, "{} ;", row.join(" | "));
    }
    let _ = writeln!(src, "exists ({})", conds.join(" /\\ "));
}

/// Test `name` from its generated text `src`, printed canonically with `note` as a comment
/// under its first line.
pub(super) fn finish(name: &str, src: &str, note: &str) -> Result<Generated, GenError> {
    let test = litmus::parse(src, Path::new(&format!("{name}.litmus")))
        .map_err(|e| GenError::msg(format!("{name}: the generated text does not parse: {e}")))?;
    let canonical = litmus::print(&test);
    let (first, rest) = canonical.split_once('\n').unwrap_or((&canonical, ""));
    let text = format!("{first}\n(* {note} *)\n{rest}");
    Ok(Generated { test, text })
}

/// The test's declarations: each location at 0 in `space`, each alias with its proxy, and the
/// closing brace.
fn declarations(
    src: &mut String,
    locations: usize,
    space: Space,
    aliases: std::collections::BTreeSet<(usize, Via)>,
) {
    for l in 0..locations {
        match space {
            Space::Global => {
                let _ = writeln!(src, "{} = 0;", loc_name(l));
            }
            Space::Shared => {
                let _ = writeln!(src, "{} @ shared(P0) = 0;", loc_name(l));
            }
        }
    }
    for (l, via) in aliases {
        let name = access_name(l, Access::Via(via));
        let _ = writeln!(
            src,
            "{name} @ {} aliases {};",
            via.proxy().as_str(),
            loc_name(l)
        );
    }
    src.push_str("}\n");
}

/// The other names the cycle's accesses use, per location, each once.
fn aliases(cycle: &Cycle, sk: &Skeleton) -> std::collections::BTreeSet<(usize, Via)> {
    cycle
        .events
        .iter()
        .zip(&sk.events)
        .filter_map(|(a, ev)| match a.access {
            Access::Via(v) => Some((ev.loc, v)),
            _ => None,
        })
        .collect()
}

fn describe(place: &Place, space: Space) -> String {
    let where_ = match place.name.as_str() {
        "samewarp" => "every thread in one warp".to_string(),
        "samecta" => "one CTA, a warp per thread".to_string(),
        "diffcta" => "a CTA per thread".to_string(),
        "samecluster" => "a CTA per thread, one cluster".to_string(),
        "diffcluster" => "a cluster per thread".to_string(),
        w if w.starts_with("TB_") => format!("CTAs grouped {}", &w[3..]),
        w => format!("clusters grouped {}", &w[3..]),
    };
    let mem = match space {
        Space::Global => "global memory",
        Space::Shared => "shared memory of P0's CTA",
    };
    format!("{where_}, {mem}")
}

/// The systematic name of a cycle variant: the shape, then per thread its events' annotations
/// and what separates them (fences, dependencies) joined by `_`, threads joined by `+`, then
/// the placement and `-shared` for shared memory.
pub fn systematic_name(shape: &str, cycle: &Cycle, place: &Place, space: Space) -> String {
    let mut per: Vec<Vec<String>> = vec![Vec::new(); cycle.threads()];
    let mut t = 0;
    for (i, a) in cycle.events.iter().enumerate() {
        if i > 0 && !cycle.edges[i - 1].external() {
            match cycle.edges[i - 1].kind {
                EdgeKind::Fenced(f) => per[t].push(f.instr()),
                EdgeKind::Dp(d) => per[t].push(format!("{d:?}").to_lowercase()),
                _ => {}
            }
        }
        let (a, op) = match i.checked_sub(1).map(|p| (p, cycle.edges[p].kind)) {
            Some((p, EdgeKind::Rmw(op))) => {
                let pair = Annot::rmw_of(cycle.events[p], *a).expect("checked");
                (pair, op)
            }
            _ if cycle.edges[i].is_rmw() => continue,
            _ => (*a, AtomOp::Exch),
        };
        if let Some(f) = a.before {
            per[t].push(f.instr());
        }
        let access = Annot { before: None, ..a }.text();
        per[t].push(match op {
            // `atom.rlx` is an exchange; another operation takes the place of `atom`.
            AtomOp::Exch => access,
            op => access.replacen("atom", op.as_str(), 1),
        });
        if cycle.edges[i].external() {
            t += 1;
        }
    }
    let threads: Vec<String> = per.iter().map(|p| p.join("_")).collect();
    let mut name = format!("{shape}+{}-{}", threads.join("+"), place.name);
    if space == Space::Shared {
        name.push_str("-shared");
    }
    name
}
