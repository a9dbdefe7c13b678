//! The launch `bench gpu` makes of each shape under each preset, planned without a GPU: the
//! kernel's registers and shared memory (from `ptxas -v`, or an assumed count when no ptxas
//! is at hand), CTAs per SM on a device model, the grid a run sizes to one full wave, the
//! instances per launch, the occupancy and the memory-bandwidth bound on instances/s. The
//! same bytes-per-instance model gives a measured run its roofline line.

use crate::codegen::{self, Kernel, Layout, Stress};
use crate::harness::cuda::occupancy::{
    achieved, fill_stress, fills, full_grid, occupancy, KernelResources, Occupancy,
};
use crate::harness::cuda::DeviceLimits;
use crate::litmus::ast::{Space, Test};
use crate::sass::usage::EntryUsage;

/// Registers per thread assumed for a kernel when ptxas cannot say.
pub const ASSUMED_REGISTERS: u32 = 32;

/// Bytes of one DRAM sector: the least a scattered access moves.
const SECTOR_BYTES: u64 = 32;

/// One row of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanRow {
    /// Registers per thread and static shared bytes of the launched kernel.
    pub usage: EntryUsage,
    /// Whether `usage` came from ptxas (otherwise [`ASSUMED_REGISTERS`]).
    pub measured: bool,
    /// CTAs per SM and their limiter.
    pub occupancy: Occupancy,
    /// CTAs that run instances, and CTAs in the grid.
    pub ctas: (u32, u32),
    /// Threads per CTA.
    pub cta_size: u32,
    /// CTAs per cluster (1 without a cluster launch).
    pub cluster_width: u32,
    /// Instances per launch.
    pub instances: u64,
    /// Resident warps over the device's maximum.
    pub achieved: f64,
    /// Bytes of device memory one instance moves.
    pub bytes_per_instance: u64,
    /// Instances/s at which those bytes fill the memory bandwidth.
    pub bound_per_s: Option<f64>,
}

/// Plans `test` under `stress` on `limits`, as a run with `grid=fill` would launch it;
/// `usage` gives a kernel's test-entry usage (ptxas), `None` to assume.
pub fn plan(
    test: &Test,
    stress: &Stress,
    limits: &DeviceLimits,
    usage: &dyn Fn(&Kernel) -> Option<EntryUsage>,
) -> Result<PlanRow, String> {
    let build = |s: &Stress| codegen::build(test, s).map_err(|e| e.to_string());
    let mut kernel = build(stress)?;
    let (mut used, mut measured) = usage_of(&kernel, usage);
    let mut occ = occupancy(limits, &resources(&kernel, used))?;
    let width = cluster_width(&kernel.layout);
    let mut full = full_grid(limits, &occ, width, None);
    if fills(stress) {
        kernel = build(&fill_stress(stress, &full))?;
        (used, measured) = usage_of(&kernel, usage);
        occ = occupancy(limits, &resources(&kernel, used))?;
        full = full_grid(limits, &occ, width, None);
    }
    let layout = &kernel.layout;
    let grid = layout.test_launch.grid[0];
    let bytes = bytes_per_instance(layout);
    Ok(PlanRow {
        usage: used,
        measured,
        occupancy: occ,
        ctas: (layout.testing_ctas, grid),
        cta_size: kernel.stress.cta_size,
        cluster_width: width,
        instances: layout.instances,
        achieved: achieved(&occ, &full, u64::from(grid), limits),
        bytes_per_instance: bytes,
        bound_per_s: limits
            .bandwidth_bytes_per_s()
            .map(|bw| bw / bytes.max(1) as f64),
    })
}

/// The test entry's usage by `usage`, or the assumed registers and the layout's shared words.
fn usage_of(kernel: &Kernel, usage: &dyn Fn(&Kernel) -> Option<EntryUsage>) -> (EntryUsage, bool) {
    match usage(kernel) {
        Some(u) => (u, true),
        None => (
            EntryUsage {
                registers: ASSUMED_REGISTERS,
                shared_bytes: (kernel.layout.shared_words * 4) as u32,
            },
            false,
        ),
    }
}

/// What one CTA of `kernel`'s test entry takes.
fn resources(kernel: &Kernel, used: EntryUsage) -> KernelResources {
    KernelResources {
        threads: kernel.stress.cta_size,
        registers: used.registers,
        shared_bytes: used.shared_bytes + kernel.layout.test_launch.dynamic_shared_bytes,
    }
}

/// CTAs per cluster of the test launch.
fn cluster_width(layout: &Layout) -> u32 {
    layout
        .test_launch
        .cluster
        .map_or(1, |d| d.iter().product::<u32>().max(1))
}

