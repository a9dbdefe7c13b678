//! Test generation (`ptx-litmus gen`): litmus tests from cycles of relations, in the spirit of
//! diy7, with PTX's axes — access semantics, scope, fences, dependencies, thread placement,
//! memory space — as annotations, and the cuda-litmus PLDI'26 variant space under its own
//! names.
//!
//! `cycle` the cycle language, `annot` what annotates events and fences, `skeleton` threads,
//! locations and values a cycle fixes, `place` thread placements, `build` one test's text and
//! systematic name, `family` the checked-in family files and their expansion, `pldi26` the
//! cuda-litmus kernels as cycles, `enumerate` every critical cycle over a pool of edges (diy7's
//! `-size`), `shapes` the names of cycle shapes, `random` model-diff's random tests.

pub mod annot;
pub mod build;
pub mod cycle;
pub mod enumerate;
pub mod family;
pub mod place;
pub mod pldi26;
pub mod random;
pub mod shapes;
pub mod skeleton;
pub mod wide;

use std::fmt;
use std::path::{Path, PathBuf};

pub use build::Generated;
pub use family::Family;

/// Why something could not be generated: the cause, and the file and line it comes from when
/// known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenError {
    /// The family file.
    pub path: Option<PathBuf>,
    /// The 1-based line in it.
    pub line: Option<usize>,
    /// What went wrong.
    pub msg: String,
}

impl GenError {
    /// An error not yet placed in a file.
    pub fn msg(msg: impl Into<String>) -> GenError {
        GenError {
            path: None,
            line: None,
            msg: msg.into(),
        }
    }

    /// The error placed at `path` (and `line`), unless it already names a place.
    pub fn at(mut self, path: &Path, line: Option<usize>) -> GenError {
        if self.path.is_none() {
            self.path = Some(path.to_path_buf());
            self.line = line;
        }
        self
    }
}

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, self.line) {
            (Some(p), Some(l)) => write!(f, "{}:{l}: {}", p.display(), self.msg),
            (Some(p), None) => write!(f, "{}: {}", p.display(), self.msg),
            _ => f.write_str(&self.msg),
        }
    }
}

impl std::error::Error for GenError {}
