//! The variant space of cuda-litmus (github.com/reeselevine/cuda-litmus) as run for PLDI'26:
//! its kernels (`kernels/*.cu`) written as annotated cycles, so that every variant its tuning
//! files name (`tuning-files/*.txt`: thread-block groupings, scopes, orderings, fence scopes
//! and fence placements) is generated under the same name as in its `pldi26-output/results.csv`
//! (`<kernel>_<TB>_<SCOPE>_<FENCE_SCOPE or NO_FENCE>_<VARIANT>`).
//!
//! Facts taken from there: which access of which thread each ordering variant changes and
//! where each `FENCE_i()` sits; C++ orders lowered as libcu++ lowers them for sm_70+ (relaxed
//! and acquire loads to `ld.relaxed`/`ld.acquire`, release stores to `st.release`, a seq_cst
//! load to `fence.sc` then `ld.acquire`, a seq_cst store to `fence.sc` then `st.relaxed`, all
//! at the atomic's scope; `atomic_thread_fence` acq_rel to `fence.acq_rel` and seq_cst to
//! `fence.sc` at the fence scope, which is `.sys` when the variant names none).

use super::GenError;
use crate::litmus::ast::Scope;

/// One kernel: the prefix of its result names, its cycle with numbered slots, and per
/// ordering variant what fills each slot.
pub struct Kernel {
    /// The kernel file's stem (`kernels/<file>.cu`), as a family names it.
    pub file: &'static str,
    /// The prefix of its rows in results.csv.
    pub prefix: &'static str,
    template: &'static str,
    variants: &'static [(&'static str, &'static [&'static str])],
}

// Slot fillers: plain program order, an acq_rel fence, an sc fence between two accesses.
const P: &str = "Pod";
const F: &str = "Fence(acq_rel)d";
const S: &str = "Fence(sc)d";
// C++ seq_cst accesses as libcu++ lowers them (`{S}` is the atomic's scope).
const SC_ST: &str = "Fence(sc.{S})+rlx";
const SC_LD: &str = "Fence(sc.{S})+acq";
const SCF: &str = "Fence(sc)+";

