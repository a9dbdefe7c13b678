//! Result sets survive a write/read/write cycle byte for byte, and readers refuse what they
//! must: unknown schema versions, data of different tests paired, corrupt, truncated or
//! foreign JSON, and overwriting without `force`.

mod common;

use common::results::{covering, records, run, suite, Knobs};
use common::scratch;
use ptx_litmus::results::{
    merge, read_result_set, write_result_set, Observed, ResultsError, Shard, TestIdentity,
    TestRecord,
};
use ptx_litmus::verdict::{Class, Status};
use std::fs;
use std::path::Path;

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for sub in ["", "tests"] {
        let d = dir.join(sub);
        let mut names: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        names.sort();
        for p in names {
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            out.push((rel, fs::read(&p).unwrap()));
        }
    }
    out
}

fn write_sample(dir: &Path, knobs: Knobs) {
    let tests = records(&suite(knobs), 2.0);
    write_result_set(dir, &run("r1", "550.54.15", None), &tests, false).unwrap();
}

#[test]
fn write_read_write_is_byte_identical() {
    let root = scratch("roundtrip");
    let a = root.join("a");
    write_sample(&a, Knobs::default());
    let set = read_result_set(&a).unwrap();
    assert_eq!(set.tests.len(), 3);
    assert_eq!(set.run, run("r1", "550.54.15", None));
    let b = root.join("b");
    write_result_set(&b, &set.run, &set.tests, false).unwrap();
    let (fa, fb) = (files(&a), files(&b));
    assert_eq!(
        fa.iter().map(|f| &f.0).collect::<Vec<_>>(),
        [
            "run.json",
            "run.log",
            "tests/CoRR.json",
            "tests/MP.json",
            "tests/SB.json"
        ]
    );
    assert_eq!(fa, fb);
    assert_eq!(read_result_set(&b).unwrap().tests, set.tests);
}

#[test]
fn records_carry_classified_histograms_and_bounds() {
    let dir = scratch("classified");
    write_sample(
        &dir,
        Knobs {
            corr_violation: 3,
            ..Knobs::default()
        },
    );
    let set = read_result_set(&dir).unwrap();
    let corr = set.tests.iter().find(|t| t.name == "CoRR").unwrap();
    assert_eq!(corr.verdict.status, Status::Violation);
    assert_eq!(corr.verdict.counts.forbidden, 3);
    let mp = set.tests.iter().find(|t| t.name == "MP").unwrap();
    assert_eq!(mp.verdict.status, Status::Conformant);
    let unseen: Vec<_> = mp.verdict.unseen_allowed().collect();
    assert_eq!(unseen.len(), 1);
    assert_eq!(unseen[0].class, Class::Weak);
    let bound = mp.rates.unseen_upper_bound_95.unwrap();
    assert!((bound * 1e6 - 2.9957).abs() < 1e-3, "{bound}");
    let json = fs::read_to_string(dir.join("tests/SB.json")).unwrap();
    for key in [
        "\"schema_version\": 1",
        "\"format\": \"ptx-litmus/test\"",
        "\"class\": \"weak\"",
        "\"weak_per_second\": 2500.0",
    ] {
        assert!(json.contains(key), "{key} missing from\n{json}");
    }
}

#[test]
fn litmus7_log_has_histogram_witnesses_and_observation() {
    let dir = scratch("log");
    write_sample(
        &dir,
        Knobs {
            corr_violation: 3,
            ..Knobs::default()
        },
    );
    let log = fs::read_to_string(dir.join("run.log")).unwrap();
    for line in [
        "% Results for litmus/sb/SB.litmus %",
        "Test SB Allowed",
        "Histogram (4 states)",
        "5000  *>0:r0=0; 1:r0=0;",
        "Positive: 5000, Negative: 995000",
        "Condition exists (0:r0=0 /\\ 1:r0=0) is validated",
        "Hash=h-sb",
        "Observation SB Sometimes 5000 995000",
        "Observation MP Never 0 1000000",
        "3     *>1:r0=1; 1:r1=0;",
        "% ^ forbidden by the PTX model",
        "Time SB 2.00",
    ] {
        assert!(log.lines().any(|l| l == line), "no line {line:?} in\n{log}");
    }
    // MP's block says `No`: its exists condition was never observed.
    let mp = log
        .split("% Results for litmus/mp/MP.litmus %")
        .nth(1)
        .unwrap();
    assert!(mp.lines().any(|l| l == "No"));
}

