//! Which model judged a result set, as `run` records it in `run.json`'s provenance: the model's
//! name, the checker that ran it and, for a cat model, its file and a hash of its text. A set
//! written before the model was recorded was judged by the built-in checker of PTX v7.5.

use super::record::RunRecord;
use std::collections::BTreeMap;

/// The provenance key of the model's name (`ptx-7.5`, `ptx-6.0` or the `.cat` path given).
pub const KEY_NAME: &str = "model";
/// The provenance key of the checker: [`BUILT_IN`] or [`CAT`].
pub const KEY_CHECKER: &str = "model.checker";
/// The provenance key of a cat model's file, when it was given by path.
pub const KEY_FILE: &str = "model.file";
/// The provenance key of the hash of a cat model's text (`fnv1a64:` and 16 hex digits).
pub const KEY_HASH: &str = "model.hash";
/// The provenance key of a cat model's title (its first line).
pub const KEY_TITLE: &str = "model.title";
/// The checker value of the project's own PTX checker (`src/model`).
pub const BUILT_IN: &str = "built-in";
/// The checker value of the cat interpreter (`src/cat`).
pub const CAT: &str = "cat";
/// The model the built-in checker implements, and `run`'s default.
pub const DEFAULT_NAME: &str = "ptx-7.5";

/// The model that judged a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JudgeModel {
    /// The name given to `--model`, or [`DEFAULT_NAME`].
    pub name: String,
    /// [`BUILT_IN`] or [`CAT`].
    pub checker: String,
    /// The `.cat` file, for a model given by path.
    pub file: Option<String>,
    /// `fnv1a64:` and the hash of a cat model's text.
    pub hash: Option<String>,
    /// A cat model's title.
    pub title: Option<String>,
    /// Whether the record named it (false for sets written before models were recorded).
    pub recorded: bool,
}

impl JudgeModel {
    /// The built-in checker, `run`'s default.
    pub fn built_in() -> JudgeModel {
        JudgeModel {
            name: DEFAULT_NAME.into(),
            checker: BUILT_IN.into(),
            file: None,
            hash: None,
            title: None,
            recorded: true,
        }
    }

    /// A cat model: its name as given, its file when given by path, its text and title.
    pub fn cat(name: &str, file: Option<&str>, text: &str, title: &str) -> JudgeModel {
        JudgeModel {
            name: name.into(),
            checker: CAT.into(),
            file: file.map(str::to_string),
            hash: Some(text_hash(text)),
            title: Some(title.into()),
            recorded: true,
        }
    }

    /// The model recorded in `run`'s provenance; the built-in checker when none is.
    pub fn of_run(run: &RunRecord) -> JudgeModel {
        let p = &run.provenance;
        let Some(name) = p.get(KEY_NAME) else {
            return JudgeModel {
                recorded: false,
                ..JudgeModel::built_in()
            };
        };
        JudgeModel {
            name: name.clone(),
            checker: p.get(KEY_CHECKER).cloned().unwrap_or(BUILT_IN.into()),
            file: p.get(KEY_FILE).cloned(),
            hash: p.get(KEY_HASH).cloned(),
            title: p.get(KEY_TITLE).cloned(),
            recorded: true,
        }
    }

    /// Writes the model into a provenance map.
    pub fn record(&self, p: &mut BTreeMap<String, String>) {
        p.insert(KEY_NAME.into(), self.name.clone());
        p.insert(KEY_CHECKER.into(), self.checker.clone());
        let optional = [
            (KEY_FILE, &self.file),
            (KEY_HASH, &self.hash),
            (KEY_TITLE, &self.title),
        ];
        for (k, v) in optional {
            if let Some(v) = v {
                p.insert(k.into(), v.clone());
            }
        }
    }

    /// One line for people: `ptx-6.0 (cat model "PTX v6.0", fnv1a64:…)`, or
    /// `ptx-7.5 (built-in checker)`.
    pub fn label(&self) -> String {
        let mut s = self.name.clone();
        if self.checker == BUILT_IN {
            s.push_str(" (built-in checker");
        } else {
            s.push_str(" (cat model");
            if let Some(t) = &self.title {
                s.push_str(&format!(" \"{t}\""));
            }
            if let Some(h) = &self.hash {
                s.push_str(&format!(", {h}"));
            }
        }
        if !self.recorded {
            s.push_str("; not recorded, the default when the set was written");
        }
        s.push(')');
        s
    }

    /// Whether a provenance key is one of the model's (shown once, by [`JudgeModel::label`]).
    pub fn is_key(key: &str) -> bool {
        key == KEY_NAME || key.starts_with("model.")
    }
}

/// The hash recorded for a model's text: FNV-1a 64, named.
pub fn text_hash(text: &str) -> String {
    format!("fnv1a64:{:016x}", crate::litmus::fnv1a64(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Parameters;

    fn run() -> RunRecord {
        RunRecord::new("r", "cpu", vec![], Parameters::default(), "t")
    }

    #[test]
    fn a_set_without_a_model_reads_as_the_built_in_checker_not_recorded() {
        let m = JudgeModel::of_run(&run());
        assert_eq!((m.name.as_str(), m.checker.as_str()), ("ptx-7.5", BUILT_IN));
        assert!(!m.recorded);
        assert!(m.label().contains("not recorded"), "{}", m.label());
    }

    #[test]
    fn a_recorded_cat_model_reads_back_with_its_file_and_hash() {
        let m = JudgeModel::cat("m.cat", Some("m.cat"), "PTX mine\n", "PTX mine");
        let mut r = run();
        m.record(&mut r.provenance);
        assert_eq!(JudgeModel::of_run(&r), m);
        assert_eq!(m.hash, Some(text_hash("PTX mine\n")));
        assert_ne!(text_hash("PTX mine\n"), text_hash("PTX mine \n"));
        assert!(m
            .label()
            .starts_with("m.cat (cat model \"PTX mine\", fnv1a64:"));
        assert!(r.provenance.keys().all(|k| JudgeModel::is_key(k)));
    }
}
