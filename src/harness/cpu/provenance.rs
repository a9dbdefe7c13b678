//! Facts about the machine and build recorded with every CPU run.

use std::collections::BTreeMap;

/// CPU model, core count, OS, architecture, compiler, build profile and git revision.
pub fn provenance() -> BTreeMap<String, String> {
    let mut p = BTreeMap::new();
    p.insert("cpu".into(), cpu_model());
    p.insert("cores".into(), cores().to_string());
    p.insert("os".into(), os());
    p.insert("arch".into(), std::env::consts::ARCH.into());
    p.insert("rustc".into(), crate::RUSTC_VERSION.into());
    p.insert("profile".into(), crate::BUILD_PROFILE.into());
    p.insert("git_revision".into(), crate::GIT_REVISION.into());
    p
}

/// Cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn os() -> String {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| format!(" {}", s.trim()))
        .unwrap_or_default();
    format!("{}{release}", std::env::consts::OS)
}
