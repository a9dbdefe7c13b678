//! Outputs for analysis elsewhere: the JSON Schema of result sets (checked in, up to date, and
//! every record this build writes or that is committed under results/ conforms), `run --json`,
//! `list --json` and `report --csv`.

mod common;

use common::results::{self as fixtures, Knobs};
use common::{bin, root, scratch, text};
use ptx_litmus::results::schema::result_set_schema;
use ptx_litmus::results::schema_check::validate;
use ptx_litmus::results::{read_result_set, Shard};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

/// The `run.json` files under `dir`, recursively.
fn run_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            run_files(&p, out);
        } else if p.file_name().is_some_and(|n| n == "run.json") {
            out.push(p);
        }
    }
}

#[test]
fn the_checked_in_schema_is_the_one_the_types_give() {
    let file = root().join("docs/result-set.schema.json");
    let on_disk = std::fs::read_to_string(&file).unwrap();
    let now = serde_json::to_string_pretty(&result_set_schema()).unwrap() + "\n";
    assert!(
        on_disk == now,
        "docs/result-set.schema.json is stale: run `ptx-litmus schema > docs/result-set.schema.json`"
    );
}

#[test]
fn hand_built_records_conform_and_a_changed_field_does_not() {
    let schema = result_set_schema();
    let tests = fixtures::records(&fixtures::suite(Knobs::default()), 2.0);
    let mut run = fixtures::run("r", "550.54", Some(Shard { index: 1, count: 4 }));
    run.merged_from = vec!["a".into(), "b".into()];
    for t in &tests {
        validate(&schema, &serde_json::to_value(t).unwrap()).unwrap();
    }
    let doc = serde_json::to_value(&run).unwrap();
    validate(&schema, &doc).unwrap();
    let mut extra = doc.clone();
    extra["parameters"]["warp_size"] = json!(32);
    let e = validate(&schema, &extra).unwrap_err();
    assert!(e.contains("warp_size"), "{e}");
    let mut test = serde_json::to_value(&tests[0]).unwrap();
    test["verdict"]["status"] = json!("fine");
    let e = validate(&schema, &test).unwrap_err();
    assert!(e.contains("/verdict/status"), "{e}");
    let mut missing = serde_json::to_value(&tests[1]).unwrap();
    missing["rates"]
        .as_object_mut()
        .unwrap()
        .remove("weak_per_second");
    assert!(validate(&schema, &missing).is_err());
}

#[test]
fn committed_result_sets_conform() {
    let mut files = Vec::new();
    run_files(&root().join("results"), &mut files);
    if files.is_empty() {
        common::not_checked("no result set is committed under results/ yet");
    }
    for run in files {
        let dir = run.parent().unwrap();
        let o = bin()
            .arg("schema")
            .arg("--validate")
            .arg(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}: {}", dir.display(), text(&o.stdout));
    }
}

#[test]
fn run_json_lines_list_json_and_report_csv_describe_the_same_set() {
    let dir = scratch("outputs");
    let o = bin()
        .current_dir(&dir)
        .args(["run", "SB+wk+wk", "MP+wk+wk", "--backend", "cpu", "--json"])
        .args([
            "--iterations",
            "3000",
            "--seed",
            "5",
            "--run-id",
            "j",
            "--out",
            "res",
        ])
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    let schema = result_set_schema();
    let lines: Vec<Json> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    for l in &lines {
        validate(&schema, l).unwrap();
    }
    assert_eq!(lines[2]["format"], "ptx-litmus/run");
    let machine = std::fs::read_dir(dir.join("res")).unwrap().next().unwrap();
    let set_dir = machine.unwrap().path().join("j");
    let set = read_result_set(&set_dir).unwrap();
    for t in &set.tests {
        assert!(
            lines.contains(&serde_json::to_value(t).unwrap()),
            "{}",
            t.name
        );
    }
    let v = bin()
        .arg("schema")
        .arg("--validate")
        .arg(&set_dir)
        .output()
        .unwrap();
    assert!(text(&v.stdout).contains("3 records checked, 0 not conforming"));

    let csv = bin()
        .arg("report")
        .arg(&set_dir)
        .arg("--csv")
        .output()
        .unwrap();
    let csv = text(&csv.stdout);
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 1 + set.tests.len(), "{csv}");
    let col = |name: &str| rows[0].iter().position(|c| *c == name).unwrap();
    for (row, t) in rows[1..].iter().zip(&set.tests) {
        assert_eq!(row.len(), rows[0].len());
        assert_eq!(row[col("test")], t.name);
        assert_eq!(row[col("weak")], t.verdict.counts.weak.to_string());
        assert_eq!(row[col("status")], "conformant");
        assert_eq!(row[col("cpu_used")], t.notes["cpu_used"]);
    }
    assert!(
        !set_dir.join("report.html").exists(),
        "--csv writes no report"
    );

    let list = bin()
        .current_dir(&dir)
        .args(["list", "--json", "litmus/sb"])
        .output()
        .unwrap();
    let listed: Vec<Json> = text(&list.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let files = ptx_litmus::litmus::discover(&[root().join("litmus/sb")]).unwrap();
    assert_eq!(listed.len(), files.len());
    let sb = listed.iter().find(|l| l["name"] == "SB+wk+wk").unwrap();
    assert_eq!(sb["threads"], 2);
    assert_eq!(
        sb["hash"],
        set.tests
            .iter()
            .find(|t| t.name == "SB+wk+wk")
            .unwrap()
            .hash
    );
    std::fs::write(
        set_dir.join("tests/bad.json"),
        r#"{"format": "ptx-litmus/test"}"#,
    )
    .unwrap();
    let v = bin()
        .arg("schema")
        .arg("--validate")
        .arg(&set_dir)
        .output()
        .unwrap();
    assert_eq!(v.status.code(), Some(1), "{}", text(&v.stdout));
}
