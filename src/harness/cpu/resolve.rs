//! Aliases and proxies on the CPU: the *resolved* test, and the per-test check that running it
//! is sound.
//!
//! The CPU has one address per memory word and no texture, surface or constant caches. It runs
//! an alias as its target's word, a texture/surface/constant access as a generic access of the
//! same strength, and a proxy fence as nothing: that is, it runs [`resolve`]`(test)`. Such a
//! run is stronger than a GPU (no stale texture cache, no incoherence between aliases), but a
//! stronger machine is only sound for `test` if every outcome the model allows for the resolved
//! test is one it allows for `test`; [`check_inclusion`] proves that per test from the two
//! verdicts, and the test is refused when it does not hold.

use crate::litmus::ast::{Fence, Instr, LocationKind, Proxy, Term, Test};
use crate::model::ModelVerdict;
use crate::outcome::{Observable, Outcome};

/// Whether `test` names an alias, accesses memory through a proxy other than the generic one,
/// or has a proxy fence: whether the CPU runs [`resolve`]`(test)` rather than `test`.
pub fn needed(test: &Test) -> bool {
    test.locations
        .iter()
        .any(|l| matches!(l.kind, LocationKind::Alias { .. }))
        || test.threads.iter().flat_map(|t| &t.body).any(|i| {
            i.proxy().is_some_and(|p| p != Proxy::Generic)
                || matches!(i, Instr::Fence(Fence::Proxy(_)))
        })
}

/// `test` with every alias replaced by the memory it finally names (in instructions, the
/// condition and the `locations` clause), alias declarations removed, every access made
/// generic (keeping its semantics and scope), and proxy fences dropped.
pub fn resolve(test: &Test) -> Result<Test, String> {
    let target = |name: &str| -> Result<String, String> {
        test.resolve(name)
            .map(str::to_string)
            .ok_or_else(|| format!("location `{name}` names no memory"))
    };
    let mut out = test.clone();
    out.locations
        .retain(|l| matches!(l.kind, LocationKind::Memory { .. }));
    for t in &mut out.threads {
        t.body
            .retain(|i| !matches!(i, Instr::Fence(Fence::Proxy(_))));
        for i in &mut t.body {
            if let Instr::Load { proxy, .. } | Instr::Store { proxy, .. } = i {
                *proxy = Proxy::Generic;
            }
            if let Some(a) = i.addr_mut() {
                a.loc = target(&a.loc)?;
            }
        }
    }
    for term in out.observed_terms_mut() {
        if let Term::Loc(name) = term {
            *name = target(name)?;
        }
    }
    Ok(out)
}

/// The observable of the resolved test that `o`, an observable of `test`, becomes.
pub fn resolved_observable(test: &Test, o: &Observable) -> Result<Observable, String> {
    Ok(match o {
        Observable::Loc(name) => Observable::Loc(
            test.resolve(name)
                .ok_or_else(|| format!("location `{name}` names no memory"))?
                .to_string(),
        ),
        reg => reg.clone(),
    })
}

/// Checks allowed(resolved) ⊆ allowed(original): every outcome of the resolved test, read as
/// an outcome of the original one (each original observable takes the value of the resolved
/// observable it becomes, per `map`: `original` observable `i` is `resolved` observable
/// `map[i]`), must be allowed by the original verdict. The error names the first outcome
/// that is not.
pub fn check_inclusion(
    original: &ModelVerdict,
    resolved: &ModelVerdict,
    map: &[usize],
) -> Result<(), String> {
    if map.len() != original.observables.len()
        || map.iter().any(|&j| j >= resolved.observables.len())
    {
        return Err("the observables of the resolved test do not match the original's".into());
    }
    for r in &resolved.allowed {
        let o = Outcome(map.iter().map(|&j| r.0[j]).collect());
        if !original.allowed.contains(&o) {
            return Err(format!(
                "with aliases as one word and proxies as generic accesses the outcome `{}` \
                 becomes possible, which the model forbids for the test as written",
                o.display(&original.observables)
            ));
        }
    }
    Ok(())
}

