//! The names of the notes backends leave in a test record that the tool itself reads back
//! (the report, `bench`, `merge`). Those that count what the run did ([`COUNTED`]) add up when
//! records of repeated runs or shards are merged, so that the merged record still accounts
//! for every instance, launch and stress operation; every other note is a property of the
//! run, and differing values are listed instead.

/// Instances run, skipped ones included (every backend).
pub const INSTANCES_RUN: &str = "instances_run";

/// Roles of the test, each a thread (every backend).
pub const THREADS: &str = "threads";

/// Cores' worth of CPU the test's role threads got while it ran (CPU).
pub const CPU_USED: &str = "cpu_used";

/// Nanoseconds a cache line took to go between two cores and back before the test, which
/// tells a virtual machine's core placements apart (CPU).
pub const ROUND_TRIP_NS: &str = "round_trip_ns";

/// Launches of the test kernel (CUDA).
pub const LAUNCHES: &str = "kernel.launches";

/// Stress operations the device's counter saw (CUDA).
pub const STRESS_OPS: &str = "kernel.stress_ops";

/// Stress operations the launches' seeds required at least (CUDA).
pub const STRESS_OPS_MIN: &str = "kernel.stress_ops_min";

/// Milliseconds of GPU time the launches took, by the stream's timing events (CUDA).
pub const GPU_MS: &str = "kernel.gpu_ms";

/// How the test kernel was launched: grid, CTA and cluster dimensions (CUDA).
pub const TEST_LAUNCH: &str = "kernel.test_launch";

/// Instances each launch runs (CUDA).
pub const INSTANCES_PER_LAUNCH: &str = "kernel.instances_per_launch";

/// The machine code the test kernel ran: FNV-1a of its cubin's code sections, relocations and
/// constant banks (`sass::cubin::code_hash`), equal for a JIT's cubin and ptxas's when only
/// their metadata differ (CUDA).
pub const CODE_HASH: &str = "kernel.code_hash";

/// The optcheck of the machine code the test kernel ran: `pass`, `FAIL: ` and what a role
/// lost, or `not checked: ` and why (CUDA; see `harness::cuda::sass_check`).
pub const SASS_CHECK: &str = "kernel.sass_check";

/// Registers per thread of the test kernel, as the driver reports them (CUDA).
pub const REGISTERS: &str = "kernel.registers";

/// Resident CTAs per SM, and what limits them (CUDA).
pub const CTAS_PER_SM: &str = "kernel.ctas_per_sm";

/// Resident warps of the launch over the SMs' maximum (CUDA).
pub const OCCUPANCY: &str = "kernel.occupancy";

/// Direct launches, or captured graphs of how many launch pairs (CUDA).
pub const LAUNCH_MODE: &str = "kernel.launch_mode";

/// Why launches fell back from graphs to direct launches, when they did (CUDA).
pub const GRAPH_FALLBACK: &str = "kernel.graph_fallback";

/// Host microseconds per launch (CUDA).
pub const HOST_US_PER_LAUNCH: &str = "kernel.host_us_per_launch";

/// What the code generator decided that a reader of the outcomes should know (threads of
/// several GPUs placed on one, bounded loops, barriers in software, a CTA size raised), one
/// sentence each, joined by [`KERNEL_NOTES_SEPARATOR`] (CUDA).
pub const KERNEL_NOTES: &str = "kernel.notes";

/// What joins the sentences of [`KERNEL_NOTES`].
pub const KERNEL_NOTES_SEPARATOR: &str = "; ";

/// Times the test's kernel was compiled, counting the one that sized the grid (CUDA).
pub const COMPILES: &str = "kernel.compiles";

/// The notes that count, in the order above.
pub const COUNTED: [&str; 5] = [INSTANCES_RUN, LAUNCHES, STRESS_OPS, STRESS_OPS_MIN, GPU_MS];

/// The sum of two values of counting note `key`: whole counts add exactly (`None` when they
/// overflow), milliseconds with three decimals; `None` when either is not a number.
pub fn sum(key: &str, a: &str, b: &str) -> Option<String> {
    if key == GPU_MS {
        let (x, y) = (a.parse::<f64>().ok()?, b.parse::<f64>().ok()?);
        return Some(format!("{:.3}", x + y));
    }
    let (x, y) = (a.parse::<u64>().ok()?, b.parse::<u64>().ok()?);
    x.checked_add(y).map(|s| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_exactly_and_milliseconds_to_three_decimals() {
        assert_eq!(sum(LAUNCHES, "2500", "2500").as_deref(), Some("5000"));
        assert_eq!(
            sum(GPU_MS, "100.996", "101.552").as_deref(),
            Some("202.548")
        );
        assert_eq!(sum(INSTANCES_RUN, &u64::MAX.to_string(), "1"), None);
        assert_eq!(sum(STRESS_OPS, "12; 13", "1"), None);
    }
}
