//! The CUDA backend's options, read from [`RunParams::options`](crate::harness::RunParams).

use super::compiler::Compiler;
use super::submit::{LaunchMode, DEFAULT_GRAPH};
use crate::harness::option_value::number;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Options of the CUDA backend.
#[derive(Clone, Debug, PartialEq)]
pub struct CudaOptions {
    /// Device ordinal (`device=N`, default 0).
    pub device: i32,
    /// Launches per batch between host synchronisations (`batch=N`); `None` adapts the batch
    /// to about 0.1 s.
    pub batch: Option<u64>,
    /// Directory that receives each kernel's driver-JIT'd cubin, PTX and JIT log as
    /// `<test>-<ptx hash>.{cubin,ptx,jit.log}` (`sass_dir=PATH`),
    /// for `cuobjdump -sass`.
    pub sass_dir: Option<PathBuf>,
    /// The least time a test's waits for the device may take before the test ends as timed
    /// out (`wait_s=SECONDS`, default [`DEFAULT_WAIT_S`]); a time budget raises it.
    pub wait_s: f64,
    /// What compiles the PTX (`compiler=jit|ptxas:VERSION`, default the driver's JIT).
    pub compiler: Compiler,
    /// Whether a preset's grid is sized to fill the device (`grid=fill`, the default) or
    /// launched as the preset states it (`grid=preset`); see
    /// [`super::occupancy::fills`].
    pub fill: bool,
    /// How launches are submitted (`graph=K`, the default [`DEFAULT_GRAPH`]: a CUDA graph of
    /// K launches per driver call; `graph=off`: two direct launches per launch).
    pub launch_mode: LaunchMode,
    /// Whether the machine code each test runs is disassembled and checked by the optcheck
    /// beside its launches (`sass_check=on`, the default; `off`), see
    /// [`super::sass_check`].
    pub sass_check: bool,
}

/// Seconds a test's waits may take at least (JIT, set-up and a batch of launches).
pub const DEFAULT_WAIT_S: f64 = 30.0;

impl Default for CudaOptions {
    fn default() -> CudaOptions {
        CudaOptions {
            device: 0,
            batch: None,
            sass_dir: None,
            wait_s: DEFAULT_WAIT_S,
            compiler: Compiler::Jit,
            fill: true,
            launch_mode: LaunchMode::Graph(DEFAULT_GRAPH),
            sass_check: true,
        }
    }
}

/// Keys this backend understands.
pub const KEYS: [&str; 8] = [
    "device",
    "batch",
    "sass_dir",
    "wait_s",
    "compiler",
    "grid",
    "graph",
    "sass_check",
];

/// Most launches one graph may hold (`graph=K`): one window of the submitter, so that with two
/// windows pending no more than 128 launches wait in the driver's queue (about a thousand fit)
/// and no launch call can block past a test's deadline.
pub const MAX_GRAPH: u32 = super::submitter::WINDOW as u32;

impl CudaOptions {
    /// Reads the options, rejecting unknown keys and bad values.
    pub fn parse(options: &BTreeMap<String, String>) -> Result<CudaOptions, String> {
        let mut o = CudaOptions::default();
        for (k, v) in options {
            match k.as_str() {
                "device" => o.device = number("cuda", k, v, 0..=i32::MAX, "0, 1, ...")?,
                "batch" => {
                    o.batch = Some(number("cuda", k, v, 1..=1 << 20, "1..=1048576 launches")?)
                }
                "wait_s" => {
                    o.wait_s = number("cuda", k, v, 0.001..=3600.0, "0.001..=3600 seconds")?
                }
                "grid" => o.fill = either(k, v, "fill", "preset")?,
                "graph" => o.launch_mode = launch_mode(v)?,
                "sass_check" => o.sass_check = either(k, v, "on", "off")?,
                "compiler" => o.compiler = v.parse().map_err(|e| format!("cuda option {e}"))?,
                "sass_dir" if !v.is_empty() => o.sass_dir = Some(PathBuf::from(v)),
                "sass_dir" => return Err("cuda option sass_dir: expected a directory".into()),
                _ => {
                    return Err(format!(
                        "unknown cuda option `{k}` (known: {})",
                        KEYS.join(", ")
                    ))
                }
            }
        }
        Ok(o)
    }
}

/// Option `k`'s value `v` as one of two words: `yes` is true, `no` false.
fn either(k: &str, v: &str, yes: &str, no: &str) -> Result<bool, String> {
    match v {
        _ if v == yes => Ok(true),
        _ if v == no => Ok(false),
        _ => Err(format!("cuda option {k}={v}: expected {yes} or {no}")),
    }
}

