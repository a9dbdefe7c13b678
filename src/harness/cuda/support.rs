//! What the device and driver must offer, and how their numbers read: the checks `detect` and
//! module loading make before a driver call could fail obscurely. Pure, so tested without a GPU.

/// Oldest CUDA driver API the backend uses (`cuLaunchKernelEx` and clusters came with 12.0).
pub const MIN_DRIVER: i32 = 12000;

/// Oldest compute capability the kernels run on: they are PTX for `sm_90` (Hopper).
pub const MIN_COMPUTE: (i32, i32) = (9, 0);

/// `12080` → `12.8`, as the driver API encodes its version (`1000 * major + 10 * minor`).
pub fn driver_version_string(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// Checks the driver API version.
pub fn check_driver(v: i32) -> Result<(), String> {
    if v < MIN_DRIVER {
        return Err(format!(
            "the CUDA driver supports CUDA {}, ptx-litmus needs {} or newer (update the NVIDIA \
             driver)",
            driver_version_string(v),
            driver_version_string(MIN_DRIVER)
        ));
    }
    Ok(())
}

/// Checks a device's compute capability.
pub fn check_compute(name: &str, cc: (i32, i32)) -> Result<(), String> {
    if cc < MIN_COMPUTE {
        return Err(format!(
            "{name} has compute capability {}.{}; the kernels are PTX for sm_90 and need {}.{} \
             (Hopper) or newer",
            cc.0, cc.1, MIN_COMPUTE.0, MIN_COMPUTE.1
        ));
    }
    Ok(())
}

/// The newest PTX ISA a driver's JIT compiler accepts, from the PTX ISA release history, or
/// `None` for a driver newer than this table (then the JIT itself decides).
pub fn max_ptx_isa(driver: i32) -> Option<(u32, u32)> {
    if driver < MIN_DRIVER {
        return None;
    }
    let cuda = (driver / 1000, (driver % 1000) / 10);
    Some(match cuda {
        (12, 0) => (8, 0),
        (12, 1) => (8, 1),
        (12, 2) => (8, 2),
        (12, 3) => (8, 3),
        (12, 4) => (8, 4),
        (12, 5) | (12, 6) => (8, 5),
        (12, 7) => (8, 6),
        (12, 8) => (8, 7),
        (12, 9) => (8, 8),
        (13, 0) => (9, 0),
        _ => return None,
    })
}

/// Checks that the driver's JIT accepts a module of PTX ISA `isa`; the message says which
/// driver would.
pub fn check_ptx_isa(isa: (u32, u32), driver: i32) -> Result<(), String> {
    match max_ptx_isa(driver) {
        Some(max) if isa > max => Err(format!(
            "the kernel is PTX ISA {}.{} but the CUDA {} driver's JIT accepts at most {}.{}; \
             update the NVIDIA driver",
            isa.0,
            isa.1,
            driver_version_string(driver),
            max.0,
            max.1
        )),
        _ => Ok(()),
    }
}

/// A JIT log buffer as text: up to the first NUL, trailing blank lines dropped.
pub fn log_text(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).trim_end().to_string()
}

/// The first `n` lines of a JIT error log, joined for a one-line message.
pub fn log_summary(log: &str, n: usize) -> String {
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut s = lines
        .iter()
        .take(n)
        .copied()
        .collect::<Vec<_>>()
        .join(" | ");
    if lines.len() > n {
        s.push_str(&format!(" | ... ({} more lines)", lines.len() - n));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_versions_read_as_cuda_versions() {
        assert_eq!(driver_version_string(12080), "12.8");
        assert_eq!(driver_version_string(12020), "12.2");
        assert_eq!(driver_version_string(13000), "13.0");
        assert!(check_driver(12000).is_ok());
        let e = check_driver(11080).unwrap_err();
        assert!(e.contains("CUDA 11.8") && e.contains("12.0"), "{e}");
    }

    #[test]
    fn only_hopper_and_newer_are_accepted() {
        assert!(check_compute("H100", (9, 0)).is_ok());
        assert!(check_compute("B200", (10, 0)).is_ok());
        let e = check_compute("NVIDIA A100", (8, 0)).unwrap_err();
        assert!(
            e.starts_with("NVIDIA A100 has compute capability 8.0"),
            "{e}"
        );
        assert!(check_compute("RTX 4090", (8, 9)).is_err());
    }

    #[test]
    fn ptx_isa_versions_follow_the_driver() {
        assert_eq!(max_ptx_isa(12000), Some((8, 0)));
        assert_eq!(max_ptx_isa(12060), Some((8, 5)));
        assert_eq!(max_ptx_isa(12080), Some((8, 7)));
        assert_eq!(max_ptx_isa(99000), None);
        assert!(check_ptx_isa((8, 0), 12020).is_ok());
        // fence.acquire / fence.release need PTX 8.6, which a 12.4 driver cannot JIT.
        let e = check_ptx_isa((8, 6), 12040).unwrap_err();
        assert!(
            e.contains("PTX ISA 8.6") && e.contains("at most 8.4"),
            "{e}"
        );
        assert!(check_ptx_isa((8, 6), 12070).is_ok());
        assert!(check_ptx_isa((8, 6), 99000).is_ok());
    }

    #[test]
    fn jit_logs_stop_at_the_terminator() {
        let mut buf = b"ptxas error   : Unknown symbol 'x'\n\n".to_vec();
        buf.extend([0u8; 16]);
        buf.extend(b"garbage");
        assert_eq!(log_text(&buf), "ptxas error   : Unknown symbol 'x'");
        assert_eq!(log_text(&[0u8; 8]), "");
        let log = "a\n\nb\nc\nd";
        assert_eq!(log_summary(log, 2), "a | b | ... (2 more lines)");
        assert_eq!(log_summary(log, 9), "a | b | c | d");
    }
}
