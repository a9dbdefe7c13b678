//! Family files: the checked-in description of one generated suite, from which `gen` writes
//! the same files byte for byte. One directive per line, `#` starts a comment:
//!
//! ```text
//! family mp-fences                  the folder name under litmus/generated/
//! doc MP with fences of every kind  one line saying what the family is for
//! shape MP PodWW Rfe PodRR Fre      a shape name and a cycle pattern (repeatable)
//! scope cta cluster gpu sys         access and fence scope where the cycle names none
//! placement samecta diffcta         where the threads run (see gen::place)
//! space global shared               where the locations live
//! ```
//!
//! A cycle pattern is a cycle whose tokens may be alternatives, `{rlx|rel}` or
//! `{PodWW|Fence(sc)dWW}`; the family holds every combination. Variants that the model
//! cannot tell apart (same placement and space, same cycle once scopes are narrowed to the
//! threads they include, `vol` read as `rlx.sys` and `membar` as `fence.sc`) are one test:
//! the first in the order written.
//!
//! An `iriw-wide N...` family holds IRIW widened to N writers and N readers (the model's large
//! cases), one per writer count, scope, `between` fence (`none` or a fence kind) and placement.
//!
//! A cuda-litmus family (`pldi26 KERNEL`) instead lists that project's axes, as its tuning
//! files do: `tb`, `scope`, `variant`, `fence_scope`, `fence_variant`.
//!
//! A `cycles SIZE [THREADS]` family holds every critical cycle of up to SIZE edges and THREADS
//! threads (default 4) that uses an edge of its `relax` line and otherwise those of its `safe`
//! line (diy7's `-size`, `-relax`, `-safe`; see [`super::enumerate`]), each under its classic
//! shape name or its edges spelled out ([`super::shapes`]), across the family's axes; a grouping
//! placement (`TB_01_2`) applies to the cycles of its thread count.
//!
//! A `random SEED COUNT` family holds tests `0..COUNT` of the random streams of `model-diff`
//! named by the `stream` axis (`plain`, `barriers`, `proxies`; default `plain`), so that they
//! run like any other suite.

use super::annot::FenceKind;
use super::build::{finish, render, systematic_name, Generated, Space, Variant};
use super::cycle::Cycle;
use super::enumerate::Pool;
use super::place::Place;
use super::pldi26;
use super::random;
use super::shapes;
use super::wide;
use super::GenError;
use crate::litmus::ast::Scope;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A parsed family file.
#[derive(Clone, Debug, Default)]
pub struct Family {
    /// The family's name (its folder).
    pub name: String,
    /// What the family is for.
    pub doc: String,
    /// The file it was read from.
    pub path: PathBuf,
    /// `(shape name, cycle pattern)` per `shape` line.
    pub shapes: Vec<(String, String)>,
    /// Directive name to its words, for the axis lines.
    axes: Vec<(String, Vec<String>)>,
    /// The cuda-litmus kernel, for a `pldi26` family.
    pub pldi26: Option<String>,
    /// Writer counts of widened IRIW tests, for an `iriw-wide` family.
    pub wide: Vec<usize>,
    /// The seed and the number of tests, for a `random` family.
    pub random: Option<(u64, u64)>,
    /// The words of the `cycles` line, for a family of enumerated cycles.
    pub cycles: Option<Vec<String>>,
}

const AXES: [&str; 11] = [
    "scope",
    "placement",
    "space",
    "tb",
    "variant",
    "fence_scope",
    "fence_variant",
    "between",
    "stream",
    "relax",
    "safe",
];

