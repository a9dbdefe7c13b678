//! The models `--model` knows by name: the project's own transcriptions of the PTX model
//! (`models/` in the repository, compiled in), and model files given by path.

use super::ast::Model;
use super::load;
use std::path::Path;

/// `ptx-7.5`: PTX ISA chapter 8 with proxies.
pub const PTX_7_5: &str = include_str!("../../models/ptx-v7.5.cat");
/// `ptx-6.0`: the model before proxies.
pub const PTX_6_0: &str = include_str!("../../models/ptx-v6.0.cat");

/// The built-in model names, with their text.
pub const NAMED: &[(&str, &str)] = &[("ptx-7.5", PTX_7_5), ("ptx-6.0", PTX_6_0)];

/// The largest model file read: Dat3M's PTX models are about 5 KiB.
const MAX_MODEL_BYTES: u64 = 4 << 20;

/// A model chosen by `--model`: its name as given (a built-in name or a path) and the model.
#[derive(Clone, Debug)]
pub struct Chosen {
    /// What the user gave: `ptx-7.5`, `ptx-6.0` or a `.cat` path.
    pub name: String,
    /// The model's text (recorded so a result names exactly what judged it).
    pub text: String,
    /// The parsed model.
    pub model: Model,
}

/// Resolves a built-in name or reads and parses a `.cat` file; errors name the file and line.
pub fn choose(spec: &str) -> Result<Chosen, String> {
    let text = match NAMED.iter().find(|(n, _)| *n == spec) {
        Some((_, t)) => t.to_string(),
        None => {
            let p = Path::new(spec);
            if !p.is_file() {
                let names: Vec<&str> = NAMED.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "{spec}: no such model file (built-in models: {})",
                    names.join(", ")
                ));
            }
            crate::input::text_of(p, MAX_MODEL_BYTES, "a cat model")?
        }
    };
    let model = load(&text).map_err(|e| format!("{spec}:{}: {}", e.line, e.message))?;
    Ok(Chosen {
        name: spec.to_string(),
        text,
        model,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_models_load_and_bad_files_name_their_line() {
        for (n, _) in NAMED {
            let c = choose(n).unwrap_or_else(|e| panic!("{e}"));
            assert!(c.model.title.starts_with("PTX"), "{}", c.model.title);
        }
        let dir = std::env::temp_dir().join(format!("cat-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.cat");
        std::fs::write(&f, "M\nlet a = po\nacyclic a | W as x\n").unwrap();
        let e = choose(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("bad.cat:3:"), "{e}");
        assert!(choose("no-such-model")
            .unwrap_err()
            .contains("built-in models: ptx-7.5"));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
