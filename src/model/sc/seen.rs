//! The interleaving explorer's memo: every state met, stored once and hashed once. Successors
//! are built in buffers reused from state to state and copied in only when new (most were met
//! before: that costs neither an allocation nor a free); the work list holds numbers, not
//! copies; kept hashes spare rehashing when the table grows.

use crate::fx::FxBuild;
use std::hash::{BuildHasher, Hash};

/// A set of items numbered in the order they were first inserted.
pub struct Seen<T> {
    items: Vec<T>,
    hashes: Vec<u64>,
    /// Open addressing with linear probing: 0 is free, `i + 1` names `items[i]`. Its length
    /// is a power of two, kept at least twice the number of items.
    slots: Vec<u32>,
    /// `64 - log2(slots.len())`: a hash's slot is its top bits.
    shift: u32,
}

impl<T: Hash + Eq + Clone> Seen<T> {
    /// An empty set.
    pub fn new() -> Self {
        const FIRST: usize = 256;
        Seen {
            items: Vec::new(),
            hashes: Vec::new(),
            slots: vec![0; FIRST],
            shift: 64 - FIRST.trailing_zeros(),
        }
    }

    /// How many items it holds.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Item number `i`.
    pub fn get(&self, i: usize) -> &T {
        &self.items[i]
    }

    /// The number of the item equal to `x`, if there is one.
    pub fn find(&self, x: &T) -> Option<usize> {
        self.probe(x, FxBuild::default().hash_one(x)).ok()
    }

    /// Where `x`, of hash `h`, is: `Ok(its number)`, or `Err(the free slot it would take)`.
    fn probe(&self, x: &T, h: u64) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut at = (h >> self.shift) as usize;
        loop {
            match self.slots[at] {
                0 => return Err(at),
                s => {
                    let j = s as usize - 1;
                    if self.hashes[j] == h && self.items[j] == *x {
                        return Ok(j);
                    }
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// Adds a copy of `x` unless an equal item is there: its number when it is new, `None`
    /// otherwise (then nothing is copied).
    pub fn insert(&mut self, x: &T) -> Option<usize> {
        let h = FxBuild::default().hash_one(x);
        let at = self.probe(x, h).err()?;
        let j = self.items.len();
        self.slots[at] = u32::try_from(j + 1).expect("fewer than 2^32 states");
        self.items.push(x.clone());
        self.hashes.push(h);
        if 2 * self.items.len() > self.slots.len() {
            self.grow();
        }
        Some(j)
    }

    /// Doubles the table, placing each item by its kept hash.
    fn grow(&mut self) {
        let len = 2 * self.slots.len();
        self.slots = vec![0; len];
        self.shift -= 1;
        let mask = len - 1;
        for (j, h) in self.hashes.iter().enumerate() {
            let mut at = (h >> self.shift) as usize;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = j as u32 + 1;
        }
    }
}

/// Buffers for the successors of one state, reused for the next one.
pub struct Buffers<T> {
    bufs: Vec<T>,
    used: usize,
}

impl<T: Clone> Buffers<T> {
    /// None yet.
    pub fn new() -> Self {
        Buffers {
            bufs: Vec::new(),
            used: 0,
        }
    }

    /// A further buffer holding a copy of `x`.
    pub fn push_copy(&mut self, x: &T) -> &mut T {
        if self.used == self.bufs.len() {
            self.bufs.push(x.clone());
        } else {
            self.bufs[self.used].clone_from(x);
        }
        self.used += 1;
        &mut self.bufs[self.used - 1]
    }

    /// Gives back the last buffer taken.
    pub fn pop(&mut self) {
        self.used -= 1;
    }

    /// The buffers taken since the last call, given back.
    pub fn drain(&mut self) -> &[T] {
        let n = std::mem::take(&mut self.used);
        &self.bufs[..n]
    }
}

#[cfg(test)]
mod tests {
    use super::Seen;

    #[test]
    fn numbers_new_items_in_order_and_refuses_equal_ones_across_growth() {
        let mut s = Seen::new();
        for i in 0..5000u64 {
            assert_eq!(s.insert(&vec![i, i * 7]), Some(i as usize));
        }
        for i in (0..5000u64).rev() {
            assert_eq!(s.insert(&vec![i, i * 7]), None, "item {i} seen");
        }
        assert_eq!(s.insert(&vec![3, 20]), Some(5000));
        assert_eq!(s.len(), 5001);
        assert_eq!(s.get(4999), &vec![4999, 4999 * 7]);
    }
}
