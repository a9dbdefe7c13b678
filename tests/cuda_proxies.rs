//! The texture and surface objects of the CUDA backend, checked by tests whose outcome is fixed:
//! texture reads of two locations no one writes must return each one's initial value (a
//! texture over the wrong bytes, of the wrong element size, read as float, or a missing
//! handle gives other values), and a surface location must start every launch from its
//! initial value (the collect kernel resets it through the surface) and read back its own
//! write. On a machine without a usable GPU the same tests must reach the driver, not a
//! refusal of their proxies, and fail with the reason detection gives. The campaign's
//! preflight runs the same files with the binary alone (a GPU machine has no Rust).

mod common;

use ptx_litmus::harness::{cuda, BackendOptions, Budget, Control, RunError, RunParams};
use ptx_litmus::litmus::{self, ast::Test};
use ptx_litmus::model;
use ptx_litmus::outcome::Outcome;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// The self-check tests (`campaign/proxy-check`, which the campaign's preflight runs too), each
/// with the only outcome its one thread can observe.
const FIXED: [(&str, [i64; 2]); 2] = [("TEX-init", [5, 9]), ("SUR-reset", [7, 3])];

fn load(name: &str) -> Test {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("campaign/proxy-check")
        .join(format!("{name}.litmus"));
    litmus::parse_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn run(test: &Test) -> Result<ptx_litmus::harness::TestRun, RunError> {
    let cancel = AtomicBool::new(false);
    let mut params = RunParams::new(Budget::Instances(200_000), 11);
    // The preset's own grid: sizing it to fill the device would ask the driver before the
    // backend has looked at the kernel, and the no-GPU branch checks what comes after.
    params.options.backend = BackendOptions::Cuda(cuda::CudaOptions {
        fill: false,
        ..Default::default()
    });
    cuda::run(
        test,
        &params,
        Control {
            cancel: &cancel,
            progress: &mut |_| {},
        },
    )
}

#[test]
fn the_model_allows_only_the_fixed_outcome() {
    for (name, values) in FIXED {
        let test = load(name);
        let v = model::check(&test).expect("the model decides it");
        let expected: BTreeSet<Outcome> = [Outcome(values.to_vec())].into();
        assert_eq!(v.allowed, expected, "{}", test.name);
    }
}

#[test]
fn texture_and_surface_objects_give_the_fixed_outcome() {
    for (name, values) in FIXED {
        let test = load(name);
        match (cuda::status(), run(&test)) {
            (Err(why), Err(e)) => {
                common::not_checked(&format!(
                    "{}: the outcomes on a GPU ({why}); the failure is checked",
                    test.name
                ));
                // The kernel was made and handed to the driver: no refusal of its proxy.
                assert!(!matches!(e, RunError::Unsupported(_)), "{}: {e}", test.name);
                assert!(e.to_string().contains(&why), "{}: {e}", test.name);
            }
            (Err(why), Ok(_)) => panic!("{}: ran although detection says {why}", test.name),
            (Ok(gpu), r) => {
                eprintln!(
                    "a GPU is usable ({gpu}); {}: checking its outcomes",
                    test.name
                );
                let r = r.unwrap_or_else(|e| panic!("{}: {e}", test.name));
                let seen: BTreeSet<&Outcome> = r.histogram.counts.keys().collect();
                let expected = Outcome(values.to_vec());
                assert_eq!(seen, [&expected].into(), "{}: {:?}", test.name, r.histogram);
                assert_eq!(r.histogram.unexpected, 0, "{}", test.name);
                assert!(r.info.instances >= 200_000, "{}", test.name);
                let made = r.info.provenance.get("kernel.objects");
                assert!(made.is_some(), "{}: no objects recorded", test.name);
            }
        }
    }
}
