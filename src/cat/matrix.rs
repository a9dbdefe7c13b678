//! Sets and relations over the events of one execution as bits: a set is a `u128`, a relation
//! one `u128` row per event (so at most 128 events).

use crate::model::Rows;

/// A set of events, one bit per event index.
pub type Set = u128;

/// The set of the first `n` events.
pub fn all(n: usize) -> Set {
    if n >= 128 {
        !0
    } else {
        (1u128 << n) - 1
    }
}

/// Iterates over the members of a set, lowest first.
pub fn members(mut s: Set) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (s != 0).then(|| {
            let i = s.trailing_zeros() as usize;
            s &= s - 1;
            i
        })
    })
}

/// A binary relation: bit `j` of row `i` holds when `(i, j)` is related.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mat {
    /// One row per event, in a buffer recycled as the checker's are (the interpreter makes and
    /// drops relations at every statement of every candidate).
    pub rows: Rows,
}

impl Mat {
    /// The empty relation over `n` events.
    pub fn empty(n: usize) -> Mat {
        Mat {
            rows: Rows::zeroed(n),
        }
    }

    /// The identity on the set `s`.
    pub fn id_on(n: usize, s: Set) -> Mat {
        let mut m = Mat::empty(n);
        for i in members(s) {
            m.rows[i] = 1 << i;
        }
        m
    }

    /// Every pair of a member of `a` and a member of `b`.
    pub fn product(n: usize, a: Set, b: Set) -> Mat {
        let mut m = Mat::empty(n);
        for i in members(a) {
            m.rows[i] = b;
        }
        m
    }

    /// A relation from a predicate on pairs.
    pub fn from_fn(n: usize, f: impl Fn(usize, usize) -> bool) -> Mat {
        let mut m = Mat::empty(n);
        for i in 0..n {
            for j in 0..n {
                if f(i, j) {
                    m.rows[i] |= 1 << j;
                }
            }
        }
        m
    }

    /// The number of events.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the relation has no event at all (a model checked on nothing).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Whether `(a, b)` is related.
    pub fn has(&self, a: usize, b: usize) -> bool {
        self.rows[a] >> b & 1 != 0
    }

    /// Applies `f` row by row with the matching row of `o`.
    pub fn zip(&self, o: &Mat, f: impl Fn(Set, Set) -> Set) -> Mat {
        Mat {
            rows: self
                .rows
                .iter()
                .zip(o.rows.iter())
                .map(|(a, b)| f(*a, *b))
                .collect(),
        }
    }

    /// `self ; o`.
    pub fn seq(&self, o: &Mat) -> Mat {
        let rows = self
            .rows
            .iter()
            .map(|r| members(*r).fold(0, |acc, k| acc | o.rows[k]))
            .collect();
        Mat { rows }
    }

    /// The inverse relation.
    pub fn inverse(&self) -> Mat {
        let mut m = Mat::empty(self.len());
        for (i, r) in self.rows.iter().enumerate() {
            for j in members(*r) {
                m.rows[j] |= 1 << i;
            }
        }
        m
    }

    /// The transitive closure (Warshall over bit rows).
    pub fn plus(&self) -> Mat {
        let mut m = self.clone();
        for k in 0..m.len() {
            let rk = m.rows[k];
            for i in 0..m.len() {
                if m.rows[i] >> k & 1 != 0 {
                    m.rows[i] |= rk;
                }
            }
        }
        m
    }

    /// The relation with the identity on every event added.
    pub fn reflexive(&self) -> Mat {
        let mut m = self.clone();
        for (i, r) in m.rows.iter_mut().enumerate() {
            *r |= 1 << i;
        }
        m
    }

    /// The events related to something.
    pub fn domain(&self) -> Set {
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, r)| **r != 0)
            .fold(0, |s, (i, _)| s | 1 << i)
    }

    /// The events something is related to.
    pub fn range(&self) -> Set {
        self.rows.iter().fold(0, |s, r| s | r)
    }

    /// Whether no event is related to itself.
    pub fn irreflexive(&self) -> bool {
        self.rows.iter().enumerate().all(|(i, r)| r >> i & 1 == 0)
    }

    /// Whether the relation has no cycle.
    pub fn acyclic(&self) -> bool {
        self.plus().irreflexive()
    }

    /// Whether no pair is related.
    pub fn no_pairs(&self) -> bool {
        self.rows.iter().all(|r| *r == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closure_inverse_and_cycles() {
        let mut m = Mat::empty(3);
        m.rows[0] = 0b010;
        m.rows[1] = 0b100;
        assert!(m.plus().has(0, 2));
        assert!(m.acyclic());
        assert_eq!(m.inverse().rows[..], [0, 0b001, 0b010]);
        assert_eq!(m.seq(&m).rows[..], [0b100, 0, 0]);
        assert_eq!((m.domain(), m.range()), (0b011, 0b110));
        m.rows[2] = 0b001;
        assert!(!m.acyclic());
        assert!(m.irreflexive());
        assert!(!m.reflexive().irreflexive());
        assert_eq!(Mat::product(3, 0b001, 0b110).rows[..], [0b110, 0, 0]);
        assert_eq!(members(all(3)).collect::<Vec<_>>(), vec![0, 1, 2]);
    }
}