impl CudaOptions {
    /// The options as `key=value` pairs that [`CudaOptions::parse`] reads back the same: the
    /// device, and every other that differs from its default (the directory of kernel files
    /// too, which a replay replaces with its own).
    pub fn record(&self) -> BTreeMap<String, String> {
        let d = CudaOptions::default();
        let mut m = BTreeMap::new();
        m.insert("device".to_string(), self.device.to_string());
        let mut put = |differs: bool, k: &str, v: String| {
            if differs {
                m.insert(k.to_string(), v);
            }
        };
        put(
            self.batch.is_some(),
            "batch",
            self.batch.unwrap_or(0).to_string(),
        );
        let dir = self.sass_dir.as_ref().map(|d| d.display().to_string());
        put(dir.is_some(), "sass_dir", dir.unwrap_or_default());
        put(self.wait_s != d.wait_s, "wait_s", self.wait_s.to_string());
        put(
            self.compiler != d.compiler,
            "compiler",
            self.compiler.to_string(),
        );
        put(!self.fill, "grid", "preset".into());
        let graph = match self.launch_mode {
            LaunchMode::Direct => "off".to_string(),
            LaunchMode::Graph(k) => k.to_string(),
        };
        put(self.launch_mode != d.launch_mode, "graph", graph);
        put(!self.sass_check, "sass_check", "off".into());
        m
    }
}

/// The value of `graph=`: `off`, or the launches per graph.
fn launch_mode(v: &str) -> Result<LaunchMode, String> {
    if v == "off" {
        return Ok(LaunchMode::Direct);
    }
    v.parse()
        .ok()
        .filter(|k| (1..=MAX_GRAPH).contains(k))
        .map(LaunchMode::Graph)
        .ok_or_else(|| format!("cuda option graph={v}: expected off or 1..={MAX_GRAPH} launches"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_key_set_away_from_its_default_is_recorded_and_reads_back_the_same() {
        for graph in ["off", "16"] {
            let given = map(&[
                ("device", "1"),
                ("batch", "8"),
                ("sass_dir", "/tmp/k"),
                ("wait_s", "2.5"),
                ("compiler", "ptxas:12.4"),
                ("grid", "preset"),
                ("graph", graph),
                ("sass_check", "off"),
            ]);
            let o = CudaOptions::parse(&given).unwrap();
            assert_eq!(o.record(), given, "a replay must run as the run did");
            let recorded = o.record();
            let keys: Vec<&str> = recorded.keys().map(String::as_str).collect();
            let mut all = KEYS.to_vec();
            all.sort_unstable();
            assert_eq!(keys, all, "every key of KEYS is recorded when set");
        }
        let defaults = CudaOptions::default().record();
        assert_eq!(defaults, map(&[("device", "0")]));
    }

    #[test]
    fn parses_known_keys_and_rejects_others() {
        let o = CudaOptions::parse(&map(&[("device", "1"), ("batch", "64"), ("sass_dir", "s")]))
            .unwrap();
        assert_eq!(o.device, 1);
        assert_eq!(o.batch, Some(64));
        assert_eq!(o.sass_dir, Some(PathBuf::from("s")));
        assert_eq!(
            CudaOptions::parse(&map(&[])).unwrap(),
            CudaOptions::default()
        );
        // A CPU option is not silently accepted by the GPU backend.
        assert!(CudaOptions::parse(&map(&[("pack", "true")]))
            .unwrap_err()
            .contains("pack"));
        assert!(CudaOptions::parse(&map(&[("batch", "0")])).is_err());
        assert!(CudaOptions::parse(&map(&[("device", "-1")])).is_err());
        assert_eq!(
            CudaOptions::parse(&map(&[("wait_s", "2.5")]))
                .unwrap()
                .wait_s,
            2.5
        );
        assert_eq!(CudaOptions::default().wait_s, DEFAULT_WAIT_S);
        let c = CudaOptions::parse(&map(&[("compiler", "ptxas:13.0")])).unwrap();
        assert_eq!(c.compiler.to_string(), "ptxas:13.0");
        assert!(CudaOptions::parse(&map(&[("compiler", "nvcc")])).is_err());
        assert!(CudaOptions::parse(&map(&[("wait_s", "0")])).is_err());
        assert!(CudaOptions::parse(&map(&[("wait_s", "nan")])).is_err());
        let bad = |k: &str, v: &str| CudaOptions::parse(&map(&[(k, v)])).unwrap_err();
        assert_eq!(
            bad("sass_check", "yes"),
            "cuda option sass_check=yes: expected on or off"
        );
        assert_eq!(
            bad("batch", "2000000"),
            "cuda option batch=2000000: expected 1..=1048576 launches"
        );
        assert!(CudaOptions::default().fill);
        assert!(
            !CudaOptions::parse(&map(&[("grid", "preset")]))
                .unwrap()
                .fill
        );
        assert!(CudaOptions::parse(&map(&[("grid", "full")]))
            .unwrap_err()
            .contains("fill or preset"));
        let mode = |v: &str| CudaOptions::parse(&map(&[("graph", v)])).map(|o| o.launch_mode);
        assert_eq!(CudaOptions::default().launch_mode, LaunchMode::Graph(64));
        assert_eq!(mode("off"), Ok(LaunchMode::Direct));
        assert_eq!(mode("8"), Ok(LaunchMode::Graph(8)));
        for bad in ["0", "65", "on", ""] {
            assert!(mode(bad).unwrap_err().contains("off or 1..=64"), "{bad}");
        }
    }
}
