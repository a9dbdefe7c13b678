//! Memory: where every location of every instance lives (segments, strides, permutation
//! multipliers, shared-memory slots, the virtual views of generic aliases) and which result
//! word holds each register and observed shared location of an instance.

use super::abi::VIEW_ALIGN;
use super::placement::coprime_at_least;
use super::{Layout, Shape};
use crate::codegen::stress::Stress;
use crate::codegen::CodegenError;
use crate::litmus::ast::{LocationKind, Proxy, Space, Test, Value};
use crate::outcome::Observable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where one memory location of the test lives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocationLayout {
    /// The location's name (a `Memory` location; aliases resolve to one of these).
    pub name: String,
    /// Initial value.
    pub init: Value,
    /// State space.
    pub space: Space,
    /// For global locations: first word of the location's segment in the memory buffer; for
    /// shared ones: first word of its segment in the owner CTA's shared array.
    pub base: u64,
    /// Words between neighbouring instance slots.
    pub stride: u64,
    /// Multiplier co-prime with the slot count: instance `i` uses slot `i * multiplier mod
    /// slots` (always slot 0 with aliased memory).
    pub multiplier: u64,
    /// For shared locations: the result word that receives its final value.
    pub result_word: Option<u32>,
    /// Whether the location lives in the CUDA array behind the surface object (the test
    /// accesses it through surfaces only) rather than in the memory buffer; `base` is then a
    /// word of the array.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_array: bool,
}

impl Layout {
    /// Word index of a global location's slot for `instance` in the memory buffer (in the CUDA
    /// array for a location that lives there).
    pub fn global_word(&self, loc: &LocationLayout, instance: u64) -> u64 {
        let slot = if self.aliased {
            0
        } else {
            instance * loc.multiplier % self.instances
        };
        loc.base + slot * loc.stride
    }

    /// Word index of a shared location's slot for the instance in `slot` of its CTA (`slot =
    /// block * instances_per_warp + run`), in the owner CTA's shared array.
    pub fn shared_word(&self, loc: &LocationLayout, slot: u64) -> u64 {
        loc.base + if self.aliased { 0 } else { slot }
    }
}

/// The memory locations of a test and the words they take.
pub struct Memory {
    /// Every `Memory` location, in declaration order.
    pub locations: Vec<LocationLayout>,
    /// Words of the memory buffer (global locations of all instances).
    pub global_words: u64,
    /// Words of shared memory each CTA declares.
    pub shared_words: u64,
    /// Words of the CUDA array (global locations accessed through surfaces).
    pub array_words: u64,
}

impl Memory {
    /// Lays out the locations of `test` for the instances of `shape`. Global locations get a
    /// segment each, starting on a 128-byte line so that the first slots of two locations never
    /// share a line, with instances permuted over the slots; shared ones a slot per instance of
    /// the owner's CTA.
    pub fn place(
        test: &Test,
        stress: &Stress,
        shape: &Shape,
        in_array: &[String],
    ) -> Result<Memory, CodegenError> {
        let mut m = Memory {
            locations: Vec::new(),
            global_words: 0,
            shared_words: 0,
            array_words: 0,
        };
        let mut global_index = 0u32;
        for l in &test.locations {
            let LocationKind::Memory { init, space } = l.kind else {
                continue;
            };
            let array = in_array.contains(&l.name);
            let (base, stride, multiplier) = match space {
                Space::Global => {
                    global_index += 1;
                    m.global_slot(stress, shape.instances(), array, global_index - 1)
                }
                Space::Shared { owner } if owner >= test.threads.len() => {
                    return Err(CodegenError::Invalid(format!(
                        "location {} is shared memory of P{owner}, which does not exist",
                        l.name
                    )));
                }
                Space::Shared { .. } => m.shared_slot(stress, shape),
            };
            m.locations.push(LocationLayout {
                name: l.name.clone(),
                init,
                space,
                base,
                stride,
                multiplier,
                result_word: None,
                in_array: array,
            });
        }
        if m.shared_words * 4 > 48 * 1024 {
            return Err(CodegenError::Unsupported {
                construct: format!("{} bytes of shared memory per CTA", m.shared_words * 4),
                reason: "static shared memory is limited to 48 KiB; lower cta_size".into(),
            });
        }
        Ok(m)
    }

