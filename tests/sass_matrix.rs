//! The compiler matrix: planted faults are classified (dropped, reordered, strength or
//! scope), the SASS summaries do not depend on batching, and the two toolchain versions that
//! `scripts/setup-tools` pins are compared end to end through the command line.

mod common;

use common::sass::*;
use common::*;
use ptx_litmus::codegen::Kernel;
use ptx_litmus::sass::deviation::Deviation;
use ptx_litmus::sass::matrix::{self, Column, Verdict};
use ptx_litmus::sass::{disasm, signature, tools, Tool};
use ptx_litmus::toolchain::store;

fn mp() -> Kernel {
    kernel(&load("litmus/mp/MP+rel.gpu+acq.gpu.litmus")).expect("MP generates")
}

/// `k` with its reader role's PTX rewritten by `f`.
fn planted(k: &Kernel, f: impl Fn(&str, &Kernel) -> String) -> Kernel {
    let role = k.roles[1].ptx.clone();
    let broken = f(&role, k);
    assert_ne!(broken, role, "the fault changes the role");
    let mut out = k.clone();
    out.ptx = k.ptx.replacen(&role, &broken, 1);
    out
}

fn venv_column() -> Column {
    Column {
        version: "venv".into(),
        arch: "sm_90".into(),
        ptxas: tools::find(Tool::Ptxas).expect("checked by tools_present"),
    }
}

#[test]
fn planted_faults_are_classified_with_their_sass() {
    if !tools_present("planted_faults_are_classified_with_their_sass") {
        return;
    }
    let k = mp();
    let first = k.roles[1].ops[0].op.to_string();
    let second = k.roles[1].ops[1].op.to_string();
    let dropped = planted(&k, |r, _| r.replacen(&format!("\t{second}\n"), "\n", 1));
    let swapped = planted(&k, |r, _| {
        r.replacen(&first, "@@", 1)
            .replacen(&second, &first, 1)
            .replacen("@@", &second, 1)
    });
    let narrowed = planted(&k, |r, _| r.replacen("ld.acquire.gpu", "ld.acquire.cta", 1));
    let kernels = [
        ("ok".to_string(), &k),
        ("dropped".to_string(), &dropped),
        ("swapped".to_string(), &swapped),
        ("narrowed".to_string(), &narrowed),
    ];
    let m = matrix::build(&kernels, vec![venv_column()], &matrix::untouched, |_, _| {});
    let verdicts: Vec<Verdict> = m.rows.iter().map(|r| r.cells[0].verdict).collect();
    assert_eq!(
        verdicts,
        [
            Verdict::Pass,
            Verdict::Deviation(Deviation::Dropped),
            Verdict::Deviation(Deviation::Reordered),
            Verdict::Deviation(Deviation::StrengthOrScope),
        ]
    );
    for r in &m.rows[1..] {
        let c = &r.cells[0];
        assert!(
            !c.errors.is_empty(),
            "{}: the check's message is kept",
            r.path
        );
        assert!(
            c.sass_lines.iter().any(|l| l.starts_with("LDG")),
            "{}: the failing role's SASS is kept: {:?}",
            r.path,
            c.sass_lines
        );
    }
    let sig = |i: usize| &m.rows[i].cells[0].memory_ops[1];
    assert!(
        sig(0).iter().any(|e| e.starts_with("LDG.E.STRONG.GPU")),
        "{:?}",
        sig(0)
    );
    assert!(
        sig(3).iter().any(|e| e.starts_with("LDG.E.STRONG.SM")),
        "{:?}",
        sig(3)
    );
}

#[test]
fn summaries_do_not_depend_on_the_batch() {
    if !tools_present("summaries_do_not_depend_on_the_batch") {
        return;
    }
    let sb = kernel(&load("litmus/sb/SB+rel.gpu+acq.gpu.litmus")).expect("SB generates");
    let k = mp();
    let kernels = [("sb".to_string(), &sb), ("mp".to_string(), &k)];
    let m = matrix::build(&kernels, vec![venv_column()], &matrix::untouched, |_, _| {});
    let sass = tools::disassemble(&tools::assemble(&k.ptx, "sm_90").unwrap()).unwrap();
    let alone = signature::of(&k, &disasm::functions(&sass), "");
    let batched = &m.rows[1].cells[0];
    assert_eq!(batched.hash.as_ref(), Some(&alone.hash));
    assert_eq!(batched.memory_ops, alone.memory_ops);
    assert_ne!(
        m.rows[0].cells[0].hash, batched.hash,
        "SB's code is not MP's"
    );
}

