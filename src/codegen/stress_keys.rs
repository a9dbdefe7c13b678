//! The incantations a user sets one by one (`--stress-set KEY=VALUE`, `--stress-file FILE`)
//! on top of a preset: one table of keys, what each value means, and the parser of a settings
//! file. Keys are the fields of [`Stress`]; cuda-litmus's parameter-file names (camelCase,
//! `workgroup` for CTA) are accepted as aliases, so its files read unchanged where they set
//! stress.

use super::stress::{Stress, StressPattern};

/// What a key's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// A whole number (0..=4294967295).
    Count,
    /// A whole number from 0 to 100: the percentage of launches.
    Percent,
    /// A stress-loop access pattern: `st;st`, `st;ld`, `ld;st`, `ld;ld`, or its code 0–3.
    Pattern,
    /// `true` or `false` (or `1`, `0`).
    Flag,
}

impl ValueKind {
    /// How the value is written, for help and error texts.
    pub fn expected(self) -> &'static str {
        match self {
            ValueKind::Count => "a whole number",
            ValueKind::Percent => "a percentage from 0 to 100",
            ValueKind::Pattern => "a pattern: st;st, st;ld, ld;st, ld;ld (or 0-3)",
            ValueKind::Flag => "true or false",
        }
    }
}

/// One settable incantation.
#[derive(Clone, Copy, Debug)]
pub struct StressKey {
    /// The key, the name of the `Stress` field and of the `incantations` entry of `run.json`.
    pub name: &'static str,
    /// cuda-litmus's name for the same setting (empty where it has none).
    pub alias: &'static str,
    /// Its value's kind.
    pub kind: ValueKind,
}

const fn key(name: &'static str, alias: &'static str, kind: ValueKind) -> StressKey {
    StressKey { name, alias, kind }
}

/// Every settable incantation, in the order of [`Stress`]'s fields (see their doc comments).
pub const STRESS_KEYS: [StressKey; 20] = [
    key("testing_ctas", "testingWorkgroups", ValueKind::Count),
    key("max_ctas", "maxWorkgroups", ValueKind::Count),
    key("cta_size", "workgroupSize", ValueKind::Count),
    key("shuffle_pct", "shufflePct", ValueKind::Percent),
    key("barrier_pct", "barrierPct", ValueKind::Percent),
    key("mem_stride", "memStride", ValueKind::Count),
    key("mem_stress_pct", "memStressPct", ValueKind::Percent),
    key(
        "mem_stress_iterations",
        "memStressIterations",
        ValueKind::Count,
    ),
    key("mem_stress_pattern", "memStressPattern", ValueKind::Pattern),
    key("pre_stress_pct", "preStressPct", ValueKind::Percent),
    key(
        "pre_stress_iterations",
        "preStressIterations",
        ValueKind::Count,
    ),
    key("pre_stress_pattern", "preStressPattern", ValueKind::Pattern),
    key("stress_line_size", "stressLineSize", ValueKind::Count),
    key("stress_target_lines", "stressTargetLines", ValueKind::Count),
    key(
        "stress_strategy_balance_pct",
        "stressStrategyBalancePct",
        ValueKind::Percent,
    ),
    key("permute_first", "permuteFirst", ValueKind::Count),
    key("permute_second", "permuteSecond", ValueKind::Count),
    key("aliased_memory", "aliasedMemory", ValueKind::Flag),
    // cuda-litmus has no such parameter: a thread's partner CTA there follows from its thread
    // id (`stripe_workgroup`).
    key("partner_distances", "", ValueKind::Count),
    // Nor this: its spin barrier counts every testing thread on one counter.
    key("spin_group", "", ValueKind::Count),
];

