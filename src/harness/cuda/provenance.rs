//! What a GPU result records about where it came from: the device, the driver, the build. The
//! values are read by `detect` (driver calls) and `/proc/driver/nvidia/version` (or `nvidia-smi`
//! where a sandbox hides it); turning them into the provenance map is pure and tested without
//! a GPU.

use super::config::DeviceLimits;
use super::support::driver_version_string;
use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Facts about one device, read once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: i32,
    /// Marketing name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Compute capability (major, minor).
    pub compute: (i32, i32),
    /// Streaming multiprocessors.
    pub sms: i32,
    /// Peak SM clock in kHz, when the driver reports it.
    pub clock_khz: Option<i32>,
    /// Peak memory clock in kHz, when the driver reports it.
    pub memory_clock_khz: Option<i32>,
    /// L2 cache bytes.
    pub l2_bytes: Option<i32>,
    /// Device memory bytes.
    pub memory_bytes: Option<u64>,
    /// PCI bus id.
    pub pci_bus: Option<i32>,
    /// Driver API version (`12080` is CUDA 12.8).
    pub driver_api: i32,
    /// The kernel driver's release (`550.54.15`), when readable.
    pub driver_release: Option<String>,
    /// Launch limits.
    pub limits: DeviceLimits,
}

/// The CUDA headers this binary's driver bindings were generated from (the `cuda-12080`
/// feature of cudarc).
pub const BINDINGS_CUDA: &str = "12.8";

impl DeviceInfo {
    /// One line for the user: `GPU 0: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), driver 550.54.15,
    /// CUDA 12.8`.
    pub fn describe(&self) -> String {
        format!(
            "GPU {}: {} (sm_{}{}, {} SMs), driver {}, CUDA {}",
            self.ordinal,
            self.name,
            self.compute.0,
            self.compute.1,
            self.sms,
            self.driver_release.as_deref().unwrap_or("release unknown"),
            driver_version_string(self.driver_api)
        )
    }

    /// The provenance entries of the device: `gpu` and `driver` name the result set's
    /// directory (`results/<gpu>-<driver>/`).
    pub fn provenance(&self) -> BTreeMap<String, String> {
        let mut p = BTreeMap::new();
        p.insert("gpu".into(), self.name.clone());
        p.insert("gpu_ordinal".into(), self.ordinal.to_string());
        p.insert(
            "compute_capability".into(),
            format!("{}.{}", self.compute.0, self.compute.1),
        );
        p.insert("sms".into(), self.sms.to_string());
        let mhz = |k: i32| format!("{}", k / 1000);
        if let Some(k) = self.clock_khz.filter(|k| *k > 0) {
            p.insert("sm_clock_mhz".into(), mhz(k));
        }
        if let Some(k) = self.memory_clock_khz.filter(|k| *k > 0) {
            p.insert("memory_clock_mhz".into(), mhz(k));
        }
        if let Some(b) = self.l2_bytes {
            p.insert("l2_bytes".into(), b.to_string());
        }
        if let Some(b) = self.memory_bytes {
            p.insert("memory_bytes".into(), b.to_string());
        }
        if let Some(b) = self.pci_bus {
            p.insert("pci_bus".into(), b.to_string());
        }
        let cuda = driver_version_string(self.driver_api);
        p.insert(
            "driver".into(),
            self.driver_release
                .clone()
                .unwrap_or_else(|| format!("cuda-{cuda}")),
        );
        p.insert("cuda_driver_api".into(), cuda.clone());
        p.insert(
            "jit".into(),
            format!("driver JIT of the CUDA {cuda} driver"),
        );
        p.insert("cuda_bindings".into(), BINDINGS_CUDA.into());
        p
    }
}

/// The release number in the text of `/proc/driver/nvidia/version` (`NVRM version: NVIDIA UNIX
/// x86_64 Kernel Module  550.54.15  Tue Mar  5 ...`).
pub fn parse_nvrm(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version:"))?;
    line.split_whitespace()
        .find(|w| is_release(w))
        .map(str::to_string)
}

