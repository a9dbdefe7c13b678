//! A CPU run says how busy the machine was: the load average before it (recorded, with a
//! warning when a two-thread test cannot have its cores), and the cores' worth of CPU each test
//! got (recorded per test, shown in the summary row and the report, with a warning when a test
//! got less than its threads needed).

mod common;

use common::{bin, scratch, text};
use ptx_litmus::harness::cpu::{cores, load};
use ptx_litmus::results::read_result_set;

#[test]
fn a_cpu_run_records_the_load_and_the_cpu_each_test_got_and_warns_as_they_say() {
    let dir = scratch("load");
    let o = bin()
        .current_dir(&dir)
        .args(["run", "SB+wk+wk", "MP+wk+wk", "--backend", "cpu"])
        .args([
            "--iterations",
            "50000",
            "--seed",
            "3",
            "--run-id",
            "r",
            "--quiet",
        ])
        .args(["--out", "res"])
        .output()
        .unwrap();
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let machine = std::fs::read_dir(dir.join("res")).unwrap().next().unwrap();
    let set_dir = machine.unwrap().path().join("r");
    let set = read_result_set(&set_dir).unwrap();
    if !std::path::Path::new("/proc/loadavg").exists() {
        common::not_checked("no /proc on this system: load and CPU time are not recorded");
        return;
    }
    let recorded: f64 = set.run.provenance["load_average"].parse().unwrap();
    assert_eq!(
        err.contains("warning: the machine is loaded"),
        load::loaded(recorded, cores(), 2),
        "load {recorded}: {err}"
    );
    let mut starved = false;
    for t in &set.tests {
        let used: f64 = t.notes["cpu_used"].parse().unwrap();
        // Two decimals: roles that got under 0.5 % of the run's time (a suite running beside
        // them on two cores can do that to a run of a few milliseconds) record 0.00, and the
        // starved warning below must then say so.
        assert!(
            (0.0..=cores() as f64 + 0.05).contains(&used),
            "{}: {used}",
            t.name
        );
        starved |= load::starved(used, cores(), 2);
        let row = out.lines().find(|l| l.contains(&t.name)).unwrap();
        assert!(row.trim_end().ends_with(&t.notes["cpu_used"]), "{row}");
    }
    assert_eq!(
        err.contains("got less CPU than their threads needed"),
        starved,
        "{err}"
    );
    let header = out.lines().find(|l| l.starts_with("status")).unwrap();
    assert!(header.trim_end().ends_with("cpu"), "{header}");
    let r = bin().arg("report").arg(&set_dir).output().unwrap();
    assert!(r.status.success(), "{}", text(&r.stderr));
    let md = std::fs::read_to_string(set_dir.join("report.md")).unwrap();
    let cpu = &set.tests[0].notes["cpu_used"];
    assert!(md.contains(&format!("(cpu {cpu})")), "{md}");
    assert!(md.contains(&set.run.provenance["load_average"]), "{md}");
}
