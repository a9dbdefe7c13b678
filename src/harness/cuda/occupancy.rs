//! How many CTAs of a kernel an SM holds at once, and so the grid that fills the GPU: the
//! occupancy calculation of the CUDA Programming Guide over a [`DeviceLimits`], from the
//! kernel's threads, registers and shared memory (`cuFuncGetAttribute` `NUM_REGS` and
//! `SHARED_SIZE_BYTES` on a device; `ptxas -v` or an assumption without one). On a device the
//! driver's own answers (`cuOccupancyMaxActiveBlocksPerMultiprocessor`,
//! `cuOccupancyMaxActiveClusters`) bound the result too. Pure, so tested without a GPU.

use super::config::DeviceLimits;
use crate::codegen::{Stress, PRESETS};
use std::fmt;

/// The resources one CTA of a kernel takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelResources {
    /// Threads per CTA.
    pub threads: u32,
    /// Registers per thread.
    pub registers: u32,
    /// Shared memory per CTA in bytes, static and dynamic together.
    pub shared_bytes: u32,
}

/// What stops an SM from holding one more CTA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limiter {
    /// Resident threads (warps) per SM.
    Threads,
    /// Resident CTAs per SM.
    Ctas,
    /// The register file.
    Registers,
    /// Shared memory.
    Shared,
    /// The driver's occupancy answer, lower than the calculation.
    Driver,
}

impl fmt::Display for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limiter::Threads => "threads",
            Limiter::Ctas => "CTAs",
            Limiter::Registers => "registers",
            Limiter::Shared => "shared memory",
            Limiter::Driver => "driver",
        })
    }
}

/// CTAs of one kernel resident per SM, and why no more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occupancy {
    /// CTAs per SM.
    pub ctas_per_sm: u32,
    /// The resource that allows no more.
    pub limiter: Limiter,
    /// Warps per CTA.
    pub warps_per_cta: u32,
}

impl Occupancy {
    /// Warps resident per SM.
    pub fn active_warps(&self) -> u32 {
        self.ctas_per_sm * self.warps_per_cta
    }

    /// Resident warps over the most an SM holds (the "achieved occupancy" of a full launch).
    pub fn fraction(&self, limits: &DeviceLimits) -> f64 {
        let max_warps = limits.max_threads_per_sm / limits.warp_size.max(1);
        f64::from(self.active_warps()) / f64::from(max_warps.max(1))
    }

    /// The driver's `cuOccupancyMaxActiveBlocksPerMultiprocessor` bounds the calculation: the
    /// lower of the two, marked [`Limiter::Driver`] when the driver's is lower.
    pub fn bounded_by_driver(self, driver_ctas: u32) -> Occupancy {
        if driver_ctas < self.ctas_per_sm {
            Occupancy {
                ctas_per_sm: driver_ctas,
                limiter: Limiter::Driver,
                ..self
            }
        } else {
            self
        }
    }
}

/// CTAs of a kernel with `kernel`'s resources that one SM holds at once, by the limits of
/// threads, CTAs, registers (allocated per warp in units of `register_alloc_unit`) and shared
/// memory (per CTA rounded up to `shared_alloc_unit`, plus the bytes the system reserves per
/// CTA). An error when not even one CTA fits, naming the resource.
pub fn occupancy(limits: &DeviceLimits, kernel: &KernelResources) -> Result<Occupancy, String> {
    within_block_limits(limits, kernel)?;
    let warp = limits.warp_size.max(1);
    let warps = kernel.threads.div_ceil(warp);
    let regs_per_warp = round_up(kernel.registers * warp, limits.register_alloc_unit);
    let regs_per_cta = regs_per_warp * warps;
    let shared_per_cta =
        round_up(kernel.shared_bytes, limits.shared_alloc_unit) + limits.reserved_shared_per_block;
    let by = [
        (limits.max_threads_per_sm / (warps * warp), Limiter::Threads),
        (limits.max_ctas_per_sm, Limiter::Ctas),
        (
            limits
                .registers_per_sm
                .checked_div(regs_per_cta)
                .unwrap_or(u32::MAX),
            Limiter::Registers,
        ),
        (
            limits
                .shared_per_sm
                .checked_div(shared_per_cta)
                .unwrap_or(u32::MAX),
            Limiter::Shared,
        ),
    ];
    // The first of equal limits is named: threads before CTAs before registers before shared.
    let (ctas_per_sm, limiter) = by
        .into_iter()
        .fold((u32::MAX, Limiter::Threads), |best, b| {
            if b.0 < best.0 {
                b
            } else {
                best
            }
        });
    if ctas_per_sm == 0 {
        return Err(format!("not one CTA fits on an SM: {limiter} run out"));
    }
    Ok(Occupancy {
        ctas_per_sm,
        limiter,
        warps_per_cta: warps,
    })
}