/// A planted compiler fault for the column named `planted`: in every function, the first two
/// global stores change places (as a compiler that reorders stores would emit them).
fn swap_first_stores(col: &Column, funcs: &mut matrix::Functions) {
    if col.version != "planted" {
        return;
    }
    for f in funcs.values_mut() {
        let stores: Vec<usize> = (0..f.len()).filter(|&i| f[i].base() == "STG").collect();
        if let [a, b, ..] = stores[..] {
            let (x, y) = (f[a].clone(), f[b].clone());
            (f[a].opcode, f[a].operands) = (y.opcode, y.operands);
            (f[b].opcode, f[b].operands) = (x.opcode, x.operands);
        }
    }
}

#[test]
fn a_planted_reordering_is_highlighted_and_reduced_to_its_smallest_test() {
    if !tools_present("a_planted_reordering_is_highlighted_and_reduced") {
        return;
    }
    let path = root().join("litmus/mp/MP+rel.gpu+acq.gpu.litmus");
    let k = mp();
    let planted = Column {
        version: "planted".into(),
        ..venv_column()
    };
    let cols = vec![venv_column(), planted, venv_column()];
    let kernels = [(path.display().to_string(), &k)];
    let mut m = matrix::build(&kernels, cols, &swap_first_stores, |_, _| {});
    let row = &m.rows[0];
    let verdicts: Vec<Verdict> = row.cells.iter().map(|c| c.verdict).collect();
    let reordered = Verdict::Deviation(Deviation::Reordered);
    assert_eq!(verdicts, [Verdict::Pass, reordered, Verdict::Pass]);
    let odd: Vec<bool> = row
        .cells
        .iter()
        .map(|c| ptx_litmus::sass::matrix_report::stands_out(row, c))
        .collect();
    assert_eq!(odd, [false, true, false]);
    // The smallest test the planted column still reorders: the writer alone.
    assert_eq!(
        matrix::reduce_failures(
            &mut m,
            &ptx_litmus::codegen::Stress::full_stress(),
            &swap_first_stores
        ),
        1
    );
    let cell = &m.rows[0].cells[1];
    let r = cell.reduced.as_ref().expect("the failing cell is reduced");
    assert_eq!((r.threads, r.instructions), (1, 2), "{}", r.text);
    assert_eq!(r.failure.verdict, "reordered");
    let stores: Vec<&String> = r
        .failure
        .sass_lines
        .iter()
        .filter(|l| l.starts_with("STG"))
        .collect();
    assert_eq!(stores.len(), 2, "{:?}", r.failure.sass_lines);
    assert!(
        stores[0].contains("STRONG.GPU"),
        "the release store now comes first: {stores:?}"
    );
    let page = ptx_litmus::sass::matrix_html::page(&m, "");
    assert_eq!(
        page.matches("<td class=\"deviation odd\"").count(),
        1,
        "{page}"
    );
    assert!(
        page.contains("Reduced to 1 threads, 2 instructions"),
        "{page}"
    );
    let md = ptx_litmus::sass::matrix_report::markdown(&m, "");
    assert!(md.contains("Reduced to 1 threads, 2 instructions"), "{md}");
}

