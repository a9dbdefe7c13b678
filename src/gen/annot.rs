//! What the cycle language says about one event or one fence: access semantics, scope, a fence
//! kind. A scope left out is filled in by the family (`scope` line), so one annotated cycle
//! serves every scope of a family.

use super::GenError;
pub use crate::litmus::ast::FenceSem;
use crate::litmus::ast::{
    MembarLevel, Placement, Proxy, ProxyFenceKind, RmwSem, Scope, Sem, Spelled,
};

/// Whether an event reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    /// A read (`ld`).
    R,
    /// A write (`st`, or `atom.exch` for an RMW annotation).
    W,
}

/// The semantics of an access, as the cycle language spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// `wk`: `ld.weak` / `st.weak`.
    Weak,
    /// `rlx`: `.relaxed`.
    Relaxed,
    /// `acq`: `ld.acquire` (reads only).
    Acquire,
    /// `rel`: `st.release` (writes only).
    Release,
    /// `vol`: `.volatile` (the ISA treats it as `.relaxed.sys`).
    Volatile,
    /// `atom.rlx|acq|rel|acq_rel`: the write is an `atom.exch` with these semantics.
    Rmw(RmwSem),
    /// `ali`, `tex`, `sur`, `con`: a weak access through another name of the location.
    Via(Via),
}

/// Another name for a location, and the proxy an access through it uses (PTX ISA §8.9.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Via {
    /// `ali`: a generic alias, another virtual address of the same memory (`ld`/`st`).
    Alias,
    /// `tex`: the texture proxy (`tld`, reads only).
    Texture,
    /// `sur`: the surface proxy (`suld`, `sust`).
    Surface,
    /// `con`: the constant proxy (`cold`, reads only).
    Constant,
}

impl Via {
    /// Every kind of name, in the order of their tokens.
    pub const ALL: [Via; 4] = [Via::Alias, Via::Texture, Via::Surface, Via::Constant];

    /// The cycle language's token.
    pub fn short(self) -> &'static str {
        match self {
            Via::Alias => "ali",
            Via::Texture => "tex",
            Via::Surface => "sur",
            Via::Constant => "con",
        }
    }

    /// The proxy this name accesses the location through.
    pub fn proxy(self) -> Proxy {
        match self {
            Via::Alias => Proxy::Generic,
            Via::Texture => Proxy::Texture,
            Via::Surface => Proxy::Surface,
            Via::Constant => Proxy::Constant,
        }
    }

    /// The proxy fence that lets an access through this name see (or be seen by) generic
    /// accesses of the location.
    pub fn fence(self) -> ProxyFenceKind {
        match self {
            Via::Alias => ProxyFenceKind::Alias,
            Via::Texture => ProxyFenceKind::Texture,
            Via::Surface => ProxyFenceKind::Surface,
            Via::Constant => ProxyFenceKind::Constant,
        }
    }

    /// The instruction of an access in direction `dir`; `None` where the proxy has none.
    pub fn mnemonic(self, dir: Dir) -> Option<&'static str> {
        match dir {
            Dir::R => Some(self.proxy().load_mnemonic()),
            Dir::W => self.proxy().store_mnemonic(),
        }
    }
}

/// A fence: `fence.sc`, `fence.acq_rel`, `fence.acquire`, `fence.release` with a scope, a
/// `membar` at a level, or a proxy fence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FenceKind {
    /// `fence.{sc,acq_rel,acquire,release}[.scope]`.
    Fence(FenceSem, Option<Scope>),
    /// `membar.cta|gl|sys` (`fence.sc` at cta, gpu, sys on sm_70+).
    Membar(MembarLevel),
    /// `fence.proxy.{alias,texture,surface,constant}` (no scope: it acts in its CTA).
    Proxy(ProxyFenceKind),
}

/// One event's annotation: an optional fence right before it (how C++ `seq_cst` accesses
/// lower: `fence.sc` then the access), its semantics and its scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Annot {
    /// A fence placed immediately before the access, in the same thread.
    pub before: Option<FenceKind>,
    /// Access semantics.
    pub access: Access,
    /// Scope of a strong access (`None`: the family's scope).
    pub scope: Option<Scope>,
}

impl Default for Annot {
    fn default() -> Self {
        Annot {
            before: None,
            access: Access::Relaxed,
            scope: None,
        }
    }
}

fn scope_word(s: &str) -> Option<Scope> {
    Scope::ALL.into_iter().find(|x| x.as_str() == s)
}