/// Refuses a kernel that no CTA of the device can hold: too many threads, registers per
/// thread or bytes of shared memory.
fn within_block_limits(limits: &DeviceLimits, kernel: &KernelResources) -> Result<(), String> {
    if kernel.threads == 0 || kernel.threads > limits.max_threads_per_block {
        return Err(format!(
            "{} threads per CTA; the device allows 1 to {}",
            kernel.threads, limits.max_threads_per_block
        ));
    }
    if kernel.registers > limits.max_registers_per_thread {
        return Err(format!(
            "{} registers per thread; the device allows {}",
            kernel.registers, limits.max_registers_per_thread
        ));
    }
    if kernel.shared_bytes > limits.max_shared_per_block_optin {
        return Err(format!(
            "{} bytes of shared memory per CTA; the device allows {} (opted in)",
            kernel.shared_bytes, limits.max_shared_per_block_optin
        ));
    }
    Ok(())
}

/// `v` rounded up to a multiple of `unit` (`v` itself for a unit of 0 or 1).
fn round_up(v: u32, unit: u32) -> u32 {
    if unit <= 1 {
        v
    } else {
        v.div_ceil(unit) * unit
    }
}

/// A grid that fills the GPU in one wave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FullGrid {
    /// CTAs in the grid: a whole number of clusters.
    pub ctas: u32,
    /// CTAs per cluster (1 without a cluster launch).
    pub cluster_width: u32,
    /// Clusters resident at once (`ctas / cluster_width`).
    pub clusters: u32,
}

/// The grid of one full wave: every SM holding `occ.ctas_per_sm` CTAs, in whole clusters of
/// `cluster_width` CTAs. A cluster's CTAs are scheduled together on one GPC, so on a device
/// `cuOccupancyMaxActiveClusters` (`device_clusters`) may allow fewer clusters than the CTA
/// count alone; the lower of the two is taken.
pub fn full_grid(
    limits: &DeviceLimits,
    occ: &Occupancy,
    cluster_width: u32,
    device_clusters: Option<u32>,
) -> FullGrid {
    let width = cluster_width.max(1);
    let by_ctas = occ.ctas_per_sm * limits.sms / width;
    let clusters = device_clusters.map_or(by_ctas, |d| d.min(by_ctas)).max(1);
    FullGrid {
        ctas: clusters * width,
        cluster_width: width,
        clusters,
    }
}

/// Resident warps over the most the device holds when `ctas` CTAs of a kernel with `occ`
/// are launched: a grid smaller than one full wave (`full`) leaves warp slots empty.
pub fn achieved(occ: &Occupancy, full: &FullGrid, ctas: u64, limits: &DeviceLimits) -> f64 {
    let wave = u64::from(full.ctas.max(1));
    occ.fraction(limits) * ctas.min(wave) as f64 / wave as f64
}

/// Whether a run sizes `stress`'s grid to fill the device: only a named preset's own grid
/// (`basic`, `interleave`, `stress` with `testing_ctas` and `max_ctas` as the preset has
/// them); a grid set by hand (`--stress-set`, a stress file) or drawn (`random-<seed>`) is
/// launched as it is.
pub fn fills(stress: &Stress) -> bool {
    PRESETS.contains(&stress.name.as_str())
        && Stress::preset(&stress.name)
            .is_some_and(|p| (p.testing_ctas, p.max_ctas) == (stress.testing_ctas, stress.max_ctas))
}

