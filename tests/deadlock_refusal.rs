//! Refusal before launch of tests whose hardware barriers never complete: of `litmus/` and
//! the published corpus, exactly the corpus's crossed named barriers (`PC-bar-sync-sync-3`,
//! `-4`) are refused, each with the threads left waiting.

mod common;

use ptx_litmus::codegen::deadlock;

#[test]
fn only_the_crossed_barriers_of_the_corpus_are_refused() {
    let mut refused = Vec::new();
    for (path, test, _) in common::all_tests() {
        if let Err((rule, why)) = deadlock::check(&test) {
            assert_eq!(rule, deadlock::Rule::NeverCompletes, "{}", path.display());
            assert!(why.contains("P0 waits at bar.cta.sync 0"), "{why}");
            assert!(why.contains("P1 waits at bar.cta.sync 1"), "{why}");
            refused.push(common::name(&path));
        }
    }
    refused.sort();
    if common::corpus().is_some() {
        assert_eq!(
            refused,
            ["PC-bar-sync-sync-3.litmus", "PC-bar-sync-sync-4.litmus"]
        );
    } else {
        eprintln!("../shared/corpus is absent: checked that litmus/ has no refusal");
        assert!(refused.is_empty(), "{refused:?}");
    }
}
