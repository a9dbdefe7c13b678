//! The generated suites (`litmus/generated/`, `ptx-litmus gen`): every committed family
//! regenerates byte for byte; the cuda-litmus PLDI'26 space has its 1,306 variants under the
//! published names (compared with results.csv when PTX_LITMUS_PLDI26_CSV names a copy); a
//! sample of every family is checked by the model, assembled and SASS-checked, and run on the
//! CPU with no forbidden outcome; the default suite walk leaves the generated suites out.

mod common;

use common::*;
use ptx_litmus::codegen::CodegenError;
use ptx_litmus::gen::cycle::Cycle;
use ptx_litmus::gen::family::expand;
use ptx_litmus::gen::{shapes, Family};
use ptx_litmus::harness::Budget;
use ptx_litmus::litmus::{
    self,
    ast::{LocationKind, Proxy, Quantifier, Test},
};
use ptx_litmus::model::check;
use ptx_litmus::sass as optcheck;
use ptx_litmus::verdict::{judge, Status};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn families() -> Vec<(PathBuf, Family)> {
    families_in("litmus/generated")
}

fn families_in(rel: &str) -> Vec<(PathBuf, Family)> {
    let dir = root().join(rel);
    let mut out: Vec<(PathBuf, Family)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
        .map(|e| e.unwrap().path().join("family.txt"))
        .filter(|p| p.is_file())
        .map(|p| {
            let f = Family::read(&p).unwrap_or_else(|e| panic!("{e}"));
            (p, f)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_committed_family_regenerates_byte_for_byte() {
    let mut fams = families();
    assert!(fams.len() >= 11, "only {} families", fams.len());
    // The model's large cases for `bench model` are generated the same way.
    fams.extend(families_in("benches/model"));
    for (path, fam) in fams {
        let dir = path.parent().unwrap();
        assert_eq!(
            dir.file_name().unwrap().to_str(),
            Some(fam.name.as_str()),
            "{}",
            path.display()
        );
        let tests = fam.generate().unwrap_or_else(|e| panic!("{e}"));
        let mut on_disk = file_names(dir);
        on_disk.retain(|n| n.ends_with(".litmus"));
        let mut wanted: Vec<String> = tests
            .iter()
            .map(|g| format!("{}.litmus", litmus::file_stem(&g.test.name)))
            .collect();
        wanted.sort();
        assert_eq!(
            on_disk, wanted,
            "{}: files differ from the family",
            fam.name
        );
        for g in &tests {
            let file = dir.join(format!("{}.litmus", litmus::file_stem(&g.test.name)));
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(
                text == g.text,
                "{} differs from what gen writes",
                file.display()
            );
            // The file parses back to the test it was generated from.
            assert_eq!(
                litmus::parse_file(&file).unwrap(),
                g.test,
                "{}",
                file.display()
            );
        }
    }
}

/// The variants per kernel that cuda-litmus's tuning files define (thread-block groupings ×
/// scopes × (orderings + fence scopes × fence placements)).
const PLDI26_COUNTS: [(&str, usize); 11] = [
    ("iriw", 240),
    ("isa2", 230),
    ("rwc", 110),
    ("wrc", 110),
    ("wrw_2w", 110),
    ("wwc", 150),
    ("two_2w", 32),
    ("three_2w", 160),
    ("z6_3", 160),
    ("paper_example1", 2),
    ("paper_example2", 2),
];

fn pldi26_names() -> Vec<String> {
    let mut names = Vec::new();
    for (_, fam) in families().into_iter().filter(|(_, f)| f.pldi26.is_some()) {
        names.extend(fam.variants().unwrap().into_iter().map(|v| v.name));
    }
    names.sort();
    names
}

#[test]
fn the_pldi26_space_has_every_published_variant() {
    let names = pldi26_names();
    assert_eq!(names.len(), 1306);
    let mut per: BTreeMap<&str, usize> = BTreeMap::new();
    for n in &names {
        *per.entry(n.split("_TB_").next().unwrap()).or_default() += 1;
    }
    assert_eq!(per, PLDI26_COUNTS.into_iter().collect::<BTreeMap<_, _>>());
    let Some(csv) = std::env::var_os("PTX_LITMUS_PLDI26_CSV") else {
        not_checked("the_pldi26_space_has_every_published_variant: PTX_LITMUS_PLDI26_CSV is not set: names and verdicts against cuda-litmus's results.csv (counts only)");
        return;
    };
    let text = std::fs::read_to_string(&csv).expect("PTX_LITMUS_PLDI26_CSV names a readable file");
    let mut published: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').next())
        .map(str::to_string)
        .collect();
    published.sort();
    assert_eq!(names, published);
    let out = bin().args(["agree"]).arg(&csv).output().unwrap();
    let stdout = text_of(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text_of(&out.stderr));
    assert!(stdout.contains("| all | 1306 | 1306 |"), "{stdout}");
}

fn text_of(b: &[u8]) -> String {
    common::text(b)
}

/// The first, middle and last test of every family.
fn sample() -> Vec<Test> {
    let mut out = Vec::new();
    for (_, fam) in families() {
        let tests = fam.generate().unwrap();
        for i in [0, tests.len() / 2, tests.len() - 1] {
            out.push(tests[i].test.clone());
        }
    }
    out
}

/// A test made from a cycle asks whether the cycle happens, and a cycle of program order and
/// communication is what no sequentially consistent execution has: no SC outcome may satisfy
/// the condition of any test of a cycle family (a test whose reads or final values were
/// numbered against the cycle's coherence order would ask something else).
#[test]
fn no_sequentially_consistent_execution_makes_a_cycle_happen() {
    let mut checked = 0;
    for (path, fam) in families() {
        if fam.random.is_none() && fam.wide.is_empty() {
            checked += assert_cycles_unreachable_under_sc(&fam, &path.display().to_string());
        }
    }
    assert!(checked >= 4000, "only {checked} tests of cycle families");
}

/// Asserts that no SC outcome of any test of `fam` satisfies its condition; returns how many
/// tests it checked.
fn assert_cycles_unreachable_under_sc(fam: &Family, what: &str) -> usize {
    let tests = fam.generate().unwrap_or_else(|e| panic!("{e}"));
    for g in &tests {
        let t = &g.test;
        let model = check(t).unwrap_or_else(|e| panic!("{}: {e}", t.name));
        assert_eq!(t.condition.quantifier, Quantifier::Exists, "{}", t.name);
        let sc = model
            .sc
            .iter()
            .find(|o| o.satisfies(&model.observables, &t.condition.prop));
        assert!(
            sc.is_none(),
            "{} ({what}): the SC outcome {sc:?} makes the cycle happen",
            t.name
        );
    }
    tests.len()
}

/// Every critical cycle of the broad pool ([`BROAD_CYCLES`]) is a test of the cycle: no SC
/// execution makes it happen.
#[test]
fn every_enumerated_cycle_is_a_test_that_sc_never_passes() {
    let fam = Family::parse(BROAD_CYCLES, std::path::Path::new("broad")).unwrap();
    let n = assert_cycles_unreachable_under_sc(&fam, "an enumeration");
    assert!(n >= 600, "only {n} cycles");
    let fam = Family::parse(RMW_CYCLES, std::path::Path::new("rmw")).unwrap();
    let n = assert_cycles_unreachable_under_sc(&fam, "an enumeration of RMWs");
    assert!(n >= 280, "only {n} RMW cycles");
}

/// The name of the one test of the `shape` line `shape` across CTAs; panics unless its text
/// holds each of `wanted`.
fn one_test_holding(shape: &str, wanted: &[&str]) -> String {
    let fam = format!("family one\nshape {shape}\nplacement diffcta\n");
    let tests = Family::parse(&fam, std::path::Path::new("one"))
        .unwrap()
        .generate()
        .unwrap();
    let [g] = &tests[..] else {
        panic!("{shape}: {} tests", tests.len())
    };
    for w in wanted {
        assert!(g.text.contains(w), "{w} not in {}", g.text);
    }
    g.test.name.clone()
}

/// The read and the write of an `Rmw` edge are one `atom.exch` (or `cas`, `add`): it acquires
/// with its read, releases with its write, stores the write's value and must return the read's.
#[test]
fn an_rmw_edge_is_one_exchange() {
    let name = one_test_holding(
        "M4 acq Rmw rel Rfe rlx.cta Rmw Rfe",
        &[
            "atom.acq_rel.gpu.exch r0, x, 1",
            "atom.relaxed.cta.exch r0, x, 2",
            "P0:r0 == 2 /\\ P1:r0 == 1",
        ],
    );
    assert!(
        name.starts_with("M4+atom.acq_rel.gpu+atom.rlx.cta-"),
        "{name}"
    );
    // A `cas` expects the value its read must return; an `add` adds what takes it to the value
    // written. The name tells the operation.
    let name = one_test_holding(
        "M4 Rmw(cas) Rfe Rmw(add) Rfe",
        &[
            "atom.relaxed.gpu.cas r0, x, 2, 1",
            "atom.relaxed.gpu.add r0, x, 1",
        ],
    );
    assert!(name.starts_with("M4+cas.rlx.gpu+add.rlx.gpu-"), "{name}");
}

/// The families name their shapes as the generator does: every cycle of a `shape` line has
/// that classic name, so a name means the same cycle wherever it appears.
#[test]
fn family_shapes_carry_the_classic_names_of_their_cycles() {
    let mut named = 0;
    for (path, fam) in families() {
        for (shape, pattern) in &fam.shapes {
            for text in expand(pattern).unwrap() {
                let c = Cycle::parse(&text).unwrap();
                assert_eq!(&shapes::name(&c), shape, "{}: {text}", path.display());
                named += 1;
            }
        }
    }
    assert!(named >= 100, "only {named} cycles");
}

#[test]
fn a_sample_of_every_family_checks_and_runs_on_the_cpu_within_the_model() {
    for test in sample() {
        let model = check(&test).unwrap_or_else(|e| panic!("{}: {e}", test.name));
        let run = common::cpu::run(&test, Budget::Instances(1_000), 3, Some(250))
            .unwrap_or_else(|e| panic!("{}: {e}", test.name));
        assert_eq!(
            run.histogram.total() + run.info.skipped,
            run.info.instances,
            "{}",
            test.name
        );
        let v = judge(&model, &run.histogram, &test.condition);
        assert_eq!(
            v.status,
            Status::Conformant,
            "{}: a forbidden outcome on the CPU",
            test.name
        );
    }
}

#[test]
fn a_sample_of_every_family_assembles_and_keeps_every_operation() {
    if !common::sass::tools_present("a_sample_of_every_family_assembles_and_keeps_every_operation")
    {
        return;
    }
    let mut tests = Vec::new();
    let mut kernels = Vec::new();
    for t in sample() {
        match common::sass::kernel(&t) {
            Ok(k) => {
                kernels.push(k);
                tests.push(t);
            }
            // Texture, surface and constant proxies are refused by the GPU harness with the
            // construct named; nothing else may be.
            Err(CodegenError::Unsupported { construct, .. }) if uses_a_non_generic_proxy(&t) => {
                eprintln!("{}: not assembled: the GPU refuses {construct}", t.name);
            }
            Err(e) => panic!("{}: {e}", t.name),
        }
    }
    assert!(kernels.len() > 60, "only {} kernels", kernels.len());
    let refs: Vec<_> = kernels.iter().collect();
    for (t, r) in tests.iter().zip(optcheck::check_many(&refs, "sm_90")) {
        let c = r.unwrap_or_else(|e| panic!("{}: {e}", t.name));
        assert!(c.ok(), "{}: {}", t.name, c.errors().join("; "));
    }
}

/// Whether a location of the test is another name for memory through the texture, surface or
/// constant proxy.
fn uses_a_non_generic_proxy(t: &Test) -> bool {
    t.locations
        .iter()
        .any(|l| matches!(l.kind, LocationKind::Alias { proxy, .. } if proxy != Proxy::Generic))
}

#[test]
fn the_default_suite_walk_leaves_generated_suites_out() {
    let own = litmus::discover(&[root().join("litmus")]).unwrap();
    assert!(own
        .iter()
        .all(|p| !p.components().any(|c| c.as_os_str() == "generated")));
    let generated = litmus::discover(&[root().join("litmus/generated")]).unwrap();
    assert!(generated.len() >= 1306, "{}", generated.len());
    let out = bin().args(["list"]).current_dir(root()).output().unwrap();
    let listed = common::text(&out.stdout);
    assert!(
        listed.trim_end().ends_with(&format!("{} tests", own.len())),
        "{listed}"
    );
}

#[test]
fn gen_check_finds_a_changed_file_and_bad_family_lines_are_named() {
    let dir = scratch("gen-check");
    let fam = dir.join("fam");
    std::fs::create_dir_all(&fam).unwrap();
    std::fs::write(
        fam.join("family.txt"),
        "family fam\nshape MP PodWW Rfe {rlx|acq} PodRR Fre\nplacement samecta diffcta\n",
    )
    .unwrap();
    let gen = |extra: &[&str]| bin().arg("gen").arg(&fam).args(extra).output().unwrap();
    assert!(gen(&[]).status.success());
    assert_eq!(gen(&["--check"]).status.code(), Some(0));
    let file = fam.join("MP+rlx.gpu_rlx.gpu+acq.gpu_rlx.gpu-samecta.litmus");
    let original = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, original.replace("exists", "~exists")).unwrap();
    std::fs::write(fam.join("Stale.litmus"), &original).unwrap();
    let out = gen(&["--check"]);
    let said = common::text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("MP+rlx.gpu_rlx.gpu+acq.gpu_rlx.gpu-samecta.litmus differs"),
        "{said}"
    );
    assert!(said.contains("Stale.litmus is not in the family"), "{said}");
    assert!(gen(&[]).status.success());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    assert!(!fam.join("Stale.litmus").exists());
    std::fs::write(
        fam.join("family.txt"),
        "family fam\nshape MP PodWW Rfe PodRR Fre\nplacement nearby\n",
    )
    .unwrap();
    let out = gen(&[]);
    let err = common::text(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("family.txt: placement `nearby`"), "{err}");
}

#[test]
fn the_campaign_manifest_runs_every_family_once() {
    let manifest = std::fs::read_to_string(root().join("campaign/manifest.txt")).unwrap();
    let mut named: Vec<String> = manifest
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(|l| l.split_whitespace())
        .filter_map(|w| w.strip_prefix("litmus/generated/"))
        .map(str::to_string)
        .collect();
    named.sort();
    let families: Vec<String> = families().into_iter().map(|(_, f)| f.name).collect();
    assert_eq!(
        named, families,
        "campaign/manifest.txt's gen- steps and litmus/generated differ"
    );
}

/// `gen --tests` writes the random stream that `model-diff` compares, file by file.
#[test]
fn gen_tests_writes_the_random_stream_of_model_diff() {
    let dir = fresh("gen-random");
    let out = bin()
        .args(["gen", "--tests", "5", "--seed", "3", "--barriers", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let names = file_names(&dir);
    assert_eq!(
        names,
        ["RB3-0", "RB3-1", "RB3-2", "RB3-3", "RB3-4"].map(|n| format!("{n}.litmus"))
    );
    for i in 0..5 {
        let written = std::fs::read_to_string(dir.join(format!("RB3-{i}.litmus"))).unwrap();
        assert_eq!(
            written,
            ptx_litmus::gen::random::test_text(3, i, ptx_litmus::gen::random::Stream::Barriers)
        );
    }
    // More than a stream's bound is refused before anything is written.
    let too_many = fresh("gen-random-too-many");
    let out = bin()
        .args(["gen", "--tests", "100001", "--out"])
        .arg(&too_many)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("at most 100000"),
        "{}",
        text(&out.stderr)
    );
    assert!(!too_many.exists());
}

#[test]
fn gen_enumerate_writes_every_cycle_of_the_pool_beside_other_files() {
    let dir = fresh("gen-enumerate");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mine.litmus"), "kept").unwrap();
    let out = bin()
        .args(["gen", "--enumerate", "4", "--relax", "PodWR Fence(sc)dWR"])
        .args([
            "--safe",
            "Rfe Fre Coe PodWW",
            "--placement",
            "samecta diffcta",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let names = file_names(&dir);
    // SB with no, one or two fences and R with or without one, in two placements.
    assert_eq!(names.len(), 2 * (3 + 2) + 1, "{names:?}");
    assert!(names.contains(&"mine.litmus".to_string()), "{names:?}");
    for (shape, n) in [("R+", 4), ("SB+", 6)] {
        let found = names.iter().filter(|f| f.starts_with(shape)).count();
        assert_eq!(found, n, "{shape}: {names:?}");
    }
    // A size past the bound is refused with the reason, and --cycle names a classic shape.
    let out = bin()
        .args(["gen", "--enumerate", "9", "--relax", "PodWR"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("the size is a number in 2..=8"),
        "{}",
        text(&out.stderr)
    );
    let out = bin()
        .args(["gen", "--cycle", "Fre Fence(sc)dWR Fre PodWR"])
        .output()
        .unwrap();
    assert!(
        text(&out.stdout).starts_with("PTX SB+"),
        "{}",
        text(&out.stdout)
    );
}
