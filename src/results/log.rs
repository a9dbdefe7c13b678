//! The litmus7-style text log of a run (`run.log`), in the layout herd's tools (`mcompare7`,
//! `msum7`) read: per test a `Test`/`Histogram`/`Ok`|`No`/`Witnesses`/`Condition`/`Hash`/
//! `Observation`/`Time` block, `*>` marking outcomes that satisfy the condition. What litmus7
//! has no line for (classification, unexpected values) goes in `%` comment lines.

use super::record::{RunRecord, TestRecord};
use crate::litmus::ast::Quantifier;
use crate::verdict::{Class, Status};
use std::fmt::Write;

/// The whole log of a run, tests in the order given.
pub fn render(run: &RunRecord, tests: &[&TestRecord]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "% ptx-litmus {} ({}) run {} backend {}",
        run.tool_version, run.git_revision, run.run_id, run.backend
    );
    let _ = writeln!(s, "% Command line: {}", run.command_line.join(" "));
    let _ = writeln!(s, "% Seed: {}", run.parameters.seed);
    for (k, v) in &run.provenance {
        let _ = writeln!(s, "% {k}: {v}");
    }
    for t in tests {
        s.push('\n');
        test_block(&mut s, t);
    }
    s
}

fn test_block(s: &mut String, t: &TestRecord) {
    let banner = format!("% Results for {} %", t.path);
    let bar = "%".repeat(banner.chars().count());
    let v = &t.verdict;
    let _ = writeln!(s, "{bar}\n{banner}\n{bar}");
    let _ = writeln!(
        s,
        "% Verdict {}: {}, sc {}, weak {}, forbidden {}, unexpected {}",
        t.name,
        v.status.as_str(),
        v.counts.sc,
        v.counts.weak,
        v.counts.forbidden,
        v.counts.unexpected
    );
    let kind = match v.quantifier {
        Quantifier::Exists => "Allowed",
        Quantifier::NotExists => "Forbidden",
        Quantifier::Forall => "Required",
    };
    let _ = writeln!(s, "Test {} {kind}", t.name);
    histogram_block(s, t);
    let _ = writeln!(s, "{}", if v.validated { "Ok" } else { "No" });
    let _ = writeln!(s, "\nWitnesses");
    let _ = writeln!(s, "Positive: {}, Negative: {}", v.positive, v.negative);
    let _ = writeln!(
        s,
        "Condition {} is {}validated",
        // herd writes equality as `=`.
        herd_names(&t.condition).replace(" == ", "="),
        if v.validated { "" } else { "NOT " }
    );
    let _ = writeln!(s, "Hash={}", t.hash);
    let _ = writeln!(
        s,
        "Observation {} {} {} {}",
        t.name, v.observation, v.positive, v.negative
    );
    if v.status == Status::Violation {
        let _ = writeln!(s, "% Violation {}: an outcome the model forbids", t.name);
    }
    let _ = writeln!(s, "Time {} {:.2}", t.name, t.observed.elapsed_s);
}

/// The outcomes seen, litmus7's way (`count *>state` for those the condition holds in), each
/// forbidden or unexpected one marked, and the instances with values outside the space.
fn histogram_block(s: &mut String, t: &TestRecord) {
    let v = &t.verdict;
    let seen: Vec<_> = v.outcomes.iter().filter(|o| o.count > 0).collect();
    let _ = writeln!(s, "Histogram ({} states)", seen.len());
    for o in &seen {
        let mark = if o.satisfies { '*' } else { ':' };
        let state = state_text(&t.observables, &o.values.0);
        let _ = writeln!(s, "{:<6}{mark}>{state}", o.count);
        if matches!(o.class, Class::Forbidden | Class::Unexpected) {
            let _ = writeln!(s, "% ^ {} by the PTX model", o.class.as_str());
        }
    }
    let bucket = v.outside_the_space();
    if bucket > 0 {
        let _ = writeln!(
            s,
            "% {bucket} instances with values outside the outcome space"
        );
    }
}

/// `1:r0=1; x=2;`: litmus7 writes registers as `thread:reg` with no `P`.
fn state_text(observables: &[String], values: &[i64]) -> String {
    let mut s = String::new();
    for (i, (o, v)) in observables.iter().zip(values).enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{}={v};", herd_names(o));
    }
    s
}

/// Rewrites `P1:r0` as `1:r0` wherever a `P` starts a thread number followed by `:`.
fn herd_names(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if bytes[i] == b'P' && starts_word {
            let digits = bytes[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits > 0 && bytes.get(i + 1 + digits) == Some(&b':') {
                i += 1;
                continue;
            }
        }
        out.push(bytes[i] as char);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn herd_names_drop_the_thread_prefix_only() {
        assert_eq!(
            herd_names("exists (P1:r0 == 1 /\\ xP1:a == 0 /\\ P12:r3 == 2 /\\ P == 1)"),
            "exists (1:r0 == 1 /\\ xP1:a == 0 /\\ 12:r3 == 2 /\\ P == 1)"
        );
        assert_eq!(
            state_text(&["P0:r0".into(), "x".into()], &[1, 2]),
            "0:r0=1; x=2;"
        );
    }
}
