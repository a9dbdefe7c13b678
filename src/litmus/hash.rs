//! The test hash: FNV-1a 64 of the canonical print of what a test means, so that formatting,
//! comments, the name, the doc strings and the order of declarations do not change it.

use super::ast::Test;
use super::print;

/// 16 lowercase hex digits identifying what the test means (see the module comment).
///
/// Before printing, locations are sorted by name and register initialisations to 0 are dropped
/// and the rest sorted: neither changes any execution (undeclared locations and registers start
/// at 0), so a test written with or without `x=0; P1:r0=0;` keeps its hash.
pub fn hash(test: &Test) -> String {
    let mut t = test.clone();
    t.name.clear();
    t.doc.clear();
    t.locations.sort_by(|a, b| a.name.cmp(&b.name));
    t.reg_init.retain(|r| r.value != 0);
    t.reg_init
        .sort_by(|a, b| (a.thread, &a.reg).cmp(&(b.thread, &b.reg)));
    format!("{:016x}", fnv1a64(print::body(&t).as_bytes()))
}

/// FNV-1a, 64-bit.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_published_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
