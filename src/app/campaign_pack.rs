//! A step's result folder as one archive under `$OUT`, and back: `campaign run` packs
//! `<machine>/<run>/…` into `STEP.tar` (or `STEP.tar.gz` when `gzip` is there and it helps),
//! dropping the kernels' PTX and then all of `sass/` if the archive would not come back
//! otherwise; `campaign unpack` extracts it into `results/` and renders the report.

use super::{AppError, Exit};
use crate::campaign::limits::MAX_FILE_BYTES;
use crate::campaign::progress;
use crate::campaign::ustar::{self, Entry};
use crate::cli::CampaignUnpackArgs;
use crate::report::{self, summary};
use crate::results;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The entries of everything under `root/rel`, named from `root`, folders first.
fn entries(root: &Path, rel: &str, out: &mut Vec<Entry>) -> Result<(), String> {
    let dir = root.join(rel);
    out.push(Entry::Dir(rel.to_string()));
    let mut items: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .collect();
    items.sort_by_key(|e| e.file_name());
    for e in items {
        let name = format!("{rel}/{}", e.file_name().to_string_lossy());
        if e.path().is_dir() {
            entries(root, &name, out)?;
        } else if e.path().is_file() {
            let bytes = std::fs::read(e.path()).map_err(|x| format!("{name}: {x}"))?;
            out.push(Entry::File(name, bytes));
        }
    }
    Ok(())
}

