//! Backend options ([`Options`]), parsed once where they are read (`-o key=value` on the command
//! line, the parameters of a recorded run) for the backend that will run, carried typed from
//! there, and recorded as `key=value` pairs.

use super::cpu::{self, CpuOptions};
use super::cuda::CudaOptions;
use super::fault;
use super::{Backend, BackendOptions, Options};
use std::collections::BTreeMap;

impl Options {
    /// Reads `key=value` pairs for `backend` (`Auto` must be resolved first; it reads as the
    /// CPU's), rejecting unknown keys and bad values with the backend's one error text.
    pub fn parse(backend: Backend, map: &BTreeMap<String, String>) -> Result<Options, String> {
        let inject = fault::parse(map)?;
        let own = fault::backend_options(map);
        let backend = match backend {
            Backend::Cuda => BackendOptions::Cuda(CudaOptions::parse(&own)?),
            Backend::Cpu | Backend::Auto => BackendOptions::Cpu(CpuOptions::parse(&own)?),
        };
        Ok(Options { backend, inject })
    }

    /// The options as `key=value` pairs that [`Options::parse`] reads back the same: what a
    /// result set records.
    pub fn record(&self) -> BTreeMap<String, String> {
        let mut m = self.backend.record();
        if let Some(i) = &self.inject {
            m.insert(fault::KEY.into(), fault::spell(i));
        }
        m
    }
}

impl BackendOptions {
    /// The backend's options as `key=value` pairs (the CPU's every one, the CUDA backend's
    /// device and those that differ from the default).
    pub fn record(&self) -> BTreeMap<String, String> {
        let o = match self {
            BackendOptions::Cuda(o) => return o.record(),
            BackendOptions::Cpu(o) => o,
        };
        let mut m = BTreeMap::new();
        m.insert("batch".to_string(), o.batch.to_string());
        m.insert("pack".to_string(), o.pack.to_string());
        m.insert(
            "sync".to_string(),
            o.sync.map_or("auto".into(), cpu::sync_name),
        );
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::fault::Injection;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn options_parse_for_their_backend_and_record_what_parses_back_the_same() {
        let given = map(&[
            ("batch", "64"),
            ("inject", "hang:SB:0.4"),
            ("sync", "round"),
        ]);
        let o = Options::parse(Backend::Cpu, &given).unwrap();
        assert_eq!(
            o.inject,
            Some(Injection::Hang(
                "SB".into(),
                std::time::Duration::from_millis(400)
            ))
        );
        let rec = o.record();
        assert_eq!(rec["batch"], "64");
        assert_eq!(rec["pack"], "false");
        assert_eq!(rec["sync"], "round");
        assert_eq!(rec["inject"], "hang:SB:0.4");
        assert_eq!(Options::parse(Backend::Cpu, &rec).unwrap(), o);
        let gpu = map(&[
            ("compiler", "ptxas:13.0"),
            ("device", "1"),
            ("wait_s", "2.5"),
            ("inject", "fault:MP"),
        ]);
        let o = Options::parse(Backend::Cuda, &gpu).unwrap();
        assert_eq!(o.record(), gpu);
        assert_eq!(Options::parse(Backend::Cuda, &o.record()).unwrap(), o);
        // Each backend refuses the other's keys with its own one message.
        let e = Options::parse(Backend::Cuda, &map(&[("pack", "true")])).unwrap_err();
        assert!(e.contains("unknown cuda option `pack`"), "{e}");
        let e = Options::parse(Backend::Cpu, &map(&[("device", "0")])).unwrap_err();
        assert!(e.contains("unknown cpu option `device`"), "{e}");
        assert!(Options::parse(Backend::Cpu, &map(&[("inject", "hang:x")])).is_err());
    }
}
