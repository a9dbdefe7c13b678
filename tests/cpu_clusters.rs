//! Cluster barriers on the CPU backend against the model: the cluster-barrier tests of
//! `litmus/cluster/` run (none refused, every instance counted) with no outcome the model
//! forbids, and a release arrive synchronises with the wait of another role of its cluster.

mod common;

use ptx_litmus::harness::{Budget, TestRun};
use ptx_litmus::litmus::ast::Test;
use ptx_litmus::model::check;
use ptx_litmus::verdict::{judge, Status};
use std::sync::Mutex;

/// Each run uses every core; one at a time, so that runs do not starve each other.
static SERIAL: Mutex<()> = Mutex::new(());

const CLUSTER_BARRIER_TESTS: [&str; 5] = [
    "MP+barrier.cluster-samecluster",
    "MP+barrier.cluster.arrive.relaxed-samecluster",
    "MP+barrier.cluster.arrive.release-wait.acquire-samecluster",
    "SB+barrier.cluster-diffcluster",
    "SB+barrier.cluster-samecluster",
];

fn load(name: &str) -> Test {
    common::load(&format!("litmus/cluster/{name}.litmus"))
}

fn run(test: &Test, budget: Budget) -> TestRun {
    common::cpu::run(test, budget, 11, None).unwrap_or_else(|e| panic!("{}: {e}", test.name))
}

#[test]
fn every_cluster_barrier_test_runs_and_shows_only_allowed_outcomes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let on_disk = std::fs::read_dir("litmus/cluster")
        .unwrap()
        .filter(|e| {
            std::fs::read_to_string(e.as_ref().unwrap().path())
                .unwrap()
                .contains("barrier.cluster")
        })
        .count();
    assert_eq!(on_disk, CLUSTER_BARRIER_TESTS.len());
    for name in CLUSTER_BARRIER_TESTS {
        let test = load(name);
        let model = check(&test).unwrap();
        let r = run(&test, Budget::Instances(50_000));
        assert_eq!(r.histogram.total() + r.info.skipped, r.info.instances);
        assert!(r.histogram.total() > 0, "{name}: every instance skipped");
        let v = judge(&model, &r.histogram, &test.condition);
        assert_ne!(v.status, Status::Violation, "{name}: {:?}", r.histogram);
    }
}

#[test]
fn a_cluster_barrier_publishes_an_earlier_weak_store() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // P0: st x, 1; arrive; wait   P1: arrive; wait; ld r0, x — r0 = 0 is forbidden.
    let test = load("MP+barrier.cluster-samecluster");
    let model = check(&test).unwrap();
    let r = run(&test, Budget::Instances(400_000));
    assert!(r.histogram.total() > 300_000, "{:?}", r.info);
    let stale = r
        .histogram
        .counts
        .iter()
        .filter(|(o, _)| o.satisfies(&model.observables, &test.condition.prop))
        .map(|(_, n)| n)
        .sum::<u64>();
    assert_eq!(stale, 0, "{:?}", r.histogram.counts);
    // Nor, with each role arriving before it waits for the other, SB's weak outcome.
    let test = load("SB+barrier.cluster-samecluster");
    let r = run(&test, Budget::Instances(400_000));
    let model = check(&test).unwrap();
    assert!(r
        .histogram
        .counts
        .keys()
        .all(|o| !o.satisfies(&model.observables, &test.condition.prop)));
}
