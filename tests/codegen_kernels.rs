//! Whole kernels pinned: the PTX module, the layout, each role's recorded operations and the
//! notes of every test of `litmus/` and of the published corpus, under every stress preset,
//! reduced to one digest per (test, preset) in `tests/snapshots/kernels.tsv`. A refused test
//! is pinned by its message. Any change to generated code shows up here; an intended one is
//! recorded with `UPDATE_SNAPSHOTS=1 cargo test --test codegen_kernels` (review `git diff`).
//! `KERNEL_DUMP=DIR` also writes every kernel's text there, to diff two versions of the
//! emitter file by file.

mod common;

use common::*;
use ptx_litmus::codegen::{self, Kernel, Stress};
use ptx_litmus::litmus::fnv1a64;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// Everything of a kernel that later stages read, as text.
fn describe(k: &Kernel) -> String {
    let mut s = k.ptx.clone();
    let _ = writeln!(s, "// version {}.{}", k.ptx_version.0, k.ptx_version.1);
    let _ = writeln!(s, "// layout {}", serde_json::to_string(&k.layout).unwrap());
    for r in &k.roles {
        let _ = writeln!(s, "// role {} {} loops={}", r.role, r.func, r.loops);
        for a in &r.args {
            let _ = writeln!(
                s,
                "//   arg {} {:?} view={} bias={}",
                a.loc, a.space, a.view, a.bias
            );
        }
        let regs: Vec<&str> = r.returns.iter().map(|x| x.0.as_str()).collect();
        let _ = writeln!(s, "//   returns {}", regs.join(" "));
        for o in &r.ops {
            let _ = writeln!(s, "//   op {} {}", o.index, o.op);
        }
        for y in &r.syncs {
            let _ = writeln!(s, "//   sync {}", y.as_pop());
        }
    }
    for n in &k.notes {
        let _ = writeln!(s, "// note: {n}");
    }
    s
}

/// The name a test file has in the digest: relative to the project or to the corpus.
fn key(path: &Path) -> String {
    let root = root();
    if let Ok(rel) = path.strip_prefix(&root) {
        if !rel.starts_with("..") {
            return rel.display().to_string();
        }
    }
    let c = corpus().expect("a test outside litmus/ comes from the corpus");
    format!(
        "corpus/{}",
        path.strip_prefix(&c).expect("under the corpus").display()
    )
}

/// One digest cell: the kernel's, or the refusal's.
fn digest(name: &str, preset: &str, built: Result<Kernel, codegen::CodegenError>) -> String {
    match built {
        Ok(k) => {
            let text = describe(&k);
            if let Some(dir) = std::env::var_os("KERNEL_DUMP") {
                let file = Path::new(&dir).join(format!("{}.{preset}.ptx", name.replace('/', "_")));
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(file, &text).unwrap();
            }
            format!("{:016x}", fnv1a64(text.as_bytes()))
        }
        Err(e) => format!("refused:{:016x}", fnv1a64(e.to_string().as_bytes())),
    }
}

#[test]
fn every_kernel_is_byte_identical_to_its_snapshot() {
    let presets = codegen::PRESETS;
    let mut got: BTreeMap<String, String> = BTreeMap::new();
    for (path, test, _) in all_tests() {
        let name = key(&path);
        let cells: Vec<String> = presets
            .iter()
            .map(|p| {
                let stress = Stress::preset(p).expect("a preset");
                digest(&name, p, codegen::build(&test, &stress))
            })
            .collect();
        got.insert(name, cells.join("\t"));
    }
    let file = root().join("tests/snapshots/kernels.tsv");
    let header = format!("# test\t{}\n", presets.join("\t"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        let mut text = header;
        for (name, cells) in &got {
            let _ = writeln!(text, "{name}\t{cells}");
        }
        std::fs::write(&file, text).unwrap();
        return;
    }
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_SNAPSHOTS=1)", file.display()));
    assert!(
        text.starts_with(&header),
        "{}: other presets",
        file.display()
    );
    let have_corpus = corpus().is_some();
    let mut want: BTreeMap<String, String> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let (name, cells) = line.split_once('\t').expect("a name and digests");
        if have_corpus || !name.starts_with("corpus/") {
            want.insert(name.to_string(), cells.to_string());
        }
    }
    let mut diffs = Vec::new();
    for (name, cells) in &got {
        match want.get(name) {
            None => diffs.push(format!("{name}: not in the snapshot")),
            Some(w) if w != cells => diffs.push(format!("{name}: {w} -> {cells}")),
            Some(_) => {}
        }
    }
    for name in want.keys().filter(|n| !got.contains_key(*n)) {
        diffs.push(format!("{name}: in the snapshot, not generated"));
    }
    assert!(
        diffs.is_empty(),
        "{} of {} tests differ from {}:\n{}",
        diffs.len(),
        got.len(),
        file.display(),
        diffs.join("\n")
    );
    assert!(got.len() >= 200, "only {} tests", got.len());
    eprintln!(
        "{} tests x {} presets identical to the snapshot",
        got.len(),
        presets.len()
    );
}
