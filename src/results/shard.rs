//! `--shard i/n`: a deterministic split of a suite, so that a batch scheduler (a Slurm job
//! array) can run its parts on different machines and `merge` can put them back together.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Part `index` (from 0) of a suite split into `count` parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    /// Which part, `0 <= index < count` (Slurm's `$SLURM_ARRAY_TASK_ID` for `--array=0-(n-1)`).
    pub index: u32,
    /// How many parts.
    pub count: u32,
}

impl Shard {
    /// The paths of this shard: the suite sorted by path and dealt round-robin, so every test
    /// lands in exactly one shard whatever order the paths were found in.
    pub fn select<T: AsRef<str>>(&self, paths: &[T]) -> Vec<String> {
        let mut sorted: Vec<&str> = paths.iter().map(|p| p.as_ref()).collect();
        sorted.sort_unstable();
        sorted.dedup();
        sorted
            .into_iter()
            .enumerate()
            .filter(|(i, _)| *i as u64 % self.count as u64 == self.index as u64)
            .map(|(_, p)| p.to_string())
            .collect()
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("invalid shard `{s}`: expected i/n with 0 <= i < n, e.g. 0/8");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!("2/8".parse(), Ok(Shard { index: 2, count: 8 }));
        assert!("8/8".parse::<Shard>().is_err());
        assert!("0/0".parse::<Shard>().is_err());
        assert!("a/3".parse::<Shard>().is_err());
        assert!("3".parse::<Shard>().is_err());
    }

    #[test]
    fn shards_partition_the_suite_whatever_the_order() {
        let paths: Vec<String> = (0..23).map(|i| format!("litmus/t{i:02}.litmus")).collect();
        let mut reversed = paths.clone();
        reversed.reverse();
        let mut all: Vec<String> = Vec::new();
        for index in 0..5 {
            let s = Shard { index, count: 5 };
            let part = s.select(&paths);
            assert_eq!(part, s.select(&reversed));
            assert!(part.len() == 4 || part.len() == 5);
            all.extend(part);
        }
        all.sort();
        assert_eq!(all, paths);
    }
}
