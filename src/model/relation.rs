//! Small dense relations over the events of one candidate execution: one `u128` row per event,
//! so a test may have at most [`MAX_EVENTS`] events. Every operation is a few word operations
//! per row; nothing here allocates except `new` and `clone`, and they mostly reuse the buffers
//! of dropped relations ([`super::rows`]).

use super::rows::Rows;

/// The most events one execution may have (the width of a row).
pub const MAX_EVENTS: usize = 128;

/// A set of events, one bit per event index.
pub type Set = u128;

/// A binary relation over `n` events: bit `j` of `rows[i]` is set when `(i, j)` is related.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rel {
    rows: Rows,
}

/// The set holding only event `i`.
pub fn bit(i: usize) -> Set {
    1u128 << i
}

/// Iterates over the members of a set, lowest first.
pub fn members(mut s: Set) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if s == 0 {
            None
        } else {
            let i = s.trailing_zeros() as usize;
            s &= s - 1;
            Some(i)
        }
    })
}

impl Rel {
    /// The empty relation over `n` events.
    pub fn new(n: usize) -> Rel {
        debug_assert!(n <= MAX_EVENTS);
        Rel {
            rows: Rows::zeroed(n),
        }
    }

    /// The number of events.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Relates `a` to `b`.
    pub fn add(&mut self, a: usize, b: usize) {
        self.rows[a] |= bit(b);
    }

    /// Removes the pair `(a, b)`.
    pub fn remove(&mut self, a: usize, b: usize) {
        self.rows[a] &= !bit(b);
    }

    /// Whether `a` is related to `b`.
    pub fn has(&self, a: usize, b: usize) -> bool {
        self.rows[a] & bit(b) != 0
    }

    /// The events `a` is related to.
    pub fn row(&self, a: usize) -> Set {
        self.rows[a]
    }

    /// The events related to `b`.
    pub fn inverse_col(&self, b: usize) -> Set {
        let mut s = 0;
        for (a, r) in self.rows.iter().enumerate() {
            if r & bit(b) != 0 {
                s |= bit(a);
            }
        }
        s
    }

    /// Replaces the row of `a`.
    pub fn set_row(&mut self, a: usize, s: Set) {
        self.rows[a] = s;
    }

    /// Every pair, in order.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.rows
            .iter()
            .enumerate()
            .flat_map(|(i, r)| members(*r).map(move |j| (i, j)))
    }

    /// Adds every pair of `other` to `self`.
    pub fn union_with(&mut self, other: &Rel) {
        for (a, b) in self.rows.iter_mut().zip(other.rows.iter()) {
            *a |= *b;
        }
    }

    /// Keeps only the pairs also in `other`.
    pub fn intersect_with(&mut self, other: &Rel) {
        for (a, b) in self.rows.iter_mut().zip(other.rows.iter()) {
            *a &= *b;
        }
    }

    /// The union of two relations.
    pub fn union(&self, other: &Rel) -> Rel {
        let mut r = self.clone();
        r.union_with(other);
        r
    }

    /// The intersection of two relations.
    pub fn intersect(&self, other: &Rel) -> Rel {
        let mut r = self.clone();
        r.intersect_with(other);
        r
    }

    /// Sequential composition `self ; other`.
    pub fn seq(&self, other: &Rel) -> Rel {
        let mut out = Rel::new(self.len());
        self.seq_into(other, &mut out);
        out
    }

    /// Writes `self ; other` into `out` (no allocation).
    pub fn seq_into(&self, other: &Rel, out: &mut Rel) {
        for (i, r) in self.rows.iter().enumerate() {
            let mut acc = 0;
            for k in members(*r) {
                acc |= other.rows[k];
            }
            out.rows[i] = acc;
        }
    }

    /// Closes the relation transitively in place (Warshall over bit rows).
    pub fn close(&mut self) {
        let n = self.rows.len();
        for k in 0..n {
            let rk = self.rows[k];
            if rk == 0 {
                continue;
            }
            let kb = bit(k);
            for i in 0..n {
                if self.rows[i] & kb != 0 {
                    self.rows[i] |= rk;
                }
            }
        }
    }

    /// The transitive closure.
    pub fn closure(&self) -> Rel {
        let mut r = self.clone();
        r.close();
        r
    }

    /// Whether some event is related to itself.
    pub fn is_reflexive_somewhere(&self) -> Option<usize> {
        (0..self.rows.len()).find(|&i| self.has(i, i))
    }

    /// A cycle `e0 -> e1 -> ... -> e0` (listed without repeating `e0`), if there is one.
    pub fn find_cycle(&self) -> Option<Vec<usize>> {
        cycle_of(self.rows.len(), |i| self.rows[i])
    }

    /// A shortest path from `a` to `b` (both included), if `b` is reachable from `a`.
    pub fn path(&self, a: usize, b: usize) -> Option<Vec<usize>> {
        let n = self.rows.len();
        let mut prev = vec![usize::MAX; n];
        let mut frontier = vec![a];
        let mut seen = bit(a);
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &x in &frontier {
                for y in members(self.rows[x]) {
                    if y == b {
                        let mut p = vec![b, x];
                        let mut c = x;
                        while c != a {
                            c = prev[c];
                            p.push(c);
                        }
                        p.reverse();
                        return Some(p);
                    }
                    if seen & bit(y) == 0 {
                        seen |= bit(y);
                        prev[y] = x;
                        next.push(y);
                    }
                }
            }
            frontier = next;
        }
        None
    }
}

