//! Semantic and syntax errors through the library: each names the offending token's line and
//! column and its cause.

use ptx_litmus::litmus::{self, Cause};
use std::path::Path;

/// Parses `src` and checks the error's `line:col` and that its message contains `cause`.
fn error_at(src: &str, line: usize, column: usize, cause: &str) {
    let e = litmus::parse(src, Path::new("e.litmus")).expect_err(src);
    let shown = e.to_string();
    assert_eq!((e.line, e.column), (line, column), "{shown}");
    assert!(
        shown.starts_with(&format!("e.litmus:{line}:{column}: ")),
        "{shown}"
    );
    assert!(shown.contains(cause), "expected `{cause}` in {shown}");
}

#[test]
fn alias_to_nothing_and_alias_cycle() {
    error_at(
        "PTX a\n{ x=0;\n  s @ surface aliases z; }\n P0 ;\n sust.weak s, 1 ;\nexists (true)",
        3,
        23,
        "`s` aliases `z`, which is not declared",
    );
    error_at(
        "PTX a\n{ a @ generic aliases b; b @ generic aliases a; }\n P0 ;\n ld.weak r0, a ;\nexists (true)",
        2,
        23,
        "alias cycle: a -> b -> a",
    );
}

#[test]
fn mixing_clustered_and_unclustered_headers() {
    error_at(
        "PTX m\n{}\n P0@cta 0,cluster 0 | P1@cta 1 ;\n ld.weak r0, x | ld.weak r0, x ;\nexists (true)",
        3,
        23,
        "P0 names a cluster but P1 does not",
    );
}

#[test]
fn shared_memory_reached_from_outside_its_cluster() {
    let src = "PTX s\n{ d @ shared(P0) = 0; }\n P0@cta 0,cluster 0 | P1@cta 1,cluster 0 | P2@cta 2,cluster 1 ;\n st.weak d, 1 | ld.weak r0, d | ld.weak r0, d ;\nexists (true)";
    error_at(
        src,
        4,
        45,
        "P2 accesses `d`, shared memory of P0's CTA; only threads of P0's cluster can reach it",
    );
    let unclustered = "PTX s\n{ d @ shared(P0) = 0; }\n P0 | P1 ;\n st.weak d, 1 | ld.weak r0, d ;\nexists (true)";
    error_at(
        unclustered,
        4,
        29,
        "without clusters only threads of P0's CTA can reach it",
    );
    let alias = "PTX s\n{ d @ shared(P1) = 0; g @ generic aliases d; }\n P0 | P1 ;\n st.weak g, 1 | ld.weak r0, d ;\nexists (true)";
    error_at(alias, 4, 10, "P0 accesses `g`, shared memory of P1's CTA");
}

#[test]
fn state_space_qualifier_that_contradicts_the_declaration() {
    let two = "PTX q\n{ d @ shared(P0) = 0; x = 0; }\n P0@cta 0,cluster 0 | P1@cta 1,cluster 0 ;\n";
    error_at(
        &format!("{two} st.global d, 1 | ld.weak r0, x ;\nexists (true)"),
        4,
        12,
        "`.global` access to `d`",
    );
    error_at(
        &format!("{two} st.shared x, 1 | ld.weak r0, x ;\nexists (true)"),
        4,
        12,
        "shared-memory access to `x`, which is global",
    );
    error_at(
        &format!("{two} st.weak d, 1 | ld.shared::cta r0, d ;\nexists (true)"),
        4,
        36,
        "`.shared::cta` access to `d` from P1",
    );
    let ok = format!("{two} st.shared::cta d, 1 | ld.shared::cluster r0, d ;\nexists (true)");
    litmus::parse(&ok, Path::new("ok.litmus")).unwrap();
}

#[test]
fn thread_references_outside_the_test() {
    error_at(
        "PTX r\n{ P3:r0 = 1; }\n P0 ;\n ld.weak r0, x ;\nexists (true)",
        2,
        3,
        "P3 is not a thread of this test",
    );
    error_at(
        "PTX r\n{ d @ shared(P4) = 0; }\n P0 ;\n ld.weak r0, x ;\nexists (true)",
        2,
        14,
        "P4 is not a thread",
    );
    error_at(
        "PTX r\n{}\n P0 ;\n ld.weak r0, x ;\nlocations [P1:r0;]\nexists (true)",
        5,
        12,
        "P1 is not a thread",
    );
    error_at(
        "PTX r\n{}\n P0 ;\n ld.weak r0, x ;\nexists (1:r0 = 1)",
        5,
        9,
        "P1 is not a thread",
    );
}

#[test]
fn labels_defined_twice_or_missing_in_this_thread() {
    error_at(
        "PTX l\n{}\n P0 | P1 ;\n L: | goto L ;\nexists (true)",
        4,
        12,
        "branch to label `L`, which P1 does not define",
    );
    error_at(
        "PTX l\n{}\n P0 ;\n L: ;\n L: ;\nexists (true)",
        5,
        2,
        "label `L` is defined twice in P0 (first at 4:2)",
    );
}