/// Every kernel of the PLDI'26 runs.
pub const KERNELS: &[Kernel] = &[
    Kernel {
        file: "iriw",
        prefix: "iriw",
        // T0: W x | T1: R x, FENCE_1, R y | T2: W y | T3: R y, FENCE_3, R x
        template: "rlx Rfe {0} {1}RR rlx Fre rlx Rfe {2} {3}RR rlx Fre",
        variants: &[
            ("RELAXED", &["rlx", P, "rlx", P]),
            ("ACQUIRE", &["acq", P, "acq", P]),
            ("THREAD_1_FENCE", &["rlx", F, "acq", P]),
            ("THREAD_3_FENCE", &["acq", P, "rlx", F]),
            ("BOTH_FENCE", &["rlx", F, "rlx", F]),
        ],
    },
    Kernel {
        file: "wrc",
        prefix: "wrc",
        // T0: W x | T1: R x, FENCE_1, W y | T2: R y, FENCE_2, R x
        template: "rlx Rfe {0} {1}RW {2} Rfe {3} {4}RR rlx Fre",
        variants: &[
            ("RELAXED", &["rlx", P, "rlx", "rlx", P]),
            ("ACQUIRE", &["acq", P, "rlx", "acq", P]),
            ("RELEASE", &["rlx", P, "rel", "acq", P]),
            ("ACQ_REL", &["acq", P, "rel", "acq", P]),
            ("BOTH_FENCE", &["rlx", F, "rlx", "rlx", F]),
            ("THREAD_1_FENCE", &["rlx", F, "rlx", "acq", P]),
            ("THREAD_2_FENCE_ACQ", &["acq", P, "rlx", "rlx", F]),
            ("THREAD_2_FENCE_REL", &["rlx", P, "rel", "rlx", F]),
        ],
    },
    Kernel {
        file: "isa2",
        prefix: "isa2",
        // T0: W x, FENCE_0, W y | T1: R y, FENCE_1, W z | T2: R z, FENCE_2, R x
        template: "rlx {0}WW {1} Rfe {2} {3}RW {4} Rfe {5} {6}RR rlx Fre",
        variants: &[
            ("ACQUIRE", &[P, "rel", "acq", P, "rlx", "acq", P]),
            ("RELEASE", &[P, "rel", "rlx", P, "rel", "acq", P]),
            ("RELAXED", &[P, "rlx", "rlx", P, "rlx", "rlx", P]),
            ("ALL_FENCE", &[F, "rlx", "rlx", F, "rlx", "rlx", F]),
            ("THREAD_0_FENCE_ACQ", &[F, "rlx", "acq", P, "rlx", "acq", P]),
            ("THREAD_0_FENCE_REL", &[F, "rlx", "rlx", P, "rel", "acq", P]),
            ("THREAD_1_FENCE", &[P, "rel", "rlx", F, "rlx", "acq", P]),
            ("THREAD_2_FENCE_ACQ", &[P, "rel", "acq", P, "rlx", "rlx", F]),
            ("THREAD_2_FENCE_REL", &[P, "rel", "rlx", P, "rel", "rlx", F]),
            ("THREAD_0_1_FENCE", &[F, "rlx", "rlx", F, "rlx", "acq", P]),
            (
                "THREAD_0_2_FENCE_ACQ",
                &[F, "rlx", "acq", P, "rlx", "rlx", F],
            ),
            (
                "THREAD_0_2_FENCE_REL",
                &[F, "rlx", "rlx", P, "rel", "rlx", F],
            ),
            ("THREAD_1_2_FENCE", &[P, "rel", "rlx", F, "rlx", "rlx", F]),
        ],
    },
    Kernel {
        file: "rwc",
        prefix: "rwc",
        // T0: W x | T1: R x, FENCE_1 (acq_rel), R y | T2: W y, FENCE_2 (seq_cst), R x
        template: "rlx Rfe {0} {1}RR rlx Fre {2} {3}WR {4} Fre",
        variants: &[
            ("STORE_SC", &["acq", P, SC_ST, P, "rlx"]),
            ("LOAD_SC", &["acq", P, "rlx", P, SC_LD]),
            ("RELAXED", &["rlx", P, "rlx", P, "rlx"]),
            ("BOTH_FENCE", &["rlx", F, "rlx", S, "rlx"]),
            ("THREAD_1_FENCE_STORE_SC", &["rlx", F, SC_ST, P, "rlx"]),
            ("THREAD_1_FENCE_LOAD_SC", &["rlx", F, "rlx", P, SC_LD]),
            ("THREAD_2_FENCE", &["acq", P, "rlx", S, "rlx"]),
        ],
    },
    Kernel {
        file: "wrw+2w",
        prefix: "wrw_2w",
        // T0: W x=2 | T1: R x, FENCE_1, W y=1 | T2: W y=2, FENCE_2, W x=1
        template: "rlx Rfe {0} {1}RW {2} Coe rlx {3}WW {4} Coe",
        variants: &[
            ("ACQUIRE", &["acq", P, "rlx", P, "rel"]),
            ("RELEASE", &["rlx", P, "rel", P, "rel"]),
            ("RELAXED", &["rlx", P, "rlx", P, "rlx"]),
            ("BOTH_FENCE", &["rlx", F, "rlx", F, "rlx"]),
            ("THREAD_1_FENCE", &["rlx", F, "rlx", P, "rel"]),
            ("THREAD_2_FENCE_ACQ", &["acq", P, "rlx", F, "rlx"]),
            ("THREAD_2_FENCE_REL", &["rlx", P, "rel", F, "rlx"]),
        ],
    },
    Kernel {
        file: "wwc",
        prefix: "wwc",
        // T0: W x=2 | T1: R x, FENCE_1, W y | T2: R y, FENCE_2, W x=1
        template: "rlx Rfe {0} {1}RW {2} Rfe {3} {4}RW {5} Coe",
        variants: &[
            ("ACQ_REL", &["acq", P, "rlx", "rlx", P, "rel"]),
            ("ACQ_ACQ", &["acq", P, "rlx", "acq", P, "rlx"]),
            ("REL_ACQ", &["rlx", P, "rel", "acq", P, "rlx"]),
            ("REL_REL", &["rlx", P, "rel", "rlx", P, "rel"]),
            ("RELAXED", &["rlx", P, "rlx", "rlx", P, "rlx"]),
            ("BOTH_FENCE", &["rlx", F, "rlx", "rlx", F, "rlx"]),
            ("THREAD_1_FENCE_ACQ", &["rlx", F, "rlx", "acq", P, "rlx"]),
            ("THREAD_1_FENCE_REL", &["rlx", F, "rlx", "rlx", P, "rel"]),
            ("THREAD_2_FENCE_ACQ", &["acq", P, "rlx", "rlx", F, "rlx"]),
            ("THREAD_2_FENCE_REL", &["rlx", P, "rel", "rlx", F, "rlx"]),
        ],
    },
    Kernel {
        file: "2+2w",
        prefix: "two_2w",
        // T0: W x, FENCE0, W y | T1: W y, FENCE1, W x
        template: "rlx {0}WW {1} Coe rlx {2}WW {3} Coe",
        variants: &[
            ("RELEASE", &[P, "rel", P, "rel"]),
            ("RELAXED", &[P, "rlx", P, "rlx"]),
            ("BOTH_FENCE", &[F, "rlx", F, "rlx"]),
            ("FENCE_0", &[F, "rlx", P, "rel"]),
            ("FENCE_1", &[P, "rel", F, "rlx"]),
        ],
    },
    Kernel {
        file: "3.2w",
        prefix: "three_2w",
        // T0: W x, FENCE0, W y | T1: W y, FENCE1, W z | T2: W z, FENCE2, W x
        template: "rlx {0}WW {1} Coe rlx {2}WW {3} Coe rlx {4}WW {5} Coe",
        variants: &[
            ("RELEASE", &[P, "rel", P, "rel", P, "rel"]),
            ("RELAXED", &[P, "rlx", P, "rlx", P, "rlx"]),
            ("ALL_FENCE", &[F, "rlx", F, "rlx", F, "rlx"]),
            ("FENCE_0", &[F, "rlx", P, "rel", P, "rel"]),
            ("FENCE_1", &[P, "rel", F, "rlx", P, "rel"]),
            ("FENCE_2", &[P, "rel", P, "rel", F, "rlx"]),
            ("FENCE_01", &[F, "rlx", F, "rlx", P, "rel"]),
            ("FENCE_02", &[F, "rlx", P, "rel", F, "rlx"]),
            ("FENCE_12", &[P, "rel", F, "rlx", F, "rlx"]),
        ],
    },
    Kernel {
        file: "z6-3",
        prefix: "z6_3",
        // T0: W x, FENCE0, W y | T1: W y=2, FENCE1, W z | T2: R z, FENCE2, R x
        template: "rlx {0}WW {1} Coe rlx {2}WW {3} Rfe {4} {5}RR rlx Fre",
        variants: &[
            ("ACQ_REL", &[P, "rel", P, "rel", "acq", P]),
            ("RELAXED", &[P, "rlx", P, "rlx", "rlx", P]),
            ("ALL_FENCE", &[F, "rlx", F, "rlx", "rlx", F]),
            ("FENCE_0", &[F, "rlx", P, "rel", "acq", P]),
            ("FENCE_1", &[P, "rel", F, "rlx", "acq", P]),
            ("FENCE_2", &[P, "rel", P, "rel", "rlx", F]),
            ("FENCE_01", &[F, "rlx", F, "rlx", "acq", P]),
            ("FENCE_02", &[F, "rlx", P, "rel", "rlx", F]),
            ("FENCE_12", &[P, "rel", F, "rlx", "rlx", F]),
        ],
    },
    Kernel {
        file: "paper-example1",
        prefix: "paper_example1",
        // T0: FENCE_0, W x, W y | T1: R y, FENCE_1, W z | T2: FENCE_2, W z=2, W a | T3: R a, R x
        template: "{0}{1} PodWW {1} Rfe {2} {3}RW {1} Coe {0}{1} PodWW {1} Rfe {2} PodRR {2} Fre",
        variants: &[
            ("DISALLOWED", &[SCF, "rel", "acq", S]),
            ("RELAXED", &["", "rlx", "rlx", P]),
        ],
    },
    Kernel {
        file: "paper-example2",
        prefix: "paper_example2",
        // T0: FENCE_0, W x, W y | T1: R y, FENCE_1, R z | T2: FENCE_2, W z, W a | T3: R a, R x
        template: "{0}{1} PodWW {1} Rfe {2} {3}RR {2} Fre {0}{1} PodWW {1} Rfe {2} PodRR {2} Fre",
        variants: &[
            ("DISALLOWED", &[SCF, "rel", "acq", S]),
            ("RELAXED", &["", "rlx", "rlx", P]),
        ],
    },
];

