//! Every test of `litmus/` and every non-proxy test of the published corpus generates a kernel
//! that ptxas assembles for sm_90, and the SASS check finds every memory operation, fence and
//! barrier of every role in program order with the strength and scope the PTX asked for; the
//! tests of `litmus/` do so under the other presets too, whose simpler set-up code gives
//! ptxas other chances to optimise across a role's call. Proxy
//! tests generate too unless they use a texture, surface or constant proxy (generic aliases
//! run through a second virtual mapping of the memory), and tests whose barrier quorum no
//! execution meets, which are refused with that reason.

mod common;

use common::sass::*;
use common::*;
use ptx_litmus::sass;

#[test]
fn every_kernel_assembles_and_keeps_every_test_operation() {
    if !tools_present("every_kernel_assembles_and_keeps_every_test_operation") {
        return;
    }
    let mut kernels = Vec::new();
    let mut refused = Vec::new();
    let mut proxies_refused = 0;
    let mut hangs_refused = 0;
    for (path, test, proxy) in all_tests() {
        match kernel(&test) {
            Ok(k) => kernels.push((path, k)),
            Err(e) => {
                let why = e.to_string().to_lowercase();
                let texture = ["texture", "surface", "constant"]
                    .iter()
                    .any(|p| why.contains(p));
                if proxy && texture {
                    proxies_refused += 1;
                } else if why.contains("no execution completes") {
                    // A barrier quorum no execution meets: nothing to run, on any backend.
                    hangs_refused += 1;
                } else {
                    refused.push(format!("{}: {e}", path.display()));
                }
            }
        }
    }
    assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));
    assert!(kernels.len() >= 300, "only {} kernels", kernels.len());
    // Generic aliases: kernels that reach one location through a second view.
    let aliased = kernels
        .iter()
        .filter(|(_, k)| k.layout.memory_views > 1)
        .count();
    eprintln!("{aliased} kernels with generic aliases; {proxies_refused} texture/surface/constant tests refused; {hangs_refused} hanging tests refused");
    assert!(
        hangs_refused >= 2,
        "the hanging quorum tests of litmus/barrier-quorum were not refused"
    );
    assert!(aliased >= 7, "only {aliased} kernels with generic aliases");
    // Barriers with a loaded id or count run in software; both forms are among the kernels.
    let soft = |arrive: bool| {
        kernels.iter().any(|(_, k)| {
            k.layout
                .shape
                .soft_barriers
                .iter()
                .any(|b| b.arrive == arrive)
        })
    };
    assert!(soft(false) && soft(true), "software barriers not exercised");
    let refs: Vec<_> = kernels.iter().map(|(_, k)| k).collect();
    let results = sass::check_many(&refs, "sm_90");
    let mut failures = Vec::new();
    let mut checks = Vec::new();
    for ((path, _), r) in kernels.iter().zip(results) {
        match r {
            Ok(c) if c.ok() => checks.push(c),
            Ok(c) => failures.push(format!("{}: {}", path.display(), c.errors().join("; "))),
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The mapping the check relies on, as observed: an acquire load keeps its strength and
    // invalidates L1; a release store is fenced first; a fence.sc.gpu is MEMBAR.SC.GPU.
    let table = sass::mapping_table(&checks);
    let seen = |ptx: &str, sass: &str| {
        let found = table.get(ptx);
        assert!(
            found.is_some_and(|s| s.contains(sass)),
            "{ptx} → {sass} not seen: {found:?}"
        );
    };
    seen("ld.acquire.gpu.global.u32", "LDG.E.STRONG.GPU + CCTL.IVALL");
    seen(
        "st.release.gpu.global.u32",
        "MEMBAR.ALL.GPU + STG.E.STRONG.GPU",
    );
    seen("fence.sc.gpu", "MEMBAR.SC.GPU + CCTL.IVALL");
    seen("ld.weak.global.u32", "LDG.E");
}

#[test]
fn every_preset_s_kernels_keep_every_test_operation() {
    if !tools_present("every_preset_s_kernels_keep_every_test_operation") {
        return;
    }
    let dirs = [root().join("litmus")];
    let files = ptx_litmus::litmus::discover(&dirs).unwrap();
    let tests: Vec<_> = files
        .iter()
        .map(|p| (p, ptx_litmus::litmus::parse_file(p).unwrap()))
        .collect();
    for (name, stress) in [
        ("basic", ptx_litmus::codegen::Stress::basic()),
        ("interleave", ptx_litmus::codegen::Stress::interleave()),
    ] {
        let mut kernels = Vec::new();
        for (path, test) in &tests {
            match ptx_litmus::codegen::build(test, &stress) {
                Ok(k) => kernels.push((path.display().to_string(), k)),
                Err(e) if e.to_string().contains("no execution completes") => {}
                Err(e) => panic!("{name}: {}: {e}", path.display()),
            }
        }
        assert!(
            kernels.len() >= 220,
            "{name}: only {} kernels",
            kernels.len()
        );
        let failures = sass_failures(&kernels);
        assert!(failures.is_empty(), "{name}:\n{}", failures.join("\n"));
    }
}

/// The random streams of `model-diff` (every semantics and scope of `ld`, `st`, `fence`,
/// `atom`, `red`, and CTA barriers with quorums) give kernels that all pass the SASS check,
/// none refused: every combination the generator draws is one the GPU can run.
#[test]
fn every_random_test_s_kernel_keeps_every_operation() {
    if !tools_present("every_random_test_s_kernel_keeps_every_operation") {
        return;
    }
    let mut kernels = Vec::new();
    use ptx_litmus::gen::random::{test_text, Stream};
    for stream in [Stream::Plain, Stream::Barriers] {
        for i in 0..40 {
            let text = test_text(13, i, stream);
            let test = ptx_litmus::litmus::parse(&text, std::path::Path::new("random.litmus"))
                .expect("the generator writes valid tests");
            let k = kernel(&test).unwrap_or_else(|e| panic!("{}: {e}\n{text}", test.name));
            kernels.push((test.name, k));
        }
    }
    let failures = sass_failures(&kernels);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The SASS check of each labelled kernel for sm_90: every failure as `label: why`.
fn sass_failures(kernels: &[(String, ptx_litmus::codegen::Kernel)]) -> Vec<String> {
    let refs: Vec<_> = kernels.iter().map(|(_, k)| k).collect();
    kernels
        .iter()
        .zip(sass::check_many(&refs, "sm_90"))
        .filter_map(|((label, _), r)| match r {
            Ok(c) if c.ok() => None,
            Ok(c) => Some(format!("{label}: {}", c.errors().join("; "))),
            Err(e) => Some(format!("{label}: {e}")),
        })
        .collect()
}