#[test]
fn the_pinned_versions_make_a_matrix_and_a_diff() {
    let Some(v) = pinned_present("the_pinned_versions_make_a_matrix_and_a_diff") else {
        return;
    };
    let out = fresh("sass_matrix_pinned");
    let o = bin()
        .args(["sass", "litmus/mp", "--ptxas"])
        .arg(v.join(","))
        .arg("--out")
        .arg(&out)
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = text(&o.stdout);
    assert!(o.status.code() == Some(0), "{stdout}{}", text(&o.stderr));
    assert!(stdout.contains("× 2 columns"), "{stdout}");
    let page = std::fs::read_to_string(out.join("matrix.md")).unwrap();
    let html = std::fs::read_to_string(out.join("matrix.html")).unwrap();
    // 12.4 puts a MEMBAR.ALL.CTA before the release's fence; 13.0 does not. With two columns
    // neither is a majority, and the later one is taken as the reference: 12.4's cell is the
    // one highlighted, its tooltip naming the extra fence.
    let html_row = html
        .lines()
        .find(|l| l.starts_with("<tr><td>MP+rel.gpu+acq.gpu</td>"))
        .expect("the page has a row per test");
    assert!(
        html_row.contains("<td class=\"pass odd\" title=\"P0: STG.E [+0x10]; MEMBAR.ALL.CTA;"),
        "{html_row}"
    );
    assert_eq!(
        html_row.matches("<td class=\"pass\">").count(),
        1,
        "{html_row}"
    );
    for version in &v {
        assert!(
            page.contains(&format!("| {version} | Cuda compilation tools")),
            "{page}"
        );
    }
    let row = page
        .lines()
        .find(|l| l.starts_with("| MP+rel.gpu+acq.gpu |"))
        .expect("the matrix has a row per test");
    assert_eq!(row.matches("pass").count(), 2, "{row}");
    let json = std::fs::read_to_string(out.join("matrix.json")).unwrap();
    assert!(json.contains("\"memory_ops\""), "{json}");
    let d = bin()
        .args(["sass", "litmus/mp", "--diff", &v[0], &v[1]])
        .current_dir(root())
        .output()
        .unwrap();
    let dout = text(&d.stdout);
    assert!(dout.contains(&format!("{} → {}", v[0], v[1])), "{dout}");
    // 12.4 puts a MEMBAR.ALL.CTA before every wider fence; 13.0 does not.
    assert!(
        dout.contains("memory ops MP+fence.sc.gpu+fence.sc.gpu"),
        "{dout}"
    );
    assert_eq!(d.status.code(), Some(1), "{dout}");
}

#[test]
fn an_absent_version_names_the_store_and_the_install_command() {
    let store = fresh("sass_matrix_empty_store");
    std::fs::create_dir_all(&store).unwrap();
    let o = bin()
        .args(["sass", "litmus/mp", "--ptxas", "12.4"])
        .env(store::ENV, &store)
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no installed ptxas matches `12.4`"), "{err}");
    assert!(err.contains("toolchains install"), "{err}");
    assert!(
        err.contains("`ptx-litmus toolchains available` lists them"),
        "{err}"
    );
    let bad = bin()
        .args(["sass", "litmus/mp", "--ptxas", "twelve"])
        .env(store::ENV, &store)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("`twelve` is not a ptxas version"));
}

#[test]
fn toolchains_lists_and_resolves_the_store() {
    let store = fresh("toolchains_store");
    for v in ["12.4.99", "12.4.131", "13.0.88"] {
        let bin_dir = store.join(format!("cuda-{v}")).join("bin");
        std::fs::create_dir_all(&bin_dir).unwrap();
        std::fs::write(bin_dir.join("ptxas"), "").unwrap();
    }
    let run = |args: &[&str]| bin().args(args).env(store::ENV, &store).output().unwrap();
    let list = run(&["toolchains", "list"]);
    let out = text(&list.stdout);
    assert!(out.contains("3 versions installed"), "{out}");
    assert!(out.find("12.4.99") < out.find("12.4.131"), "{out}");
    let path = run(&["toolchains", "path", "12.4"]);
    assert_eq!(
        text(&path.stdout).trim(),
        format!(
            "12.4.131\t{}",
            store.join("cuda-12.4.131/bin/ptxas").display()
        )
    );
    let bad = run(&["toolchains", "install", "12"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("`12` is not a version to install"));
}

/// A Python whose pip answers `index versions` from a fixed list and has no network.
const PYPI_STUB: &str = r#"#!/bin/sh
case "$*" in
  *"index versions"*cu11) echo "Available versions: 11.8.89, 11.7.99" ;;
  *"index versions"*cu12) echo "Available versions: 12.6.85, 12.6.20, 12.4.131, 12.4.99" ;;
  *"index versions"*) echo "Available versions: 13.0.88" ;;
  *download*) echo "stub: no network" >&2; exit 1 ;;
esac
"#;

