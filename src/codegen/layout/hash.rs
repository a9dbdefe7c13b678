//! The host mirror of the device's per-launch hash (`ptx/hash.ptx`): every random draw a launch
//! makes from its seed, computed exactly as the device computes it, so the host knows which
//! placement and which stress a launch used.

/// The per-launch hash of the device: a 32-bit integer finaliser. `salt` picks one of the
/// independent draws of a launch (see [`Salt`]).
pub fn mix32(seed: u32, salt: Salt) -> u32 {
    let mut x = seed ^ (salt as u32).wrapping_mul(0x9E37_79B9);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^= x >> 16;
    x
}

/// The independent draws a launch makes from its seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Salt {
    /// Whether this launch shuffles placement (`shuffle_pct`).
    Shuffle = 1,
    /// The cluster permutation.
    Cluster = 2,
    /// The rank rotation.
    Rank = 3,
    /// The warp permutation.
    Warp = 4,
    /// The lane permutation.
    Lane = 5,
    /// Whether test threads meet at the spin barrier (`barrier_pct`).
    Barrier = 6,
    /// Whether stress CTAs stress memory (`mem_stress_pct`).
    MemStress = 7,
    /// Whether test threads stress memory before the test (`pre_stress_pct`).
    PreStress = 8,
    /// The line all balanced stress threads hit.
    StressLine = 9,
}

/// Whether a launch with `seed` takes a `pct`-percent chance drawn with `salt`.
pub fn chance(seed: u32, salt: Salt, pct: u32) -> bool {
    mix32(seed, salt) % 100 < pct
}
