//! A tuned configuration as a file: provenance comments (machine, driver, seed, budget, date,
//! weak/s), then one `KEY = VALUE` a line. Stress keys read as `--stress-file` reads them; the
//! CPU backend's options are written `cpu.KEY = VALUE`, which `run --stress tuned:FILE` applies
//! as `-o KEY=VALUE` on the CPU.

use crate::codegen::Setting;

/// The prefix of a line that sets a CPU backend option.
pub const CPU_PREFIX: &str = "cpu.";

/// The file's text: each provenance line as a comment, then the settings.
pub fn render(provenance: &[(String, String)], settings: &[(String, String)]) -> String {
    let mut out = String::from(
        "# ptx-litmus tune: the configuration with the most weak outcomes per second\n",
    );
    for (k, v) in provenance {
        out.push_str(&format!("# {k}: {}\n", v.replace('\n', " ")));
    }
    for (k, v) in settings {
        out.push_str(&format!("{k} = {v}\n"));
    }
    out
}

/// Splits a file's settings into stress settings and CPU options (their prefix removed), each
/// keeping its line.
pub fn split(settings: Vec<Setting>) -> (Vec<Setting>, Vec<Setting>) {
    let (cpu, stress): (Vec<Setting>, Vec<Setting>) = settings
        .into_iter()
        .partition(|s| s.key.starts_with(CPU_PREFIX));
    let cpu = cpu
        .into_iter()
        .map(|s| Setting {
            key: s.key[CPU_PREFIX.len()..].to_string(),
            ..s
        })
        .collect();
    (stress, cpu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::parse_settings;

    #[test]
    fn a_tuned_file_reads_back_as_settings_with_its_provenance_as_comments() {
        let text = render(
            &[
                ("seed".into(), "1".into()),
                ("gpu".into(), "H100\nx".into()),
            ],
            &[
                ("mem_stress_pct".into(), "25".into()),
                ("cpu.sync".into(), "instance".into()),
            ],
        );
        assert!(text.contains("# seed: 1\n# gpu: H100 x\n"), "{text}");
        let (stress, cpu) = split(parse_settings(&text).unwrap());
        let at = |v: &[Setting]| -> Vec<(usize, String, String)> {
            v.iter()
                .map(|s| (s.line, s.key.clone(), s.value.clone()))
                .collect()
        };
        assert_eq!(at(&stress), [(4, "mem_stress_pct".into(), "25".into())]);
        assert_eq!(at(&cpu), [(5, "sync".into(), "instance".into())]);
    }
}