impl FenceKind {
    /// Parses the text inside `Fence(...)`: `sc.gpu`, `acq_rel`, `membar.gl`,
    /// `proxy.texture`, ...
    pub fn parse(s: &str) -> Result<FenceKind, GenError> {
        let (head, rest) = s.split_once('.').unwrap_or((s, ""));
        if head == "proxy" {
            return ProxyFenceKind::ALL
                .into_iter()
                .find(|k| k.as_str() == rest)
                .map(FenceKind::Proxy)
                .ok_or_else(|| {
                    GenError::msg(format!(
                        "`proxy.{rest}`: expected alias, texture, surface or constant"
                    ))
                });
        }
        if head == "membar" {
            return MembarLevel::spelled(rest)
                .map(FenceKind::Membar)
                .ok_or_else(|| GenError::msg(format!("`membar.{rest}`: expected cta, gl or sys")));
        }
        let sem = match FenceSem::spelled(head) {
            Some(sem) => sem,
            None => {
                return Err(GenError::msg(format!(
                    "fence `{s}`: expected sc, acq_rel, acquire, release, membar or proxy"
                )))
            }
        };
        let scope = match rest {
            "" => None,
            r => Some(
                scope_word(r)
                    .ok_or_else(|| GenError::msg(format!("fence `{s}`: unknown scope `{r}`")))?,
            ),
        };
        Ok(FenceKind::Fence(sem, scope))
    }

    /// The fence with the family's scope where it names none.
    pub fn with_scope(self, scope: Scope) -> FenceKind {
        match self {
            FenceKind::Fence(sem, None) => FenceKind::Fence(sem, Some(scope)),
            other => other,
        }
    }

    /// The PTX instruction.
    pub fn instr(self) -> String {
        match self {
            FenceKind::Membar(level) => format!("membar.{}", level.as_str()),
            FenceKind::Proxy(k) => format!("fence.proxy.{}", k.as_str()),
            FenceKind::Fence(sem, scope) => match scope {
                Some(s) => format!("fence.{}.{}", sem.as_str(), s.as_str()),
                None => format!("fence.{}", sem.as_str()),
            },
        }
    }

    /// The spelling inside `Fence(...)`.
    pub fn text(self) -> String {
        self.instr().trim_start_matches("fence.").to_string()
    }

    /// The same fence for the model: a `membar` is `fence.sc` at its level, and a scope that
    /// includes exactly the same threads of the test as a narrower one is that narrower one.
    pub fn normalised(self, at: &Placement, all: &[Placement]) -> FenceKind {
        match self {
            FenceKind::Membar(level) => {
                FenceKind::Fence(FenceSem::Sc, Some(level.scope())).normalised(at, all)
            }
            FenceKind::Fence(sem, Some(s)) => FenceKind::Fence(sem, Some(narrowest(s, at, all))),
            other => other,
        }
    }
}

/// The semantics of an RMW that acquires and releases as told.
fn rmw_sem(acquire: bool, release: bool) -> RmwSem {
    match (acquire, release) {
        (false, false) => RmwSem::Relaxed,
        (true, false) => RmwSem::Acquire,
        (false, true) => RmwSem::Release,
        (true, true) => RmwSem::AcqRel,
    }
}

/// The cycle language's token for the semantics of an `atom.exch` write.
fn rmw_short(sem: RmwSem) -> &'static str {
    match sem {
        RmwSem::Relaxed => "rlx",
        RmwSem::Acquire => "acq",
        RmwSem::Release => "rel",
        RmwSem::AcqRel => "acq_rel",
    }
}

impl Access {
    /// Whether the access takes a scope (weak, volatile and proxy ones do not).
    pub fn scoped(self) -> bool {
        !matches!(self, Access::Weak | Access::Volatile | Access::Via(_))
    }

    /// Whether an event of this direction can have these semantics.
    pub fn fits(self, dir: Dir) -> bool {
        match self {
            Access::Acquire => dir == Dir::R,
            Access::Release | Access::Rmw(_) => dir == Dir::W,
            Access::Via(v) => v.mnemonic(dir).is_some(),
            _ => true,
        }
    }

    fn short(self) -> String {
        match self {
            Access::Weak => "wk".into(),
            Access::Relaxed => "rlx".into(),
            Access::Acquire => "acq".into(),
            Access::Release => "rel".into(),
            Access::Volatile => "vol".into(),
            Access::Rmw(k) => format!("atom.{}", rmw_short(k)),
            Access::Via(v) => v.short().into(),
        }
    }
}