/// The release in `nvidia-smi --query-gpu=driver_version --format=csv,noheader`'s output
/// (`580.159.03`, a line per GPU).
pub fn parse_smi(text: &str) -> Option<String> {
    let first = text.lines().next()?.trim();
    is_release(first).then(|| first.to_string())
}

/// Whether `w` is a release number: two or more dot-separated runs of digits.
fn is_release(w: &str) -> bool {
    let parts: Vec<&str> = w.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// The kernel driver's release, read from `/proc` where the OS offers it, else from
/// `nvidia-smi` (sandboxed machines hide `/proc/driver`).
pub fn driver_release() -> Option<String> {
    std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|t| parse_nvrm(&t))
        .or_else(smi_release)
}

/// The release `nvidia-smi` reports, asked for at most [`SMI_PATIENCE`]; `None` without it.
fn smi_release() -> Option<String> {
    let mut child = Command::new("nvidia-smi")
        .args(["--query-gpu=driver_version", "--format=csv,noheader"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + SMI_PATIENCE;
    while child.try_wait().ok()?.is_none() {
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    parse_smi(&out)
}

/// The longest `nvidia-smi` may take to say the driver's release.
const SMI_PATIENCE: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> DeviceInfo {
        DeviceInfo {
            ordinal: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            compute: (9, 0),
            sms: 132,
            clock_khz: Some(1_980_000),
            memory_clock_khz: Some(2_619_000),
            l2_bytes: Some(52_428_800),
            memory_bytes: Some(85_045_379_072),
            pci_bus: Some(25),
            driver_api: 12040,
            driver_release: Some("550.54.15".into()),
            limits: DeviceLimits::h100_sxm(),
        }
    }

    #[test]
    fn device_facts_become_provenance() {
        let p = h100().provenance();
        assert_eq!(p["gpu"], "NVIDIA H100 80GB HBM3");
        assert_eq!(p["compute_capability"], "9.0");
        assert_eq!(p["sms"], "132");
        assert_eq!(p["sm_clock_mhz"], "1980");
        assert_eq!(p["memory_clock_mhz"], "2619");
        assert_eq!(p["driver"], "550.54.15");
        assert_eq!(p["cuda_driver_api"], "12.4");
        assert_eq!(
            h100().describe(),
            "GPU 0: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), driver 550.54.15, CUDA 12.4"
        );
    }

    #[test]
    fn unreadable_facts_are_left_out_not_invented() {
        let mut d = h100();
        d.clock_khz = None;
        d.memory_clock_khz = Some(0);
        d.driver_release = None;
        let p = d.provenance();
        assert!(!p.contains_key("sm_clock_mhz"));
        assert!(!p.contains_key("memory_clock_mhz"));
        assert_eq!(p["driver"], "cuda-12.4");
    }

    #[test]
    fn driver_release_is_read_from_the_nvrm_line() {
        let proprietary = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 \
                           22:23:56 UTC 2024\nGCC version:  gcc version 12.3.0\n";
        assert_eq!(parse_nvrm(proprietary).as_deref(), Some("550.54.15"));
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release \
                    Build  (dvs-builder@U16-A24-29-2)  Thu Jan 30 2025\n";
        assert_eq!(parse_nvrm(open).as_deref(), Some("570.86.15"));
        assert_eq!(parse_nvrm("GCC version: 12.3.0\n"), None);
    }

    #[test]
    fn driver_release_is_read_from_nvidia_smi_where_proc_hides_it() {
        assert_eq!(parse_smi("580.159.03\n").as_deref(), Some("580.159.03"));
        assert_eq!(
            parse_smi("580.159.03\n580.159.03\n").as_deref(),
            Some("580.159.03")
        );
        let failed = "NVIDIA-SMI has failed because it couldn't communicate with the driver.\n";
        assert_eq!(parse_smi(failed), None);
        assert_eq!(parse_smi(""), None);
    }
}
