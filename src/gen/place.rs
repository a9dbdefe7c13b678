//! Where the threads of a generated test run. A placement is named by a word the test name
//! ends with:
//!
//! - `samewarp`: every thread in one warp of one CTA;
//! - `samecta`: one CTA, each thread in a warp of its own;
//! - `diffcta`: each thread in a CTA of its own, no clusters named;
//! - `samecluster`: each thread in a CTA of its own, all in one cluster;
//! - `diffcluster`: each thread in a cluster of its own;
//! - `TB_01_2` (cuda-litmus's thread-block groupings): threads sharing a group share a CTA,
//!   no clusters named, warps left to the harness;
//! - `CL_01_2`: each thread in a CTA of its own, threads sharing a group share a cluster.

use super::GenError;
use crate::litmus::ast::Placement;

/// A named placement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Place {
    /// The word as written.
    pub name: String,
}

fn at(warp: Option<u32>, cta: u32, cluster: Option<u32>) -> Placement {
    Placement {
        warp,
        cta,
        cluster,
        gpu: 0,
    }
}

/// The group index of each of `threads` threads in `TB_01_2`-style groups, checked to name
/// each thread once.
fn groups(word: &str, spec: &str, threads: usize) -> Result<Vec<u32>, GenError> {
    let mut group = vec![None; threads];
    for (g, part) in spec.split('_').enumerate() {
        for c in part.chars() {
            let t = c
                .to_digit(10)
                .map(|d| d as usize)
                .filter(|t| *t < threads)
                .ok_or_else(|| {
                    GenError::msg(format!(
                        "placement `{word}`: `{c}` is not a thread of this {threads}-thread test"
                    ))
                })?;
            if group[t].replace(g as u32).is_some() {
                return Err(GenError::msg(format!(
                    "placement `{word}`: thread {t} named twice"
                )));
            }
        }
    }
    group
        .into_iter()
        .enumerate()
        .map(|(t, g)| {
            g.ok_or_else(|| GenError::msg(format!("placement `{word}`: thread {t} is in no group")))
        })
        .collect()
}

impl Place {
    /// Parses a placement word (see the module comment).
    pub fn parse(word: &str) -> Result<Place, GenError> {
        let known = [
            "samewarp",
            "samecta",
            "diffcta",
            "samecluster",
            "diffcluster",
        ];
        if known.contains(&word) || word.starts_with("TB_") || word.starts_with("CL_") {
            Ok(Place {
                name: word.to_string(),
            })
        } else {
            Err(GenError::msg(format!(
                "placement `{word}`: expected samewarp, samecta, diffcta, samecluster, diffcluster, TB_<groups> or CL_<groups>"
            )))
        }
    }

    /// The placement of each of `threads` threads.
    pub fn threads(&self, threads: usize) -> Result<Vec<Placement>, GenError> {
        let n = threads as u32;
        Ok(match self.name.as_str() {
            "samewarp" => (0..n).map(|_| at(Some(0), 0, None)).collect(),
            "samecta" => (0..n).map(|t| at(Some(t), 0, None)).collect(),
            "diffcta" => (0..n).map(|t| at(None, t, None)).collect(),
            "samecluster" => (0..n).map(|t| at(None, t, Some(0))).collect(),
            "diffcluster" => (0..n).map(|t| at(None, t, Some(t))).collect(),
            w => {
                let (tb, spec) = match w.strip_prefix("TB_") {
                    Some(s) => (true, s),
                    None => (false, &w[3..]),
                };
                let g = groups(w, spec, threads)?;
                (0..n)
                    .map(|t| {
                        if tb {
                            at(None, g[t as usize], None)
                        } else {
                            at(None, t, Some(g[t as usize]))
                        }
                    })
                    .collect()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groupings_place_threads() {
        let p = Place::parse("TB_02_1").unwrap().threads(3).unwrap();
        assert_eq!(p.iter().map(|x| x.cta).collect::<Vec<_>>(), [0, 1, 0]);
        let c = Place::parse("CL_01_2").unwrap().threads(3).unwrap();
        assert_eq!(
            c.iter().map(|x| x.cluster).collect::<Vec<_>>(),
            [Some(0), Some(0), Some(1)]
        );
        assert!(Place::parse("TB_01").unwrap().threads(3).is_err());
        assert!(Place::parse("TB_011_2").unwrap().threads(3).is_err());
        assert!(Place::parse("nearby").is_err());
    }
}