/// A cycle of the relation over `n` events whose rows `row` gives, computed as they are read
/// (so a union of relations needs no relation of its own), if there is one.
pub fn cycle_of(n: usize, row: impl Fn(usize) -> Set) -> Option<Vec<usize>> {
    // Kahn-style peeling: an event with no successor or no predecessor among the events
    // left cannot be on a cycle. Each pass takes all such events at once, in a few word
    // operations per event; what is left is the same whatever the order of removal.
    let mut alive: Set = if n == MAX_EVENTS {
        !0
    } else {
        (1u128 << n) - 1
    };
    loop {
        let (mut with_succ, mut with_pred) = (0, 0);
        for i in members(alive) {
            let succ = row(i) & alive;
            if succ != 0 {
                with_succ |= bit(i);
                with_pred |= succ;
            }
        }
        let left = alive & with_succ & with_pred;
        if left == alive {
            break;
        }
        alive = left;
    }
    if alive == 0 {
        return None;
    }
    // Every alive event has an alive successor: walk until an event repeats.
    let start = alive.trailing_zeros() as usize;
    let mut path = vec![start];
    let mut seen = bit(start);
    let mut cur = start;
    loop {
        let next = (row(cur) & alive).trailing_zeros() as usize;
        if seen & bit(next) != 0 {
            let pos = path
                .iter()
                .position(|&e| e == next)
                .expect("seen event is on the path");
            return Some(path[pos..].to_vec());
        }
        seen |= bit(next);
        path.push(next);
        cur = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closure_and_cycles() {
        let mut r = Rel::new(4);
        r.add(0, 1);
        r.add(1, 2);
        assert!(r.find_cycle().is_none());
        let c = r.closure();
        assert!(c.has(0, 2));
        assert!(!c.has(2, 0));
        r.add(2, 0);
        let cyc = r.find_cycle().expect("0->1->2->0 is a cycle");
        assert_eq!(cyc.len(), 3);
        assert!(r.closure().is_reflexive_somewhere().is_some());
        assert_eq!(r.path(0, 2), Some(vec![0, 1, 2]));
        assert_eq!(r.path(3, 0), None);
    }

    #[test]
    fn a_cycle_is_found_behind_a_chain_and_past_a_dead_end() {
        // 5 -> 4 -> 1 -> 2 -> 3 -> 1, and 2 -> 0 leads nowhere.
        let mut r = Rel::new(6);
        for (a, b) in [(5, 4), (4, 1), (1, 2), (2, 3), (3, 1), (2, 0)] {
            r.add(a, b);
        }
        assert_eq!(r.find_cycle(), Some(vec![1, 2, 3]));
        let mut full = Rel::new(MAX_EVENTS);
        for i in 0..MAX_EVENTS {
            full.add(i, (i + 1) % MAX_EVENTS);
        }
        assert_eq!(full.find_cycle().map(|c| c.len()), Some(MAX_EVENTS));
        full.rows[MAX_EVENTS - 1] = 0;
        assert_eq!(full.find_cycle(), None);
    }

    #[test]
    fn a_cycle_of_a_union_read_row_by_row_is_found_where_neither_part_has_one() {
        let (mut a, mut b) = (Rel::new(3), Rel::new(3));
        a.add(0, 1);
        a.add(1, 2);
        b.add(2, 0);
        assert_eq!((a.find_cycle(), b.find_cycle()), (None, None));
        assert_eq!(cycle_of(3, |i| a.row(i) | b.row(i)), Some(vec![0, 1, 2]));
        assert_eq!(cycle_of(3, |i| a.row(i) & !bit(2)), None);
    }

    #[test]
    fn seq_and_members() {
        let mut a = Rel::new(3);
        a.add(0, 1);
        let mut b = Rel::new(3);
        b.add(1, 2);
        let ab = a.seq(&b);
        assert_eq!(ab.pairs().collect::<Vec<_>>(), vec![(0, 2)]);
        assert_eq!(members(0b1010).collect::<Vec<_>>(), vec![1, 3]);
    }
}
