//! One meaning per flag across commands: every subcommand's `-h` is walked, and each long
//! flag must be in the table below and say its one meaning (the table's keyword) wherever it
//! appears; each short flag stands for the same long flag everywhere. A new flag needs a row
//! here, and a flag reused with another meaning fails.

mod common;

use common::results::{covering, records, run, suite, Knobs};
use common::{bin, fresh, text};
use std::collections::BTreeMap;

/// Each long flag and the word its help must contain in every command (case-insensitive).
const MEANINGS: &[(&str, &str)] = &[
    ("arch", "architecture"),
    ("backend", "backend"),
    ("barriers", "barrier stream"),
    ("bench-step", "bench-*.txt"),
    ("budget", "budget"),
    ("check", "compare"),
    ("chunk-instances", "instances of one chunk"),
    ("chunk-time", "seconds of one chunk"),
    ("column", "column"),
    ("compiler", "compiles"),
    ("csv", "csv"),
    ("cycle", "cycle"),
    ("device-model", "device model"),
    ("diff", "changed"),
    ("dir", "campaign folder"),
    ("dot", "graphviz"),
    ("dry-run", "without submitting"),
    ("enumerate", "critical cycle"),
    ("examples", "first test"),
    ("expect", "expectations"),
    ("explain", "witness"),
    ("files", "come back"),
    ("final-rounds", "final race"),
    ("finalists", "final race"),
    ("first", "first test"),
    ("force", "overwrite"),
    ("gres", "resources"),
    ("hardware", "hardware"),
    ("herd", "herd7"),
    ("html", "html"),
    ("index", "shard"),
    ("instances", "instances per test"),
    ("jobs", "at once"),
    ("json", "json"),
    ("local", "local-search"),
    ("manifest", "manifest"),
    ("matrix", "table"),
    ("max-chunks", "at most"),
    ("min-chunks", "stopped early"),
    ("model", "cat model"),
    ("only", "only"),
    ("option", "backend option"),
    ("out", "write"),
    ("parents", "perturbs"),
    ("placement", "placements"),
    ("prune", "remove"),
    ("ptxas", "versions"),
    ("quiet", "progress"),
    ("random", "random configurations"),
    ("relax", "every cycle uses"),
    ("replay", "run.json"),
    ("results", "results folder"),
    ("run-id", "run id"),
    ("safe", "may use besides"),
    ("runs", "runs per test"),
    ("save", "disagrees or is undecided"),
    ("sbatch", "#sbatch"),
    ("scope", "scopes"),
    ("proxies", "proxy stream"),
    ("seed", "seed"),
    ("shape", "shape"),
    ("shapes", "bench shapes"),
    ("shard", "part"),
    ("space", "memory spaces"),
    ("step", "step"),
    ("steps", "steps"),
    ("stress", "preset"),
    ("stress-file", "incantations"),
    ("stress-set", "incantation"),
    ("submit-option", "sbatch"),
    ("tasks", "shards"),
    ("tests", "random tests"),
    ("threads", "most threads"),
    ("time", "seconds per"),
    ("timeout", "give up"),
    ("tune-step", "tuned folder"),
    ("validate", "validate"),
    ("verbose", "sass"),
    ("verdict-only", "condition"),
    ("wait", "wait until"),
    ("wait-timeout", "longest wait"),
    ("work", "scratch folder"),
];

/// Each short flag and the long flag it stands for.
const SHORTS: &[(char, &str)] = &[
    ('o', "option"),
    ('q', "quiet"),
    ('h', "help"),
    ('V', "version"),
];

/// One option of one command's help: its short letter, long name and help text.
struct Entry {
    command: String,
    short: Option<char>,
    long: String,
    help: String,
}

fn help(command: &[String]) -> String {
    let o = bin().args(command).arg("-h").output().unwrap();
    assert!(o.status.success(), "{command:?} -h");
    text(&o.stdout)
}

/// The lines of the section `title` of a help text.
fn section<'a>(help: &'a str, title: &str) -> Vec<&'a str> {
    help.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect()
}

/// Every option entry of `command` and of its subcommands, recursively.
fn walk(command: Vec<String>, out: &mut Vec<Entry>) {
    let h = help(&command);
    let shown = command.join(" ");
    for line in section(&h, "Options:") {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix('-') {
            let (short, rest) = match rest.strip_prefix('-') {
                Some(long) => (None, long),
                None => (rest.chars().next(), rest[1..].trim_start_matches(", --")),
            };
            let long: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '-')
                .collect();
            let help = rest.split_once("  ").map_or("", |(_, h)| h.trim());
            out.push(Entry {
                command: shown.clone(),
                short,
                long,
                help: help.to_string(),
            });
        } else if let Some(e) = out.last_mut() {
            e.help.push(' ');
            e.help.push_str(t);
        }
    }
    for line in section(&h, "Commands:") {
        let name = line.split_whitespace().next().unwrap_or("");
        if name != "help" && !name.is_empty() {
            let mut sub = command.clone();
            sub.push(name.to_string());
            walk(sub, out);
        }
    }
}

