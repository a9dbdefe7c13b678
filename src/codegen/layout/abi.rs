//! The launch ABI: what the CUDA backend reads to run a kernel. The two entries' launch shapes,
//! their parameters in order, the buffers the host allocates, the histogram's words and
//! counters, and the decoding of the histogram the device leaves behind.

use super::{Layout, Shape};
use crate::codegen::stress::Stress;
use crate::codegen::CodegenError;
use crate::litmus::ast::Value;
use crate::outcome::{Histogram, Outcome};
use serde::{Deserialize, Serialize};

/// Largest outcome space the device histogram holds.
pub const MAX_OUTCOMES: u64 = 1 << 20;

/// The low bits of the memory buffer's address that must be zero: the test entry makes its
/// location arguments' biases from them, a zero ptxas cannot see (`emit/test_entry.rs`), and
/// the host checks the buffer's alignment before a launch.
pub const MEMORY_ZERO_BITS: u32 = 0xff;

/// The entry that runs the test's instances.
pub const TEST_ENTRY: &str = "litmus_test";

/// The entry that counts the instances of the test launch before it.
pub const COLLECT_ENTRY: &str = "litmus_collect";

/// Launch dimensions of one kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchConfig {
    /// The kernel's entry name in the module.
    pub entry: String,
    /// Grid dimensions in CTAs.
    pub grid: [u32; 3],
    /// CTA dimensions in threads.
    pub block: [u32; 3],
    /// Cluster dimensions in CTAs, when the kernel needs a cluster launch (`cuLaunchKernelEx`
    /// with the cluster-dimension attribute; the PTX also states them with `.reqnctapercluster`).
    pub cluster: Option<[u32; 3]>,
    /// Dynamic shared memory bytes (the kernel declares its shared memory statically).
    pub dynamic_shared_bytes: u32,
}

/// What a kernel parameter carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Param {
    /// Device pointer to the [`BufferKind::Memory`] buffer.
    Memory,
    /// Device pointer to the [`BufferKind::Results`] buffer.
    Results,
    /// Device pointer to the [`BufferKind::Histogram`] buffer.
    Histogram,
    /// Device pointer to the [`BufferKind::Stress`] buffer.
    Stress,
    /// Device pointer to the [`BufferKind::Sync`] buffer.
    Sync,
    /// The test's seed state, a `u64` by value, the same for every launch: each launch derives
    /// its own 32-bit seed from it and the launch index in the Sync buffer
    /// ([`super::launch_seed`]), so a new seed per launch re-randomises placement without new
    /// arguments.
    Seed,
    /// A texture object (`CUtexObject`, a `u64` by value) over the [`BufferKind::Memory`]
    /// buffer: linear, one 32-bit unsigned channel, one element per word; only kernels whose
    /// test reads through the texture proxy take it ([`Layout::params`]).
    Texture,
    /// A surface object (`CUsurfObject`, a `u64` by value) over the CUDA array of the
    /// locations the test accesses through surfaces ([`Layout::array_extent`]); only kernels
    /// of such tests take it.
    Surface,
}

/// The parameters every kernel starts with (`litmus_test` and `litmus_collect` take the same),
/// in order; [`Layout::params`] adds the texture object of a test that needs one. Every pointer
/// is a `u64` device address; `Seed` is a `u64` by value.
pub const PARAMS: [Param; 6] = [
    Param::Memory,
    Param::Results,
    Param::Histogram,
    Param::Stress,
    Param::Sync,
    Param::Seed,
];

impl Param {
    /// The parameter's name in the PTX.
    pub fn name(self) -> &'static str {
        match self {
            Param::Memory => "p_mem",
            Param::Results => "p_results",
            Param::Histogram => "p_hist",
            Param::Stress => "p_stress",
            Param::Sync => "p_sync",
            Param::Seed => "p_seed",
            Param::Texture => "p_tex",
            Param::Surface => "p_surf",
        }
    }
}

/// A device buffer the host allocates once, zero-filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BufferKind {
    /// Global memory of the test's global locations, `u32` words.
    Memory,
    /// Per-instance result slots, `u32` words ([`Layout::result_words`] per instance).
    Results,
    /// The histogram and its counters, `u64` words (see [`Counter`]); the only buffer the host
    /// reads back.
    Histogram,
    /// Scratch lines that stress loops hammer, `u32` words.
    Stress,
    /// The spin barrier's `u32` counter and the `u64` launch index
    /// ([`super::SYNC_LAUNCH_INDEX`]).
    Sync,
}

/// One buffer the host allocates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buffer {
    /// Which buffer.
    pub kind: BufferKind,
    /// Size in bytes.
    pub bytes: u64,
}

/// Counters after the outcome counts in the histogram buffer, by offset from
/// [`Layout::outcome_count`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Counter {
    /// Instances whose final state had a value outside the outcome space.
    Unexpected = 0,
    /// Instances skipped because a bounded loop of the test ran out of iterations.
    Skipped = 1,
    /// Instances the collect kernel examined (counted or skipped): the checksum.
    Checked = 2,
    /// Instances some of whose roles did not report (a harness fault; must stay 0).
    Incomplete = 3,
    /// Memory operations the stress loops issued (stress threads and pre-test stress).
    StressOps = 4,
}

