//! Warnings about a test that parses but likely says something other than its author meant:
//! a condition (or `locations` clause) observing a register no instruction of its thread
//! writes, which then only ever holds its initial value.

use super::ast::{Term, Test};

/// The warnings of `test`, one sentence each, in the order the observed terms are written.
pub fn warnings(test: &Test) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for term in test.observed_terms() {
        let Term::Reg { thread, reg } = term else {
            continue;
        };
        let Some(body) = test.threads.get(*thread).map(|t| &t.body) else {
            continue;
        };
        if body.iter().any(|i| i.written() == Some(reg)) {
            continue;
        }
        let init = test
            .reg_init
            .iter()
            .find(|ri| ri.thread == *thread && &ri.reg == reg)
            .map_or(0, |ri| ri.value);
        let w = format!(
            "the final state observes P{thread}:{reg}, which no instruction of P{thread} \
             writes: it always holds its initial value {init}"
        );
        if !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus::parse;
    use std::path::Path;

    fn test(cond: &str) -> Test {
        let src = format!(
            "PTX t\n{{ x=0; P1:r7=5; }}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
             st.weak x, 1 | ld.weak r0, x ;\n{cond}\n"
        );
        parse(&src, Path::new("t.litmus")).expect("parses")
    }

    #[test]
    fn a_register_nothing_writes_is_named_once() {
        assert!(warnings(&test("exists (P1:r0 == 1)")).is_empty());
        let w = warnings(&test("exists (P1:r1 == 1 /\\ ~(P1:r1 == 2))"));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("P1:r1") && w[0].contains("initial value 0"),
            "{w:?}"
        );
        let w = warnings(&test("exists (P1:r0 == 1 \\/ P1:r7 == 5)"));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("P1:r7") && w[0].contains("initial value 5"),
            "{w:?}"
        );
        assert!(!warnings(&test("exists (P0:r0 == 0)")).is_empty());
    }
}