/// `stress` with a grid of `grid.ctas` CTAs, keeping its share of testing CTAs (at least one
/// cluster; the rest run memory stress) and everything else.
pub fn fill_stress(stress: &Stress, grid: &FullGrid) -> Stress {
    let width = grid.cluster_width.max(1);
    let share =
        u64::from(stress.testing_ctas) * u64::from(grid.ctas) / u64::from(stress.max_ctas.max(1));
    let testing = ((share as u32) / width * width).clamp(width, grid.ctas);
    Stress {
        testing_ctas: testing,
        max_ctas: grid.ctas,
        ..stress.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(threads: u32, registers: u32, shared_bytes: u32) -> KernelResources {
        KernelResources {
            threads,
            registers,
            shared_bytes,
        }
    }

    fn grid(limits: &DeviceLimits, k: KernelResources, width: u32) -> (Occupancy, FullGrid) {
        let occ = occupancy(limits, &k).unwrap();
        (occ, full_grid(limits, &occ, width, None))
    }

    #[test]
    fn a_light_kernel_fills_an_h100_with_eight_ctas_per_sm() {
        let h100 = DeviceLimits::h100_sxm();
        let (occ, g) = grid(&h100, kernel(256, 32, 0), 1);
        // 2048 threads / 256 = 8 and 65536 registers / (32 × 256) = 8: both bind at once.
        assert_eq!(occ.ctas_per_sm, 8);
        assert_eq!(occ.limiter, Limiter::Threads);
        assert_eq!(g.ctas, 8 * 132);
        assert_eq!(g.ctas, 1056);
        assert_eq!(occ.active_warps(), 64);
        assert!((occ.fraction(&h100) - 1.0).abs() < 1e-12);
        assert!((achieved(&occ, &g, 264, &h100) - 0.25).abs() < 1e-12);
        assert!((achieved(&occ, &g, 5000, &h100) - 1.0).abs() < 1e-12);
        // The preset's 264 CTAs were a quarter of that.
        assert_eq!(g.ctas / 264, 4);
    }

    #[test]
    fn twice_the_registers_halve_the_grid() {
        let h100 = DeviceLimits::h100_sxm();
        let (occ, g) = grid(&h100, kernel(256, 64, 0), 1);
        assert_eq!((occ.ctas_per_sm, occ.limiter), (4, Limiter::Registers));
        assert_eq!(g.ctas, 528);
        assert!((occ.fraction(&h100) - 0.5).abs() < 1e-12);
        // Registers are allocated per warp in units of 256: 33 registers cost 40.
        let (occ, _) = grid(&h100, kernel(256, 33, 0), 1);
        assert_eq!((occ.ctas_per_sm, occ.limiter), (6, Limiter::Registers));
        assert!(occupancy(&h100, &kernel(256, 256, 0)).is_err());
    }

    #[test]
    fn shared_memory_limits_ctas_per_sm() {
        let h100 = DeviceLimits::h100_sxm();
        // 48 KiB + the 1 KiB reserved per CTA: 228 KiB hold 4.
        let (occ, g) = grid(&h100, kernel(256, 32, 48 * 1024), 1);
        assert_eq!((occ.ctas_per_sm, occ.limiter), (4, Limiter::Shared));
        assert_eq!(g.ctas, 528);
        // 100 KiB: 2 per SM; the 227 KiB opt-in maximum: 1; beyond it none.
        assert_eq!(grid(&h100, kernel(256, 32, 100 * 1024), 1).0.ctas_per_sm, 2);
        assert_eq!(grid(&h100, kernel(256, 32, 227 * 1024), 1).0.ctas_per_sm, 1);
        let e = occupancy(&h100, &kernel(256, 32, 227 * 1024 + 1)).unwrap_err();
        assert!(e.contains("shared memory"), "{e}");
        // Tiny CTAs stop at 32 per SM, not at the threads.
        let (occ, _) = grid(&h100, kernel(32, 16, 0), 1);
        assert_eq!((occ.ctas_per_sm, occ.limiter), (32, Limiter::Ctas));
        assert!((occ.fraction(&h100) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn cluster_launches_fill_in_whole_clusters() {
        let h100 = DeviceLimits::h100_sxm();
        let (_, g) = grid(&h100, kernel(256, 32, 0), 2);
        assert_eq!((g.clusters, g.ctas), (528, 1056));
        let (_, g) = grid(&h100, kernel(256, 32, 0), 4);
        assert_eq!((g.clusters, g.ctas), (264, 1056));
        // 3 CTAs per SM (shared-bound) make 396, which clusters of 8 round down to 392.
        let (occ, g) = grid(&h100, kernel(256, 32, 70 * 1024), 8);
        assert_eq!(occ.ctas_per_sm, 3);
        assert_eq!((g.clusters, g.ctas), (49, 392));
        // The driver's count of co-resident clusters, when lower, wins.
        let occ = occupancy(&h100, &kernel(256, 32, 0)).unwrap();
        let g = full_grid(&h100, &occ, 4, Some(240));
        assert_eq!((g.clusters, g.ctas), (240, 960));
        let g = full_grid(&h100, &occ, 4, Some(10_000));
        assert_eq!(g.clusters, 264);
    }

    #[test]
    fn an_h200_has_the_h100s_sms_and_limits() {
        let (h100, h200) = (DeviceLimits::h100_sxm(), DeviceLimits::h200());
        for k in [
            kernel(256, 32, 0),
            kernel(512, 64, 16 * 1024),
            kernel(128, 40, 0),
        ] {
            assert_eq!(grid(&h100, k, 1), grid(&h200, k, 1), "{k:?}");
        }
        assert_eq!(grid(&h200, kernel(256, 32, 0), 1).1.ctas, 1056);
        assert_eq!(grid(&h200, kernel(256, 64, 0), 1).1.ctas, 528);
    }

    #[test]
    fn the_driver_answer_bounds_the_calculation() {
        let h100 = DeviceLimits::h100_sxm();
        let occ = occupancy(&h100, &kernel(256, 32, 0)).unwrap();
        assert_eq!(occ.bounded_by_driver(8), occ);
        let low = occ.bounded_by_driver(6);
        assert_eq!((low.ctas_per_sm, low.limiter), (6, Limiter::Driver));
        assert_eq!(full_grid(&h100, &low, 1, None).ctas, 792);
    }

    #[test]
    fn impossible_ctas_are_refused_with_the_reason() {
        let h100 = DeviceLimits::h100_sxm();
        assert!(occupancy(&h100, &kernel(2048, 32, 0))
            .unwrap_err()
            .contains("2048 threads"));
        assert!(occupancy(&h100, &kernel(0, 32, 0)).is_err());
        assert!(occupancy(&h100, &kernel(256, 300, 0))
            .unwrap_err()
            .contains("300 registers"));
    }

    #[test]
    fn only_a_presets_own_grid_is_filled_keeping_its_testing_share() {
        let full = FullGrid {
            ctas: 1056,
            cluster_width: 1,
            clusters: 1056,
        };
        for name in PRESETS {
            assert!(fills(&Stress::preset(name).unwrap()), "{name}");
        }
        let mut hand = Stress::full_stress();
        hand.max_ctas = 300;
        assert!(!fills(&hand));
        assert!(!fills(&Stress::random(7)));
        // `stress` tests on 198 of 264 CTAs: three quarters of the filled grid.
        let s = fill_stress(&Stress::full_stress(), &full);
        assert_eq!((s.testing_ctas, s.max_ctas), (792, 1056));
        assert_eq!(s.cta_size, 256);
        assert_eq!(
            s.mem_stress_iterations,
            Stress::full_stress().mem_stress_iterations
        );
        let b = fill_stress(&Stress::basic(), &full);
        assert_eq!((b.testing_ctas, b.max_ctas), (1056, 1056));
        // Clusters of 8 over 392 CTAs: 294 testing CTAs round down to 288.
        let clustered = FullGrid {
            ctas: 392,
            cluster_width: 8,
            clusters: 49,
        };
        let c = fill_stress(&Stress::full_stress(), &clustered);
        assert_eq!((c.testing_ctas, c.max_ctas), (288, 392));
        assert!(c.validate().is_ok());
    }
}