#[test]
fn duplicate_declarations_and_header_keys() {
    error_at(
        "PTX d\n{ x=0; x=1; }\n P0 ;\n ld.weak r0, x ;\nexists (true)",
        2,
        8,
        "location `x` is declared twice",
    );
    error_at(
        "PTX d\n{ P0:r0=0; P0:r0=1; }\n P0 ;\n ld.weak r0, x ;\nexists (true)",
        2,
        12,
        "P0:r0 is initialised twice (first at 2:3)",
    );
    error_at(
        "PTX d\n{}\n P0@cta 0,cta 1 ;\n ld.weak r0, x ;\nexists (true)",
        3,
        11,
        "`cta` is given twice",
    );
}

#[test]
fn grammar_errors_say_what_was_expected() {
    let cases: [(&str, usize, usize, &str, &str); 8] = [
        ("X86 t\n{}", 1, 1, "`X86`", "`PTX`"),
        (
            "PTX t\n{ x=0 }\n P0 | P1 ;\n ld.weak r0, x ;\nexists (true)",
            4,
            16,
            "`;`",
            "`|` and the cell of P1",
        ),
        (
            "PTX t\n{}\n P0 ;\n ld.weak r0, x | ;\nexists (true)",
            4,
            16,
            "`|`",
            "`;` ending the row",
        ),
        (
            "PTX t\n{}\n P0 ;\n ld.weak.gpu r0, x ;\nexists (true)",
            4,
            9,
            "`.gpu` in `ld.weak.gpu`",
            "a state space",
        ),
        (
            "PTX t\n{}\n P0 ;\n atom.gpu r0, x, 1 ;\nexists (true)",
            4,
            10,
            "the end of `atom.gpu`",
            "an operation (`.add`",
        ),
        (
            "PTX t\n{}\n P0 ;\n st.weak x 1 ;\nexists (true)",
            4,
            12,
            "`1`",
            "`,` and the next operand",
        ),
        (
            "PTX t\n{}\n P0 ;\n ld.weak r0, x ;\nexists (P0:r0 == 1",
            5,
            19,
            "end of file",
            "`)`",
        ),
        (
            "PTX t\n\"open\n{}",
            3,
            3,
            "end of file",
            "`\"` closing the string opened at 2:1",
        ),
    ];
    for (src, line, column, found, expected) in cases {
        let e = litmus::parse(src, Path::new("e.litmus")).expect_err(src);
        assert_eq!((e.line, e.column), (line, column), "{e}");
        assert_eq!(e.found(), Some(found));
        match &e.cause {
            Cause::Syntax {
                found: f,
                expected: x,
            } => {
                assert_eq!(f, found, "{e}");
                assert!(x.contains(expected), "{e}");
            }
            other => panic!("{other:?} for {src}"),
        }
    }
}

#[test]
fn unreadable_file_names_the_path() {
    let e = litmus::parse_file(Path::new("no/such/test.litmus")).unwrap_err();
    assert!(matches!(e.cause, Cause::Io(_)));
    assert!(
        e.to_string()
            .starts_with("no/such/test.litmus: cannot read"),
        "{e}"
    );
    let e = litmus::discover(&["no/such/dir".into()]).unwrap_err();
    assert!(e.to_string().starts_with("no/such/dir: cannot open"), "{e}");
}

/// Whether `pos` lies inside `text` or just past its end.
fn inside(text: &str, line: usize, column: usize) -> bool {
    let lines: Vec<&str> = text.split('\n').collect();
    line >= 1 && line <= lines.len() && column >= 1 && column <= lines[line - 1].chars().count() + 1
}

/// Every prefix of every project test, and deterministic one-character mutations of it, either
/// parse or fail with a position inside the text: the parser never panics and never points
/// outside the file.
#[test]
fn truncated_and_mutated_tests_fail_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus");
    let files = litmus::discover(&[dir]).unwrap();
    assert!(!files.is_empty());
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize % n.max(1)
    };
    let mut truncated_errors = 0;
    for f in files.iter().take(60) {
        let full = std::fs::read_to_string(f).unwrap();
        let cuts: Vec<usize> = full.char_indices().map(|(i, _)| i).collect();
        for &cut in &cuts {
            let text = &full[..cut];
            if let Err(e) = litmus::parse(text, f) {
                assert!(
                    inside(text, e.line, e.column),
                    "{e} outside a text of {} bytes",
                    text.len()
                );
                truncated_errors += 1;
            }
        }
        for _ in 0..40 {
            let mut chars: Vec<char> = full.chars().collect();
            let at = next(chars.len());
            match next(3) {
                0 => {
                    chars.remove(at);
                }
                1 => chars.insert(
                    at,
                    ['|', ';', '.', '(', '"', 'P', '9', '-', '{', ':'][next(10)],
                ),
                _ => chars[at] = ['x', ' ', '\n', ',', '*', '/', '\\', '~', '@', '='][next(10)],
            }
            let text: String = chars.into_iter().collect();
            if let Err(e) = litmus::parse(&text, f) {
                assert!(inside(&text, e.line, e.column), "{e}");
            }
        }
    }
    assert!(
        truncated_errors > 1000,
        "only {truncated_errors} truncations failed"
    );
}

#[test]
fn barrier_with_a_fourth_operand() {
    // Dat3M's form takes instance, resource and quorum; a fourth operand is an error.
    error_at(
        "PTX b\n{}\n P0 ;\n bar.cta.sync 1, 1, 3, 4 ;\nexists (true)",
        4,
        24,
        "takes at most 2 operands after the barrier id",
    );
}
