//! `ptx-litmus gen`: family files to litmus files (written, or compared with what is on
//! disk), the tests of one cycle pattern or of an enumeration of cycles printed, or random
//! tests written.

use super::{AppError, Exit};
use crate::cli::GenArgs;
use crate::gen::cycle::Cycle;
use crate::gen::family::expand;
use crate::gen::random::{test_name, test_text, Stream, MAX_TESTS};
use crate::gen::{shapes, Family, GenError, Generated};
use crate::litmus::file_stem;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Runs `gen`.
pub fn run(args: &GenArgs) -> Result<Exit, AppError> {
    if let Some(pattern) = &args.cycle {
        return print_cycle(args, pattern);
    }
    if let Some(size) = &args.enumerate {
        return enumerate(args, size);
    }
    if let (Some(n), Some(out)) = (args.tests, &args.out) {
        return write_random(out, args.seed, n, args.stream());
    }
    let roots = if args.families.is_empty() {
        vec![super::suite::root()?.join(crate::litmus::GENERATED_DIR)]
    } else {
        args.families.clone()
    };
    let mut files = Vec::new();
    for r in &roots {
        find_families(r, &mut files)?;
    }
    files.sort();
    let mut differ = false;
    for f in files {
        let family = Family::read(&f)?;
        let tests = family.generate()?;
        let dir = match &args.out {
            Some(o) => o.join(&family.name),
            None => f.parent().unwrap_or(Path::new(".")).to_path_buf(),
        };
        let wanted: BTreeMap<String, &Generated> = tests
            .iter()
            .map(|g| (format!("{}.litmus", file_stem(&g.test.name)), g))
            .collect();
        if args.check {
            let diffs = compare(&dir, &wanted)?;
            for d in &diffs {
                println!("{}: {d}", dir.display());
            }
            differ |= !diffs.is_empty();
            println!(
                "{}: {} tests, {} differences",
                family.name,
                tests.len(),
                diffs.len()
            );
        } else {
            let removed = write(&dir, &wanted)?;
            println!(
                "{}: {} tests written to {}, {removed} stale removed",
                family.name,
                tests.len(),
                dir.display()
            );
        }
    }
    Ok(if differ { Exit::Finding } else { Exit::Success })
}

/// Prints the tests of one cycle pattern, each named after `--shape` or its own shape.
fn print_cycle(args: &GenArgs, pattern: &str) -> Result<Exit, AppError> {
    let mut text = String::from("family cycle\n");
    for cycle in expand(pattern)? {
        let shape = match &args.shape {
            Some(s) => s.clone(),
            None => shapes::name(&Cycle::parse(&cycle)?),
        };
        text.push_str(&format!("shape {shape} {cycle}\n"));
    }
    print_family(args, &text, "--cycle")
}

/// Prints (or writes into `--out`) the tests of every cycle of up to `size` edges.
fn enumerate(args: &GenArgs, size: &str) -> Result<Exit, AppError> {
    let text = format!(
        "family enumerate\ncycles {size} {}\nrelax {}\nsafe {}\n",
        args.threads,
        args.relax.as_deref().unwrap_or_default(),
        args.safe
    );
    print_family(args, &text, "--enumerate")
}

/// Prints the tests of family `text` (whose lines come from the flag `what`) under the
/// command line's axes, or with `--out` writes them there.
fn print_family(args: &GenArgs, text: &str, what: &str) -> Result<Exit, AppError> {
    let text = format!(
        "{text}scope {}\nplacement {}\nspace {}\n",
        args.scope, args.placement, args.space
    );
    let tests = Family::parse(&text, Path::new(what))?.generate()?;
    let Some(out) = &args.out else {
        for g in tests {
            println!("{}", g.text);
        }
        return Ok(Exit::Success);
    };
    // Other files in the folder are left alone: it is the user's, not a family's.
    std::fs::create_dir_all(out).map_err(|e| format!("--out {}: {e}", out.display()))?;
    for g in &tests {
        let p = out.join(format!("{}.litmus", file_stem(&g.test.name)));
        std::fs::write(&p, &g.text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    println!("{} tests written to {}", tests.len(), out.display());
    Ok(Exit::Success)
}

/// `family.txt` files at or under `path`.
fn find_families(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), GenError> {
    let err = |e: std::io::Error| GenError::msg(format!("cannot open: {e}")).at(path, None);
    if !path.metadata().map_err(err)?.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(err)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        // Symbolic links are not followed, so a loop of them cannot make the walk endless.
        let is_link = p
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink());
        if p.is_dir() && !is_link {
            find_families(&p, out)?;
        } else if p.file_name().is_some_and(|n| n == "family.txt") {
            out.push(p);
        }
    }
    Ok(())
}

fn litmus_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".litmus"))
        .collect();
    v.sort();
    v
}

fn compare(dir: &Path, wanted: &BTreeMap<String, &Generated>) -> Result<Vec<String>, AppError> {
    let mut diffs = Vec::new();
    for (file, g) in wanted {
        match std::fs::read_to_string(dir.join(file)) {
            Ok(t) if t == g.text => {}
            Ok(_) => diffs.push(format!("{file} differs")),
            Err(_) => diffs.push(format!("{file} is missing")),
        }
    }
    for f in litmus_files(dir) {
        if !wanted.contains_key(&f) {
            diffs.push(format!("{f} is not in the family"));
        }
    }
    Ok(diffs)
}

fn write(dir: &Path, wanted: &BTreeMap<String, &Generated>) -> Result<usize, AppError> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut removed = 0;
    for f in litmus_files(dir) {
        if !wanted.contains_key(&f) {
            let p = dir.join(&f);
            std::fs::remove_file(&p).map_err(|e| format!("cannot remove {}: {e}", p.display()))?;
            removed += 1;
        }
    }
    for (file, g) in wanted {
        let p = dir.join(file);
        if std::fs::read_to_string(&p).ok().as_deref() != Some(g.text.as_str()) {
            std::fs::write(&p, &g.text)
                .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        }
    }
    Ok(removed)
}

/// Writes random tests `0..n` of the stream of `seed` into `out`, one file each.
fn write_random(out: &Path, seed: u64, n: u64, stream: Stream) -> Result<Exit, AppError> {
    if n > MAX_TESTS {
        return Err(format!("--tests {n}: at most {MAX_TESTS} tests are written").into());
    }
    std::fs::create_dir_all(out).map_err(|e| format!("--out {}: {e}", out.display()))?;
    for i in 0..n {
        let file = out.join(format!("{}.litmus", test_name(seed, i, stream)));
        std::fs::write(&file, test_text(seed, i, stream))
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    }
    println!(
        "{n} random tests of seed {seed} written to {}",
        out.display()
    );
    Ok(Exit::Success)
}
