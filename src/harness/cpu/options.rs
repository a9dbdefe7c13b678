//! The CPU backend's options, read from [`RunParams::options`](crate::harness::RunParams).

use crate::harness::option_value::number;
use std::collections::BTreeMap;

/// How the roles of one instance are brought together in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sync {
    /// Every `n` instances, every role waits for the others (a spin barrier), so the roles of
    /// the next instance start together; `Every(1)` aligns every instance (`sync=instance`).
    /// Best when there are at least as many cores as roles.
    Every(u32),
    /// Only the round starts together; each role then sweeps its instances freely (cheapest,
    /// and the only sensible choice with more roles than cores).
    Round,
}

/// Options of the CPU backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuOptions {
    /// Instances per round (`batch=N`).
    pub batch: usize,
    /// Pack locations and instances densely instead of one location per cache line (`pack`).
    pub pack: bool,
    /// Start alignment (`sync=instance|round|auto|N`, N instances between alignments); `None`
    /// is auto.
    pub sync: Option<Sync>,
}

/// Keys this backend understands.
pub const KEYS: [&str; 3] = ["batch", "pack", "sync"];

impl Default for CpuOptions {
    fn default() -> CpuOptions {
        CpuOptions {
            batch: 2048,
            pack: false,
            sync: None,
        }
    }
}

impl CpuOptions {
    /// Reads the options, rejecting unknown keys and bad values.
    pub fn parse(options: &BTreeMap<String, String>) -> Result<CpuOptions, String> {
        let mut o = CpuOptions::default();
        for (k, v) in options {
            match k.as_str() {
                "batch" => o.batch = number("cpu", k, v, 1..=1 << 24, "1..=16777216")?,
                "pack" => o.pack = parse_bool(k, v)?,
                "sync" => {
                    o.sync = match v.as_str() {
                        "instance" => Some(Sync::Every(1)),
                        "round" => Some(Sync::Round),
                        "auto" => None,
                        n => match n.parse::<u32>() {
                            Ok(n) if n > 0 => Some(Sync::Every(n)),
                            _ => {
                                return Err(format!(
                                    "cpu option sync={v}: expected instance, round, auto or a \
                                     positive number of instances"
                                ))
                            }
                        },
                    }
                }
                _ => {
                    return Err(format!(
                        "unknown cpu option `{k}` (known: {})",
                        KEYS.join(", ")
                    ))
                }
            }
        }
        Ok(o)
    }

    /// The start alignment for `roles` roles on `cores` cores.
    pub fn sync_for(&self, roles: usize, cores: usize) -> Sync {
        self.sync.unwrap_or(if roles <= cores {
            Sync::Every(AUTO_EVERY)
        } else {
            Sync::Round
        })
    }
}

fn parse_bool(k: &str, v: &str) -> Result<bool, String> {
    match v {
        "" | "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(format!("cpu option {k}={v}: expected true or false")),
    }
}

/// Instances between alignments chosen by `sync=auto` when every role has a core.
pub const AUTO_EVERY: u32 = 16;

/// Name of a start alignment as recorded in results (parsed back by [`CpuOptions::parse`]).
pub fn sync_name(s: Sync) -> String {
    match s {
        Sync::Every(1) => "instance".into(),
        Sync::Every(n) => n.to_string(),
        Sync::Round => "round".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_keys_and_rejects_others() {
        let mut m = BTreeMap::new();
        m.insert("batch".to_string(), "64".to_string());
        m.insert("pack".to_string(), "true".to_string());
        m.insert("sync".to_string(), "round".to_string());
        let o = CpuOptions::parse(&m).unwrap();
        assert_eq!((o.batch, o.pack, o.sync), (64, true, Some(Sync::Round)));
        m.insert("sync".to_string(), "16".to_string());
        assert_eq!(CpuOptions::parse(&m).unwrap().sync, Some(Sync::Every(16)));
        m.insert("sync".to_string(), sync_name(Sync::Every(1)));
        assert_eq!(CpuOptions::parse(&m).unwrap().sync, Some(Sync::Every(1)));
        m.insert("warp".to_string(), "1".to_string());
        assert!(CpuOptions::parse(&m).unwrap_err().contains("warp"));
        let mut bad = BTreeMap::new();
        bad.insert("batch".to_string(), "0".to_string());
        assert!(CpuOptions::parse(&bad).is_err());
    }

    #[test]
    fn auto_sync_avoids_per_instance_waits_when_oversubscribed() {
        let o = CpuOptions::default();
        assert_eq!(o.sync_for(2, 2), Sync::Every(AUTO_EVERY));
        assert_eq!(o.sync_for(4, 2), Sync::Round);
    }
}
