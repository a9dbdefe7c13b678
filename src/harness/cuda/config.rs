//! Launch configuration, checked against the device before anything is launched: grid and CTA
//! sizes, the cluster launch (and whether the cluster dimension goes in a launch attribute or
//! comes from the kernel itself). Pure: no driver calls, so it is tested without a GPU.

use crate::codegen::LaunchConfig;

/// What the device allows, read once by `detect`: the launch limits and the per-SM resources
/// the occupancy calculation ([`super::occupancy`]) divides among CTAs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Threads per CTA.
    pub max_threads_per_block: u32,
    /// CTAs in the x dimension of a grid.
    pub max_grid_x: u32,
    /// Bytes of shared memory one CTA may use without opting in.
    pub max_shared_per_block: u32,
    /// Whether the device launches thread-block clusters (compute capability 9.0 and later).
    pub cluster_launch: bool,
    /// Streaming multiprocessors.
    pub sms: u32,
    /// Threads in a warp.
    pub warp_size: u32,
    /// Threads resident on one SM.
    pub max_threads_per_sm: u32,
    /// CTAs resident on one SM.
    pub max_ctas_per_sm: u32,
    /// 32-bit registers of one SM.
    pub registers_per_sm: u32,
    /// Registers one thread may use.
    pub max_registers_per_thread: u32,
    /// Registers are given to a warp in multiples of this many.
    pub register_alloc_unit: u32,
    /// Bytes of shared memory of one SM.
    pub shared_per_sm: u32,
    /// Bytes of shared memory one CTA may use after opting in.
    pub max_shared_per_block_optin: u32,
    /// Bytes of shared memory the system reserves for each resident CTA.
    pub reserved_shared_per_block: u32,
    /// Shared memory is given to a CTA in multiples of this many bytes.
    pub shared_alloc_unit: u32,
    /// Peak memory clock in kHz (0 when unknown).
    pub memory_clock_khz: u32,
    /// Width of the memory bus in bits (0 when unknown).
    pub memory_bus_bits: u32,
}

impl DeviceLimits {
    /// An H100 SXM5 (compute capability 9.0, 132 SMs, HBM3 at 2.619 GHz on a 5,120-bit bus:
    /// 3.35 TB/s). The per-SM limits are those of compute capability 9.0 in NVIDIA's CUDA C++
    /// Programming Guide, "Compute Capabilities", technical specifications table
    /// (docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html):
    /// 2,048 resident threads, 32 resident CTAs and 64 K 32-bit registers per SM, at most 255
    /// registers per thread, 228 KiB of shared memory per SM of which one CTA may use 227 KiB
    /// (1 KiB reserved per CTA); the allocation units (256 registers per warp, 128 bytes of
    /// shared memory) are those of NVIDIA's occupancy calculator for that capability.
    pub fn h100_sxm() -> DeviceLimits {
        DeviceLimits {
            max_threads_per_block: 1024,
            max_grid_x: i32::MAX as u32,
            max_shared_per_block: 48 * 1024,
            cluster_launch: true,
            sms: 132,
            warp_size: 32,
            max_threads_per_sm: 2048,
            max_ctas_per_sm: 32,
            registers_per_sm: 65536,
            max_registers_per_thread: 255,
            register_alloc_unit: 256,
            shared_per_sm: 228 * 1024,
            max_shared_per_block_optin: 227 * 1024,
            reserved_shared_per_block: 1024,
            shared_alloc_unit: 128,
            memory_clock_khz: 2_619_000,
            memory_bus_bits: 5120,
        }
    }

    /// An H200 (compute capability 9.0, 132 SMs, the H100's per-SM limits), HBM3e on a
    /// 6,144-bit bus at the 3.125 GHz that gives NVIDIA's stated 4.8 TB/s (a device reports
    /// its own clock, which `detect` reads).
    pub fn h200() -> DeviceLimits {
        DeviceLimits {
            memory_clock_khz: 3_125_000,
            memory_bus_bits: 6144,
            ..DeviceLimits::h100_sxm()
        }
    }

    /// Peak memory bandwidth in bytes per second: memory clock × bus width × 2 (double data
    /// rate), or `None` when the device did not say.
    pub fn bandwidth_bytes_per_s(&self) -> Option<f64> {
        (self.memory_clock_khz > 0 && self.memory_bus_bits > 0).then(|| {
            f64::from(self.memory_clock_khz) * 1e3 * f64::from(self.memory_bus_bits) / 8.0 * 2.0
        })
    }
}

