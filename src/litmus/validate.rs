//! Semantic checks that need the whole test: labels, thread references, clusters, aliases,
//! shared memory reach and state-space qualifiers. The first error in file order is reported.

use super::ast::*;
use super::error::{ParseError, Pos};
use super::parser::{Access, SpaceQual, Spans};
use std::path::Path;

/// Problems found, each at its position in the file.
type Errors = Vec<(Pos, String)>;

/// Checks `test` and returns the error that comes first in the file, if any.
pub(crate) fn validate(test: &Test, spans: &Spans, path: &Path) -> Result<(), ParseError> {
    let mut errors: Errors = Vec::new();
    thread_refs(test, spans, &mut errors);
    labels(spans, &mut errors);
    clusters(test, spans, &mut errors);
    aliases(test, spans, &mut errors);
    for access in &spans.accesses {
        memory_access(test, access, &mut errors);
    }
    match errors.into_iter().min_by_key(|(pos, _)| *pos) {
        Some((pos, message)) => Err(ParseError::semantic(path, pos, message)),
        None => Ok(()),
    }
}

/// Every `Pn` named (in the condition, the initial state) is a thread of the test.
fn thread_refs(test: &Test, spans: &Spans, errors: &mut Errors) {
    let n = test.threads.len();
    for &(thread, pos) in &spans.thread_refs {
        if thread >= n {
            errors.push((
                pos,
                format!(
                    "P{thread} is not a thread of this test (it has {n} thread{}: P0..P{})",
                    if n == 1 { "" } else { "s" },
                    n.saturating_sub(1)
                ),
            ));
        }
    }
}

/// Each thread defines a label once, and branches only to labels it defines.
fn labels(spans: &Spans, errors: &mut Errors) {
    for (t, labels) in spans.labels.iter().enumerate() {
        for (k, (label, pos)) in labels.iter().enumerate() {
            if let Some((_, first)) = labels[..k].iter().find(|(l, _)| l == label) {
                errors.push((
                    *pos,
                    format!(
                        "label `{label}` is defined twice in P{t} (first at {}:{})",
                        first.line, first.column
                    ),
                ));
            }
        }
        for (target, pos) in &spans.branches[t] {
            if !labels.iter().any(|(l, _)| l == target) {
                errors.push((
                    *pos,
                    format!("branch to label `{target}`, which P{t} does not define"),
                ));
            }
        }
    }
}

/// Either every thread names a cluster or none does.
fn clusters(test: &Test, spans: &Spans, errors: &mut Errors) {
    let Some(first) = test.threads.first() else {
        return;
    };
    for (t, header) in test.threads.iter().zip(&spans.headers).skip(1) {
        if t.place.cluster.is_some() != first.place.cluster.is_some() {
            let (with, without) = if first.place.cluster.is_some() {
                (0, t.id)
            } else {
                (t.id, 0)
            };
            errors.push((
                *header,
                format!(
                    "P{with} names a cluster but P{without} does not; if any thread names a cluster, all must"
                ),
            ));
        }
    }
}

/// Every alias's target is declared, and following aliases reaches memory.
fn aliases(test: &Test, spans: &Spans, errors: &mut Errors) {
    for (alias, target_pos) in &spans.alias_targets {
        let Some(LocationKind::Alias { target, .. }) = test.location(alias).map(|l| &l.kind) else {
            continue;
        };
        if !spans.decls.iter().any(|(d, _)| d == target) {
            errors.push((
                *target_pos,
                format!("`{alias}` aliases `{target}`, which is not declared in the initial state"),
            ));
        } else if test.resolve(alias).is_none() {
            errors.push((
                *target_pos,
                format!("alias cycle: {}", alias_chain(test, alias)),
            ));
        }
    }
}

/// One access's state space agrees with where its location lives, and shared memory is
/// reached only from where the ISA lets it be.
fn memory_access(test: &Test, access: &Access, errors: &mut Errors) {
    let Some(t) = test.threads.get(access.thread) else {
        return;
    };
    let memory = test.resolve(&access.loc).and_then(|m| test.location(m));
    let space = match memory.map(|l| &l.kind) {
        Some(LocationKind::Memory { space, .. }) => *space,
        _ => return,
    };
    let loc = &access.loc;
    match (space, access.space) {
        (Space::Shared { owner }, written) if owner < test.threads.len() => {
            if let Some(why) = shared_access(test, t, owner, loc, written) {
                errors.push((access.pos, why));
            }
        }
        (Space::Global, Some(SpaceQual::SharedCta | SpaceQual::SharedCluster)) => {
            errors.push((
                access.pos,
                format!("shared-memory access to `{loc}`, which is global memory (declare it `{loc} @ shared(P0) = ..`)"),
            ));
        }
        _ => {}
    }
}

/// What is wrong with thread `t` accessing `loc`, shared memory of P`owner`'s CTA, with the
/// state space `written`, if anything.
fn shared_access(
    test: &Test,
    t: &Thread,
    owner: usize,
    loc: &str,
    written: Option<SpaceQual>,
) -> Option<String> {
    let home = &test.threads[owner].place;
    if !t.place.same_cluster(home) {
        let reach = if home.cluster.is_some() {
            format!("only threads of P{owner}'s cluster can reach it")
        } else {
            format!("without clusters only threads of P{owner}'s CTA can reach it")
        };
        return Some(format!(
            "P{} accesses `{loc}`, shared memory of P{owner}'s CTA; {reach}",
            t.id
        ));
    }
    match written {
        Some(SpaceQual::Global) => Some(format!(
            "`.global` access to `{loc}`, which is declared `shared(P{owner})`"
        )),
        Some(SpaceQual::SharedCta) if !t.place.same_cta(home) => Some(format!(
            "`.shared::cta` access to `{loc}` from P{}, outside the CTA of P{owner} that owns it; use `.shared::cluster`",
            t.id
        )),
        _ => None,
    }
}

/// `a -> b -> a` for an alias that does not reach memory.
fn alias_chain(test: &Test, start: &str) -> String {
    let mut chain = vec![start.to_string()];
    let mut current = start;
    while let Some(LocationKind::Alias { target, .. }) = test.location(current).map(|l| &l.kind) {
        chain.push(target.clone());
        if chain[..chain.len() - 1].contains(target) {
            break;
        }
        current = target;
    }
    chain.join(" -> ")
}
