//! Every test of the third-party Dat3M PTX corpus parses, prints back to itself, and keeps its
//! hash; reformatting keeps the hash and a change of meaning alters it.

mod common;

use ptx_litmus::litmus::{self, ast, ast::Test};
use std::path::{Path, PathBuf};

/// The corpus files, or `None` (after saying why) when the corpus is absent outside CI.
fn corpus() -> Option<Vec<PathBuf>> {
    let Some(dir) = common::corpus() else {
        let msg = "skipping: the corpus folder ../shared/corpus/dat3m/litmus/PTX is absent";
        if std::env::var_os("CI").is_some() {
            panic!("{msg} (CI is set, so the corpus must be there)");
        }
        eprintln!("{msg}");
        return None;
    };
    Some(litmus::discover(&[dir]).expect("the corpus folder can be listed"))
}

fn parse_text(text: &str) -> Test {
    litmus::parse(text, Path::new("mem.litmus")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn every_corpus_test_parses_and_round_trips() {
    let Some(files) = corpus() else { return };
    assert_eq!(
        files.len(),
        227,
        "the corpus README counts 227 .litmus files"
    );
    let mut failures = Vec::new();
    for f in &files {
        let test = match litmus::parse_file(f) {
            Ok(t) => t,
            Err(e) => {
                failures.push(e.to_string());
                continue;
            }
        };
        let printed = litmus::print(&test);
        let again = parse_text(&printed);
        assert_eq!(again, test, "parse(print(t)) != t for {}", f.display());
        assert_eq!(
            litmus::print(&again),
            printed,
            "print is not stable for {}",
            f.display()
        );
        assert_eq!(litmus::hash(&again), litmus::hash(&test));
    }
    assert!(
        failures.is_empty(),
        "{} corpus files failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The 227 corpus tests are 227 different tests, so a hash that ignored something meaningful
/// (an instruction, a scope, a placement) would show up as a collision here.
#[test]
fn corpus_hashes_are_distinct() {
    let Some(files) = corpus() else { return };
    let mut seen: std::collections::BTreeMap<String, PathBuf> = Default::default();
    for f in &files {
        let h = litmus::hash(&litmus::parse_file(f).unwrap());
        assert_eq!(h.len(), 16);
        assert!(h
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        if let Some(other) = seen.insert(h.clone(), f.clone()) {
            panic!("{} and {} share hash {h}", other.display(), f.display());
        }
    }
}

/// Each corpus test reprinted with other spacing, comments, another name and doc keeps its hash;
/// swapping two instructions or changing the quantifier alters it.
#[test]
fn reformatting_keeps_the_hash_and_a_semantic_change_alters_it() {
    let Some(files) = corpus() else { return };
    for f in &files {
        let original = litmus::parse_file(f).unwrap();
        let printed = litmus::print(&original);
        let (_, rest) = printed.split_once('{').unwrap();
        let respaced = format!(
            "PTX another-name (* renamed *) \"new doc\"\n{{{}",
            rest.replace(", ", " ,\t")
                .replace(" | ", "|")
                .replace(" ;", "; (* c *)")
                .replace(" == ", "=")
        );
        let reparsed = parse_text(&respaced);
        assert_eq!(reparsed.name, "another-name");
        assert_eq!(
            litmus::hash(&reparsed),
            litmus::hash(&original),
            "{}",
            f.display()
        );

        let mut other = original.clone();
        other.condition.quantifier = match other.condition.quantifier {
            ast::Quantifier::Exists => ast::Quantifier::Forall,
            _ => ast::Quantifier::Exists,
        };
        assert_ne!(litmus::hash(&other), litmus::hash(&original));
        if let Some(t) = original
            .threads
            .iter()
            .find(|t| t.body.len() >= 2 && t.body[0] != t.body[1])
        {
            let mut swapped = original.clone();
            swapped.threads[t.id].body.swap(0, 1);
            assert_ne!(
                litmus::hash(&swapped),
                litmus::hash(&original),
                "{}",
                f.display()
            );
        }
    }
}

/// The same test written two ways: implicit vs explicit declarations, declaration order,
/// `=` vs `==`, bracketed addresses, spelling variants of instructions.
#[test]
fn equivalent_spellings_share_a_hash() {
    let a = parse_text(
        "PTX MP \"doc\"\n{ x=0; y=0; P1:r0=0; }\n\
         P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n\
         st.weak x, 1 | ld.acquire.gpu r0, y ;\n\
         st.release.gpu y, 1 | ld r1, x ;\n\
         bar.sync 0 | atom.add.u32 r2, x, 1 ;\n\
         exists (P1:r0 == 1 /\\ P1:r1 == 0)",
    );
    let b = parse_text(
        "PTX MP-renamed\n{ y = 0; }\n\
         P0@gpu 0,cta 0 | P1@cta 1 ;\n\
         st.weak.global.u32 [x], 1 | ld.acquire.gpu.b32 r0, [y] ;\n\
         st.release.gpu y, 1 | ld.weak r1, x ;\n\
         bar.cta.sync 0 | atom.relaxed.add r2, x, 1 ;\n\
         exists (P1:r0 = 1 /\\ P1:r1 = 0)",
    );
    assert_eq!(litmus::hash(&a), litmus::hash(&b));
    let c = parse_text(
        "PTX MP\n{ }\n\
         P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n\
         st.weak x, 1 | ld.acquire.gpu r0, y ;\n\
         st.release.gpu y, 1 | ld r1, x ;\n\
         bar.sync 0 | atom.add r2, x, 2 ;\n\
         exists (P1:r0 == 1 /\\ P1:r1 == 0)",
    );
    assert_ne!(
        litmus::hash(&a),
        litmus::hash(&c),
        "a different atom operand must change the hash"
    );
}

/// The project's own tests under `litmus/` parse and round-trip too, and their file names are
/// their test names.
#[test]
fn every_project_test_parses_and_round_trips() {
    let files = litmus::discover(&[common::root().join("litmus")]).expect("litmus/ exists");
    let mut failures = Vec::new();
    for (f, result) in litmus::load(&files) {
        match result {
            Ok(test) => {
                assert_eq!(parse_text(&litmus::print(&test)), test, "{}", f.display());
                let stem = f.file_stem().unwrap().to_string_lossy();
                if test.name != stem {
                    failures.push(format!(
                        "{}: test name {} differs from the file name",
                        f.display(),
                        test.name
                    ));
                }
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
