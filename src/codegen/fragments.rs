//! The hand-written PTX fragments of `ptx/` every kernel links, each opening with its contract.

/// The PTX fragment with the per-launch hash.
pub const HASH_PTX: &str = include_str!("../../ptx/hash.ptx");
/// The PTX fragment with the stress loop.
pub const STRESS_PTX: &str = include_str!("../../ptx/stress.ptx");
/// The PTX fragment with the bounded spin barrier.
pub const SPIN_BARRIER_PTX: &str = include_str!("../../ptx/spin_barrier.ptx");
/// The PTX fragment with the software CTA barrier.
pub const SOFT_BARRIER_PTX: &str = include_str!("../../ptx/soft_barrier.ptx");

/// Polls of the spin barrier before a thread gives up waiting.
pub(crate) const SPIN_BOUND: u32 = 20_000;