fn edit_json(path: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    f(&mut v);
    fs::write(path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

#[test]
fn unknown_schema_version_is_refused_naming_the_file() {
    let dir = scratch("schema");
    write_sample(&dir, Knobs::default());
    edit_json(&dir.join("tests/MP.json"), |v| {
        v["schema_version"] = 2.into()
    });
    let e = read_result_set(&dir).unwrap_err();
    assert!(matches!(e, ResultsError::UnknownSchema { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("MP.json") && msg.contains("schema_version 2"),
        "{msg}"
    );
    edit_json(&dir.join("run.json"), |v| {
        v.as_object_mut().unwrap().remove("schema_version");
    });
    let msg = read_result_set(&dir).unwrap_err().to_string();
    assert!(
        msg.contains("run.json") && msg.contains("(missing)"),
        "{msg}"
    );
}

#[test]
fn model_and_observations_of_different_tests_are_not_paired() {
    let dir = scratch("hash");
    write_sample(&dir, Knobs::default());
    edit_json(&dir.join("tests/SB.json"), |v| {
        v["observed"]["hash"] = "h-other".into()
    });
    let e = read_result_set(&dir).unwrap_err();
    assert!(matches!(e, ResultsError::HashMismatch { .. }), "{e:?}");
    assert!(e.to_string().contains("SB.json"), "{e}");

    let f = &suite(Knobs::default())[0];
    let refused = TestRecord::new(
        TestIdentity {
            name: "MP".into(),
            path: "mp.litmus".into(),
            hash: "h1".into(),
            condition: f.condition_text.into(),
        },
        &f.condition,
        "h1",
        &f.model,
        Observed {
            hash: "h2",
            histogram: &f.histogram,
            skipped: 0,
            elapsed_s: 1.0,
            parts: &[],
        },
    );
    assert!(matches!(refused, Err(ResultsError::HashMismatch { .. })));
}

#[test]
fn corrupt_truncated_and_foreign_json_name_the_file() {
    let dir = scratch("corrupt");
    write_sample(&dir, Knobs::default());
    let sb = dir.join("tests/SB.json");
    let text = fs::read_to_string(&sb).unwrap();
    let cases: [(&str, String, &str); 5] = [
        ("truncated", text[..text.len() / 2].to_string(), "truncated"),
        ("corrupt", "{\"format\": ptx}".into(), "expected value"),
        (
            "foreign object",
            "{\"name\": \"SB\"}".into(),
            "no \"format\"",
        ),
        ("foreign array", "[1, 2]".into(), "no \"format\""),
        (
            "wrong kind",
            "{\"format\": \"ptx-litmus/run\", \"schema_version\": 1}".into(),
            "expected \"format\": \"ptx-litmus/test\"",
        ),
    ];
    for (what, content, expect) in cases {
        fs::write(&sb, content).unwrap();
        let msg = read_result_set(&dir).unwrap_err().to_string();
        assert!(
            msg.contains("SB.json") && msg.contains(expect),
            "{what}: {msg}"
        );
    }
    // Not UTF-8: the first bad byte is placed.
    fs::write(&sb, b"{\"format\": \"\xff\"}").unwrap();
    let msg = read_result_set(&dir).unwrap_err().to_string();
    assert!(
        msg.contains("SB.json")
            && msg.contains("invalid UTF-8 at byte offset 12 (line 1, column 13)"),
        "{msg}"
    );
    // Right format tag, wrong shape: the missing field is named.
    fs::write(
        &sb,
        "{\"format\": \"ptx-litmus/test\", \"schema_version\": 1, \"name\": \"SB\"}",
    )
    .unwrap();
    let msg = read_result_set(&dir).unwrap_err().to_string();
    assert!(
        msg.contains("SB.json") && msg.contains("missing field"),
        "{msg}"
    );
}

#[test]
fn nothing_is_overwritten_without_force() {
    let dir = scratch("force");
    write_sample(&dir, Knobs::default());
    let before = files(&dir);
    let other = records(
        &suite(Knobs {
            sb_weak: 7,
            ..Knobs::default()
        }),
        1.0,
    );
    let e = write_result_set(&dir, &run("r2", "x", None), &other, false).unwrap_err();
    assert!(matches!(e, ResultsError::Exists { .. }), "{e:?}");
    assert!(e.to_string().contains("--force"));
    assert_eq!(files(&dir), before);
    // With force, the new set replaces the old one entirely (no stale test files survive).
    write_result_set(
        &dir,
        &covering(run("r2", "x", None), &other[..1]),
        &other[..1],
        true,
    )
    .unwrap();
    let set = read_result_set(&dir).unwrap();
    assert_eq!(set.run.run_id, "r2");
    assert_eq!(set.tests.len(), 1);
}

#[test]
fn merging_shards_sums_histograms_and_refuses_different_tests() {
    let root = scratch("merge");
    let all = records(&suite(Knobs::default()), 2.0);
    let (a, b) = (root.join("s0"), root.join("s1"));
    let s0 = Some(Shard { index: 0, count: 2 });
    let s1 = Some(Shard { index: 1, count: 2 });
    let mut r0 = run("r-s0", "550", s0);
    r0.command_line = vec!["run".into(), "--shard".into(), "0/2".into()];
    write_result_set(&a, &covering(r0, &all[..2]), &all[..2], false).unwrap();
    // Shard 1 repeats SB (say, a rerun) and adds CoRR.
    write_result_set(
        &b,
        &covering(run("r-s1", "550", s1), &all[1..]),
        &all[1..],
        false,
    )
    .unwrap();
    let sets = [read_result_set(&a).unwrap(), read_result_set(&b).unwrap()];
    let (m, tests) = merge(&sets, "campaign").unwrap();
    assert_eq!(m.merged_from, ["r-s0", "r-s1"]);
    assert_eq!(m.shard, None);
    assert_eq!(m.command_line, ["run"]);
    assert_eq!(tests.len(), 3);
    let sb = tests.iter().find(|t| t.name == "SB").unwrap();
    assert_eq!(sb.verdict.instances, 2 * all[1].verdict.instances);
    assert_eq!(sb.verdict.counts.weak, 2 * all[1].verdict.counts.weak);
    assert_eq!(sb.observed.elapsed_s, 4.0);

    let c = root.join("s2");
    let mut changed = all[1].clone();
    changed.hash = "h-changed".into();
    changed.model.hash = "h-changed".into();
    changed.observed.hash = "h-changed".into();
    let r2 = covering(run("r-s2", "550", None), std::slice::from_ref(&changed));
    write_result_set(&c, &r2, &[changed], false).unwrap();
    let sets = [read_result_set(&a).unwrap(), read_result_set(&c).unwrap()];
    let e = merge(&sets, "x").unwrap_err();
    assert!(matches!(e, ResultsError::HashMismatch { .. }), "{e}");
}
