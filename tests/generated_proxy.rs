//! The generated `proxy` family (`litmus/generated/proxy`): the model's verdict of every test
//! is the row of its `expectations.tsv`; for each pair of proxies a missing proxy fence leaves
//! the weak outcome allowed and the right one forbids it (PTX ISA §8.9.5, as NVIDIA's
//! mixedproxy model says); and tests of the same shape in the Dat3M corpus (mixedproxy's
//! `MP_cta`/`MP_gpu` tests) have the same published verdict.
//! Where a fence sits matters too: a proxy fence acts in its CTA, only on the causality path.

mod common;

use common::*;
use ptx_litmus::codegen::{self, CodegenError, Stress};
use ptx_litmus::gen::Family;
use ptx_litmus::litmus::ast::{LocationKind, Proxy, Quantifier, Test};
use ptx_litmus::litmus::parse_file;
use ptx_litmus::model::{check, CheckResult};
use std::collections::BTreeMap;

const FAMILY: &str = "litmus/generated/proxy";

fn tests() -> Vec<Test> {
    let fam = Family::read(&root().join(FAMILY).join("family.txt")).unwrap();
    fam.generate()
        .unwrap()
        .into_iter()
        .map(|g| g.test)
        .collect()
}

/// Whether the model allows an outcome satisfying the test's `exists` proposition.
fn weak_allowed(t: &Test) -> bool {
    assert_eq!(t.condition.quantifier, Quantifier::Exists, "{}", t.name);
    let v = check(t).unwrap_or_else(|e| panic!("{}: {e}", t.name));
    v.result == CheckResult::Ok
}

/// Test name to whether the model allows its weak outcome.
fn verdicts() -> BTreeMap<String, bool> {
    tests()
        .iter()
        .map(|t| (t.name.clone(), weak_allowed(t)))
        .collect()
}

/// The rows of the family's expectations: test name to `Allowed`.
fn expectations() -> BTreeMap<String, bool> {
    let text = std::fs::read_to_string(root().join(FAMILY).join("expectations.tsv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 3, "{l}");
            assert!(
                cols[2].starts_with('§'),
                "a reason with its ISA section: {l}"
            );
            let name = cols[0].strip_suffix(".litmus").expect("a file name");
            let allowed = match cols[1] {
                "Allowed" => true,
                "Forbidden" => false,
                other => panic!("{other}: expected Allowed or Forbidden"),
            };
            (name.to_string(), allowed)
        })
        .collect()
}

#[test]
fn every_proxy_test_has_the_models_verdict_in_the_expectations() {
    let model = verdicts();
    let rows = expectations();
    assert_eq!(
        model.keys().collect::<Vec<_>>(),
        rows.keys().collect::<Vec<_>>(),
        "the rows of expectations.tsv and the family's tests differ"
    );
    let wrong: Vec<&String> = model.keys().filter(|n| model[*n] != rows[*n]).collect();
    assert!(
        wrong.is_empty(),
        "the model differs from the row: {wrong:?}"
    );
    let forbidden = model.values().filter(|a| !**a).count();
    assert!(forbidden > 50 && forbidden < model.len() / 2, "{forbidden}");
}

/// The proxy fences a reading thread may put before its read, by their `fence.proxy` word.
const FENCES: [&str; 4] = ["alias", "texture", "surface", "constant"];

/// Asserts that the test `name(None)` (no fence before the read) allows the weak outcome, that
/// `name(Some(right))` forbids it, and that every other proxy fence allows it.
fn flips(model: &BTreeMap<String, bool>, right: &str, name: impl Fn(Option<&str>) -> String) {
    let allowed = |n: String| {
        *model
            .get(&n)
            .unwrap_or_else(|| panic!("{n}: not generated"))
    };
    assert!(
        allowed(name(None)),
        "{}: forbidden without a fence",
        name(None)
    );
    for f in FENCES {
        let n = name(Some(f));
        assert_eq!(allowed(n.clone()), f != right, "{n}");
    }
}

/// `_fence.proxy.KIND` when a fence is given.
fn fence_part(f: Option<&str>) -> String {
    f.map_or(String::new(), |k| format!("_fence.proxy.{k}"))
}

