//! Refusal before launch of tests whose hardware barriers never complete: of `litmus/` and
//! the published corpus, exactly the corpus's crossed named barriers (`PC-bar-sync-sync-3`,
//! `-4`) are refused, each with the threads left waiting, and the hanging barrier quorums of
//! `litmus/barrier-quorum`, each with its quorum and the threads that arrive.

mod common;

use ptx_litmus::codegen::deadlock;

#[test]
fn only_crossed_barriers_and_unmet_quorums_are_refused() {
    let mut refused = Vec::new();
    for (path, test, _) in common::all_tests() {
        if let Err((rule, why)) = deadlock::check(&test) {
            assert_eq!(rule, deadlock::Rule::NeverCompletes, "{}", path.display());
            let name = common::name(&path);
            if name.ends_with("-hang.litmus") {
                assert!(
                    why.contains("needs") && why.contains("threads per phase"),
                    "{why}"
                );
            } else {
                assert!(why.contains("P0 waits at bar.cta.sync 0"), "{why}");
                assert!(why.contains("P1 waits at bar.cta.sync 1"), "{why}");
            }
            refused.push(name);
        }
    }
    refused.sort();
    let hangs = [
        "MP+bar.q4of3-hang.litmus",
        "SB+bar.q2-inst1+inst2-hang.litmus",
    ];
    if common::corpus().is_some() {
        let mut expected = vec!["PC-bar-sync-sync-3.litmus", "PC-bar-sync-sync-4.litmus"];
        expected.extend(hangs);
        expected.sort();
        assert_eq!(refused, expected);
    } else {
        eprintln!("../shared/corpus is absent: checked the refusals of litmus/ only");
        assert_eq!(refused, hangs);
    }
}
