//! What the ISA says the qualifiers of an operation mean for the memory model (PTX ISA §8.4
//! operation types, §8.5 scope): whether an access is strong, whether it acquires or releases,
//! and at which scope — the written one, `.gpu` when none is written (as for an `atom` without
//! `.scope`), `.sys` for `.volatile` — and the scope of a `membar`. The one definition the
//! summary and the kernels read.

use super::ast::{MembarLevel, Scope, Sem};

impl Scope {
    /// The scope of a strong operation that names none.
    pub const DEFAULT: Scope = Scope::Gpu;

    /// `scope`, or [`Scope::DEFAULT`] when none is written.
    pub fn or_default(scope: Option<Scope>) -> Scope {
        scope.unwrap_or(Scope::DEFAULT)
    }
}

impl Sem {
    /// Whether an access with these semantics is strong: every one but `.weak`.
    pub fn is_strong(self) -> bool {
        self != Sem::Weak
    }

    /// Whether it has acquire semantics (`.acquire`, `.acq_rel`).
    pub fn acquires(self) -> bool {
        matches!(self, Sem::Acquire | Sem::AcqRel)
    }

    /// Whether it has release semantics (`.release`, `.acq_rel`).
    pub fn releases(self) -> bool {
        matches!(self, Sem::Release | Sem::AcqRel)
    }

    /// The scope of an access with these semantics written with scope `scope`: none for a weak
    /// access, `.sys` for `.volatile` (which the ISA treats as `.relaxed.sys`), else `scope` or
    /// the default.
    pub fn scope(self, scope: Option<Scope>) -> Option<Scope> {
        match self {
            Sem::Weak => None,
            Sem::Volatile => Some(Scope::Sys),
            _ => Some(Scope::or_default(scope)),
        }
    }
}

impl MembarLevel {
    /// The scope of the `fence.sc` a `membar` is on sm_70 and later: `membar.cta`, `.gl`, `.sys`
    /// are `fence.sc.cta`, `.gpu`, `.sys`.
    pub fn scope(self) -> Scope {
        match self {
            MembarLevel::Cta => Scope::Cta,
            MembarLevel::Gl => Scope::Gpu,
            MembarLevel::Sys => Scope::Sys,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus::ast::{LoadSem, RmwSem, StoreSem};

    #[test]
    fn no_scope_means_gpu_and_volatile_means_sys() {
        assert_eq!(Sem::Relaxed.scope(None), Some(Scope::Gpu));
        assert_eq!(Sem::Acquire.scope(Some(Scope::Cta)), Some(Scope::Cta));
        assert_eq!(Sem::Volatile.scope(None), Some(Scope::Sys));
        assert_eq!(Sem::Weak.scope(Some(Scope::Cta)), None);
        assert!(Sem::AcqRel.acquires() && Sem::AcqRel.releases());
        assert!(!Sem::Weak.is_strong() && Sem::Volatile.is_strong());
        assert_eq!(MembarLevel::Gl.scope(), Scope::Gpu);
    }

    #[test]
    fn each_instruction_has_only_the_semantics_the_isa_gives_it() {
        assert_eq!(LoadSem::try_from(Sem::Release), Err(Sem::Release));
        assert_eq!(LoadSem::try_from(Sem::AcqRel), Err(Sem::AcqRel));
        assert_eq!(StoreSem::try_from(Sem::Acquire), Err(Sem::Acquire));
        assert_eq!(RmwSem::try_from(Sem::Weak), Err(Sem::Weak));
        assert_eq!(RmwSem::try_from(Sem::Volatile), Err(Sem::Volatile));
        for s in LoadSem::ALL {
            assert_eq!(LoadSem::try_from(Sem::from(*s)), Ok(*s));
            assert!(!Sem::from(*s).releases());
        }
        for s in StoreSem::ALL {
            assert_eq!(StoreSem::try_from(Sem::from(*s)), Ok(*s));
            assert!(!Sem::from(*s).acquires());
        }
        for s in RmwSem::ALL {
            assert_eq!(RmwSem::try_from(Sem::from(*s)), Ok(*s));
            assert!(Sem::from(*s).is_strong());
        }
        assert_eq!(RmwSem::AcqRel.as_str(), "acq_rel");
    }
}
