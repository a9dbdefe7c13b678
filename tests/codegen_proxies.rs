//! The corpus's mixed-proxy tests on the GPU: each one either emits a kernel or is refused
//! with the reason `docs/proxies.md` gives for it, and the table there lists every one of them
//! as the code decides (so the page stays true).

mod common;

use common::sass::kernel;
use common::*;
use ptx_litmus::codegen::proxy;
use ptx_litmus::codegen::CodegenError;
use ptx_litmus::litmus::ast::{Fence, Instr, Proxy, ProxyFenceKind, Test};
use std::collections::BTreeMap;

/// The short name `docs/proxies.md` gives a refusal reason.
fn reason_key(reason: &str) -> &'static str {
    match reason {
        r if r == proxy::UNSPELLED_FENCE => "no PTX fence",
        r if r == proxy::CONSTANT_WRITTEN => "constant written",
        r if r == proxy::CONSTANT_UNWRITTEN => "no constant view",
        r if r == proxy::SURFACE_AND_GENERIC => "surface and generic",
        r if r == proxy::OBJECT_OF_SHARED => "object of shared memory",
        r if r == proxy::TEXTURE_OF_ARRAY => "texture of an array",
        r if r == proxy::OBJECT_THROUGH_ALIAS => "object through an alias",
        _ => "other",
    }
}

/// Whether a test accesses memory through the texture, surface or constant proxy, or has one
/// of their fences: the corpus's 119 mixed-proxy tests.
fn mixed(test: &Test) -> bool {
    test.threads.iter().flat_map(|t| &t.body).any(|i| match i {
        Instr::Fence(Fence::Proxy(k)) => *k != ProxyFenceKind::Alias,
        _ => i.proxy().is_some_and(|p| p != Proxy::Generic),
    })
}

/// Per corpus proxy test file (without `.litmus`; the corpus's `proxy/` folders), whether it
/// is a mixed-proxy test and its row as `docs/proxies.md` writes it: `runs`, or `refused`,
/// the construct and the reason's short name.
fn decided() -> Option<BTreeMap<String, (bool, [String; 3])>> {
    let c = corpus()?;
    let dirs = [c.join("Nvidia/proxy"), c.join("Manual/proxy")];
    let mut rows = BTreeMap::new();
    for (path, test) in ptx_litmus::litmus::load(&dirs) {
        let test = test.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let row = match kernel(&test) {
            Ok(_) => ["runs".into(), String::new(), String::new()],
            Err(CodegenError::Unsupported { construct, reason }) => {
                ["refused".into(), construct, reason_key(&reason).into()]
            }
            Err(e) => panic!("{}: {e}", path.display()),
        };
        // By file: two files of the corpus name their test as another file does.
        let file = path.file_stem().expect("a test file").to_string_lossy();
        let old = rows.insert(file.into_owned(), (mixed(&test), row));
        assert!(old.is_none(), "two files named as {}", path.display());
    }
    Some(rows)
}

/// The rows of the corpus table of `docs/proxies.md`: `| test | GPU | construct | why |`.
fn documented() -> BTreeMap<String, [String; 3]> {
    let page = std::fs::read_to_string(root().join("docs/proxies.md")).expect("docs/proxies.md");
    page.lines()
        .filter(|l| l.starts_with("| `Proxy-"))
        .map(|l| {
            let cells: Vec<String> = l
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().trim_matches('`').to_string())
                .chain(std::iter::repeat(String::new()))
                .take(4)
                .collect();
            (cells[0].clone(), [0, 1, 2].map(|k| cells[k + 1].clone()))
        })
        .collect()
}

#[test]
fn every_corpus_proxy_test_emits_or_is_refused_as_documented() {
    let Some(rows) = decided() else {
        common::not_checked("../shared/corpus is absent");
        return;
    };
    let docs = documented();
    let mut wrong = Vec::new();
    for (name, (_, row)) in &rows {
        if docs.get(name) != Some(row) {
            let [gpu, construct, why] = row;
            wrong.push(format!("| `{name}` | {gpu} | {construct} | {why} |"));
        }
    }
    let extra: Vec<_> = docs.keys().filter(|k| !rows.contains_key(*k)).collect();
    assert!(
        wrong.is_empty() && extra.is_empty(),
        "docs/proxies.md disagrees with the code; the rows should read:\n{}\nlisted but absent: {extra:?}",
        wrong.join("\n")
    );
    let count = |what: &str| {
        let hit = |(m, r): &&(bool, [String; 3])| *m && r.iter().any(|c| c == what);
        rows.values().filter(hit).count()
    };
    let mixed = rows.values().filter(|(m, _)| *m).count();
    eprintln!(
        "{} corpus proxy tests, {mixed} of them mixed-proxy: {} of those emit, {} are refused \
         for a fence PTX lacks, {} for surface and generic access to one location, {} for a \
         written constant",
        rows.len(),
        count("runs"),
        count("no PTX fence"),
        count("surface and generic"),
        count("constant written"),
    );
    assert_eq!(rows.len(), 129);
    assert_eq!(mixed, 119);
    assert_eq!(count("no PTX fence"), 102);
    assert_eq!(count("object through an alias"), 4);
    assert_eq!(count("runs"), 3);
    assert_eq!(count("surface and generic"), 10);
}