/// `bytes` through `gzip -n`, if gzip runs here.
fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut child = Command::new("gzip")
        .args(["-n", "-6", "-c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input = bytes.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().ok()?;
    feeder.join().ok()?.ok()?;
    out.status.success().then_some(out.stdout)
}

/// The archive bytes of `members` and its file extension, compressed when that is smaller.
fn encode(members: &[Entry]) -> Result<(Vec<u8>, &'static str), String> {
    let tar = ustar::write(members).map_err(|e| e.to_string())?;
    match gzip(&tar) {
        Some(gz) if gz.len() < tar.len() => Ok((gz, "tar.gz")),
        _ => Ok((tar, "tar")),
    }
}

/// What a step's archive leaves out, in turn, while it is too large.
const LEAVE_OUT: [&str; 2] = [
    "the kernels' PTX (sass/*.ptx; `emit` regenerates it)",
    "sass/ (cubins and JIT logs)",
];

/// Whether `e` is left out at stage `stage` of [`LEAVE_OUT`]: a file of the step's `sass/`
/// (`<machine>/<run>/sass/...`), a PTX one at stage 0.
fn left_out(e: &Entry, stage: usize) -> bool {
    let in_sass = e.name().split('/').nth(2) == Some("sass") && e.name().split('/').count() > 3;
    in_sass && (stage > 0 || e.name().ends_with(".ptx"))
}

/// Packs `root/rel` into `out/STEP.tar[.gz]` of at most `cap` bytes (what one file may have,
/// or less when the archives before it leave less, [`crate::campaign::limits::room`]).
/// Returns the archive's path and a note for each thing left out.
pub fn pack(
    root: &Path,
    rel: &str,
    step: &str,
    out: &Path,
    cap: u64,
) -> Result<(PathBuf, Vec<String>), String> {
    let mut members = Vec::new();
    entries(root, rel, &mut members)?;
    let mut notes = Vec::new();
    let (mut bytes, mut ext) = encode(&members)?;
    for (stage, what) in LEAVE_OUT.iter().enumerate() {
        if bytes.len() as u64 <= cap {
            break;
        }
        members.retain(|e| !left_out(e, stage));
        notes.push(format!("left out {what}: the archive was over {cap} bytes"));
        (bytes, ext) = encode(&members)?;
    }
    if bytes.len() as u64 > cap {
        return Err(format!(
            "{step}: {} bytes even without sass/, over the {cap} left for its archive",
            bytes.len()
        ));
    }
    let path = out.join(format!("{step}.{ext}"));
    std::fs::write(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((path, notes))
}

/// The members of an archive file (plain or gzip-compressed).
fn read_archive(path: &Path) -> Result<Vec<Entry>, String> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{shown}: {e}"))?
        .len();
    if size > 4 * MAX_FILE_BYTES {
        return Err(format!(
            "{shown}: {size} bytes, larger than any step archive"
        ));
    }
    let mut bytes = std::fs::read(path).map_err(|e| format!("{shown}: {e}"))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let out = Command::new("gzip")
            .args(["-dc"])
            .arg(path)
            .output()
            .map_err(|e| format!("{shown}: gzip: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{shown}: gzip -dc failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        bytes = out.stdout;
    }
    ustar::read(&bytes).map_err(|e| format!("{shown}: {e}"))
}

/// The `<machine>/<run>` every member lies under, or why the archive is not a step's.
fn step_root(path: &Path, members: &[Entry]) -> Result<String, String> {
    let root = members
        .iter()
        .find_map(|e| {
            let parts: Vec<&str> = e.name().split('/').collect();
            (parts.len() >= 2).then(|| format!("{}/{}", parts[0], parts[1]))
        })
        .ok_or_else(|| format!("{}: no <machine>/<run>/ folder inside", path.display()))?;
    for e in members {
        let n = e.name();
        if n != root && !n.starts_with(&format!("{root}/")) && !root.starts_with(&format!("{n}/")) {
            return Err(format!(
                "{}: member {n} lies outside {root}/",
                path.display()
            ));
        }
    }
    Ok(root)
}

/// Unpacks one archive into `results`; returns the step's folder.
fn unpack_one(path: &Path, results: &Path, force: bool) -> Result<PathBuf, AppError> {
    let members = read_archive(path)?;
    let root = step_root(path, &members)?;
    let target = results.join(&root);
    if target.exists() {
        if !force {
            return Err(format!(
                "{}: {} exists (--force replaces it)",
                path.display(),
                target.display()
            )
            .into());
        }
        std::fs::remove_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    }
    for e in &members {
        let p = results.join(e.name());
        match e {
            Entry::Dir(_) => std::fs::create_dir_all(&p),
            Entry::File(_, bytes) => std::fs::write(&p, bytes),
        }
        .map_err(|x| format!("{}: {x}", p.display()))?;
    }
    progress::read(&target.join(progress::RECORD))?;
    Ok(target)
}

/// Runs `campaign unpack`: each archive into `--results`, each result set's report rendered.
pub fn unpack(args: &CampaignUnpackArgs) -> Result<Exit, AppError> {
    let mut failed = 0;
    for a in &args.archives {
        match unpack_one(a, &args.results, args.force) {
            Ok(dir) => {
                println!("unpacked {} into {}", a.display(), dir.display());
                if dir.join(results::RUN_FILE).is_file() {
                    let set = results::read_result_set(&dir)?;
                    report::write_report(&set, &dir, true)?;
                    print!("{}", summary::render(&set.run, &set.tests));
                }
                // A tune step's folder: its search page.
                let tuned = dir.join("tuned");
                let records = report::tune_page::read_dir(&tuned)?;
                if !records.is_empty() {
                    let page = report::tune_page::write(&records, &tuned)?;
                    println!("wrote {}", page.display());
                }
            }
            Err(e) => {
                eprintln!("ptx-litmus: campaign unpack: {e}");
                failed += 1;
            }
        }
    }
    Ok(if failed > 0 {
        Exit::Error
    } else {
        Exit::Success
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that do not compress.
    fn noise(n: usize, mut x: u64) -> Vec<u8> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[test]
    fn an_archive_too_large_to_come_back_leaves_out_ptx_then_sass() {
        let root = std::env::temp_dir().join(format!("pack-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let sass = root.join("m/r/sass");
        std::fs::create_dir_all(&sass).unwrap();
        std::fs::write(root.join("m/r/run.json"), b"{}").unwrap();
        std::fs::write(sass.join("t.ptx"), noise(9 << 20, 1)).unwrap();
        std::fs::write(sass.join("t.cubin"), noise(4 << 20, 2)).unwrap();
        let out = root.join("out");
        std::fs::create_dir_all(&out).unwrap();
        // 13 MiB fits whole.
        let (path, notes) = pack(&root, "m/r", "s1", &out, MAX_FILE_BYTES).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        assert!(std::fs::metadata(&path).unwrap().len() <= MAX_FILE_BYTES);
        // 22 MiB: the PTX goes, the cubin stays.
        std::fs::write(sass.join("u.ptx"), noise(9 << 20, 3)).unwrap();
        let (path, notes) = pack(&root, "m/r", "s2", &out, MAX_FILE_BYTES).unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        let names: Vec<String> = read_archive(&path)
            .unwrap()
            .iter()
            .map(|e| e.name().to_string())
            .collect();
        assert_eq!(
            names,
            ["m/r", "m/r/run.json", "m/r/sass", "m/r/sass/t.cubin"]
        );
        // 31 MiB of cubins: all of sass/ goes, with a second note.
        std::fs::write(sass.join("u.cubin"), noise(14 << 20, 4)).unwrap();
        std::fs::write(sass.join("v.cubin"), noise(13 << 20, 5)).unwrap();
        let (path, notes) = pack(&root, "m/r", "s3", &out, MAX_FILE_BYTES).unwrap();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[1].contains("sass/"), "{notes:?}");
        assert_eq!(read_archive(&path).unwrap().len(), 3);
        // Less room than a file may have (archives before it): the 4 MiB cubin goes too, and
        // what cannot fit even without sass/ is refused.
        for f in ["u.ptx", "u.cubin", "v.cubin"] {
            std::fs::remove_file(sass.join(f)).unwrap();
        }
        let (path, notes) = pack(&root, "m/r", "s4", &out, 2 << 20).unwrap();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(std::fs::metadata(&path).unwrap().len() <= 2 << 20);
        assert!(pack(&root, "m/r", "s5", &out, 100).is_err());
        let _ = std::fs::remove_dir_all(&root);
    }
}