/// A mutable view of one field, by its type.
enum Field<'a> {
    Number(&'a mut u32),
    Pattern(&'a mut StressPattern),
    Flag(&'a mut bool),
}

/// The key named `name` (or by its cuda-litmus alias).
pub fn find_key(name: &str) -> Option<&'static StressKey> {
    STRESS_KEYS
        .iter()
        .find(|k| k.name == name || (!k.alias.is_empty() && k.alias == name))
}

/// The error text of a key that is none of [`STRESS_KEYS`].
fn unknown_key(name: &str) -> String {
    let names: Vec<&str> = STRESS_KEYS.iter().map(|k| k.name).collect();
    format!(
        "unknown stress key `{name}` (expected one of {})",
        names.join(", ")
    )
}

/// The error text of a value that is not of its key's kind.
fn bad_value(key: &StressKey, value: &str) -> String {
    format!(
        "stress key `{}`: `{value}` is not {}",
        key.name,
        key.kind.expected()
    )
}

fn parse_pattern(v: &str) -> Option<StressPattern> {
    StressPattern::ALL
        .into_iter()
        .find(|p| p.as_str() == v || p.code().to_string() == v)
}

fn parse_flag(v: &str) -> Option<bool> {
    match v {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

impl Stress {
    fn field(&mut self, name: &str) -> Option<Field<'_>> {
        use Field::{Flag, Number, Pattern};
        Some(match name {
            "testing_ctas" => Number(&mut self.testing_ctas),
            "max_ctas" => Number(&mut self.max_ctas),
            "cta_size" => Number(&mut self.cta_size),
            "shuffle_pct" => Number(&mut self.shuffle_pct),
            "barrier_pct" => Number(&mut self.barrier_pct),
            "mem_stride" => Number(&mut self.mem_stride),
            "mem_stress_pct" => Number(&mut self.mem_stress_pct),
            "mem_stress_iterations" => Number(&mut self.mem_stress_iterations),
            "mem_stress_pattern" => Pattern(&mut self.mem_stress_pattern),
            "pre_stress_pct" => Number(&mut self.pre_stress_pct),
            "pre_stress_iterations" => Number(&mut self.pre_stress_iterations),
            "pre_stress_pattern" => Pattern(&mut self.pre_stress_pattern),
            "stress_line_size" => Number(&mut self.stress_line_size),
            "stress_target_lines" => Number(&mut self.stress_target_lines),
            "stress_strategy_balance_pct" => Number(&mut self.stress_strategy_balance_pct),
            "permute_first" => Number(&mut self.permute_first),
            "permute_second" => Number(&mut self.permute_second),
            "aliased_memory" => Flag(&mut self.aliased_memory),
            "partner_distances" => Number(&mut self.partner_distances),
            "spin_group" => Number(&mut self.spin_group),
            _ => return None,
        })
    }

    /// Sets one incantation from its text, with one error text per kind of mistake (unknown
    /// key, value not of the key's kind). Ranges that involve several keys (`testing_ctas <=
    /// max_ctas`) are [`Stress::validate`]'s, once every setting is applied.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let key = find_key(name).ok_or_else(|| unknown_key(name))?;
        let bad = || bad_value(key, value);
        let field = self.field(key.name).expect("every key names a field");
        match field {
            Field::Number(f) => {
                let v: u32 = value.parse().map_err(|_| bad())?;
                if key.kind == ValueKind::Percent && v > 100 {
                    return Err(bad());
                }
                *f = v;
            }
            Field::Pattern(f) => *f = parse_pattern(value).ok_or_else(bad)?,
            Field::Flag(f) => *f = parse_flag(value).ok_or_else(bad)?,
        }
        Ok(())
    }

    /// The value of one incantation as [`Stress::set`] reads it back.
    pub fn get(&self, name: &str) -> Option<String> {
        let mut copy = self.clone();
        Some(match copy.field(name)? {
            Field::Number(v) => v.to_string(),
            Field::Pattern(p) => p.as_str().to_string(),
            Field::Flag(b) => b.to_string(),
        })
    }

    /// The preset's name followed by the settings made on top of it (`stress with
    /// mem_stress_pct=25`), as kernels and reports name a configuration.
    pub fn describe(&self) -> String {
        let set: Vec<String> = self
            .settings()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if set.is_empty() {
            self.name.clone()
        } else {
            format!("{} with {}", self.name, set.join(" "))
        }
    }

    /// The incantations whose values differ from this configuration's preset, as `(key,
    /// value)` in table order: what `--stress-set` and `--stress-file` changed.
    pub fn settings(&self) -> Vec<(String, String)> {
        let Some(base) = Stress::preset(&self.name) else {
            return Vec::new();
        };
        STRESS_KEYS
            .iter()
            .filter_map(|k| {
                let v = self.get(k.name)?;
                (base.get(k.name).as_deref() != Some(v.as_str())).then(|| (k.name.to_string(), v))
            })
            .collect()
    }
}

/// One `KEY=VALUE` of a settings file, with its 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The line it is on.
    pub line: usize,
    /// The key as written.
    pub key: String,
    /// The value as written.
    pub value: String,
}

