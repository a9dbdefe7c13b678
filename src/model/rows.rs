//! The rows of a relation, with their buffers recycled: the search makes and drops relations
//! at every choice, in patterns (many made, then many dropped) that the allocator serves
//! slowly, so each thread keeps up to [`SPARE_MOST`] dropped buffers for the next relations.

use std::cell::RefCell;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// The most buffers a thread keeps for reuse (at most 2 KiB each: 128 rows of 16 bytes).
const SPARE_MOST: usize = 64;

thread_local! {
    /// Buffers of dropped rows, kept for the next ones.
    static SPARE: RefCell<Vec<Vec<u128>>> = const { RefCell::new(Vec::new()) };
}

/// A buffer from the thread's spares, emptied, or a new one.
fn buffer(n: usize) -> Vec<u128> {
    let spare = SPARE.try_with(|s| s.borrow_mut().pop()).ok().flatten();
    let mut v = spare.unwrap_or_else(|| Vec::with_capacity(n));
    v.clear();
    v
}

/// One `u128` row per event; read and written as a slice.
pub struct Rows(Vec<u128>);

impl Rows {
    /// `n` empty rows.
    pub fn zeroed(n: usize) -> Rows {
        let mut v = buffer(n);
        v.resize(n, 0);
        Rows(v)
    }
}

impl Rows {
    /// A copy of `rows`.
    pub fn from_slice(rows: &[u128]) -> Rows {
        let mut v = buffer(rows.len());
        v.extend_from_slice(rows);
        Rows(v)
    }
}

impl FromIterator<u128> for Rows {
    fn from_iter<I: IntoIterator<Item = u128>>(rows: I) -> Rows {
        let rows = rows.into_iter();
        let mut v = buffer(rows.size_hint().0);
        v.extend(rows);
        Rows(v)
    }
}

impl Clone for Rows {
    fn clone(&self) -> Rows {
        Rows::from_slice(&self.0)
    }

    fn clone_from(&mut self, source: &Rows) {
        self.0.clear();
        self.0.extend_from_slice(&source.0);
    }
}

impl Drop for Rows {
    fn drop(&mut self) {
        let v = std::mem::take(&mut self.0);
        if v.capacity() > 0 {
            // After the thread's spares are gone (the thread ending), the buffer is freed.
            let _ = SPARE.try_with(|s| {
                let mut s = s.borrow_mut();
                if s.len() < SPARE_MOST {
                    s.push(v);
                }
            });
        }
    }
}

impl Deref for Rows {
    type Target = [u128];

    fn deref(&self) -> &[u128] {
        &self.0
    }
}

impl DerefMut for Rows {
    fn deref_mut(&mut self) -> &mut [u128] {
        &mut self.0
    }
}

impl PartialEq for Rows {
    fn eq(&self, other: &Rows) -> bool {
        self.0 == other.0
    }
}

impl Eq for Rows {}

impl fmt::Debug for Rows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::{Rows, SPARE, SPARE_MOST};

    fn spares() -> usize {
        SPARE.with(|s| s.borrow().len())
    }

    #[test]
    fn rows_made_from_a_spare_buffer_start_empty_and_copies_are_apart() {
        let mut a = Rows::zeroed(4);
        a[3] = 5;
        drop(a);
        assert!(spares() >= 1, "a dropped buffer is kept");
        let mut b = Rows::zeroed(6);
        assert_eq!(
            &b[..],
            &[0; 6],
            "a reused buffer holds nothing of its last rows"
        );
        b[0] = 2;
        let c = b.clone();
        assert_eq!(b, c);
        b[0] = 3;
        assert_ne!(b, c, "a clone is a copy, not a view");
        assert_ne!(
            Rows::zeroed(3),
            Rows::zeroed(4),
            "relations over other events differ"
        );
    }

    #[test]
    fn a_thread_keeps_a_bounded_number_of_spare_buffers() {
        let many: Vec<Rows> = (0..3 * SPARE_MOST).map(|_| Rows::zeroed(128)).collect();
        drop(many);
        assert_eq!(spares(), SPARE_MOST);
    }
}
