//! The base sets and relations a model reads, defined from the events of one candidate
//! execution (PTX ISA §8: operations, scopes, proxies, morally strong ingredients), named as in
//! Dat3M's PTX models so those run unchanged.
//!
//! Tags (sets): `W`, `R`, `M`, `F` (fences and barriers), `IW` (initial writes), `BAR`
//! (barriers); semantics `WEAK`, `RLX` (strong, neither acquire nor release), `ACQ`, `REL`,
//! `ACQ_REL`, `SC` (fences: `fence.sc` and `membar` are `SC` only, `fence.acquire` is `ACQ`,
//! `fence.release` `REL`); scopes `CTA`, `CLUSTER`, `GPU`, `SYS` (strong accesses and memory
//! fences); proxies `GEN`, `TEX`, `SUR`, `CON` (accesses, initial writes, memory fences as `GEN`,
//! proxy fences as their proxy), `ALIAS` (`fence.proxy.alias`); `RED` (the read of a `red`).
//!
//! Relations: `id`, `po`, `int`, `ext`, `loc` (same physical memory), `vloc` (same virtual
//! address; an initial write shares every address of its memory), `po-loc`, `rmw`, `addr`,
//! `data`, `ctrl`, `sr` (each operation's scope includes the other's thread), `scta` (same CTA),
//! and the choices of the candidate: `syncbar` (a barrier to a waiting barrier it releases, as
//! the checker builds it: CTA barriers by id, count and occurrence in one CTA, under a quorum
//! only those the candidate's choice synchronises; non-relaxed cluster arrivals to waits in one
//! cluster), `rf`, `co`, `fr = rf^-1; co`, `sync_fence` (Fence-SC order).

use super::eval::{bind, Env, Val};
use super::matrix::{all, Mat, Set};
use crate::litmus::ast::{Proxy, Scope};
use crate::model::candidates::Skeleton;
use crate::model::event::{Event, FenceKind, Kind};
use crate::model::Rows;

/// Every tag a model may name.
pub const TAGS: &[&str] = &[
    "W", "R", "M", "F", "IW", "BAR", "WEAK", "RLX", "ACQ", "REL", "ACQ_REL", "SC", "CTA",
    "CLUSTER", "GPU", "SYS", "GEN", "TEX", "SUR", "CON", "ALIAS", "RED",
];

/// Every base relation a model may name.
pub const RELATIONS: &[&str] = &[
    "id",
    "po",
    "int",
    "ext",
    "loc",
    "vloc",
    "po-loc",
    "rmw",
    "addr",
    "data",
    "ctrl",
    "sr",
    "scta",
    "syncbar",
    "rf",
    "co",
    "fr",
    "sync_fence",
];

/// An environment binding every base name to an empty value over `n` events (to check a
/// model's names and types before any test).
pub fn empty_env(n: usize) -> Env {
    let mut env = Env::default();
    for t in TAGS {
        env.insert(t.to_string(), Val::Set(0));
    }
    for r in RELATIONS {
        env.insert(r.to_string(), Val::Rel(Mat::empty(n)));
    }
    env
}

fn scope_tag(s: Scope) -> &'static str {
    match s {
        Scope::Cta => "CTA",
        Scope::Cluster => "CLUSTER",
        Scope::Gpu => "GPU",
        Scope::Sys => "SYS",
    }
}

fn proxy_tag(p: Proxy) -> &'static str {
    match p {
        Proxy::Generic => "GEN",
        Proxy::Texture => "TEX",
        Proxy::Surface => "SUR",
        Proxy::Constant => "CON",
    }
}

/// The scope of an operation that has one: strong accesses and memory fences.
fn scope_of(e: &Event) -> Option<Scope> {
    match e.kind {
        Kind::Read | Kind::Write if e.strong && !e.is_init() => Some(e.scope),
        Kind::Fence(
            FenceKind::Sc | FenceKind::AcqRel | FenceKind::Acquire | FenceKind::Release,
        ) => Some(e.scope),
        _ => None,
    }
}

