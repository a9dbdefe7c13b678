//! Every kernel the project's own tests generate, under every preset, launches on a Hopper GPU
//! as far as can be checked without one: the launch configurations pass the device limits of an
//! H100, the cluster dimension of the layout is the one the PTX states (so the launch and the
//! kernel agree), and the PTX ISA is one a CUDA 12.8 driver accepts.

use ptx_litmus::codegen::PRESETS;
use ptx_litmus::codegen::{self, CodegenError, Stress};
use ptx_litmus::harness::cuda::{ClusterMode, DeviceLimits, LaunchPlan};
use ptx_litmus::litmus;
use std::path::PathBuf;

fn h100() -> DeviceLimits {
    DeviceLimits::h100_sxm()
}

/// The `k` of `.reqnctapercluster k, 1, 1` in the test kernel, or 0.
fn stated_cluster_width(ptx: &str) -> u32 {
    ptx.lines()
        .find_map(|l| l.trim().strip_prefix(".reqnctapercluster"))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |k| k.trim().parse().expect("a cluster width"))
}

#[test]
fn every_generated_kernel_has_a_valid_launch_on_an_h100() {
    let files = litmus::discover(&[PathBuf::from("litmus")]).expect("litmus/ is readable");
    assert!(files.len() > 100, "only {} tests found", files.len());
    let (mut planned, mut clustered, mut unsupported) = (0, 0, 0);
    for path in &files {
        let test = litmus::parse_file(path).expect("project tests parse");
        for preset in PRESETS {
            let stress = Stress::preset(preset).expect("a preset");
            let kernel = match codegen::build(&test, &stress) {
                Ok(k) => k,
                Err(CodegenError::Unsupported { .. }) => {
                    unsupported += 1;
                    continue;
                }
                Err(e) => panic!("{}: {preset}: {e}", path.display()),
            };
            let l = &kernel.layout;
            let width = stated_cluster_width(&kernel.ptx);
            let expected = l.test_launch.cluster.map_or(0, |c| c[0]);
            assert!(
                width == expected || (width == 0 && expected == 1),
                "{}: {preset}: the PTX states clusters of {width}, the layout {expected}",
                path.display()
            );
            let test_plan = LaunchPlan::new(&l.test_launch, &h100(), width)
                .unwrap_or_else(|e| panic!("{}: {preset}: {e}", path.display()));
            // The kernel states its size, so the launch must not set it again.
            if width > 1 {
                assert_eq!(test_plan.cluster, ClusterMode::CompileTime([width, 1, 1]));
                clustered += 1;
            }
            // Every instance slot of the collect kernel has a thread.
            let collect = LaunchPlan::new(&l.collect_launch, &h100(), 0)
                .unwrap_or_else(|e| panic!("{}: {preset}: {e}", path.display()));
            assert!(collect.threads() >= l.instances);
            assert!(test_plan.ctas() >= u64::from(l.testing_ctas));
            assert!(
                kernel.ptx_version <= (8, 7),
                "{}: PTX ISA {:?} is newer than a CUDA 12.8 driver accepts",
                path.display(),
                kernel.ptx_version
            );
            planned += 1;
        }
    }
    eprintln!(
        "{planned} kernels planned ({clustered} cluster launches), {unsupported} unsupported"
    );
    assert!(
        clustered > 0,
        "no test of litmus/cluster needs a cluster launch"
    );
}