/// The kernel a family names.
pub fn kernel(file: &str) -> Result<&'static Kernel, GenError> {
    KERNELS.iter().find(|k| k.file == file).ok_or_else(|| {
        let known: Vec<&str> = KERNELS.iter().map(|k| k.file).collect();
        GenError::msg(format!(
            "unknown cuda-litmus kernel `{file}` (known: {})",
            known.join(", ")
        ))
    })
}

/// The scope of a `SCOPE_*` word (the atomics' `cuda::thread_scope`).
pub fn scope(word: &str) -> Result<Scope, GenError> {
    match word {
        "SCOPE_BLOCK" => Ok(Scope::Cta),
        "SCOPE_DEVICE" => Ok(Scope::Gpu),
        "SCOPE_SYSTEM" => Ok(Scope::Sys),
        _ => Err(GenError::msg(format!(
            "`{word}`: expected SCOPE_BLOCK, SCOPE_DEVICE or SCOPE_SYSTEM"
        ))),
    }
}

/// The fence scope of a `FENCE_SCOPE_*` word; `NO_FENCE` leaves litmus.cuh's default, system.
pub fn fence_scope(word: &str) -> Result<Scope, GenError> {
    match word {
        "NO_FENCE" => Ok(Scope::Sys),
        w => w
            .strip_prefix("FENCE_")
            .ok_or(())
            .and_then(|s| scope(s).map_err(|_| ()))
            .map_err(|_| {
                GenError::msg(format!(
                    "`{w}`: expected FENCE_SCOPE_BLOCK, FENCE_SCOPE_DEVICE or FENCE_SCOPE_SYSTEM"
                ))
            }),
    }
}

