//! What PyPI publishes (`pip index versions` of each major release's nvcc package), and how
//! a `toolchains install` request resolves against it: an exact build as it is, a minor
//! release (`12.6`) to its newest build, `all` to the newest build of every minor release
//! from 11.8, the first whose ptxas assembles for sm_90.

use super::pip::{python, run};
use super::version::{numbers, nvcc_package, Version};
use std::collections::HashMap;
use std::process::Command;
use std::str::FromStr;

/// The first minor release whose ptxas assembles for sm_90 (Hopper): where `all` starts.
pub const FIRST_WITH_SM90: (u32, u32) = (11, 8);

/// The major releases `all` asks PyPI about; CUDA 13's package also carries later majors.
const MAJORS: [u32; 3] = [11, 12, 13];

/// What `toolchains install` is asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// This build (`12.4.131`); no index is read.
    Exact(Version),
    /// The newest build of this minor release (`12.6`).
    Minor(u32, u32),
    /// The newest build of every minor release from [`FIRST_WITH_SM90`] on.
    All,
}

impl FromStr for Wanted {
    type Err = String;

    fn from_str(s: &str) -> Result<Wanted, String> {
        if s == "all" {
            return Ok(Wanted::All);
        }
        match numbers(s, 3).as_deref() {
            Some(&[major, minor, patch]) => Ok(Wanted::Exact(Version {
                major,
                minor,
                patch,
            })),
            Some(&[major, minor]) => Ok(Wanted::Minor(major, minor)),
            _ => Err(format!(
                "`{s}` is not a version to install (expected an exact build such as 12.4.131, a \
                 minor release such as 12.6, or `all`)"
            )),
        }
    }
}

/// The builds on the `Available versions:` line of `pip index versions`' output, newest
/// first as pip prints them; entries that are not exact builds (pre-releases) are skipped.
/// `None` when there is no such line.
pub fn parse_index(text: &str) -> Option<Vec<Version>> {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Available versions:"))?;
    Some(
        line.split(',')
            .filter_map(|v| v.trim().parse().ok())
            .collect(),
    )
}

/// The newest build of each minor release in `builds` from [`FIRST_WITH_SM90`] on, oldest
/// minor first.
pub fn newest_per_minor(builds: &[Version]) -> Vec<Version> {
    let mut newest: Vec<Version> = Vec::new();
    let mut sorted: Vec<Version> = builds
        .iter()
        .copied()
        .filter(|v| (v.major, v.minor) >= FIRST_WITH_SM90)
        .collect();
    sorted.sort();
    for v in sorted {
        match newest.last_mut() {
            Some(last) if (last.major, last.minor) == (v.major, v.minor) => *last = v,
            _ => newest.push(v),
        }
    }
    newest
}

/// The builds PyPI publishes of one package, from `pip index versions`.
pub fn published(package: &str) -> Result<Vec<Version>, String> {
    let what = format!("pip index versions {package}");
    let text = run(
        Command::new(python())
            .args([
                "-m",
                "pip",
                "index",
                "versions",
                "--disable-pip-version-check",
            ])
            .arg(package),
        &what,
    )?;
    parse_index(&text).ok_or_else(|| {
        format!(
            "{what} printed no `Available versions:` line:\n{}",
            text.trim_end()
        )
    })
}

/// Where a package's builds come from: [`published`], or a stand-in in tests.
pub type Lookup = Box<dyn FnMut(&str) -> Result<Vec<Version>, String>>;

/// The index of PyPI, each package read at most once.
pub struct Index {
    lookup: Lookup,
    seen: HashMap<&'static str, Vec<Version>>,
}

impl Index {
    /// An index that asks pip.
    pub fn pypi() -> Index {
        Index::with(Box::new(|p: &str| published(p)))
    }

    /// An index whose builds come from `lookup`.
    pub fn with(lookup: Lookup) -> Index {
        Index {
            lookup,
            seen: HashMap::new(),
        }
    }

    /// Every build of a major release's package (later majors included for CUDA 13's).
    pub fn builds(&mut self, major: u32) -> Result<Vec<Version>, String> {
        let package = nvcc_package(major);
        if !self.seen.contains_key(package) {
            let builds = (self.lookup)(package)?;
            self.seen.insert(package, builds);
        }
        Ok(self.seen[package].clone())
    }

    /// Every build of every package on PyPI.
    pub fn all_builds(&mut self) -> Result<Vec<Version>, String> {
        let mut all = Vec::new();
        for major in MAJORS {
            all.extend(self.builds(major)?);
        }
        Ok(all)
    }

