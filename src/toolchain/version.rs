//! CUDA toolkit versions (`12.4.131`) and the specifications that select among them (`12.4`,
//! `12.4.131`, `all`), and which PyPI wheel ships each version's ptxas.

use std::fmt;
use std::str::FromStr;

/// An exact toolkit version, as the wheels number them: major, minor, patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// CUDA major release (11, 12, 13).
    pub major: u32,
    /// Minor release.
    pub minor: u32,
    /// The component's build number (`131` of `12.4.131`).
    pub patch: u32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Parses up to `max` dot-separated numbers of at most 6 digits each.
pub(super) fn numbers(s: &str, max: usize) -> Option<Vec<u32>> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.is_empty() || parts.len() > max {
        return None;
    }
    parts
        .iter()
        .map(|p| {
            let ok = !p.is_empty() && p.len() <= 6 && p.bytes().all(|b| b.is_ascii_digit());
            ok.then(|| p.parse().ok()).flatten()
        })
        .collect()
}

impl FromStr for Version {
    type Err = String;

    fn from_str(s: &str) -> Result<Version, String> {
        match numbers(s, 3).as_deref() {
            Some(&[major, minor, patch]) => Ok(Version {
                major,
                minor,
                patch,
            }),
            _ => Err(format!(
                "`{s}` is not an exact toolkit version (expected MAJOR.MINOR.PATCH, e.g. 12.4.131)"
            )),
        }
    }
}

impl Version {
    /// The PyPI package whose wheel holds this version's ptxas: the CUDA 11 and 12 wheels carry
    /// the major in their name, CUDA 13's do not.
    pub fn nvcc_package(&self) -> &'static str {
        nvcc_package(self.major)
    }
}

/// The PyPI package of a major release's nvcc wheels.
pub fn nvcc_package(major: u32) -> &'static str {
    match major {
        11 => "nvidia-cuda-nvcc-cu11",
        12 => "nvidia-cuda-nvcc-cu12",
        _ => "nvidia-cuda-nvcc",
    }
}

/// Which installed versions a command uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    /// Every installed version.
    All,
    /// The newest installed version whose leading numbers are these (`12` or `12.4`), or
    /// exactly this version when all three are given.
    Prefix(Vec<u32>),
}

impl FromStr for Spec {
    type Err = String;

    fn from_str(s: &str) -> Result<Spec, String> {
        if s == "all" {
            return Ok(Spec::All);
        }
        numbers(s, 3).map(Spec::Prefix).ok_or_else(|| {
            format!("`{s}` is not a ptxas version (expected `all`, 12, 12.4 or 12.4.131)")
        })
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Spec::All => f.write_str("all"),
            Spec::Prefix(p) => {
                let parts: Vec<String> = p.iter().map(u32::to_string).collect();
                f.write_str(&parts.join("."))
            }
        }
    }
}

impl Spec {
    /// Whether `v` is one of the versions this names.
    pub fn admits(&self, v: &Version) -> bool {
        match self {
            Spec::All => true,
            Spec::Prefix(p) => p
                .iter()
                .zip([v.major, v.minor, v.patch])
                .all(|(a, b)| *a == b),
        }
    }

    /// The versions of `installed` this selects: all that it admits for `all`, else the newest.
    pub fn select(&self, installed: &[Version]) -> Vec<Version> {
        let mut hits: Vec<Version> = installed
            .iter()
            .copied()
            .filter(|v| self.admits(v))
            .collect();
        hits.sort();
        hits.dedup();
        match self {
            Spec::All => hits,
            Spec::Prefix(_) => hits.pop().into_iter().collect(),
        }
    }
}

/// Parses a comma-separated list of specifications (`12.4,13`, `all`).
pub fn parse_specs(s: &str) -> Result<Vec<Spec>, String> {
    s.split(',').map(|p| p.trim().parse()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn versions_order_numerically() {
        assert!(v("12.10.1") > v("12.9.86"));
        assert!(v("13.0.48") > v("12.9.86"));
        assert_eq!(v("12.4.131").to_string(), "12.4.131");
        assert!("12.4".parse::<Version>().is_err());
        assert!("12.4.x".parse::<Version>().is_err());
        assert!("12.4.1.2".parse::<Version>().is_err());
        assert!("1234567.0.0".parse::<Version>().is_err());
    }

    #[test]
    fn a_prefix_selects_the_newest_match_and_all_selects_every_one() {
        let installed = [v("12.4.99"), v("13.0.48"), v("12.4.131"), v("11.8.89")];
        let sel = |s: &str| s.parse::<Spec>().unwrap().select(&installed);
        assert_eq!(sel("12.4"), vec![v("12.4.131")]);
        assert_eq!(sel("12.4.99"), vec![v("12.4.99")]);
        assert_eq!(sel("12"), vec![v("12.4.131")]);
        assert_eq!(sel("12.5"), vec![]);
        assert_eq!(
            sel("all"),
            vec![v("11.8.89"), v("12.4.99"), v("12.4.131"), v("13.0.48")]
        );
        assert!("12..4".parse::<Spec>().is_err());
        assert!("latest".parse::<Spec>().is_err());
        assert_eq!(parse_specs("12.4, 13").unwrap().len(), 2);
    }

    #[test]
    fn each_major_has_its_wheel() {
        assert_eq!(v("11.8.89").nvcc_package(), "nvidia-cuda-nvcc-cu11");
        assert_eq!(v("12.0.76").nvcc_package(), "nvidia-cuda-nvcc-cu12");
        assert_eq!(v("13.5.37").nvcc_package(), "nvidia-cuda-nvcc");
    }
}