impl Family {
    /// Reads and parses a family file; errors name the file and line.
    pub fn read(path: &Path) -> Result<Family, GenError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| GenError::msg(format!("cannot read: {e}")).at(path, None))?;
        Family::parse(&text, path)
    }

    /// Parses family text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Family, GenError> {
        let mut f = Family {
            path: path.to_path_buf(),
            ..Family::default()
        };
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            f.directive(line).map_err(|e| e.at(path, Some(i + 1)))?;
        }
        if f.name.is_empty() {
            return Err(GenError::msg("no `family NAME` line").at(path, None));
        }
        let kinds = usize::from(!f.shapes.is_empty())
            + usize::from(f.pldi26.is_some())
            + usize::from(!f.wide.is_empty())
            + usize::from(f.random.is_some())
            + usize::from(f.cycles.is_some());
        if kinds != 1 {
            return Err(GenError::msg(
                "a family has `shape` lines, or one `pldi26`, `iriw-wide`, `random` or `cycles` line: one kind",
            )
            .at(path, None));
        }
        match f.pool() {
            Some(pool) => {
                pool.map_err(|e| e.at(path, None))?;
            }
            None if f.axes.iter().any(|(k, _)| k == "relax" || k == "safe") => {
                return Err(
                    GenError::msg("`relax` and `safe` go with a `cycles` line").at(path, None)
                )
            }
            None => {}
        }
        Ok(f)
    }

    fn directive(&mut self, line: &str) -> Result<(), GenError> {
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let words: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
        match word {
            "family" if words.len() == 1 && !rest.contains('/') && !rest.starts_with('.') => {
                self.name = rest.to_string()
            }
            "family" => return Err(GenError::msg("`family` takes one folder name")),
            "doc" => self.doc = rest.to_string(),
            "shape" if words.len() >= 3 => {
                let (name, cycle) = rest.split_once(char::is_whitespace).expect("three words");
                self.shapes
                    .push((name.to_string(), cycle.trim().to_string()));
            }
            "shape" => return Err(GenError::msg("`shape` takes a name and a cycle")),
            "pldi26" if words.len() == 1 => {
                pldi26::kernel(rest)?;
                self.pldi26 = Some(rest.to_string());
            }
            "pldi26" => return Err(GenError::msg("`pldi26` takes one kernel name")),
            "iriw-wide" => {
                self.wide = words
                    .iter()
                    .map(|w| {
                        w.parse().map_err(|_| {
                            GenError::msg(format!("iriw-wide `{w}`: expected a writer count"))
                        })
                    })
                    .collect::<Result<_, _>>()?;
            }
            "random" => self.random = Some(random_line(&words)?),
            "cycles" => self.cycles = Some(words),
            w if AXES.contains(&w) => {
                if words.is_empty() {
                    return Err(GenError::msg(format!("`{w}` lists nothing")));
                }
                if self.axes.iter().any(|(k, _)| k == w) {
                    return Err(GenError::msg(format!("`{w}` given twice")));
                }
                self.axes.push((w.to_string(), words));
            }
            w => {
                return Err(GenError::msg(format!(
                    "unknown directive `{w}` (expected family, doc, shape, pldi26, iriw-wide, random, cycles or an axis: {})",
                    AXES.join(", ")
                )))
            }
        }
        Ok(())
    }

    fn axis(&self, name: &str, default: &[&str]) -> Vec<String> {
        self.axes.iter().find(|(k, _)| k == name).map_or_else(
            || default.iter().map(|s| s.to_string()).collect(),
            |(_, v)| v.clone(),
        )
    }

    /// The edges and bounds of a `cycles` family.
    fn pool(&self) -> Option<Result<Pool, GenError>> {
        let words = self.cycles.as_ref()?;
        Some(Pool::parse(
            words,
            &self.axis("relax", &[]),
            &self.axis("safe", &[]),
        ))
    }

    /// `(shape name, cycle pattern)` of every shape: the `shape` lines, or the enumerated
    /// cycles under their shapes' names.
    fn shape_patterns(&self) -> Result<Vec<(String, String)>, GenError> {
        let Some(pool) = self.pool() else {
            return Ok(self.shapes.clone());
        };
        let cycles = pool?.cycles()?;
        Ok(cycles.iter().map(|c| (shapes::name(c), c.text())).collect())
    }

    /// Every variant of the family, in the order written, duplicates for the model dropped.
    pub fn variants(&self) -> Result<Vec<Variant>, GenError> {
        let at = |e: GenError| e.at(&self.path, None);
        match &self.pldi26 {
            Some(k) => self
                .pldi26_variants(pldi26::kernel(k).map_err(at)?)
                .map_err(at),
            None => self.cycle_variants().map_err(at),
        }
    }

    fn cycle_variants(&self) -> Result<Vec<Variant>, GenError> {
        let scopes = self
            .axis("scope", &["gpu"])
            .iter()
            .map(|s| scope_word(s))
            .collect::<Result<Vec<_>, _>>()?;
        let places = self
            .axis("placement", &["diffcta"])
            .iter()
            .map(|p| Place::parse(p))
            .collect::<Result<Vec<_>, _>>()?;
        let spaces = self
            .axis("space", &["global"])
            .iter()
            .map(|s| Space::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for (shape, pattern) in &self.shape_patterns()? {
            for text in expand(pattern)? {
                let base = Cycle::parse(&text)
                    .map_err(|e| GenError::msg(format!("shape {shape}: {e}")))?;
                for (&scope, place, &space) in product3(&scopes, &places, &spaces) {
                    let cycle = base.with_scopes(scope, scope);
                    let threads = match place.threads(cycle.threads()) {
                        // An enumeration holds cycles of every thread count; a grouping
                        // placement fits those of its own.
                        Err(_) if self.cycles.is_some() => continue,
                        r => r?,
                    };
                    if !space.reachable(&threads) {
                        continue;
                    }
                    let key = (
                        shape.clone(),
                        cycle.normalised(&threads).text(),
                        place.name.clone(),
                        space == Space::Shared,
                    );
                    if !seen.insert(key) {
                        continue;
                    }
                    let name = systematic_name(shape, &cycle, place, space);
                    let note = format!("family {}", self.name);
                    out.push(Variant {
                        name,
                        shape: shape.clone(),
                        cycle,
                        place: place.clone(),
                        space,
                        note,
                    });
                }
            }
        }
        Ok(out)
    }

    fn pldi26_variants(&self, k: &pldi26::Kernel) -> Result<Vec<Variant>, GenError> {
        let mut plain = self.axis("variant", &[]);
        let fence_scopes = self.axis("fence_scope", &[]);
        let fenced = self.axis("fence_variant", &[]);
        let mut combos: Vec<(String, String)> = plain
            .drain(..)
            .map(|v| ("NO_FENCE".to_string(), v))
            .collect();
        for fs in &fence_scopes {
            combos.extend(fenced.iter().map(|v| (fs.clone(), v.clone())));
        }
        let mut out = Vec::new();
        for tb in self.axis("tb", &[]) {
            let place = Place::parse(&tb)?;
            for s in self.axis("scope", &[]) {
                let scope = pldi26::scope(&s)?;
                for (fs, v) in &combos {
                    let cycle = Cycle::parse(&k.cycle_text(v, scope)?)?
                        .with_scopes(scope, pldi26::fence_scope(fs)?);
                    let name = k.name(&tb, &s, fs, v);
                    let note = format!("cuda-litmus kernels/{}.cu, {v}", k.file);
                    out.push(Variant {
                        name,
                        shape: k.prefix.to_string(),
                        cycle,
                        place: place.clone(),
                        space: Space::Global,
                        note,
                    });
                }
            }
        }
        Ok(out)
    }

    /// The family's tests, checked to have distinct names.
    pub fn generate(&self) -> Result<Vec<Generated>, GenError> {
        let out = if let Some((seed, count)) = self.random {
            self.random_tests(seed, count)
        } else if self.wide.is_empty() {
            self.variants()?
                .iter()
                .map(render)
                .collect::<Result<Vec<_>, _>>()
        } else {
            self.wide_tests()
        }
        .map_err(|e| e.at(&self.path, None))?;
        let mut names = BTreeSet::new();
        for g in &out {
            if !names.insert(g.test.name.clone()) {
                return Err(
                    GenError::msg(format!("two variants are named {}", g.test.name))
                        .at(&self.path, None),
                );
            }
        }
        Ok(out)
    }

    /// Tests `0..count` of each random stream of `seed` the `stream` axis names.
    fn random_tests(&self, seed: u64, count: u64) -> Result<Vec<Generated>, GenError> {
        let mut out = Vec::new();
        for stream in self.axis("stream", &["plain"]) {
            let Some(kind) = random::Stream::parse(&stream) else {
                return Err(GenError::msg(format!(
                    "stream `{stream}`: expected plain, barriers or proxies"
                )));
            };
            let word = match kind {
                random::Stream::Plain => "plain",
                random::Stream::Barriers => "barrier",
                random::Stream::Proxies => "proxy",
            };
            for i in 0..count {
                let note = format!(
                    "model-diff's {word} random test {i} of seed {seed}; family {}",
                    self.name
                );
                let text = random::test_text(seed, i, kind);
                out.push(finish(&random::test_name(seed, i, kind), &text, &note)?);
            }
        }
        Ok(out)
    }

    fn wide_tests(&self) -> Result<Vec<Generated>, GenError> {
        let mut out = Vec::new();
        for &n in &self.wide {
            for s in self.axis("scope", &["gpu"]) {
                for b in self.axis("between", &["none"]) {
                    let between = if b == "none" {
                        None
                    } else {
                        Some(FenceKind::parse(&b)?)
                    };
                    for p in self.axis("placement", &["diffcta"]) {
                        out.push(wide::iriw(n, scope_word(&s)?, between, &Place::parse(&p)?)?);
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The seed and count of a `random SEED COUNT` line.
fn random_line(words: &[String]) -> Result<(u64, u64), GenError> {
    let number = |w: &String| w.parse::<u64>().ok();
    match words {
        [seed, count] => match (number(seed), number(count)) {
            (Some(s), Some(c)) if c <= random::MAX_TESTS => Ok((s, c)),
            _ => Err(GenError::msg(format!(
                "random `{seed} {count}`: expected a seed and a count of at most {}",
                random::MAX_TESTS
            ))),
        },
        _ => Err(GenError::msg("`random` takes a seed and a count")),
    }
}

fn scope_word(s: &str) -> Result<Scope, GenError> {
    Scope::ALL
        .into_iter()
        .find(|x| x.as_str() == s)
        .ok_or_else(|| GenError::msg(format!("scope `{s}`: expected cta, cluster, gpu or sys")))
}

fn product3<'a, A, B, C>(a: &'a [A], b: &'a [B], c: &'a [C]) -> Vec<(&'a A, &'a B, &'a C)> {
    a.iter()
        .flat_map(|x| b.iter().flat_map(move |y| c.iter().map(move |z| (x, y, z))))
        .collect()
}

/// The most cycles one pattern may stand for: a bound so that a mistyped family cannot
/// exhaust the machine.
pub const MAX_EXPANSION: usize = 100_000;

/// Every cycle a pattern stands for, the first alternative group varying slowest.
pub fn expand(pattern: &str) -> Result<Vec<String>, GenError> {
    let mut out = vec![String::new()];
    for token in pattern.split_whitespace() {
        let alts: Vec<&str> = match token.strip_prefix('{') {
            Some(r) => r
                .strip_suffix('}')
                .ok_or_else(|| {
                    GenError::msg(format!("`{token}`: an alternative group ends with `}}`"))
                })?
                .split('|')
                .collect(),
            None => vec![token],
        };
        if out.len() * alts.len() > MAX_EXPANSION {
            return Err(GenError::msg(format!(
                "the pattern stands for more than {MAX_EXPANSION} cycles"
            )));
        }
        out = out
            .iter()
            .flat_map(|s| alts.iter().map(move |a| format!("{s} {a}")))
            .collect();
    }
    Ok(out.into_iter().map(|s| s.trim().to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_expand_in_order() {
        let e = expand("{wk|rlx} PodWW {rlx|rel} Rfe").unwrap();
        assert_eq!(
            e,
            [
                "wk PodWW rlx Rfe",
                "wk PodWW rel Rfe",
                "rlx PodWW rlx Rfe",
                "rlx PodWW rel Rfe"
            ]
        );
        assert!(expand("{wk|rlx PodWW").is_err());
    }

    #[test]
    fn variants_the_model_cannot_tell_apart_are_one_test() {
        let text = "family t\nshape MP rlx PodWW rel Rfe acq PodRR rlx Fre\nscope cta cluster gpu sys\nplacement samecta diffcta\n";
        let f = Family::parse(text, Path::new("family.txt")).unwrap();
        let names: Vec<String> = f.variants().unwrap().into_iter().map(|v| v.name).collect();
        // In one CTA every scope includes both threads; across CTAs without clusters cta and
        // cluster include one thread, gpu and sys both.
        assert_eq!(names.len(), 3, "{names:?}");
        assert!(names.contains(&"MP+rlx.cta_rel.cta+acq.cta_rlx.cta-samecta".to_string()));
        assert!(names.contains(&"MP+rlx.gpu_rel.gpu+acq.gpu_rlx.gpu-diffcta".to_string()));
    }

    #[test]
    fn proxy_accesses_declare_their_alias_and_fence() {
        let text = "family t\nshape MP wk PodWW rel Rfe acq Fence(proxy.texture)dRR tex Fre\nscope cta\nplacement samecta\n";
        let f = Family::parse(text, Path::new("family.txt")).unwrap();
        let g = f.generate().unwrap();
        assert_eq!(g.len(), 1);
        assert_eq!(
            g[0].test.name,
            "MP+wk_rel.cta+acq.cta_fence.proxy.texture_tex-samecta"
        );
        for line in [
            "x_tex @ texture aliases x;",
            "fence.proxy.texture",
            "tld.weak r1, x_tex",
        ] {
            assert!(g[0].text.contains(line), "{line}: {}", g[0].text);
        }
        let bad = "family t\nshape MP wk PodWW rel Rfe acq PodRR rlx Fre\nspace shared\nplacement samecta\n";
        let shared = "family t\nshape MP tex PodWW rel Rfe acq PodRR rlx Fre\n";
        assert!(Family::parse(bad, Path::new("f"))
            .unwrap()
            .generate()
            .is_ok());
        let e = Family::parse(shared, Path::new("f"))
            .unwrap()
            .generate()
            .unwrap_err();
        assert!(
            e.to_string().contains("`tex` cannot annotate a write"),
            "{e}"
        );
        let sur_shared = "family t\nshape MP wk PodWW rel Rfe acq PodRR sur Fre\nspace shared\nplacement samecta\n";
        let e = Family::parse(sur_shared, Path::new("f"))
            .unwrap()
            .generate()
            .unwrap_err();
        assert!(e.to_string().contains("global memory only"), "{e}");
    }

    #[test]
    fn bad_family_lines_name_file_and_line() {
        let e = Family::parse("family t\nshape MP PodWW Rfe\nsize 3\n", Path::new("f.txt"))
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("f.txt:3: unknown directive `size`"),
            "{e}"
        );
        let e = Family::parse("shape MP PodWW Rfe PodRR Fre\n", Path::new("f.txt")).unwrap_err();
        assert!(e.to_string().contains("no `family NAME` line"), "{e}");
        let e = |text: &str| {
            Family::parse(text, Path::new("f.txt"))
                .unwrap_err()
                .to_string()
        };
        let no_pool = e("family t\nshape MP PodWW Rfe PodRR Fre\nrelax PodWR\n");
        assert!(
            no_pool.contains("`relax` and `safe` go with a `cycles` line"),
            "{no_pool}"
        );
        let both = e("family t\nshape MP PodWW Rfe PodRR Fre\ncycles 4\nrelax PodWR\n");
        assert!(both.contains("one kind"), "{both}");
        let bad = e("family t\ncycles 4\nrelax PodWR Bogus\n");
        assert!(bad.starts_with("f.txt: `Bogus` is not an edge"), "{bad}");
    }

    #[test]
    fn a_cycles_family_holds_each_enumerated_cycle_in_each_placement_that_fits() {
        let text = "family t\ncycles 6 4\nrelax PodRR\nsafe Rfe Fre\n\
                    placement diffcta TB_01_23 TB_0_1\n";
        let f = Family::parse(text, Path::new("f.txt")).unwrap();
        let names: Vec<String> = f.variants().unwrap().into_iter().map(|v| v.name).collect();
        assert_eq!(
            names,
            [
                "IRIW+rlx.gpu+rlx.gpu_rlx.gpu+rlx.gpu+rlx.gpu_rlx.gpu-diffcta",
                "IRIW+rlx.gpu+rlx.gpu_rlx.gpu+rlx.gpu+rlx.gpu_rlx.gpu-TB_01_23"
            ]
        );
    }

    #[test]
    fn a_random_family_holds_the_streams_it_names() {
        let f = Family::parse(
            "family r\nrandom 4 3\nstream barriers plain\n",
            Path::new("f.txt"),
        )
        .unwrap();
        let names: Vec<String> = f
            .generate()
            .unwrap()
            .into_iter()
            .map(|g| g.test.name)
            .collect();
        assert_eq!(names, ["RB4-0", "RB4-1", "RB4-2", "R4-0", "R4-1", "R4-2"]);
        for (text, line) in [
            ("random 4\n", 2),
            ("random 4 x\n", 2),
            ("random 4 3\nstream odd\n", 0),
            ("random 4 3\nshape MP PodWW Rfe PodRR Fre\n", 0),
        ] {
            let e = Family::parse(&format!("family r\n{text}"), Path::new("f.txt"))
                .and_then(|f| f.generate())
                .unwrap_err()
                .to_string();
            let at = if line == 0 {
                "f.txt: ".to_string()
            } else {
                format!("f.txt:{line}: ")
            };
            assert!(e.starts_with(&at), "{text:?}: {e}");
        }
    }
}