/// How the cluster dimension of a launch is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterMode {
    /// An ordinary launch: every CTA is its own cluster.
    None,
    /// `cuLaunchKernelEx` with the `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` attribute.
    Attribute([u32; 3]),
    /// The kernel states its cluster size (`.reqnctapercluster`); the launch must not set it
    /// again, so it goes without the attribute and the driver uses the kernel's.
    CompileTime([u32; 3]),
}

/// A checked launch of one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchPlan {
    /// Entry name.
    pub entry: String,
    /// Grid in CTAs.
    pub grid: [u32; 3],
    /// CTA in threads.
    pub block: [u32; 3],
    /// Dynamic shared memory bytes.
    pub shared_bytes: u32,
    /// The cluster launch.
    pub cluster: ClusterMode,
}

impl LaunchPlan {
    /// Checks `config` against `limits`. `required_cluster_width` is the kernel's
    /// `CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH` (0 when it states no cluster size).
    pub fn new(
        config: &LaunchConfig,
        limits: &DeviceLimits,
        required_cluster_width: u32,
    ) -> Result<LaunchPlan, String> {
        let e = &config.entry;
        if config.grid.contains(&0) || config.block.contains(&0) {
            return Err(format!(
                "{e}: empty grid {:?} or CTA {:?}",
                config.grid, config.block
            ));
        }
        let threads: u64 = config.block.iter().map(|&d| u64::from(d)).product();
        if threads > u64::from(limits.max_threads_per_block) {
            return Err(format!(
                "{e}: {threads} threads per CTA, the device allows {}",
                limits.max_threads_per_block
            ));
        }
        if config.grid[0] > limits.max_grid_x || config.grid[1] > 65535 || config.grid[2] > 65535 {
            return Err(format!("{e}: grid {:?} exceeds the device's", config.grid));
        }
        if config.dynamic_shared_bytes > limits.max_shared_per_block {
            return Err(format!(
                "{e}: {} bytes of dynamic shared memory, the device allows {}",
                config.dynamic_shared_bytes, limits.max_shared_per_block
            ));
        }
        let cluster = cluster_mode(config, limits, required_cluster_width)?;
        Ok(LaunchPlan {
            entry: config.entry.clone(),
            grid: config.grid,
            block: config.block,
            shared_bytes: config.dynamic_shared_bytes,
            cluster,
        })
    }

    /// CTAs launched.
    pub fn ctas(&self) -> u64 {
        self.grid.iter().map(|&d| u64::from(d)).product()
    }

    /// Threads launched.
    pub fn threads(&self) -> u64 {
        self.ctas() * self.block.iter().map(|&d| u64::from(d)).product::<u64>()
    }

    /// How the launch is made, for provenance: `grid 264x1x1, cta 256x1x1, cluster 2x1x1
    /// (launch attribute)`.
    pub fn describe(&self) -> String {
        let d = |v: [u32; 3]| format!("{}x{}x{}", v[0], v[1], v[2]);
        let cluster = match self.cluster {
            ClusterMode::None => "no clusters".to_string(),
            ClusterMode::Attribute(c) => format!("cluster {} (launch attribute)", d(c)),
            ClusterMode::CompileTime(c) => format!("cluster {} (stated by the kernel)", d(c)),
        };
        format!("grid {}, cta {}, {cluster}", d(self.grid), d(self.block))
    }
}