#[test]
fn a_minor_release_installs_its_newest_build_on_pypi() {
    let store = fresh("toolchains_index");
    let bin_dir = store.join("cuda-12.4.131").join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::fs::write(bin_dir.join("ptxas"), "").unwrap();
    let python = store.join("python-stub");
    std::fs::write(&python, PYPI_STUB).unwrap();
    std::fs::set_permissions(&python, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = |args: &[&str]| {
        let env = [(store::ENV, &store), ("PYTHON", &python)];
        bin().args(args).envs(env).output().unwrap()
    };
    let got = run(&["toolchains", "install", "12.4", "12.6", "12.7"]);
    let (out, err) = (text(&got.stdout), text(&got.stderr));
    assert_eq!(got.status.code(), Some(2), "{out}{err}");
    assert!(out.contains("already installed 12.4.131"), "{out}");
    assert!(
        err.contains("pip download nvidia-cuda-nvcc-cu12==12.6.85 failed"),
        "{err}"
    );
    assert!(err.contains("stub: no network"), "{err}");
    assert!(err.contains("no build of 12.7"), "{err}");
    let listed = text(&run(&["toolchains", "available"]).stdout);
    let rows: Vec<Vec<&str>> = listed
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let row = |minor: &str| rows.iter().find(|r| r[0] == minor).cloned();
    assert_eq!(
        row("12.4"),
        Some(vec!["12.4", "12.4.131", "yes", "12.4.99"])
    );
    assert_eq!(row("12.6"), Some(vec!["12.6", "12.6.85", "no", "12.6.20"]));
    assert_eq!(row("13.0"), Some(vec!["13.0", "13.0.88", "no"]));
    assert_eq!(row("11.7"), None, "before sm_90: {listed}");
}

#[test]
fn an_offline_cubin_is_what_the_matrix_checked() {
    let Some(v) = pinned_present("an_offline_cubin_is_what_the_matrix_checked") else {
        return;
    };
    use ptx_litmus::harness::cuda::compiler::{offline_cubin, Compiler};
    let compiler: Compiler = format!("ptxas:{}", v[0]).parse().unwrap();
    let ptxas = compiler.resolve().unwrap().expect("a ptxas, not the JIT");
    assert_eq!(ptxas.version.to_string(), v[0]);
    let k = mp();
    let (cubin, lowered) = offline_cubin(&ptxas, &k.ptx, "sm_90").unwrap();
    assert_eq!(lowered, None);
    let sass = tools::disassemble(&cubin).unwrap();
    assert!(ptx_litmus::sass::check_sass(&k, &sass).ok());
    let funcs = disasm::functions(&sass);
    let col = Column {
        version: v[0].clone(),
        arch: "sm_90".into(),
        ptxas: ptxas.ptxas(),
    };
    let m = matrix::build(
        &[("mp".to_string(), &k)],
        vec![col],
        &matrix::untouched,
        |_, _| {},
    );
    assert_eq!(
        m.rows[0].cells[0].hash.as_ref(),
        Some(&signature::of(&k, &funcs, "").hash),
        "the run loads the very SASS the matrix checked"
    );
    // A kernel too new for an old ptxas: fence.acquire needs PTX ISA 8.6.
    let new = kernel(&load("litmus/mp/MP+fence.acq.gpu+fence.rel.gpu.litmus")).unwrap();
    if ptxas.version < "12.7.0".parse().unwrap() {
        let e = offline_cubin(&ptxas, &new.ptx, "sm_90").unwrap_err();
        assert!(e.refused, "{e}");
        assert!(
            e.message
                .starts_with(&format!("ptxas {} for sm_90: ", v[0])),
            "{e}"
        );
    }
}

/// A store whose 12.4.131 ptxas (a script) refuses any PTX with `fence.acquire`, as ptxas
/// 12.4 does, and makes a stand-in cubin of the rest.
fn refusing_store(name: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let store = fresh(name);
    let bin_dir = store.join("cuda-12.4.131/bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let script = "#!/bin/sh\n\
        if grep -q fence.acquire \"$2\"; then\n\
          echo \"ptxas $2, line 9; error   : Illegal modifier '.acquire' for instruction 'fence'\" >&2\n\
          exit 255\n\
        fi\n\
        printf cubin > \"$4\"\n";
    let ptxas = bin_dir.join("ptxas");
    std::fs::write(&ptxas, script).unwrap();
    std::fs::set_permissions(&ptxas, std::fs::Permissions::from_mode(0o755)).unwrap();
    store
}

#[test]
fn prebuild_reports_kernels_a_version_refuses_and_fails_only_on_its_own_errors() {
    let store = refusing_store("sass_matrix_refusing_store");
    let tests = [
        "litmus/mp/MP+rel.gpu+acq.gpu.litmus",
        "litmus/mp/MP+fence.acq.gpu+fence.rel.gpu.litmus",
    ];
    let prebuild = || {
        bin()
            .args(["toolchains", "prebuild", "12.4"])
            .args(tests)
            .env(store::ENV, &store)
            .current_dir(root())
            .output()
            .unwrap()
    };
    let o = prebuild();
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("12.4.131: 1 of 2 cubins in "), "{out}");
    assert!(
        out.contains("; 1 kernel(s) this ptxas does not accept"),
        "{out}"
    );
    let refused = err
        .lines()
        .find(|l| l.contains("MP+fence.acq.gpu"))
        .unwrap();
    assert!(refused.contains("Illegal modifier '.acquire'"), "{refused}");
    // A store it cannot write into is its own failure: exit 2.
    let cubins = store.join("cuda-12.4.131/cubins");
    std::fs::remove_dir_all(&cubins).unwrap();
    std::fs::write(&cubins, "not a folder").unwrap();
    let o = prebuild();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains("0 of 2 cubins"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn prebuild_draws_its_bar_over_versions_and_kernels_apart_from_its_lines() {
    let store = refusing_store("sass_matrix_bar_store");
    let args = "toolchains prebuild 12.4 litmus/mp/MP+rel.gpu+acq.gpu.litmus \
                litmus/mp/MP+fence.acq.gpu+fence.rel.gpu.litmus";
    let env = [(store::ENV, store.to_str().unwrap())];
    let Some((ok, screen)) = common::terminal::on_a_terminal_ending(args, &env) else {
        return;
    };
    assert!(ok, "{screen}");
    assert!(
        screen.contains("0/2 cubins, ETA ?  12.4.131 litmus/mp/MP+fence.a"),
        "the bar counts each version's kernels and names the one at work: {screen}"
    );
    for p in common::terminal::pieces(&screen) {
        let line = p.trim_start_matches("\u{1b}[2K");
        if line.contains("Illegal modifier") || line.contains(" of 2 cubins in ") {
            assert!(!line.contains("ETA"), "bar and line mixed: {p:?}");
        }
    }
    assert!(screen.contains("12.4.131: 1 of 2 cubins in "), "{screen}");
}

#[test]
fn prebuild_names_the_cubins_of_other_kernels_and_prunes_them() {
    let store = refusing_store("sass_matrix_pruned_store");
    let prebuild = |test: &str, prune: bool| {
        let mut c = bin();
        c.args(["toolchains", "prebuild", "12.4", test]);
        if prune {
            c.arg("--prune");
        }
        let o = c
            .env(store::ENV, &store)
            .current_dir(root())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let cubins = store.join("cuda-12.4.131/cubins");
    let count = || std::fs::read_dir(&cubins).unwrap().count();
    let first = prebuild("litmus/mp/MP+rel.gpu+acq.gpu.litmus", false);
    assert!(!first.contains("other"), "{first}");
    // Another suite's kernels (or an older code generator's) are named, and kept...
    let sb = "litmus/sb/SB+wk+wk.litmus";
    let second = prebuild(sb, false);
    assert!(
        second.contains("1 other sm_90 cubin(s) in ") && second.contains("`--prune` removes them"),
        "{second}"
    );
    assert_eq!(count(), 2);
    // ...until `--prune` removes them: only these kernels' cubins are left to travel.
    let pruned = prebuild(sb, true);
    assert!(pruned.contains("not of these kernels: removed"), "{pruned}");
    assert_eq!(count(), 1);
}

#[test]
fn the_cpu_backend_refuses_a_compiler() {
    let o = bin()
        .args([
            "run",
            "litmus/mp/MP+rel.gpu+acq.gpu.litmus",
            "--backend",
            "cpu",
        ])
        .args(["--compiler", "ptxas:12.4"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("only the CUDA backend compiles PTX"));
    let bad = bin()
        .args(["run", "--compiler", "ptxas:all"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("expected `jit` or `ptxas:VERSION`"));
}

#[test]
fn prebuilt_cubins_travel_without_ptxas() {
    let Some(v) = pinned_present("prebuilt_cubins_travel_without_ptxas") else {
        return;
    };
    let real = store::resolve(&store::root(), &[v[0].parse().unwrap()]).unwrap()[0].clone();
    let carried = fresh("sass_matrix_carried_store");
    let dir = carried.join(format!("cuda-{}", v[0]));
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::os::unix::fs::symlink(real.ptxas(), dir.join("bin/ptxas")).unwrap();
    let test = "litmus/mp/MP+rel.gpu+acq.gpu.litmus";
    let o = bin()
        .args(["toolchains", "prebuild", &v[0], test, "--stress", "stress"])
        .env(store::ENV, &carried)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("1 of 1 cubins"),
        "{}",
        text(&o.stdout)
    );
    // What travels: the cubins, not ptxas.
    std::fs::remove_dir_all(dir.join("bin")).unwrap();
    let listed = store::installed(&carried);
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].has_ptxas());
    let k = mp();
    let cubin = std::fs::read(listed[0].cubin_path("sm_90", &k.ptx)).unwrap();
    let sass = tools::disassemble(&cubin).unwrap();
    assert!(ptx_litmus::sass::check_sass(&k, &sass).ok());
    let o = bin()
        .args(["sass", test, "--ptxas", &v[0]])
        .env(store::ENV, &carried)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("only prebuilt cubins"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn the_code_hash_tells_other_code_from_other_metadata() {
    let name = "the_code_hash_tells_other_code_from_other_metadata";
    let Some(v) = pinned_present(name) else {
        return;
    };
    use ptx_litmus::harness::cuda::compiler::{offline_cubin, Compiler};
    use ptx_litmus::sass::cubin::code_hash;
    let k = mp();
    let cubins: Vec<Vec<u8>> = v
        .iter()
        .map(|version| {
            let compiler: Compiler = format!("ptxas:{version}").parse().unwrap();
            let ptxas = compiler.resolve().unwrap().expect("a ptxas, not the JIT");
            offline_cubin(&ptxas, &k.ptx, "sm_90").unwrap().0
        })
        .collect();
    // The newer ptxas again, with line information: another file, the same code.
    let dir = scratch(name);
    std::fs::write(dir.join("k.ptx"), &k.ptx).unwrap();
    let compiler: Compiler = format!("ptxas:{}", v[1]).parse().unwrap();
    let ptxas = compiler.resolve().unwrap().unwrap().ptxas();
    let made = std::process::Command::new(ptxas)
        .args(["-arch=sm_90", "--generate-line-info"])
        .arg(dir.join("k.ptx"))
        .arg("-o")
        .arg(dir.join("k.cubin"))
        .status()
        .unwrap();
    assert!(made.success());
    let lined = std::fs::read(dir.join("k.cubin")).unwrap();
    assert_ne!(lined, cubins[1], "line information changes the file");
    let hash = |c: &[u8]| code_hash(c).unwrap();
    assert_eq!(hash(&lined), hash(&cubins[1]), "but not the code");
    // Across versions the code hash changes exactly when the disassembled roles do.
    let roles = |c: &[u8]| {
        let funcs = disasm::functions(&tools::disassemble(c).unwrap());
        signature::of(&k, &funcs, "").hash
    };
    assert_eq!(
        hash(&cubins[0]) == hash(&cubins[1]),
        roles(&cubins[0]) == roles(&cubins[1]),
        "{v:?}"
    );
    assert_ne!(
        hash(&cubins[0]),
        hash(&cubins[1]),
        "{v:?} differ in MP's SASS"
    );
}

#[test]
fn a_run_checks_the_code_it_loads_and_a_narrowed_role_fails() {
    let name = "a_run_checks_the_code_it_loads_and_a_narrowed_role_fails";
    let Some(v) = pinned_present(name) else {
        return;
    };
    use ptx_litmus::harness::cuda::compiler::{offline_cubin, Compiler};
    use ptx_litmus::harness::cuda::sass_check::{verdict, FAIL, NOT_CHECKED, PASS};
    let compiler: Compiler = format!("ptxas:{}", v[1]).parse().unwrap();
    let ptxas = compiler.resolve().unwrap().expect("a ptxas, not the JIT");
    let k = mp();
    let (cubin, _) = offline_cubin(&ptxas, &k.ptx, "sm_90").unwrap();
    assert_eq!(verdict(&k, &cubin), PASS);
    // A compiler that narrowed the reader's acquire to the CTA: the code that would run
    // against the kernel the test asked for.
    let narrowed = planted(&k, |r, _| r.replacen("ld.acquire.gpu", "ld.acquire.cta", 1));
    let (bad, _) = offline_cubin(&ptxas, &narrowed.ptx, "sm_90").unwrap();
    let failed = verdict(&k, &bad);
    assert!(failed.starts_with(FAIL), "{failed}");
    assert!(failed.contains("P1"), "names the role: {failed}");
    // A role whose function is not in the SASS (as if the compiler had inlined it) cannot be
    // checked: that is said, not called a failure.
    let mut merged = k.clone();
    merged.roles[1].func = "litmus_role_9".into();
    let inlined = verdict(&merged, &cubin);
    assert_eq!(
        inlined,
        "not checked: the compiler inlined litmus_role_9; the check reads role functions"
    );
    let junk = verdict(&k, b"PTXL-SIM-CUBIN");
    assert!(
        junk.starts_with(NOT_CHECKED) && junk.contains("ELF64"),
        "{junk}"
    );
}