/// Splits `KEY=VALUE` (spaces around either side ignored).
pub fn split_setting(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().into(), v.trim().into())),
        _ => Err(format!("`{}`: expected KEY=VALUE", text.trim())),
    }
}

/// The settings of a file: one `KEY=VALUE` a line, `#` starting a comment, blank lines
/// skipped. An error carries its line.
pub fn parse_settings(text: &str) -> Result<Vec<Setting>, (usize, String)> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let (key, value) = split_setting(body).map_err(|e| (i + 1, e))?;
        out.push(Setting {
            line: i + 1,
            key,
            value,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_reads_back_what_it_sets() {
        let mut s = Stress::basic();
        for k in STRESS_KEYS {
            let v = match k.kind {
                ValueKind::Count => "77",
                ValueKind::Percent => "42",
                ValueKind::Pattern => "ld;st",
                ValueKind::Flag => "true",
            };
            s.set(k.name, v).unwrap();
            assert_eq!(s.get(k.name).as_deref(), Some(v), "{}", k.name);
        }
        assert_eq!(s.settings().len(), STRESS_KEYS.len());
    }

    #[test]
    fn aliases_and_codes_are_the_same_settings() {
        let mut a = Stress::full_stress();
        let mut b = Stress::full_stress();
        a.set("memStressPct", "30").unwrap();
        a.set("preStressPattern", "3").unwrap();
        b.set("mem_stress_pct", "30").unwrap();
        b.set("pre_stress_pattern", "ld;ld").unwrap();
        assert_eq!(a, b);
        assert_eq!(
            a.settings(),
            vec![
                ("mem_stress_pct".to_string(), "30".to_string()),
                ("pre_stress_pattern".to_string(), "ld;ld".to_string())
            ]
        );
    }

    #[test]
    fn each_mistake_has_its_one_text() {
        let mut s = Stress::basic();
        let e = s.set("shuffle", "1").unwrap_err();
        assert!(e.starts_with("unknown stress key `shuffle`"), "{e}");
        assert!(e.contains("aliased_memory"), "{e}");
        let e = s.set("shuffle_pct", "101").unwrap_err();
        assert_eq!(
            e,
            "stress key `shuffle_pct`: `101` is not a percentage from 0 to 100"
        );
        let e = s.set("testingWorkgroups", "-1").unwrap_err();
        assert_eq!(e, "stress key `testing_ctas`: `-1` is not a whole number");
        assert!(s
            .set("mem_stress_pattern", "st")
            .unwrap_err()
            .contains("st;ld"));
        assert!(s
            .set("aliased_memory", "yes")
            .unwrap_err()
            .contains("true or false"));
        assert_eq!(s, Stress::basic(), "a refused setting changes nothing");
    }

    #[test]
    fn a_settings_file_has_comments_and_names_its_bad_line() {
        let text = "# tuned on H100\nmem_stress_pct = 25  # fewer\n\nbarrierPct=0\n";
        let got = parse_settings(text).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].line, got[0].key.as_str()), (2, "mem_stress_pct"));
        assert_eq!((got[1].line, got[1].value.as_str()), (4, "0"));
        let (line, e) = parse_settings("a=1\n\nnonsense\n").unwrap_err();
        assert_eq!(line, 3);
        assert!(e.contains("expected KEY=VALUE"), "{e}");
    }
}