/// How a launch of `config` forms clusters, checked against `limits` and the kernel's
/// required cluster width (0 when it states none).
fn cluster_mode(
    config: &LaunchConfig,
    limits: &DeviceLimits,
    required_cluster_width: u32,
) -> Result<ClusterMode, String> {
    let e = &config.entry;
    let Some(dim) = config.cluster else {
        if required_cluster_width > 1 {
            return Err(format!(
                "{e}: the kernel requires clusters of {required_cluster_width} CTAs but the \
                 layout launches none"
            ));
        }
        return Ok(ClusterMode::None);
    };
    if !limits.cluster_launch {
        return Err(format!(
            "{e}: the test needs a cluster launch of {dim:?} CTAs, which this device does not \
             support"
        ));
    }
    let size: u64 = dim.iter().map(|&d| u64::from(d)).product();
    if dim.contains(&0) || size > 8 {
        return Err(format!(
            "{e}: cluster {dim:?} is not a portable cluster size (1 to 8 CTAs)"
        ));
    }
    if let Some(k) = (0..3).find(|&k| config.grid[k] % dim[k] != 0) {
        return Err(format!(
            "{e}: grid {:?} is not a whole number of clusters {dim:?} (dimension {k})",
            config.grid
        ));
    }
    match required_cluster_width {
        0 => Ok(ClusterMode::Attribute(dim)),
        w if w == dim[0] => Ok(ClusterMode::CompileTime(dim)),
        w => Err(format!(
            "{e}: the kernel states clusters of {w} CTAs but the layout asks for {dim:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> DeviceLimits {
        DeviceLimits::h100_sxm()
    }

    #[test]
    fn bandwidth_is_clock_times_bus_width_times_two() {
        let tb = |l: DeviceLimits| l.bandwidth_bytes_per_s().unwrap() / 1e12;
        assert!((tb(DeviceLimits::h100_sxm()) - 3.35).abs() < 0.01);
        assert!((tb(DeviceLimits::h200()) - 4.8).abs() < 0.01);
        let unknown = DeviceLimits {
            memory_bus_bits: 0,
            ..DeviceLimits::h100_sxm()
        };
        assert_eq!(unknown.bandwidth_bytes_per_s(), None);
    }

    fn config(grid: u32, block: u32, cluster: Option<[u32; 3]>) -> LaunchConfig {
        LaunchConfig {
            entry: "litmus_test".into(),
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            cluster,
            dynamic_shared_bytes: 0,
        }
    }

    #[test]
    fn plain_launch_without_clusters() {
        let p = LaunchPlan::new(&config(264, 256, None), &h100(), 0).unwrap();
        assert_eq!(p.cluster, ClusterMode::None);
        assert_eq!((p.ctas(), p.threads()), (264, 264 * 256));
        assert_eq!(p.describe(), "grid 264x1x1, cta 256x1x1, no clusters");
    }

    #[test]
    fn cluster_dimension_goes_in_an_attribute_unless_the_kernel_states_it() {
        let c = config(264, 256, Some([2, 1, 1]));
        let p = LaunchPlan::new(&c, &h100(), 0).unwrap();
        assert_eq!(p.cluster, ClusterMode::Attribute([2, 1, 1]));
        let p = LaunchPlan::new(&c, &h100(), 2).unwrap();
        assert_eq!(p.cluster, ClusterMode::CompileTime([2, 1, 1]));
        assert!(p
            .describe()
            .ends_with("cluster 2x1x1 (stated by the kernel)"));
        // The kernel and the layout disagree: refuse rather than launch a wrong placement.
        assert!(LaunchPlan::new(&c, &h100(), 4)
            .unwrap_err()
            .contains("states clusters of 4"));
        assert!(LaunchPlan::new(&config(264, 256, None), &h100(), 2).is_err());
    }

    #[test]
    fn cluster_launches_are_checked_against_grid_and_device() {
        // 263 CTAs are not a whole number of clusters of 2.
        let e = LaunchPlan::new(&config(263, 256, Some([2, 1, 1])), &h100(), 0).unwrap_err();
        assert!(e.contains("whole number of clusters"), "{e}");
        let e = LaunchPlan::new(&config(256, 256, Some([16, 1, 1])), &h100(), 0).unwrap_err();
        assert!(e.contains("portable"), "{e}");
        let mut ampere = h100();
        ampere.cluster_launch = false;
        let e = LaunchPlan::new(&config(264, 256, Some([2, 1, 1])), &ampere, 0).unwrap_err();
        assert!(e.contains("does not support"), "{e}");
        // Without clusters the same device is fine.
        assert!(LaunchPlan::new(&config(264, 256, None), &ampere, 0).is_ok());
    }

    #[test]
    fn sizes_beyond_the_device_are_refused() {
        assert!(LaunchPlan::new(&config(264, 2048, None), &h100(), 0)
            .unwrap_err()
            .contains("2048 threads"));
        assert!(LaunchPlan::new(&config(0, 256, None), &h100(), 0).is_err());
        let mut c = config(264, 256, None);
        c.dynamic_shared_bytes = 100 * 1024;
        assert!(LaunchPlan::new(&c, &h100(), 0).is_err());
    }
}
