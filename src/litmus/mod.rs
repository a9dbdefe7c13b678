//! Litmus tests: the typed AST, the parser for the PTX litmus dialect, the canonical printer and
//! the format-independent test hash.
//!
//! `parse` = `lexer` (tokens) → `parser` + `instr` (structure, instructions) → `validate`
//! (checks that need the whole test). `print` is its inverse on `Test`; `hash` prints what a
//! test means and hashes it; `summary` says what a test uses; `files` finds and loads tests.

pub mod arith;
pub mod ast;
mod error;
mod files;
mod hash;
mod instr;
mod lexer;
pub mod lint;
mod operands;
mod parser;
mod print;
mod strength;
mod summary;
mod validate;

pub use error::{Cause, ParseError, Pos};
pub use files::{dedup_files, discover, file_stem, load, parse_file, GENERATED_DIR};
pub use hash::{fnv1a64, hash};
pub use operands::loops;
pub use print::{instr as print_instr, print};
pub use summary::{features, scopes};

use ast::Test;
use std::path::Path;

/// Parses the text of one test; `path` names the file in errors.
pub fn parse(source: &str, path: &Path) -> Result<Test, ParseError> {
    let (test, spans) = parser::parse_document(source, path)?;
    validate::validate(&test, &spans, path)?;
    Ok(test)
}
