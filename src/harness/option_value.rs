//! One backend option's value read as what it must be, with the one error text that says what
//! was expected (`cpu option batch=0: expected 1..=16777216`).

use std::ops::RangeInclusive;
use std::str::FromStr;

/// The `backend`'s option `k` with value `v` as a number within `range`, or the error saying
/// what is `expected`.
pub fn number<T: FromStr + PartialOrd>(
    backend: &str,
    k: &str,
    v: &str,
    range: RangeInclusive<T>,
    expected: &str,
) -> Result<T, String> {
    v.parse()
        .ok()
        .filter(|x| range.contains(x))
        .ok_or_else(|| format!("{backend} option {k}={v}: expected {expected}"))
}
