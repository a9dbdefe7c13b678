//! The layering the README's Architecture section describes, read from the source: the modules
//! of one directory (the crate's top-level modules, codegen's parts, ...) use each other without
//! a cycle, so each can be read knowing only those below it, and `litmus`, the bottom layer,
//! uses nothing above it (only leaves such as `text`).
//!
//! A reference is a path in code (comments are skipped) starting with `crate::`, `super::` or
//! `self::`, `use` groups expanded; a name a directory module re-exports from a child counts as
//! that child.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A source file and the module path it defines (`["codegen", "lower", "emitters"]`).
struct Source {
    module: Vec<String>,
    text: String,
}

fn sources(dir: &Path, module: &[String], out: &mut Vec<Source>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            let mut m = module.to_vec();
            m.push(stem);
            sources(&p, &m, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            let mut m = module.to_vec();
            if !matches!(stem.as_str(), "mod" | "lib" | "main") {
                m.push(stem);
            }
            out.push(Source {
                module: m,
                text: strip_comments(&std::fs::read_to_string(&p).unwrap()),
            });
        }
    }
}

/// The text without `//` comments (string literals that contain `//` are kept whole).
fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut in_str = false;
        let mut cut = line.len();
        let b = line.as_bytes();
        for i in 0..b.len() {
            match b[i] {
                b'"' if i == 0 || b[i - 1] != b'\\' => in_str = !in_str,
                b'/' if !in_str && b.get(i + 1) == Some(&b'/') => {
                    cut = i;
                    break;
                }
                _ => {}
            }
        }
        out.push_str(&line[..cut]);
        out.push('\n');
    }
    out
}

fn ident_at(s: &[u8], mut i: usize) -> (String, usize) {
    let start = i;
    while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'_') {
        i += 1;
    }
    (String::from_utf8_lossy(&s[start..i]).into_owned(), i)
}

/// Parses the path starting at `i` (after its first segment and `::`), appending every path
/// it names (groups expanded) to `out`, each prefixed by `prefix`.
fn parse_path(s: &[u8], mut i: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    while i < s.len() && s[i] == b' ' {
        i += 1;
    }
    if i < s.len() && s[i] == b'{' {
        i += 1;
        loop {
            while i < s.len() && matches!(s[i], b' ' | b'\n' | b',') {
                i += 1;
            }
            if i >= s.len() || s[i] == b'}' {
                return i + 1;
            }
            let (name, j) = ident_at(s, i);
            if name.is_empty() {
                return j + 1;
            }
            let mut p = prefix.clone();
            if name != "self" {
                p.push(name);
            }
            i = if s[j..].starts_with(b"::") {
                parse_path(s, j + 2, p, out)
            } else {
                out.push(p);
                j
            };
        }
    }
    let (name, j) = ident_at(s, i);
    let mut p = prefix;
    if !name.is_empty() {
        p.push(name);
    }
    if s[j..].starts_with(b"::") {
        return parse_path(s, j + 2, p, out);
    }
    out.push(p);
    j
}

/// Every absolute path the file at `module` names.
fn references(src: &Source) -> Vec<Vec<String>> {
    let s = src.text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let boundary =
            i == 0 || !(s[i - 1].is_ascii_alphanumeric() || matches!(s[i - 1], b'_' | b':'));
        if !boundary {
            i += 1;
            continue;
        }
        let (word, j) = ident_at(s, i);
        if matches!(word.as_str(), "crate" | "super" | "self") && s[j..].starts_with(b"::") {
            // `super::super::x`: resolve relative to the file's module.
            let mut base: Vec<String> = match word.as_str() {
                "crate" => Vec::new(),
                "super" => src.module[..src.module.len().saturating_sub(1)].to_vec(),
                _ => src.module.clone(),
            };
            let mut k = j + 2;
            loop {
                let (w, e) = ident_at(s, k);
                if w == "super" && s[e..].starts_with(b"::") {
                    base.pop();
                    k = e + 2;
                } else {
                    break;
                }
            }
            let mut found = Vec::new();
            i = parse_path(s, k, base, &mut found).max(i + 1);
            out.extend(found);
        } else {
            i = j.max(i + 1);
        }
    }
    out
}

/// Per directory module, the child a name it re-exports (or uses) comes from.
fn reexports(
    all: &[Source],
    dir: &[String],
    children: &BTreeSet<String>,
) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let Some(src) = all.iter().find(|s| s.module == dir) else {
        return map;
    };
    for path in references(src) {
        // `use child::item` in the directory's own file resolves to `dir::child::item`.
        if path.len() == dir.len() + 2
            && path.starts_with(dir)
            && children.contains(&path[dir.len()])
        {
            map.insert(path[dir.len() + 1].clone(), path[dir.len()].clone());
        }
    }
    let re = src.text.as_bytes();
    let mut i = 0;
    while let Some(p) = src.text[i..].find("use ") {
        let at = i + p + 4;
        let (first, j) = ident_at(re, at);
        if children.contains(&first) && re[j..].starts_with(b"::") {
            let mut found = Vec::new();
            parse_path(re, j + 2, vec![first.clone()], &mut found);
            for f in found {
                if let Some(item) = f.last() {
                    map.insert(item.clone(), first.clone());
                }
            }
        }
        i = at;
    }
    map
}