/// The resolved test when the CPU may run it for `test`, that is when allowed(resolved) ⊆
/// allowed(original) with each observable of `test` read as the one it resolves to; otherwise
/// why not.
pub fn resolve_soundly(test: &Test) -> Result<Test, String> {
    let resolved = resolve(test)?;
    let model = |t: &Test| {
        crate::model::check(t).map_err(|e| {
            format!("aliases and proxies run as plain memory only with a model verdict: {e}")
        })
    };
    let (original_v, resolved_v) = (model(test)?, model(&resolved)?);
    let map = original_v
        .observables
        .iter()
        .map(|o| {
            let r = resolved_observable(test, o)?;
            resolved_v
                .observables
                .iter()
                .position(|x| *x == r)
                .ok_or_else(|| format!("`{r}` is not observed in the resolved test"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    check_inclusion(&original_v, &resolved_v, &map)?;
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus::ast::Reg;
    use crate::model::CheckResult;
    use std::collections::BTreeSet;
    use std::path::Path;

    fn parse(text: &str) -> Test {
        crate::litmus::parse(text, Path::new("t.litmus")).expect("test parses")
    }

    const ALIASED: &str = "PTX t
{ x=0; y @ generic aliases x; s @ surface aliases y; t @ texture aliases x; flag=0; }
 P0@cta 0,gpu 0          | P1@cta 0,gpu 0          ;
 sust.weak s, 2          | ld.acquire.gpu r0, flag ;
 fence.proxy.surface     | fence.proxy.alias       ;
 st.release.gpu flag, 1  | tld.weak r1, t          ;
                         | ld.weak r2, y           ;
exists (P1:r0 == 1 /\\ P1:r1 != 2 /\\ y == 2 /\\ x == 2)";

    #[test]
    fn resolving_names_the_target_and_makes_every_access_generic() {
        let test = parse(ALIASED);
        assert!(needed(&test));
        let r = resolve(&test).unwrap();
        assert!(!needed(&r));
        assert_eq!(
            r.locations
                .iter()
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>(),
            ["x", "flag"]
        );
        let expected = parse(
            "PTX t
{ x=0; flag=0; }
 P0@cta 0,gpu 0          | P1@cta 0,gpu 0          ;
 st.weak x, 2            | ld.acquire.gpu r0, flag ;
 st.release.gpu flag, 1  | ld.weak r1, x           ;
                         | ld.weak r2, x           ;
exists (P1:r0 == 1 /\\ P1:r1 != 2 /\\ x == 2 /\\ x == 2)",
        );
        assert_eq!(r.threads, expected.threads);
        assert_eq!(r.condition, expected.condition);
        // `y` and `x` are one observable once resolved.
        let o = crate::outcome::observables(&test);
        assert_eq!(o.len(), 4);
        assert_eq!(crate::outcome::observables(&r).len(), 3);
        assert_eq!(
            resolved_observable(&test, &Observable::Loc("y".into())).unwrap(),
            Observable::Loc("x".into())
        );
    }

    #[test]
    fn a_test_without_aliases_or_proxies_needs_no_resolving() {
        let test = parse(
            "PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak x, 1   ;
exists (x == 1)",
        );
        assert!(!needed(&test));
        assert_eq!(resolve(&test).unwrap(), test);
    }

    #[test]
    fn the_mixed_proxy_mp_resolves_soundly_and_keeps_its_observables() {
        let test = parse(ALIASED);
        let r = resolve_soundly(&test).unwrap();
        assert_eq!(r, resolve(&test).unwrap());
    }

    fn verdict(observables: &[&str], allowed: &[&[i64]]) -> ModelVerdict {
        let allowed: BTreeSet<Outcome> = allowed.iter().map(|v| Outcome(v.to_vec())).collect();
        ModelVerdict {
            observables: observables
                .iter()
                .map(|r| Observable::Reg {
                    thread: 0,
                    reg: Reg(r.to_string()),
                })
                .collect(),
            sc: allowed.clone(),
            allowed,
            result: CheckResult::Ok,
            candidates: 0,
            consistent: 0,
            domains: Vec::new(),
            hangs: vec![],
            stuck: vec![],
            witnesses: Vec::new(),
            excluded: Vec::new(),
        }
    }

    #[test]
    fn an_outcome_the_original_forbids_refuses_the_resolved_run() {
        // Original observables r0, r1, r2; resolved ones r1, r0 (r2 merged into r0's word).
        let original = verdict(&["r0", "r1", "r2"], &[&[0, 0, 0], &[1, 0, 1], &[1, 1, 1]]);
        let map = [1, 0, 1];
        let fewer = verdict(&["r1", "r0"], &[&[0, 0], &[1, 1]]);
        assert_eq!(check_inclusion(&original, &fewer, &map), Ok(()));
        // (r0, r1) = (0, 1) reads back as r0=0 r1=1 r2=0, which the original does not allow.
        let more = verdict(&["r1", "r0"], &[&[0, 0], &[1, 0]]);
        let e = check_inclusion(&original, &more, &map).unwrap_err();
        assert!(e.contains("P0:r0=0; P0:r1=1; P0:r2=0;"), "{e}");
        assert!(check_inclusion(&original, &fewer, &[0, 1]).is_err());
        assert!(check_inclusion(&original, &fewer, &[0, 1, 2]).is_err());
    }
}