    /// The newest build of every minor release from [`FIRST_WITH_SM90`] on, oldest first.
    pub fn newest_of_each_minor(&mut self) -> Result<Vec<Version>, String> {
        Ok(newest_per_minor(&self.all_builds()?))
    }

    /// The exact builds a request names.
    pub fn resolve(&mut self, wanted: &Wanted) -> Result<Vec<Version>, String> {
        match *wanted {
            Wanted::Exact(v) => Ok(vec![v]),
            Wanted::All => self.newest_of_each_minor(),
            Wanted::Minor(major, minor) => {
                let builds = self.builds(major)?;
                let newest = builds
                    .iter()
                    .filter(|v| (v.major, v.minor) == (major, minor))
                    .max();
                newest.map(|v| vec![*v]).ok_or_else(|| {
                    let minors: Vec<String> = newest_per_minor(&builds)
                        .iter()
                        .map(|v| format!("{}.{}", v.major, v.minor))
                        .collect();
                    format!(
                        "PyPI has no build of {major}.{minor} in {} (its minor releases: {})",
                        nvcc_package(major),
                        minors.join(", ")
                    )
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    /// A stand-in for PyPI as it was on 2026-11-27, less some builds.
    fn canned() -> Index {
        Index::with(Box::new(|p: &str| {
            let list = match p {
                "nvidia-cuda-nvcc-cu11" => "11.8.89, 11.7.99",
                "nvidia-cuda-nvcc-cu12" => "12.9.86, 12.9.41, 12.6.85, 12.6.20, 12.0.140, 12.0.76",
                "nvidia-cuda-nvcc" => "13.5.37, 13.0.88, 13.0.48, 13.1.0rc1",
                _ => return Err(format!("no package {p}")),
            };
            Ok(parse_index(&format!("{p} (x)\nAvailable versions: {list}\n")).unwrap())
        }))
    }

    #[test]
    fn pip_s_index_line_gives_the_exact_builds() {
        let text =
            "nvidia-cuda-nvcc (13.5.37)\nAvailable versions: 13.5.37, 13.1.0rc1, 13.0.48\n  \
                    INSTALLED: 13.0.48\n";
        assert_eq!(parse_index(text), Some(vec![v("13.5.37"), v("13.0.48")]));
        assert_eq!(parse_index("ERROR: No matching distribution found"), None);
    }

    #[test]
    fn a_request_is_an_exact_build_a_minor_release_or_all() {
        assert_eq!("12.4.131".parse(), Ok(Wanted::Exact(v("12.4.131"))));
        assert_eq!("12.6".parse(), Ok(Wanted::Minor(12, 6)));
        assert_eq!("all".parse(), Ok(Wanted::All));
        for bad in ["12", "12.x", "12.4.1.2", "latest", "", "12."] {
            assert!(bad.parse::<Wanted>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_minor_release_resolves_to_its_newest_build() {
        let mut index = canned();
        assert_eq!(index.resolve(&Wanted::Minor(12, 6)), Ok(vec![v("12.6.85")]));
        assert_eq!(index.resolve(&Wanted::Minor(13, 0)), Ok(vec![v("13.0.88")]));
        let err = index.resolve(&Wanted::Minor(12, 7)).unwrap_err();
        assert!(err.contains("no build of 12.7"), "{err}");
        assert!(err.contains("12.0, 12.6, 12.9"), "{err}");
        let exact = Wanted::Exact(v("12.6.20"));
        assert_eq!(index.resolve(&exact), Ok(vec![v("12.6.20")]));
    }

    #[test]
    fn all_is_the_newest_build_of_every_minor_from_11_8() {
        let got = canned().resolve(&Wanted::All).unwrap();
        let want = [
            "11.8.89", "12.0.140", "12.6.85", "12.9.86", "13.0.88", "13.5.37",
        ];
        assert_eq!(got, want.map(v).to_vec());
    }

    #[test]
    fn each_package_is_read_once() {
        let calls = std::rc::Rc::new(std::cell::Cell::new(0));
        let seen = calls.clone();
        let mut index = Index::with(Box::new(move |_: &str| {
            seen.set(seen.get() + 1);
            Ok(vec![v("12.6.85")])
        }));
        index.resolve(&Wanted::Minor(12, 6)).unwrap();
        index.resolve(&Wanted::Minor(12, 6)).unwrap();
        assert_eq!(calls.get(), 1);
    }
}