    /// Base word, stride and permutation multiplier of the `index`-th global location: a
    /// segment of every instance's word, `stride` apart, 32-word aligned, in the memory
    /// buffer or (`array`) the surface array; instances permuted by a multiplier co-prime
    /// with their number (`permute_first`, then powers of `permute_second`).
    fn global_slot(
        &mut self,
        stress: &Stress,
        instances: u64,
        array: bool,
        index: u32,
    ) -> (u64, u64, u64) {
        let stride = u64::from(stress.mem_stride);
        let want = if index == 0 {
            stress.permute_first
        } else {
            stress.permute_second.wrapping_pow(index)
        };
        let multiplier = coprime_at_least(u64::from(want), instances);
        let words = if array {
            &mut self.array_words
        } else {
            &mut self.global_words
        };
        let base = *words;
        let seg = if stress.aliased_memory { 1 } else { instances } * stride;
        *words += seg.div_ceil(32) * 32;
        (base, stride, multiplier)
    }

    /// Base word, stride and multiplier of a shared location: a word per instance slot of
    /// the CTA (one for all with `aliased_memory`).
    fn shared_slot(&mut self, stress: &Stress, shape: &Shape) -> (u64, u64, u64) {
        let base = self.shared_words;
        self.shared_words += if stress.aliased_memory {
            1
        } else {
            shape.slots_per_cta()
        };
        (base, 1, 1)
    }

    /// The memory views generic aliases of global locations need: the number of views, the
    /// bytes between neighbours and each alias's view (the k-th alias of a location is view k).
    pub fn views(&self, test: &Test) -> (u32, u64, Vec<(String, u32)>) {
        let mut alias_views: Vec<(String, u32)> = Vec::new();
        let mut per_target: BTreeMap<String, u32> = BTreeMap::new();
        for l in &test.locations {
            let LocationKind::Alias {
                proxy: Proxy::Generic,
                ..
            } = l.kind
            else {
                continue;
            };
            let global = |t: &str| {
                self.locations
                    .iter()
                    .any(|m| m.name == t && m.space == Space::Global)
            };
            if let Some(t) = test.resolve(&l.name).filter(|t| global(t)) {
                let k = per_target.entry(t.to_string()).or_insert(0);
                *k += 1;
                alias_views.push((l.name.clone(), *k));
            }
        }
        let views = 1 + per_target.values().copied().max().unwrap_or(0);
        let bytes = if views > 1 {
            (self.global_words.max(1) * 4).div_ceil(VIEW_ALIGN) * VIEW_ALIGN
        } else {
            0
        };
        (views, bytes, alias_views)
    }
}

/// Which result word of an instance holds what: one status word per role, then every register
/// of every thread (so that the test kernel stores each one and ptxas cannot treat any test
/// load or atom as dead), then final values of observed shared locations, then two words (key,
/// passed) per software barrier, zeroed with the results after every launch, which is the "not
/// yet published" state the barrier needs.
pub struct ResultWords {
    /// Per thread, the word of each of its registers.
    pub registers: Vec<Vec<(String, u32)>>,
    /// Per observable, its word (`None` for a global location, read from memory).
    pub observables: Vec<Option<u32>>,
    /// The first software barrier word.
    pub soft_barriers: u32,
    /// Words per instance.
    pub total: u32,
}

impl ResultWords {
    /// Assigns the words, recording each observed shared location's in `locations`.
    pub fn assign(
        test: &Test,
        observables: &[Observable],
        locations: &mut [LocationLayout],
        soft_barriers: usize,
    ) -> Result<ResultWords, CodegenError> {
        let mut next = test.threads.len() as u32;
        let mut word = || {
            next += 1;
            next - 1
        };
        let registers: Vec<Vec<(String, u32)>> = (0..test.threads.len())
            .map(|t| {
                let regs = test.thread_registers(t);
                regs.into_iter().map(|r| (r.0, word())).collect()
            })
            .collect();
        let mut words = Vec::new();
        for o in observables {
            words.push(match o {
                Observable::Reg { thread, reg } => Some(
                    registers
                        .get(*thread)
                        .and_then(|rs| rs.iter().find(|(r, _)| *r == reg.0))
                        .map(|(_, w)| *w)
                        .ok_or_else(|| {
                            CodegenError::Invalid(format!(
                                "observable {o} names a thread that does not exist"
                            ))
                        })?,
                ),
                Observable::Loc(name) => {
                    let target = test.resolve(name).ok_or_else(|| {
                        CodegenError::Invalid(format!("observable {o} is not a location"))
                    })?;
                    let loc = locations
                        .iter_mut()
                        .find(|l| l.name == target)
                        .expect("resolve returns a memory location");
                    match loc.space {
                        Space::Global => None,
                        Space::Shared { .. } => {
                            Some(*loc.result_word.get_or_insert_with(&mut word))
                        }
                    }
                }
            });
        }
        let first_soft = word();
        Ok(ResultWords {
            registers,
            observables: words,
            soft_barriers: first_soft,
            total: first_soft + 2 * soft_barriers as u32,
        })
    }
}