/// Where the flag's release/acquire synchronises: one CTA at .cta, two CTAs at .gpu.
const SYNCED: [(&str, &str); 2] = [("samecta", "cta"), ("diffcta", "gpu")];

/// The reads through another name of `x` and the fence each needs.
const READS: [(&str, &str); 4] = [
    ("ali", "alias"),
    ("tex", "texture"),
    ("sur", "surface"),
    ("con", "constant"),
];

#[test]
fn a_missing_proxy_fence_allows_the_weak_outcome_and_the_right_one_forbids_it() {
    let model = verdicts();
    for (p, s) in SYNCED {
        for (r, right) in READS {
            // A generic write, read through the other name: MP, SB, CoRR.
            flips(&model, right, |f| {
                format!("MP+wk_rel.{s}+acq.{s}{}_{r}-{p}", fence_part(f))
            });
            flips(&model, right, |f| {
                let t1 = format!("rlx.{s}_fence.sc.{s}_rlx.{s}");
                format!("SB+rlx.{s}_fence.sc.{s}{}_{r}+{t1}-{p}", fence_part(f))
            });
            flips(&model, right, |f| {
                format!("CoRR+rlx.{s}+rlx.{s}{}_{r}-{p}", fence_part(f))
            });
            // A surface write, let out by a surface fence in its thread; surface accesses in
            // one CTA need none, so that pair is asserted below.
            if r != "sur" || p == "diffcta" {
                flips(&model, right, |f| {
                    format!(
                        "MP+sur_fence.proxy.surface_rel.{s}+acq.{s}{}_{r}-{p}",
                        fence_part(f)
                    )
                });
            }
        }
        // A surface write read by a generic read: the writer's surface fence decides.
        assert!(model[&format!("MP+sur_rel.{s}+acq.{s}_wk-{p}")]);
        assert!(!model[&format!("MP+sur_fence.proxy.surface_rel.{s}+acq.{s}_wk-{p}")]);
    }
    // One proxy in one CTA is ordered without a proxy fence; across CTAs it is not.
    assert!(!model["MP+sur_rel.cta+acq.cta_sur-samecta"]);
    assert!(model["MP+sur_rel.gpu+acq.gpu_sur-diffcta"]);
    // Where the flag does not synchronise (.cta across CTAs), no proxy fence forbids anything;
    // a weak surface write is observed by no read, so CoRR after it stays allowed.
    for (n, allowed) in &model {
        if (n.ends_with("-diffcta") && n.contains(".cta")) || n.starts_with("CoRR+sur") {
            assert!(allowed, "{n}");
        }
    }
}

/// Corpus tests (mixedproxy's MP tests, in the Dat3M corpus) and the generated test of the
/// same shape: the same threads, placement, proxies and fences, values renamed.
const SAME_SHAPE: [(&str, &str); 18] = [
    (
        "Nvidia/proxy/Proxy-MP-gen-sur-surfaceFence",
        "MP+wk_fence.proxy.surface_rel.cta+acq.cta_sur-samecta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gpu5",
        "MP+wk_fence.proxy.surface_rel.gpu+acq.gpu_sur-diffcta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gen-sur-no-proxyFence",
        "MP+wk_rel.cta+acq.cta_sur-samecta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gen-sur-surfaceFence1",
        "MP+wk_rel.cta+acq.cta_fence.proxy.surface_sur-samecta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-sur-gen-no-proxyFence",
        "MP+sur_rel.cta+acq.cta_wk-samecta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-sur-gen-surfaceFence1",
        "MP+sur_rel.cta+acq.cta_fence.proxy.surface_wk-samecta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-sur-sur-no-proxyFence",
        "MP+sur_rel.cta+acq.cta_sur-samecta",
    ),
    (
        "Manual/proxy/Proxy-Const-MP-cause1",
        "MP+wk_rel.cta+acq.cta_fence.proxy.constant_con-samecta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gpu1",
        "MP+wk_rel.gpu+acq.gpu_wk-diffcta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gpu2",
        "MP+wk_rel.gpu+acq.gpu_sur-diffcta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gpu3",
        "MP+sur_rel.gpu+acq.gpu_wk-diffcta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gpu4",
        "MP+sur_rel.gpu+acq.gpu_sur-diffcta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gpu6",
        "MP+sur_fence.proxy.surface_rel.gpu+acq.gpu_wk-diffcta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gpu7",
        "MP+sur_fence.proxy.surface_rel.gpu+acq.gpu_tex-diffcta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gpu12",
        "MP+sur_fence.proxy.surface_rel.gpu+acq.gpu_fence.proxy.texture_tex-diffcta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gpu13",
        "MP+wk_rel.gpu+acq.gpu_fence.proxy.surface_sur-diffcta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gpu14",
        "MP+sur_rel.gpu+acq.gpu_fence.proxy.surface_wk-diffcta",
    ),
    (
        "Nvidia/proxy/Proxy-MP-gpu16",
        "MP+sur_rel.gpu+acq.gpu_fence.proxy.texture_tex-diffcta",
    ),
];

