//! Semantic checks that need the whole test: labels, thread references, clusters, aliases,
//! shared memory reach and state-space qualifiers. The first error in file order is reported.

use super::ast::*;
use super::error::{ParseError, Pos};
use super::parser::{SpaceQual, Spans};
use std::path::Path;

/// Checks `test` and returns the error that comes first in the file, if any.
pub(crate) fn validate(test: &Test, spans: &Spans, path: &Path) -> Result<(), ParseError> {
    let mut errors: Vec<(Pos, String)> = Vec::new();
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

    if let Some(first) = test.threads.first() {
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

    for access in &spans.accesses {
        let Some(t) = test.threads.get(access.thread) else {
            continue;
        };
        let memory = test.resolve(&access.loc).and_then(|m| test.location(m));
        let space = match memory.map(|l| &l.kind) {
            Some(LocationKind::Memory { space, .. }) => *space,
            _ => continue,
        };
        let loc = &access.loc;
        match (space, access.space) {
            (Space::Shared { owner }, written) if owner < n => {
                let home = &test.threads[owner].place;
                if !t.place.same_cluster(home) {
                    let reach = if home.cluster.is_some() {
                        format!("only threads of P{owner}'s cluster can reach it")
                    } else {
                        format!("without clusters only threads of P{owner}'s CTA can reach it")
                    };
                    errors.push((
                        access.pos,
                        format!(
                            "P{} accesses `{loc}`, shared memory of P{owner}'s CTA; {reach}",
                            t.id
                        ),
                    ));
                } else if written == Some(SpaceQual::Global) {
                    errors.push((
                        access.pos,
                        format!(
                            "`.global` access to `{loc}`, which is declared `shared(P{owner})`"
                        ),
                    ));
                } else if written == Some(SpaceQual::SharedCta) && !t.place.same_cta(home) {
                    errors.push((
                        access.pos,
                        format!(
                            "`.shared::cta` access to `{loc}` from P{}, outside the CTA of P{owner} that owns it; use `.shared::cluster`",
                            t.id
                        ),
                    ));
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

    match errors.into_iter().min_by_key(|(pos, _)| *pos) {
        Some((pos, message)) => Err(ParseError::semantic(path, pos, message)),
        None => Ok(()),
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