/// Bytes of device memory one instance moves, if every sector is fetched once per kernel:
/// each global location is accessed by the test kernel and again by the collect kernel (its
/// final value read, its initial value written back), and a location's slot shares a 32-byte
/// sector with the neighbouring instances' slots only when its stride is under 8 words; each
/// result word is written by the test kernel and read by the collect kernel. Shared-memory
/// locations move nothing. A lower bound on traffic, so the instances/s it allows is an
/// upper bound.
pub fn bytes_per_instance(layout: &Layout) -> u64 {
    let global: u64 = layout
        .locations
        .iter()
        .filter(|l| matches!(l.space, Space::Global))
        .map(|l| {
            if layout.aliased {
                0
            } else {
                (4 * l.stride).min(SECTOR_BYTES)
            }
        })
        .sum();
    2 * global + 2 * 4 * u64::from(layout.result_words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::bench_shapes::SHAPES;
    use std::path::Path;

    fn shape(name: &str) -> Test {
        let (_, text) = SHAPES.iter().find(|(n, _)| *n == name).unwrap();
        crate::litmus::parse(text, Path::new(name)).unwrap()
    }

    fn registers(n: u32) -> impl Fn(&Kernel) -> Option<EntryUsage> {
        move |k: &Kernel| {
            Some(EntryUsage {
                registers: n,
                shared_bytes: (k.layout.shared_words * 4) as u32,
            })
        }
    }

    #[test]
    fn a_preset_fills_the_device_and_its_instances_follow() {
        let h100 = DeviceLimits::h100_sxm();
        let mp = shape("MP");
        let row = plan(&mp, &Stress::basic(), &h100, &registers(32)).unwrap();
        assert_eq!(row.ctas, (1056, 1056));
        // Two roles, each thread of every testing CTA playing one: 1056 × 256 / 2.
        assert_eq!(row.instances, 1056 * 256 / 2);
        assert!((row.achieved - 1.0).abs() < 1e-12);
        assert!(row.measured);
        // 64 registers halve the grid and the instances.
        let heavy = plan(&mp, &Stress::basic(), &h100, &registers(64)).unwrap();
        assert_eq!((heavy.ctas, heavy.instances), ((528, 528), 528 * 256 / 2));
        assert!((heavy.achieved - 0.5).abs() < 1e-12);
        // `stress` keeps three quarters of the CTAs testing.
        let s = plan(&mp, &Stress::full_stress(), &h100, &registers(32)).unwrap();
        assert_eq!(s.ctas, (792, 1056));
        let iriw = plan(&shape("IRIW"), &Stress::basic(), &h100, &registers(32)).unwrap();
        assert_eq!(iriw.instances, 1056 * 256 / 4);
        // An H200 has the same SMs: the same launch, a higher bandwidth bound.
        let h200 = plan(&mp, &Stress::basic(), &DeviceLimits::h200(), &registers(32)).unwrap();
        assert_eq!((h200.ctas, h200.instances), (row.ctas, row.instances));
        assert!(h200.bound_per_s.unwrap() > row.bound_per_s.unwrap());
    }

    #[test]
    fn a_hand_set_grid_is_planned_as_it_is_and_clusters_stay_whole() {
        let h100 = DeviceLimits::h100_sxm();
        let mut hand = Stress::basic();
        hand.max_ctas = 100;
        hand.testing_ctas = 100;
        let row = plan(&shape("MP"), &hand, &h100, &registers(32)).unwrap();
        assert_eq!(row.ctas, (100, 100));
        assert!((row.achieved - 100.0 / 1056.0).abs() < 1e-12);
        let c = plan(
            &shape("MP+cluster"),
            &Stress::basic(),
            &h100,
            &registers(32),
        )
        .unwrap();
        assert_eq!(c.cluster_width, 2);
        assert_eq!(c.ctas.1 % 2, 0);
        assert_eq!(c.ctas, (1056, 1056));
    }

    #[test]
    fn without_ptxas_the_assumed_registers_are_marked() {
        let row = plan(
            &shape("SB"),
            &Stress::basic(),
            &DeviceLimits::h100_sxm(),
            &|_| None,
        )
        .unwrap();
        assert!(!row.measured);
        assert_eq!(row.usage.registers, ASSUMED_REGISTERS);
    }

    #[test]
    fn bytes_per_instance_count_sectors_and_result_words() {
        let basic = codegen::build(&shape("MP"), &Stress::basic())
            .unwrap()
            .layout;
        // Two global words at stride 1 (4 bytes each), touched by both kernels, and each
        // result word written once and read once.
        let want = 2 * 2 * 4 + 2 * 4 * u64::from(basic.result_words);
        assert_eq!(bytes_per_instance(&basic), want);
        // A stride of 4 words puts 2 instances in a sector: 16 bytes per location.
        let wide = codegen::build(&shape("MP"), &Stress::interleave())
            .unwrap()
            .layout;
        assert!(wide.locations.iter().all(|l| l.stride == 4));
        assert_eq!(
            bytes_per_instance(&wide),
            2 * 2 * 16 + 2 * 4 * u64::from(wide.result_words)
        );
        // Shared locations move no device memory.
        let shared = codegen::build(&shape("MP+shared"), &Stress::basic())
            .unwrap()
            .layout;
        assert_eq!(
            bytes_per_instance(&shared),
            2 * 4 * u64::from(shared.result_words)
        );
    }
}