/// Counters after the outcome counts.
pub const COUNTERS: u64 = 5;

impl Counter {
    /// Every counter, in the order of its word.
    pub const ALL: [Counter; COUNTERS as usize] = [
        Counter::Unexpected,
        Counter::Skipped,
        Counter::Checked,
        Counter::Incomplete,
        Counter::StressOps,
    ];

    /// The counter's name in the kernel's opening comment.
    pub fn name(self) -> &'static str {
        match self {
            Counter::Unexpected => "unexpected",
            Counter::Skipped => "skipped",
            Counter::Checked => "checked",
            Counter::Incomplete => "incomplete",
            Counter::StressOps => "stress_ops",
        }
    }
}

/// Most elements a texture object over linear memory may span (CUDA's limit for 1D linear
/// textures on every GPU the harness supports; the runtime checks the device's own).
pub const MAX_TEXTURE_ELEMENTS: u64 = 1 << 27;

/// Alignment of the memory views: the granularity of the driver's virtual memory mappings
/// (2 MiB for device memory on every GPU the harness supports; the runtime checks it).
pub const VIEW_ALIGN: u64 = 2 << 20;

/// The buffers of a kernel, in the order of the pointer parameters.
pub(super) fn buffers(
    stress: &Stress,
    global_words: u64,
    instances: u64,
    result_words: u32,
    outcome_count: u64,
    spin_counters: u32,
) -> Vec<Buffer> {
    let stress_words = u64::from(stress.stress_line_size) * u64::from(stress.stress_target_lines);
    let buffer = |kind, bytes| Buffer { kind, bytes };
    vec![
        buffer(BufferKind::Memory, global_words.max(1) * 4),
        buffer(BufferKind::Results, instances * u64::from(result_words) * 4),
        buffer(BufferKind::Histogram, (outcome_count + COUNTERS) * 8),
        buffer(BufferKind::Stress, stress_words * 4),
        buffer(
            BufferKind::Sync,
            super::SYNC_SPIN_COUNTERS + 4 * u64::from(spin_counters.max(1) - 1),
        ),
    ]
}

/// The test kernel's launch: the testing CTAs and the stress CTAs beyond them, in whole
/// clusters.
pub(super) fn test_launch(stress: &Stress, shape: &Shape, testing_ctas: u32) -> LaunchConfig {
    let dim = shape.cluster_dim;
    LaunchConfig {
        entry: TEST_ENTRY.into(),
        grid: [stress.max_ctas.max(testing_ctas).div_ceil(dim) * dim, 1, 1],
        block: [stress.cta_size, 1, 1],
        cluster: (dim > 1).then_some([dim, 1, 1]),
        dynamic_shared_bytes: 0,
    }
}

/// Threads per CTA of the collect kernel.
const COLLECT_BLOCK: u32 = 256;

/// The collect kernel's launch: one thread per instance.
pub(super) fn collect_launch(instances: u64) -> LaunchConfig {
    LaunchConfig {
        entry: COLLECT_ENTRY.into(),
        grid: [(instances as u32).div_ceil(COLLECT_BLOCK), 1, 1],
        block: [COLLECT_BLOCK, 1, 1],
        cluster: None,
        dynamic_shared_bytes: 0,
    }
}

impl Layout {
    /// The launch ABI as comment lines for the top of the kernel: the entries, the histogram's
    /// words and the stress a launch must issue. A reader of the PTX learns from it what the
    /// host expects, and the simulated driver of the tests reads it to count as a GPU would.
    pub fn abi_comment(&self, stress: &Stress) -> String {
        let counters: Vec<&str> = Counter::ALL.iter().map(|c| c.name()).collect();
        format!(
            "// entries: {TEST_ENTRY} runs {} instances; {COLLECT_ENTRY} counts them, one \
             thread each\n// histogram ({}, u64 words): {} outcome words, then {}\n// stress \
             operations of a launch that draws memory stress: at least {}\n",
            self.instances,
            Param::Histogram.name(),
            self.outcome_count,
            counters.join(" "),
            self.stress_cta_ops(stress)
        )
    }

    /// Memory operations the stress CTAs issue in one launch that draws memory stress: every
    /// thread of every CTA beyond the testing ones runs `mem_stress_iterations` iterations of
    /// two accesses (the contract of `ptx/stress.ptx`).
    pub fn stress_cta_ops(&self, stress: &Stress) -> u64 {
        let count = |d: &[u32; 3]| d.iter().map(|&n| u64::from(n)).product::<u64>();
        let stress_ctas =
            count(&self.test_launch.grid).saturating_sub(u64::from(self.testing_ctas));
        stress_ctas * count(&self.test_launch.block) * 2 * u64::from(stress.mem_stress_iterations)
    }

