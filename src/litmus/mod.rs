//! Litmus tests: the typed AST, the parser for the PTX litmus dialect, the canonical printer and
//! the format-independent test hash.

pub mod ast;