/// The dependency graph among the children of directory module `dir`.
fn graph(all: &[Source], dir: &[String]) -> BTreeMap<String, BTreeSet<String>> {
    let children: BTreeSet<String> = all
        .iter()
        .filter(|s| s.module.len() > dir.len() && s.module.starts_with(dir))
        .map(|s| s.module[dir.len()].clone())
        .collect();
    let via = reexports(all, dir, &children);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in all
        .iter()
        .filter(|s| s.module.len() > dir.len() && s.module.starts_with(dir))
    {
        let from = s.module[dir.len()].clone();
        for path in references(s) {
            if path.len() <= dir.len() || !path.starts_with(dir) {
                continue;
            }
            let head = &path[dir.len()];
            let to = if children.contains(head) {
                head.clone()
            } else if let Some(c) = via.get(head) {
                c.clone()
            } else {
                continue;
            };
            if to != from {
                g.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    g
}

/// A cycle of `g`, if it has one.
fn cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(p) = stack.iter().position(|x| x == n) {
            let mut c = stack[p..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|n| visit(n, g, &mut Vec::new(), &mut done))
}

fn crate_sources() -> Vec<Source> {
    let mut all = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut all,
    );
    all
}

fn module(path: &str) -> Vec<String> {
    path.split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn the_reference_reader_expands_groups_and_resolves_super() {
    let src = Source {
        module: module("codegen::lower::emitters"),
        text: strip_comments(
            "use super::{args::memory_of, Ctx};\nuse crate::codegen::{self, ptx::{POp, Src}};\n// crate::model::x\nlet k = super::super::layout::WARP;\n",
        ),
    };
    let got: Vec<String> = references(&src).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        got,
        [
            "codegen::lower::args::memory_of",
            "codegen::lower::Ctx",
            "codegen",
            "codegen::ptx::POp",
            "codegen::ptx::Src",
            "codegen::layout::WARP",
        ]
    );
    let g: BTreeMap<String, BTreeSet<String>> = [("a", "b"), ("b", "c"), ("c", "a")]
        .iter()
        .map(|(x, y)| (x.to_string(), BTreeSet::from([y.to_string()])))
        .collect();
    assert_eq!(cycle(&g).map(|c| c.len()), Some(4));
}

/// Directory modules whose children still form a cycle: none.
const CYCLES_LEFT: [&str; 0] = [];

#[test]
fn no_import_cycle_among_the_modules_of_any_directory() {
    let all = crate_sources();
    let mut dirs: Vec<Vec<String>> = Vec::new();
    for s in &all {
        for n in 0..s.module.len() {
            let d = s.module[..n].to_vec();
            let exempt = d.first().is_some_and(|m| CYCLES_LEFT.contains(&m.as_str()));
            if !exempt && !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    for d in [
        "",
        "codegen",
        "codegen::layout",
        "codegen::lower",
        "codegen::emit",
        "litmus",
        "model",
        "model::relations",
        "results",
    ] {
        assert!(dirs.contains(&module(d)), "{d} not checked");
    }
    for d in &dirs {
        let g = graph(&all, d);
        assert!(
            cycle(&g).is_none(),
            "import cycle in crate::{}: {:?}",
            d.join("::"),
            cycle(&g)
        );
    }
    // The graphs are read, not empty: the top level and codegen have their layers.
    assert!(graph(&all, &module(""))
        .get("app")
        .is_some_and(|e| e.len() >= 5));
    let codegen = graph(&all, &module("codegen"));
    assert!(codegen.get("emit").is_some_and(|e| e.contains("lower")));
    assert!(codegen.get("lower").is_some_and(|e| e.contains("layout")));
    // The model in layers: the search decides the axioms over the relations and reports to a
    // sink it defines, so it knows nothing of the collector or the walk over combinations.
    let model = graph(&all, &module("model"));
    let uses = |a: &str, b: &str| model.get(a).is_some_and(|e| e.contains(b));
    assert!(uses("axioms", "relations") && uses("search", "axioms"));
    assert!(uses("enumerate", "search") && uses("collect", "search"));
    assert!(!uses("search", "collect") && !uses("search", "enumerate"));
}

#[test]
fn litmus_is_the_bottom_layer() {
    // It may use only leaves such as `text`, which use nothing of the crate.
    let all = crate_sources();
    let g = graph(&all, &module(""));
    for m in g.get("litmus").into_iter().flatten() {
        assert!(
            !g.contains_key(m),
            "litmus uses {m}, which uses {:?}",
            g.get(m)
        );
    }
}

#[test]
fn the_generator_writes_tests_from_litmus_alone() {
    // gen turns cycles into `Test`s; it must not depend on the model it is checked against.
    // Besides litmus it may use leaves such as `rng`, which use nothing of the crate.
    let all = crate_sources();
    let g = graph(&all, &module(""));
    let used = g.get("gen").cloned().unwrap_or_default();
    assert!(used.contains("litmus"), "gen's imports not read: {used:?}");
    assert!(
        used.iter().all(|m| m == "litmus" || !g.contains_key(m)),
        "gen uses {used:?}"
    );
}

#[test]
fn unsafe_code_is_denied_outside_the_driver_and_the_signal_handler() {
    // The crate root denies it, so the compiler refuses `unsafe` wherever no `allow` lifts the
    // lint; the allows are then the whole list of places that may use it.
    let root =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    assert!(root.contains("#![deny(unsafe_code)]"));
    let allowed: Vec<String> = crate_sources()
        .iter()
        .filter(|s| s.text.contains("allow(unsafe_code)"))
        .map(|s| s.module.join("::"))
        .collect();
    assert_eq!(allowed, ["app::interrupt", "harness"]);
    let harness = crate_sources()
        .into_iter()
        .find(|s| s.module == module("harness"))
        .unwrap();
    let at = harness.text.find("allow(unsafe_code)").unwrap();
    assert!(harness.text[at..]
        .trim_start_matches("allow(unsafe_code)]")
        .trim_start()
        .starts_with("pub mod cuda;"));
}