    /// The parameters of both kernels, in order: [`PARAMS`], then [`Param::Texture`] when the
    /// test reads through the texture proxy, then [`Param::Surface`] when it uses surfaces.
    pub fn params(&self) -> Vec<Param> {
        let mut p = PARAMS.to_vec();
        if self.linear_texture {
            p.push(Param::Texture);
        }
        if self.array_words > 0 {
            p.push(Param::Surface);
        }
        p
    }

    /// Index of the histogram word that counts `outcome`, or `None` when a value lies outside
    /// its domain (the unexpected bucket).
    pub fn encode(&self, outcome: &[Value]) -> Option<u64> {
        let mut index = 0u64;
        for (v, d) in outcome.iter().zip(&self.domains) {
            let digit = d.iter().position(|x| as_u32(*x) == as_u32(*v))? as u64;
            index = index * d.len() as u64 + digit;
        }
        Some(index)
    }

    /// The outcome counted by histogram word `index` (the inverse of [`Layout::encode`]).
    pub fn decode(&self, mut index: u64) -> Outcome {
        let mut values = vec![0; self.domains.len()];
        for (k, d) in self.domains.iter().enumerate().rev() {
            let n = d.len() as u64;
            values[k] = d[(index % n) as usize];
            index /= n;
        }
        Outcome(values)
    }

    /// Turns the device histogram buffer (read back as `u64` words) into a [`Histogram`] and
    /// its counters, checking the checksum: every examined instance was counted exactly once.
    pub fn decode_histogram(&self, words: &[u64]) -> Result<DeviceCounts, CodegenError> {
        let n = self.outcome_count as usize;
        if words.len() < n + COUNTERS as usize {
            return Err(CodegenError::Invalid(format!(
                "histogram buffer has {} words, expected {}",
                words.len(),
                n + COUNTERS as usize
            )));
        }
        let counter = |c: Counter| words[n + c as usize];
        let mut histogram = Histogram::default();
        for (i, &count) in words[..n].iter().enumerate() {
            if count > 0 {
                histogram.counts.insert(self.decode(i as u64), count);
            }
        }
        histogram.unexpected = counter(Counter::Unexpected);
        let counts = DeviceCounts {
            histogram,
            skipped: counter(Counter::Skipped),
            checked: counter(Counter::Checked),
            incomplete: counter(Counter::Incomplete),
            stress_ops: counter(Counter::StressOps),
        };
        if counts.histogram.total() + counts.skipped != counts.checked {
            return Err(CodegenError::Checksum(format!(
                "{} counted + {} skipped != {} instances examined",
                counts.histogram.total(),
                counts.skipped,
                counts.checked
            )));
        }
        Ok(counts)
    }
}

/// What the device counted, decoded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceCounts {
    /// Outcomes and the unexpected bucket.
    pub histogram: Histogram,
    /// Instances skipped (a bounded loop ran out).
    pub skipped: u64,
    /// Instances examined by the collect kernel: counted plus skipped.
    pub checked: u64,
    /// Instances with roles that never reported (must be 0).
    pub incomplete: u64,
    /// Stress memory operations issued.
    pub stress_ops: u64,
}

impl DeviceCounts {
    /// Checks the totals against the launches run: every instance of every launch was examined
    /// and none was incomplete.
    pub fn check_total(&self, layout: &Layout, launches: u64) -> Result<(), CodegenError> {
        let expected = layout.instances * launches;
        if self.checked != expected || self.incomplete != 0 {
            return Err(CodegenError::Checksum(format!(
                "{} instances examined and {} incomplete after {launches} launches of {} \
                 instances (expected {expected} and 0)",
                self.checked, self.incomplete, layout.instances
            )));
        }
        Ok(())
    }
}

/// A value as the device holds it (32 bits, two's complement).
pub fn as_u32(v: Value) -> u32 {
    v as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus;

    #[test]
    fn counters_are_listed_in_the_order_of_their_words() {
        for (i, c) in Counter::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i, "{}", c.name());
        }
    }

    #[test]
    fn the_abi_comment_states_what_the_host_will_check() {
        let src = "PTX SB { x=0; y=0; }
             P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
             st.relaxed.gpu x, 1 | st.relaxed.gpu y, 1 ;
             ld.relaxed.gpu r0, y | ld.relaxed.gpu r1, x ;
             exists (P0:r0 == 0 /\\ P1:r1 == 0)";
        let test = litmus::parse(src, std::path::Path::new("sb.litmus")).unwrap();
        let stress = Stress::full_stress();
        let l = Layout::new(&test, &stress, &[vec![0, 1], vec![0, 1]]).unwrap();
        let c = l.abi_comment(&stress);
        assert!(c.lines().all(|line| line.starts_with("// ")), "{c}");
        let expect = [
            format!("{TEST_ENTRY} runs {} instances", l.instances),
            "(p_hist, u64 words): 4 outcome words, then unexpected skipped checked".to_string(),
            format!("at least {}", l.stress_cta_ops(&stress)),
        ];
        for e in expect {
            assert!(c.contains(&e), "{e} not in\n{c}");
        }
        assert!(l.stress_cta_ops(&stress) > 0);
    }
}