#[test]
fn every_flag_keeps_its_one_meaning_in_every_command() {
    let mut entries = Vec::new();
    walk(Vec::new(), &mut entries);
    assert!(entries.len() > 100, "only {} options found", entries.len());
    let meanings: BTreeMap<&str, &str> = MEANINGS.iter().copied().collect();
    let mut problems = Vec::new();
    for e in &entries {
        if let Some(c) = e.short {
            match SHORTS.iter().find(|(s, _)| *s == c) {
                Some((_, long)) if *long == e.long => {}
                _ => problems.push(format!("{}: -{c} stands for --{}", e.command, e.long)),
            }
        }
        if e.long == "help" || e.long == "version" {
            continue;
        }
        match meanings.get(e.long.as_str()) {
            None => problems.push(format!(
                "{}: --{} is not in the table of meanings; add its one meaning",
                e.command, e.long
            )),
            Some(word) if !e.help.to_lowercase().contains(word) => problems.push(format!(
                "{}: --{} does not say `{word}`: {}",
                e.command, e.long, e.help
            )),
            Some(_) => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let used: Vec<&str> = entries.iter().map(|e| e.long.as_str()).collect();
    for (flag, _) in MEANINGS {
        assert!(
            used.contains(flag),
            "--{flag} is in the table but no command has it"
        );
    }
}

#[test]
fn zero_instances_is_an_error_and_the_old_names_still_work() {
    let out = fresh("zero");
    for flag in ["--instances", "--iterations"] {
        let o = bin()
            .args(["run", "--backend", "cpu", "--quiet", flag, "0", "--results"])
            .arg(&out)
            .arg("litmus/sb/SB+rlx.gpu+rlx.gpu.litmus")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{flag} 0");
        assert!(
            text(&o.stderr).contains("0 is not in 1.."),
            "{}",
            text(&o.stderr)
        );
        assert!(!out.exists(), "{flag} 0 wrote a result set");
    }
    let o = bin()
        .args([
            "run",
            "--backend",
            "cpu",
            "--quiet",
            "--iterations",
            "512",
            "--out",
        ])
        .arg(&out)
        .arg("litmus/sb/SB+rlx.gpu+rlx.gpu.litmus")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(out.is_dir());
}

#[test]
fn the_summary_says_conformant_and_no_data_as_the_report_does() {
    let out = fresh("words");
    // Wide enough that the test's name is not elided in its row.
    let o = bin()
        .env("COLUMNS", "200")
        .args([
            "run",
            "--backend",
            "cpu",
            "--quiet",
            "--instances",
            "512",
            "--results",
        ])
        .arg(&out)
        .arg("litmus/mp/MP+rel.gpu+acq.gpu.litmus")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    let row = s
        .lines()
        .find(|l| l.contains("MP+rel.gpu+acq.gpu"))
        .unwrap();
    assert!(row.starts_with("conformant"), "{row}");
    assert!(s.contains("1 conformant, 0 no data"), "{s}");
}

/// The words a table must not use for a result: the project says `conformant`, `violation`,
/// `no data`, `pass`.
const OFF_WORDS: &[&str] = &["ok", "no_data", "nodata", "without data"];

/// Each word of `OFF_WORDS` that `out` uses (whole words, case-insensitive).
fn off_words(out: &str) -> Vec<String> {
    let lower = out.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    OFF_WORDS
        .iter()
        .filter(|w| {
            let parts: Vec<&str> = w.split(' ').collect();
            words
                .windows(parts.len())
                .any(|win| win == parts.as_slice())
        })
        .map(|w| format!("`{w}`"))
        .collect()
}

#[test]
fn diff_tables_and_campaign_status_say_conformant() {
    assert_eq!(off_words("1 ok (3)\nSB  ok"), ["`ok`"], "the check itself");
    assert!(off_words("token okay").is_empty());
    let root = fresh("words-diff");
    let dirs: Vec<_> = ["a", "b", "c"].iter().map(|d| root.join(d)).collect();
    let base = records(&suite(Knobs::default()), 2.0);
    for (i, d) in dirs.iter().enumerate() {
        let id = format!("run-{i}");
        let r = covering(run(&id, "550.54.15", None), &base);
        ptx_litmus::results::write_result_set(d, &r, &base, false).unwrap();
    }
    let mut outputs = Vec::new();
    for sets in [&dirs[..2], &dirs[..]] {
        let o = bin().arg("diff").args(sets).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        outputs.push(text(&o.stdout));
    }
    // CoRR: conformant, and the model allows no weak outcome to see.
    assert!(
        outputs[1].contains("conformant (1,000,000)"),
        "{}",
        outputs[1]
    );
    let o = bin()
        .args(["campaign", "status", "--backend", "cpu", "--results"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    outputs.push(text(&o.stdout));
    for out in &outputs {
        assert!(off_words(out).is_empty(), "{:?} in {out}", off_words(out));
    }
}
