//! The launch seed as the device derives it: SplitMix64 (Steele, Lea and Flood, "Fast
//! splittable pseudorandom number generators", OOPSLA 2014) read as a counter-based function,
//! seed `i` = upper half of `mix(state0 + i·γ)`. The kernels take the constant `state0` as a
//! parameter and read `i` from the launch-index word of the Sync buffer
//! ([`SYNC_LAUNCH_INDEX`]), which the collect kernel advances, so that every launch of a test
//! takes the same argument list. The emitter writes [`SEED_STEPS`] one PTX instruction each;
//! [`launch_seed`] evaluates the same steps on the host.

/// SplitMix64's increment γ (the odd integer nearest 2^64 / φ).
pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// One step of SplitMix64's finaliser on the 64-bit state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeedStep {
    /// `z ^= z >> n`.
    XorShr(u32),
    /// `z *= c` (wrapping).
    Mul(u64),
}

/// SplitMix64's finaliser (its `mix64`), in order; the seed is then the upper 32 bits.
pub const SEED_STEPS: [SeedStep; 5] = [
    SeedStep::XorShr(30),
    SeedStep::Mul(0xBF58_476D_1CE4_E5B9),
    SeedStep::XorShr(27),
    SeedStep::Mul(0x94D0_49BB_1331_11EB),
    SeedStep::XorShr(31),
];

/// Byte offset in the Sync buffer of the `u64` launch index: 0 when the buffer is allocated,
/// advanced by one by every collect launch (the setup launch included, so the first test
/// launch reads 1). The spin barrier's counter is the `u32` at offset 0.
pub const SYNC_LAUNCH_INDEX: u64 = 8;

/// The seed of the launch that reads launch index `index` under the test's `state0`.
pub fn launch_seed(state0: u64, index: u64) -> u32 {
    let mut z = state0.wrapping_add(index.wrapping_mul(GAMMA));
    for step in SEED_STEPS {
        z = match step {
            SeedStep::XorShr(n) => z ^ (z >> n),
            SeedStep::Mul(c) => z.wrapping_mul(c),
        };
    }
    (z >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_are_splitmix64() {
        // SplitMix64 from state 0: the first output is 0xE220A8397B1DCDAF (the reference
        // implementation's well-known first value; seed 0 of Vigna's splitmix64.c).
        assert_eq!(launch_seed(0, 1), 0xE220_A839);
        // Counter-based: index i from state s is index i - 1 from state s + γ.
        for i in 1..100u64 {
            assert_eq!(
                launch_seed(7, i + 1),
                launch_seed(7u64.wrapping_add(GAMMA), i)
            );
        }
    }
}
