//! A cat-model interpreter: a model written in the cat language (herd7's, as Dat3M's PTX models
//! use it) evaluated on every candidate execution the checker enumerates — a second, independent
//! oracle next to the built-in PTX checker in [`crate::model`].
//!
//! [`lexer`] and [`parser`] read the text into an [`ast::Model`]; [`eval`] evaluates it over
//! [`matrix`] bit relations; [`base`] defines the base tags and relations from the events;
//! [`check`] enumerates the choices of each candidate (reads-from, Fence-SC order, coherence);
//! [`builtin`] holds the project's own transcriptions of the PTX models.

pub mod ast;
pub mod base;
pub mod builtin;
pub mod check;
pub mod differential;
pub mod eval;
pub mod lexer;
pub mod matrix;
pub mod parser;

use std::fmt;

/// An error in a model file: its line and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl CatError {
    /// An error at `line`.
    pub fn at(line: usize, message: &str) -> CatError {
        CatError {
            line,
            message: message.to_string(),
        }
    }
}

impl fmt::Display for CatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for CatError {}

/// Parses a model and checks, on an empty execution, that every name it uses is defined and
/// every operator gets the kind of value it needs.
pub fn load(src: &str) -> Result<ast::Model, CatError> {
    let m = parser::parse(src)?;
    eval::run(&m, 0, &mut base::empty_env(0))?;
    Ok(m)
}
