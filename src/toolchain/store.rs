//! The toolchain store: one folder per exact toolkit version, `cuda-<version>/bin/ptxas`, with
//! `source.txt` naming the wheel it came from. A folder counts as installed only once its
//! ptxas is in place (installs are staged and renamed), so an interrupted install is ignored,
//! or when it holds `cubins/` made beforehand by `toolchains prebuild` (a store carried to a
//! machine without the network may hold only those).

use super::version::{Spec, Version};
use crate::litmus::fnv1a64;
use std::path::{Path, PathBuf};

/// The folder of a version's prebuilt cubins.
const CUBINS: &str = "cubins";

/// The folder of the PTX each prebuilt cubin was made of (left behind when cubins travel).
const SOURCES: &str = "ptx";

/// The environment variable that names the store's folder.
pub const ENV: &str = "PTX_LITMUS_TOOLCHAINS";

/// The store's folder name inside a project.
const DIR: &str = ".tools";

/// One installed version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Installed {
    /// Its exact version.
    pub version: Version,
    /// Its folder.
    pub dir: PathBuf,
}

impl Installed {
    /// Its ptxas.
    pub fn ptxas(&self) -> PathBuf {
        ptxas_in(&self.dir)
    }

    /// Whether its ptxas is there (a store carried to a GPU machine may hold only cubins).
    pub fn has_ptxas(&self) -> bool {
        self.ptxas().is_file()
    }

    /// Where the cubin this version made of `ptx` for `arch` is kept by `toolchains prebuild`.
    pub fn cubin_path(&self, arch: &str, ptx: &str) -> PathBuf {
        self.dir
            .join(CUBINS)
            .join(format!("{arch}-{:016x}.cubin", fnv1a64(ptx.as_bytes())))
    }

    /// Whether a cubin made of `ptx` is kept, for any architecture.
    pub fn has_cubin_of(&self, ptx: &str) -> bool {
        let tail = format!("-{:016x}.cubin", fnv1a64(ptx.as_bytes()));
        let Ok(listed) = std::fs::read_dir(self.dir.join(CUBINS)) else {
            return false;
        };
        listed
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(&tail))
    }

    /// Where `toolchains prebuild` keeps the PTX the cubin of `cubin_path(arch, ptx)` was
    /// made of, named by the same hash, so a cubin can be traced to its kernel.
    pub fn source_path(&self, ptx: &str) -> PathBuf {
        self.dir
            .join(SOURCES)
            .join(format!("{:016x}.ptx", fnv1a64(ptx.as_bytes())))
    }

    /// What `source.txt` says (wheel, digest, date), or an empty string.
    pub fn source(&self) -> String {
        std::fs::read_to_string(self.dir.join("source.txt")).unwrap_or_default()
    }
}

/// The ptxas of a version folder.
pub fn ptxas_in(dir: &Path) -> PathBuf {
    dir.join("bin").join("ptxas")
}

/// A version's folder name.
pub fn dir_name(v: &Version) -> String {
    format!("cuda-{v}")
}

/// The store's folder: `$PTX_LITMUS_TOOLCHAINS`, else `.tools` in the current directory or
/// the nearest parent that has one, else `.tools` of the source tree this binary was built
/// from when that tree is still there, else `./.tools`.
pub fn root() -> PathBuf {
    if let Some(p) = std::env::var_os(ENV) {
        return PathBuf::from(p);
    }
    if let Ok(cwd) = std::env::current_dir() {
        if let Some(found) = cwd.ancestors().map(|a| a.join(DIR)).find(|d| d.is_dir()) {
            return found;
        }
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR"));
    if source.join("Cargo.toml").is_file() {
        return source.join(DIR);
    }
    PathBuf::from(DIR)
}

/// The versions installed under `root`, oldest first.
pub fn installed(root: &Path) -> Vec<Installed> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<Installed> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let version: Version = name.strip_prefix("cuda-")?.parse().ok()?;
            let dir = e.path();
            let usable = ptxas_in(&dir).is_file() || dir.join(CUBINS).is_dir();
            usable.then_some(Installed { version, dir })
        })
        .collect();
    out.sort_by_key(|i| i.version);
    out
}

