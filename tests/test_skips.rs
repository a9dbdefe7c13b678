//! The suite's own rule for a check that cannot run here (no GPU, no Dat3M cat files, no
//! chromium, ...): it says `NOT CHECKED` through `common::not_checked`, which writes past the
//! test harness's capture. A `println!`/`eprintln!` saying it instead would show only when the
//! test fails, so the test would pass silently; this test finds any.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The byte offsets in `text` of each `println!`/`eprintln!` whose message (a literal on its
/// line or the next) says that a check was skipped.
fn captured_skips(text: &str) -> Vec<usize> {
    text.match_indices("println!(")
        .filter(|(at, m)| {
            let rest = text[at + m.len()..].trim_start();
            let literal = rest.strip_prefix('"').unwrap_or("");
            let said = literal[..literal.find('"').unwrap_or(0)].to_lowercase();
            [
                "skipping",
                "skipped",
                "not checked",
                "not compared",
                "nothing checked",
            ]
            .iter()
            .any(|w| said.contains(w))
        })
        .map(|(at, _)| at)
        .collect()
}

#[test]
fn a_skipped_check_says_not_checked_past_the_capture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("test_skips.rs")) {
        let text = std::fs::read_to_string(f).unwrap();
        for at in captured_skips(&text) {
            let line = text[..at].matches('\n').count() + 1;
            found.push(format!("{}:{line}", f.display()));
        }
    }
    assert!(files.len() > 50, "only {} test sources", files.len());
    assert!(
        found.is_empty(),
        "use common::not_checked instead:\n{}",
        found.join("\n")
    );
    // The rule itself finds what it is about, on one line or two.
    assert_eq!(
        captured_skips(r#"eprintln!("skipping: no `kill`");"#).len(),
        1
    );
    assert_eq!(
        captured_skips("println!(\n    \"NOT CHECKED: no GPU\");").len(),
        1
    );
    assert!(captured_skips(r#"eprintln!("{csv}: 226 of 226 verdicts reproduced");"#).is_empty());
}