#[test]
fn generated_proxy_tests_have_the_published_verdict_of_corpus_tests_of_their_shape() {
    let Some(dat3m) = dat3m() else {
        common::not_checked(
            "../shared/corpus/dat3m is absent (the third-party corpus is not in this checkout)",
        );
        return;
    };
    let csv = std::fs::read_to_string(dat3m.join("expected/PTXv7_5-expected.csv")).unwrap();
    let rows = expectations();
    for (rel, generated) in SAME_SHAPE {
        let path = format!("litmus/PTX/{rel}.litmus");
        let published = csv
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{path},")))
            .unwrap_or_else(|| panic!("{path}: no published verdict"));
        let corpus = parse_file(&dat3m.join(&path)).unwrap();
        // `1`: the condition holds; the weak outcome is allowed when it is `exists`.
        let corpus_weak =
            (published.trim() == "1") == (corpus.condition.quantifier == Quantifier::Exists);
        assert_eq!(corpus.threads.len(), 2, "{rel}");
        assert_eq!(
            rows[generated], corpus_weak,
            "{generated} and {rel} (published {published}) differ"
        );
    }
}

#[test]
fn a_proxy_fence_acts_in_its_cta_and_only_on_the_path_from_the_write() {
    let model = verdicts();
    for (p, s) in SYNCED {
        for (r, right) in READS {
            // In the writer's thread, between the write and the release: a proxy fence is in
            // the reader's CTA only when the two share one; fence.proxy.alias acts anywhere.
            let n = format!("MP+wk_fence.proxy.{right}_rel.{s}+acq.{s}_{r}-{p}");
            assert_eq!(model[&n], p == "diffcta" && r != "ali", "{n}");
            // In the reader's thread before the acquire: off the path from the write.
            for f in FENCES {
                let n = format!("MP+wk_rel.{s}+fence.proxy.{f}_acq.{s}_{r}-{p}");
                assert!(model[&n], "{n}");
            }
        }
    }
}

#[test]
fn every_proxy_test_of_generic_names_and_alias_fences_has_a_kernel_the_rest_a_reason() {
    let (mut built, mut refused) = (0, 0);
    for t in tests() {
        // A texture, surface or constant name, or a fence for those proxies (PTX has none).
        let text = ptx_litmus::litmus::print(&t);
        let non_generic = t.locations.iter().any(
            |l| matches!(l.kind, LocationKind::Alias { proxy, .. } if proxy != Proxy::Generic),
        ) || ["texture", "surface", "constant"]
            .iter()
            .any(|k| text.contains(&format!("fence.proxy.{k}")));
        match codegen::build(&t, &Stress::full_stress()) {
            Ok(_) => built += 1,
            Err(CodegenError::Unsupported { construct, reason }) if non_generic => {
                assert!(!construct.is_empty() && !reason.is_empty(), "{}", t.name);
                refused += 1;
            }
            Err(e) => panic!("{}: {e}", t.name),
        }
    }
    eprintln!("{built} proxy-family kernels built, {refused} refused with a reason");
    assert!(built >= 48, "{built}");
}