/// The installed versions `specs` select, oldest first and each once; a specification that
/// selects nothing is an error naming what is installed and how to install more.
pub fn resolve(root: &Path, specs: &[Spec]) -> Result<Vec<Installed>, String> {
    let all = installed(root);
    let versions: Vec<Version> = all.iter().map(|i| i.version).collect();
    let mut chosen: Vec<Version> = Vec::new();
    for spec in specs {
        let hits = spec.select(&versions);
        if hits.is_empty() {
            return Err(missing(root, spec, &versions));
        }
        chosen.extend(hits);
    }
    chosen.sort();
    chosen.dedup();
    Ok(all
        .into_iter()
        .filter(|i| chosen.contains(&i.version))
        .collect())
}

fn missing(root: &Path, spec: &Spec, versions: &[Version]) -> String {
    let have = if versions.is_empty() {
        "none".to_string()
    } else {
        let v: Vec<String> = versions.iter().map(Version::to_string).collect();
        v.join(", ")
    };
    format!(
        "no installed ptxas matches `{spec}` in {} (installed: {have}); install one with \
         `ptx-litmus toolchains install VERSION` (an exact build such as 12.4.131, a minor \
         release such as 12.4, or `all`; `ptx-litmus toolchains available` lists them)",
        root.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(root: &Path, name: &str, with_ptxas: bool) {
        let bin = root.join(name).join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        if with_ptxas {
            std::fs::write(bin.join("ptxas"), "").unwrap();
        }
    }

    #[test]
    fn a_cubin_is_found_by_its_ptx_whatever_its_architecture() {
        let root = std::env::temp_dir().join(format!("store-cubin-{}", std::process::id()));
        let i = Installed {
            version: "12.8.93".parse().unwrap(),
            dir: root.join("cuda-12.8.93"),
        };
        assert!(!i.has_cubin_of("ptx a"), "no cubins/ folder");
        std::fs::create_dir_all(i.cubin_path("sm_100", "ptx a").parent().unwrap()).unwrap();
        std::fs::write(i.cubin_path("sm_100", "ptx a"), "cubin").unwrap();
        assert!(i.has_cubin_of("ptx a"));
        assert!(!i.has_cubin_of("ptx b"));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn only_complete_version_folders_count_and_specs_resolve_among_them() {
        let root = std::env::temp_dir().join(format!("ptx-litmus-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        fake(&root, "cuda-12.4.131", true);
        fake(&root, "cuda-12.4.99", true);
        fake(&root, "cuda-13.0.88", true);
        fake(&root, "cuda-12.9.86", false);
        fake(&root, ".cuda-12.8.93.partial-1", true);
        fake(&root, "cuda-latest", true);
        std::fs::create_dir_all(root.join("cuda-12.8.93/cubins")).unwrap();
        let names =
            |v: &[Installed]| -> Vec<String> { v.iter().map(|i| i.version.to_string()).collect() };
        assert_eq!(
            names(&installed(&root)),
            ["12.4.99", "12.4.131", "12.8.93", "13.0.88"]
        );
        let carried = &installed(&root)[2];
        assert!(!carried.has_ptxas());
        let cubin = carried.cubin_path("sm_90", ".version 8.0");
        assert_eq!(
            cubin.parent(),
            Some(root.join("cuda-12.8.93/cubins").as_path())
        );
        let file = cubin.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            file.starts_with("sm_90-") && file.ends_with(".cubin"),
            "{file}"
        );
        let source = carried.source_path(".version 8.0");
        assert_eq!(
            source
                .file_stem()
                .map(|s| format!("sm_90-{}.cubin", s.to_string_lossy())),
            Some(file.clone()),
            "the PTX is named by the cubin's hash"
        );
        assert_ne!(source.parent(), cubin.parent(), "cubins/ travels alone");
        let specs = super::super::version::parse_specs("13,12.4").unwrap();
        assert_eq!(
            names(&resolve(&root, &specs).unwrap()),
            ["12.4.131", "13.0.88"]
        );
        let err = resolve(&root, &[Spec::Prefix(vec![12, 9])]).unwrap_err();
        assert!(err.contains("`12.9`"), "{err}");
        assert!(err.contains("12.4.99, 12.4.131, 12.8.93, 13.0.88"), "{err}");
        assert!(err.contains("toolchains install"), "{err}");
        assert_eq!(installed(&root.join("absent")), vec![]);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