fn tags(e: &Event) -> Vec<&'static str> {
    let mut t = Vec::new();
    match e.kind {
        Kind::Read | Kind::Write => {
            t.push(if e.is_read() { "R" } else { "W" });
            t.push("M");
            t.push(proxy_tag(e.proxy));
            if e.is_init() {
                t.push("IW");
            } else if !e.strong {
                t.push("WEAK");
            } else if e.acquire {
                t.push("ACQ");
            } else if e.release {
                t.push("REL");
            } else {
                t.push("RLX");
            }
            if e.from_red {
                t.push("RED");
            }
        }
        Kind::Fence(k) => {
            t.push("F");
            t.push(match k {
                FenceKind::Sc => "SC",
                FenceKind::AcqRel => "ACQ_REL",
                FenceKind::Acquire => "ACQ",
                FenceKind::Release => "REL",
                FenceKind::ProxyAlias => "ALIAS",
                FenceKind::Proxy(p) => proxy_tag(p),
            });
            if scope_of(e).is_some() {
                t.push("GEN");
            }
        }
        Kind::Barrier(_) => t.extend(["F", "BAR"]),
    }
    if let Some(s) = scope_of(e) {
        t.push(scope_tag(s));
    }
    t
}

/// The base names that depend only on the events and program order of `sk`.
pub fn static_env(sk: &Skeleton, syncbar: &[Set]) -> Env {
    let n = sk.events.len();
    let mut env = empty_env(n);
    for (i, e) in sk.events.iter().enumerate() {
        for t in tags(e) {
            if let Some(Val::Set(s)) = env.get_mut(t) {
                *s |= 1 << i;
            }
        }
    }
    for (name, m) in program_relations(sk).into_iter().chain(place_relations(sk)) {
        env.insert(name.into(), Val::Rel(m));
    }
    let syncbar = Mat {
        rows: Rows::from_slice(syncbar),
    };
    env.insert("syncbar".into(), Val::Rel(syncbar));
    env
}

/// Whether events `i` and `j` are of one thread (the initial writes are of none).
fn same_thread(ev: &[Event], i: usize, j: usize) -> bool {
    ev[i].thread.is_some() && ev[i].thread == ev[j].thread
}

/// The relations the program text fixes: identity, threads, locations, `po` and the
/// dependencies.
fn program_relations(sk: &Skeleton) -> Vec<(&'static str, Mat)> {
    let ev = &sk.events;
    let n = ev.len();
    let same_thread = |i: usize, j: usize| same_thread(ev, i, j);
    let mem = |i: usize| ev[i].is_memory();
    let loc = Mat::from_fn(n, |i, j| mem(i) && mem(j) && ev[i].loc == ev[j].loc);
    let po = Mat {
        rows: Rows::from_slice(&sk.po),
    };
    let rel = |rows: &Vec<Set>| Mat {
        rows: Rows::from_slice(rows),
    };
    vec![
        ("id", Mat::id_on(n, all(n))),
        ("int", Mat::from_fn(n, same_thread)),
        ("ext", Mat::from_fn(n, |i, j| !same_thread(i, j))),
        (
            "vloc",
            Mat::from_fn(n, |i, j| {
                loc.has(i, j) && (ev[i].vaddr == ev[j].vaddr || ev[i].is_init() || ev[j].is_init())
            }),
        ),
        ("po-loc", po.zip(&loc, |a, b| a & b)),
        ("loc", loc),
        ("po", po),
        ("rmw", rel(&sk.rmw)),
        ("addr", rel(&sk.addr)),
        ("data", rel(&sk.data)),
        ("ctrl", rel(&sk.ctrl)),
    ]
}

/// The relations the threads' places fix: `sr` (each in the other's scope) and `scta`.
fn place_relations(sk: &Skeleton) -> Vec<(&'static str, Mat)> {
    let ev = &sk.events;
    let n = ev.len();
    let place = |i: usize| sk.places[i];
    let sr = Mat::from_fn(n, |i, j| {
        match (scope_of(&ev[i]), scope_of(&ev[j]), place(i), place(j)) {
            (Some(si), Some(sj), Some(pi), Some(pj)) => {
                pi.scope_includes(si, &pj) && pj.scope_includes(sj, &pi)
            }
            _ => false,
        }
    });
    vec![
        ("sr", sr),
        (
            "scta",
            Mat::from_fn(
                n,
                |i, j| matches!((place(i), place(j)), (Some(a), Some(b)) if a.same_cta(&b)),
            ),
        ),
    ]
}

/// Adds a candidate's choices to a static environment.
pub fn with_choices(env: &mut Env, rf: &Mat, co: &Mat, sync_fence: &Mat) {
    bind(env, "fr", Val::Rel(rf.inverse().seq(co)));
    bind(env, "rf", Val::Rel(rf.clone()));
    bind(env, "co", Val::Rel(co.clone()));
    bind(env, "sync_fence", Val::Rel(sync_fence.clone()));
}
