//! The toolchain store: ptxas of many exact CUDA versions side by side, installed from PyPI
//! wheels into a cache folder, so that `--ptxas 12.4` or `--ptxas all` resolves without
//! touching the network.

pub mod index;
pub mod install;
mod pip;
pub mod store;
pub mod version;

pub use store::Installed;
pub use version::{Spec, Version};
