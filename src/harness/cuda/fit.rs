//! The occupancy of a loaded kernel on its device: its registers and shared memory from
//! `cuFuncGetAttribute`, the calculation of [`super::occupancy`] bounded by the driver's
//! `cuOccupancyMaxActiveBlocksPerMultiprocessor` and, for a cluster launch,
//! `cuOccupancyMaxActiveClusters`; and the provenance entries that record it.

use super::config::{ClusterMode, DeviceLimits, LaunchPlan};
use super::driver::check;
use super::launch::Launcher;
use super::module::function_attribute;
use super::occupancy::{achieved, full_grid, occupancy, FullGrid, KernelResources, Occupancy};
use crate::harness::notes;
use cudarc::driver::sys::{self, CUfunction_attribute as FnAttr};
use std::collections::BTreeMap;

/// How a kernel sits on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fit {
    /// What one CTA takes.
    pub resources: KernelResources,
    /// CTAs per SM.
    pub occupancy: Occupancy,
    /// The grid of one full wave.
    pub grid: FullGrid,
}

impl Fit {
    /// Provenance entries: registers, shared bytes, CTAs per SM and what limits them, the
    /// full grid, and the occupancy `plan` achieves (resident warps over the SMs' maximum).
    pub fn provenance(&self, plan: &LaunchPlan, limits: &DeviceLimits) -> BTreeMap<String, String> {
        let mut p = BTreeMap::new();
        let o = &self.occupancy;
        p.insert(
            notes::REGISTERS.into(),
            self.resources.registers.to_string(),
        );
        p.insert(
            "kernel.shared_bytes".into(),
            self.resources.shared_bytes.to_string(),
        );
        p.insert(
            notes::CTAS_PER_SM.into(),
            format!("{} (limited by {})", o.ctas_per_sm, o.limiter),
        );
        p.insert("kernel.full_grid".into(), self.grid.ctas.to_string());
        p.insert(
            notes::OCCUPANCY.into(),
            format!(
                "{:.3}",
                achieved(&self.occupancy, &self.grid, plan.ctas(), limits)
            ),
        );
        p
    }
}

/// The fit of `func`, launched as `plan` on a device with `limits`.
pub fn fit(
    func: sys::CUfunction,
    plan: &LaunchPlan,
    limits: &DeviceLimits,
    stream: sys::CUstream,
) -> Result<Fit, String> {
    let attr = |a| function_attribute(func, a).map(|v| v.max(0) as u32);
    let threads = plan.block.iter().product::<u32>();
    let resources = KernelResources {
        threads,
        registers: attr(FnAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
        shared_bytes: attr(FnAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)? + plan.shared_bytes,
    };
    // The driver's answers only bound the calculation: a query that fails or answers 0 (which
    // a kernel that loaded and fits the limits cannot mean) leaves the calculation alone
    // rather than failing the test or launching a grid of one CTA.
    let mut driver_ctas = 0;
    // SAFETY: valid out-pointer; `func` came from a loaded module of the current context.
    let asked = check(
        unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut driver_ctas,
                func,
                threads as i32,
                plan.shared_bytes as usize,
            )
        },
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    );
    let mut occ = occupancy(limits, &resources).map_err(|e| format!("{}: {e}", plan.entry))?;
    if asked.is_ok() && driver_ctas > 0 {
        occ = occ.bounded_by_driver(driver_ctas as u32);
    }
    let (width, clusters) = match plan.cluster {
        ClusterMode::None => (1, None),
        ClusterMode::Attribute(d) | ClusterMode::CompileTime(d) => {
            let n = Launcher::new(func, plan, stream).max_active_clusters();
            (d.iter().product(), n.ok().filter(|n| *n > 0))
        }
    };
    Ok(Fit {
        resources,
        occupancy: occ,
        grid: full_grid(limits, &occ, width, clusters),
    })
}
