//! Rendering result sets for people: the plain-text summary `run` prints, HTML and Markdown
//! reports with plots, and comparisons of two result sets. Reads only [`crate::results`] types,
//! so any result set this build can read re-renders, byte for byte.

pub mod format;
pub mod summary;
