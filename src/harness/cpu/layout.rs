//! Where each instance's locations live in the memory arena.
//!
//! An instance owns a block of `block_words` 64-bit words; location `l` of instance `i` is word
//! `i * block_words + word(l)`. By default every location sits alone on its own cache line, so
//! no two locations (of one instance or of different ones) share a line and every access that
//! races is a real cross-core cache-line transfer. `pack` puts the locations of an instance
//! next to each other and instances back to back, so that neighbours share lines (false
//! sharing, which changes timing, never the set of allowed outcomes).

use std::sync::atomic::AtomicI64;

/// Bytes per cache line assumed (x86-64 and most ARM cores).
pub const LINE_BYTES: usize = 64;
const LINE_WORDS: usize = LINE_BYTES / 8;

/// The placement of locations in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Words between consecutive locations of one instance.
    pub loc_stride: usize,
    /// Words per instance.
    pub block_words: usize,
}

impl Layout {
    /// A layout for `locations` locations, one per cache line unless `pack`.
    pub fn new(locations: usize, pack: bool) -> Layout {
        let locations = locations.max(1);
        if pack {
            Layout {
                loc_stride: 1,
                block_words: locations,
            }
        } else {
            Layout {
                loc_stride: LINE_WORDS,
                block_words: locations * LINE_WORDS,
            }
        }
    }

    /// Word offset of location `l` inside an instance block.
    pub fn word(&self, l: usize) -> u32 {
        (l * self.loc_stride) as u32
    }
}

/// Line-aligned memory for the instances of one round, all words atomic.
pub struct Arena {
    storage: Vec<AtomicI64>,
    start: usize,
    len: usize,
}

impl Arena {
    /// Zeroed memory for `instances` instances under `layout`.
    pub fn new(instances: usize, layout: &Layout) -> Arena {
        let len = instances * layout.block_words;
        let storage: Vec<AtomicI64> = (0..len + LINE_WORDS).map(|_| AtomicI64::new(0)).collect();
        // Start at the first line boundary so that `word(l)` offsets map to whole lines.
        let start = storage
            .iter()
            .position(|w| (w as *const AtomicI64 as usize) % LINE_BYTES == 0)
            .unwrap_or(0);
        Arena {
            storage,
            start,
            len,
        }
    }

    /// The words, line-aligned.
    pub fn words(&self) -> &[AtomicI64] {
        &self.storage[self.start..self.start + self.len]
    }
}