impl Kernel {
    /// The annotated cycle text of an ordering variant, with the atomics' scope written where
    /// a seq_cst access needs it.
    pub fn cycle_text(&self, variant: &str, atomic_scope: Scope) -> Result<String, GenError> {
        let (_, fill) = self
            .variants
            .iter()
            .find(|(v, _)| *v == variant)
            .ok_or_else(|| {
                let known: Vec<&str> = self.variants.iter().map(|(v, _)| *v).collect();
                GenError::msg(format!(
                    "kernel {}: unknown variant `{variant}` (known: {})",
                    self.file,
                    known.join(", ")
                ))
            })?;
        let mut text = self.template.to_string();
        for (i, f) in fill.iter().enumerate() {
            text = text.replace(&format!("{{{i}}}"), f);
        }
        Ok(text.replace("{S}", atomic_scope.as_str()))
    }

    /// The results.csv name of a variant.
    pub fn name(&self, tb: &str, scope: &str, fence_scope: &str, variant: &str) -> String {
        format!("{}_{tb}_{scope}_{fence_scope}_{variant}", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::cycle::Cycle;
    use crate::gen::shapes;

    #[test]
    fn every_kernel_is_the_classic_shape_it_is_named_after() {
        let named = [
            ("iriw", "IRIW"),
            ("wrc", "WRC"),
            ("isa2", "ISA2"),
            ("rwc", "RWC"),
            ("wrw_2w", "WRW+2W"),
            ("wwc", "WWC"),
            ("two_2w", "2+2W"),
            ("three_2w", "3.2W"),
            ("z6_3", "Z6.3"),
        ];
        for k in KERNELS {
            let want = named.iter().find(|(p, _)| *p == k.prefix).map(|(_, n)| *n);
            for (v, _) in k.variants {
                let c = Cycle::parse(&k.cycle_text(v, Scope::Gpu).unwrap()).unwrap();
                if let Some(n) = want {
                    assert_eq!(shapes::classic(&c), Some(n), "{} {v}", k.file);
                }
            }
        }
    }

    #[test]
    fn every_variant_is_a_well_formed_cycle() {
        for k in KERNELS {
            for (v, fill) in k.variants {
                assert!(
                    !k.template.contains(&format!("{{{}}}", fill.len())),
                    "{} {v}",
                    k.file
                );
                let text = k.cycle_text(v, Scope::Gpu).unwrap();
                assert!(!text.contains('{'), "{} {v}: {text}", k.file);
                Cycle::parse(&text).unwrap_or_else(|e| panic!("{} {v}: {e}", k.file));
            }
        }
    }
}