/// Message passing from a generic store to a texture read with no proxy fence, and two texture
/// reads of one location (which ptxas must neither merge nor reorder).
const TEXTURE_TESTS: [&str; 2] = [
    "PTX MP+tex\n{\nx = 0;\nt @ texture aliases x;\nflag = 0;\n}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r0, flag ;\n st.release.gpu flag, 1 | tld.weak r1, t ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
    "PTX CoRR+tex\n{\nx = 0;\nt @ texture aliases x;\n}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.relaxed.gpu x, 1 | tld.weak r0, t ;\n | fence.proxy.alias ;\n | tld.weak r1, x ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
];

fn texture_kernels() -> Vec<ptx_litmus::codegen::Kernel> {
    TEXTURE_TESTS
        .iter()
        .map(|t| {
            let test = ptx_litmus::litmus::parse(t, std::path::Path::new("t.litmus")).unwrap();
            kernel(&test).unwrap_or_else(|e| panic!("{}: {e}", test.name))
        })
        .collect()
}

#[test]
fn texture_reads_are_texel_fetches_of_the_locations_word() {
    use ptx_litmus::codegen::ptx::POp;
    use ptx_litmus::codegen::Param;
    for k in texture_kernels() {
        assert!(k.layout.linear_texture, "{}", k.layout.test);
        assert_eq!(k.layout.params().last(), Some(&Param::Texture));
        assert!(k.ptx.contains(".param .u64 p_tex"), "{}", k.ptx);
        let tlds: usize = k
            .roles
            .iter()
            .map(|r| {
                let n = r.ops.iter().filter(|o| matches!(o.op, POp::Tld { .. }));
                n.count()
            })
            .sum();
        let in_ptx = k.ptx.matches("tex.1d.v4.u32.s32").count();
        assert!(
            tlds >= 1 && in_ptx == tlds,
            "{}: {tlds} tld, {in_ptx} in the PTX",
            k.layout.test
        );
    }
    // A kernel without texture reads takes no texture object.
    let plain = kernel(&load("litmus/mp/MP+fence.acq.gpu+fence.rel.gpu.litmus")).unwrap();
    assert!(!plain.layout.linear_texture && !plain.ptx.contains("p_tex"));
}

/// The mixed-proxy tests of the corpus that emit a kernel, with their kernels.
fn running_corpus_kernels() -> Vec<ptx_litmus::codegen::Kernel> {
    let Some(c) = corpus() else {
        return Vec::new();
    };
    let dirs = [c.join("Nvidia/proxy"), c.join("Manual/proxy")];
    ptx_litmus::litmus::load(&dirs)
        .into_iter()
        .filter_map(|(_, t)| t.ok())
        .filter(mixed)
        .filter_map(|t| kernel(&t).ok())
        .collect()
}

#[test]
fn texture_and_surface_kernels_pass_the_sass_check_with_each_ptxas() {
    use ptx_litmus::sass::{self, tools};
    use ptx_litmus::toolchain::store;
    let name = "texture_and_surface_kernels_pass_the_sass_check_with_each_ptxas";
    if !common::sass::tools_present(name) {
        return;
    }
    let mut ptxas = vec![tools::find(tools::Tool::Ptxas).unwrap()];
    match store::installed(&store::root())
        .into_iter()
        .find(|i| i.version.to_string().starts_with("13.0") && i.has_ptxas())
    {
        Some(i) => ptxas.push(i.ptxas()),
        None => common::not_checked(
            "ptxas 13.0 is not in the toolchain store: checked with .venv's only",
        ),
    }
    let corpus = running_corpus_kernels();
    match corpus.len() {
        0 => common::not_checked("../shared/corpus is absent: the corpus's mixed-proxy kernels"),
        n => assert_eq!(n, 3, "mixed-proxy corpus tests that emit"),
    }
    let mut passed = 0;
    for k in texture_kernels().iter().chain(&corpus) {
        for p in &ptxas {
            let cubin = tools::assemble_with(p, &k.ptx, "sm_90").unwrap();
            let check = sass::check_sass(k, &tools::disassemble(&cubin).unwrap());
            assert!(
                check.ok(),
                "{} with {}: {:?}",
                k.layout.test,
                p.display(),
                check.errors()
            );
        }
        passed += 1;
    }
    let used: Vec<String> = ptxas.iter().map(|p| p.display().to_string()).collect();
    eprintln!(
        "{passed} kernels ({} of the corpus) assemble and pass the SASS check with {}",
        corpus.len(),
        used.join(" and ")
    );
}