/// The narrowest scope that includes, seen from `at`, exactly the threads of `all` that `s`
/// includes: the model reads a scope only through the threads it includes (PTX ISA §8.5).
pub fn narrowest(s: Scope, at: &Placement, all: &[Placement]) -> Scope {
    let covers = |x: Scope| {
        all.iter()
            .map(|p| at.scope_includes(x, p))
            .collect::<Vec<_>>()
    };
    let want = covers(s);
    Scope::ALL
        .into_iter()
        .find(|x| covers(*x) == want)
        .unwrap_or(s)
}

impl Annot {
    /// The annotation of the one `atom.exch` that the read annotated `read` and the write
    /// annotated `write` of an `Rmw` edge make: it acquires where the read does (`acq`) and
    /// releases where the write does (`rel`), or has the write's `atom.SEM`; the fence and
    /// scope are the read's or the write's, whichever names one.
    pub fn rmw_of(read: Annot, write: Annot) -> Result<Annot, GenError> {
        let bad = |why: &str| {
            Err(GenError::msg(format!(
                "`{} Rmw {}`: {why}",
                read.text(),
                write.text()
            )))
        };
        let acquire = match read.access {
            Access::Relaxed => false,
            Access::Acquire => true,
            _ => return bad("the read of an RMW is `rlx` or `acq`"),
        };
        let (acquire, release) = match write.access {
            Access::Relaxed => (acquire, false),
            Access::Release => (acquire, true),
            Access::Rmw(k) => (acquire || Sem::from(k).acquires(), Sem::from(k).releases()),
            _ => return bad("the write of an RMW is `rlx`, `rel` or `atom.SEM`"),
        };
        if write.before.is_some() {
            return bad("no fence can come between the read and the write of one RMW");
        }
        let scope = match (read.scope, write.scope) {
            (Some(a), Some(b)) if a != b => return bad("the read and the write name two scopes"),
            (a, b) => a.or(b),
        };
        Ok(Annot {
            before: read.before,
            access: Access::Rmw(rmw_sem(acquire, release)),
            scope,
        })
    }

    /// Parses an annotation token: `[Fence(KIND)+]SEM[.SCOPE]`, SEM one of `wk`, `rlx`, `acq`,
    /// `rel`, `vol`, `atom.rlx`, `atom.acq`, `atom.rel`, `atom.acq_rel`, or a weak access
    /// through another name of the location: `ali`, `tex`, `sur`, `con`.
    pub fn parse(token: &str) -> Result<Annot, GenError> {
        let (before, rest) = match token.strip_prefix("Fence(") {
            Some(r) => {
                let (kind, after) = r.split_once(")+").ok_or_else(|| {
                    GenError::msg(format!("`{token}`: expected `Fence(KIND)+SEM`"))
                })?;
                (Some(FenceKind::parse(kind)?), after)
            }
            None => (None, token),
        };
        let (access, scope_text) = split_access(rest)
            .ok_or_else(|| GenError::msg(format!("`{token}`: unknown annotation (expected wk, rlx, acq, rel, vol or atom.SEM, then an optional .SCOPE, or ali, tex, sur, con)")))?;
        let scope = match scope_text {
            None => None,
            Some(s) => Some(
                scope_word(s)
                    .ok_or_else(|| GenError::msg(format!("`{token}`: unknown scope `{s}`")))?,
            ),
        };
        if scope.is_some() && !access.scoped() {
            return Err(GenError::msg(format!(
                "`{token}`: weak, volatile and proxy accesses take no scope"
            )));
        }
        Ok(Annot {
            before,
            access,
            scope,
        })
    }

    /// The annotation with `scope` where the access names none and `fence_scope` where its
    /// fence names none.
    pub fn with_scopes(self, scope: Scope, fence_scope: Scope) -> Annot {
        Annot {
            before: self.before.map(|f| f.with_scope(fence_scope)),
            access: self.access,
            scope: if self.access.scoped() {
                self.scope.or(Some(scope))
            } else {
                None
            },
        }
    }

    /// The token that parses back to this annotation.
    pub fn text(&self) -> String {
        let mut s = String::new();
        if let Some(f) = self.before {
            s.push_str(&format!("Fence({})+", f.text()));
        }
        s.push_str(&self.access.short());
        if let Some(sc) = self.scope {
            s.push('.');
            s.push_str(sc.as_str());
        }
        s
    }

    /// The same annotation for the model: `vol` is `rlx.sys`, scopes and fences narrowed as in
    /// [`narrowest`].
    pub fn normalised(&self, at: &Placement, all: &[Placement]) -> Annot {
        let (access, scope) = match self.access {
            Access::Volatile => (Access::Relaxed, Some(Scope::Sys)),
            a => (a, self.scope),
        };
        Annot {
            before: self.before.map(|f| f.normalised(at, all)),
            access,
            scope: scope.map(|s| narrowest(s, at, all)),
        }
    }
}

fn split_access(s: &str) -> Option<(Access, Option<&str>)> {
    if let Some(r) = s.strip_prefix("atom.") {
        // `atom.acq_rel.gpu`: the kind, then the scope.
        let (kind, scope) = r.split_once('.').map_or((r, None), |(k, sc)| (k, Some(sc)));
        let sem = RmwSem::ALL
            .iter()
            .copied()
            .find(|&k| rmw_short(k) == kind)?;
        return Some((Access::Rmw(sem), scope));
    }
    let (word, scope) = s.split_once('.').map_or((s, None), |(w, sc)| (w, Some(sc)));
    let access = match word {
        "wk" => Access::Weak,
        "rlx" => Access::Relaxed,
        "acq" => Access::Acquire,
        "rel" => Access::Release,
        "vol" => Access::Volatile,
        w => Access::Via(Via::ALL.into_iter().find(|v| v.short() == w)?),
    };
    Some((access, scope))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_round_trip_through_their_text() {
        for t in [
            "wk",
            "rlx.gpu",
            "acq.cta",
            "rel.sys",
            "vol",
            "atom.acq_rel.gpu",
            "Fence(sc.gpu)+acq.gpu",
            "Fence(membar.gl)+rlx",
            "tex",
            "Fence(proxy.constant)+con",
            "Fence(proxy.alias)+sur",
        ] {
            assert_eq!(Annot::parse(t).unwrap().text(), t);
        }
        assert!(Annot::parse("wk.gpu").is_err());
        assert!(Annot::parse("acq.warp").is_err());
        assert!(Annot::parse("strong").is_err());
        assert!(Annot::parse("tex.gpu").is_err());
        assert!(Annot::parse("Fence(proxy.shared)+tex").is_err());
        assert!(Access::Via(Via::Texture).fits(Dir::R));
        assert!(!Access::Via(Via::Constant).fits(Dir::W));
        assert!(Access::Via(Via::Surface).fits(Dir::W));
    }

    #[test]
    fn scopes_narrow_to_the_threads_they_include() {
        let p = |cta, cluster| Placement {
            warp: None,
            cta,
            cluster,
            gpu: 0,
        };
        let same_cta = [p(0, None), p(0, None)];
        assert_eq!(narrowest(Scope::Sys, &same_cta[0], &same_cta), Scope::Cta);
        let diff_cta = [p(0, None), p(1, None)];
        assert_eq!(
            narrowest(Scope::Cluster, &diff_cta[0], &diff_cta),
            Scope::Cta
        );
        assert_eq!(narrowest(Scope::Sys, &diff_cta[0], &diff_cta), Scope::Gpu);
        let one_cluster = [p(0, Some(0)), p(1, Some(0))];
        assert_eq!(
            narrowest(Scope::Gpu, &one_cluster[0], &one_cluster),
            Scope::Cluster
        );
        let vol = Annot::parse("vol")
            .unwrap()
            .normalised(&diff_cta[0], &diff_cta);
        assert_eq!(vol, Annot::parse("rlx.gpu").unwrap());
    }

    #[test]
    fn an_rmw_acquires_with_its_read_and_releases_with_its_write() {
        let a = |t: &str| Annot::parse(t).unwrap();
        let sem = |r: &str, w: &str| match Annot::rmw_of(a(r), a(w)).unwrap().access {
            Access::Rmw(k) => k,
            other => panic!("{other:?}"),
        };
        assert_eq!(sem("rlx", "rlx"), RmwSem::Relaxed);
        assert_eq!(sem("acq", "rlx"), RmwSem::Acquire);
        assert_eq!(sem("rlx", "rel"), RmwSem::Release);
        assert_eq!(sem("acq", "rel"), RmwSem::AcqRel);
        assert_eq!(sem("acq", "atom.rel"), RmwSem::AcqRel);
        assert_eq!(sem("rlx", "atom.acq"), RmwSem::Acquire);
        let scoped = Annot::rmw_of(a("Fence(sc)+rlx"), a("rlx.cta")).unwrap();
        assert_eq!(scoped.scope, Some(Scope::Cta));
        assert!(scoped.before.is_some());
    }
}
