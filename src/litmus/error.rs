//! Parse errors: where in which file, what was found and what was expected.

use std::fmt;
use std::path::{Path, PathBuf};

/// A 1-based line and column in a test file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

/// Why a test could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The text does not follow the grammar.
    Syntax {
        /// What was there, e.g. "`;`" or "end of file".
        found: String,
        /// What the grammar allows there.
        expected: String,
    },
    /// The text parses but does not describe a valid test (a branch to a missing label, ...).
    Semantic(String),
    /// The file could not be read or found.
    Io(String),
}

/// An error in a litmus test file, with its position (line 0 when the error has none, as for a
/// file that cannot be read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The file.
    pub path: PathBuf,
    /// Line, from 1 (0: no position).
    pub line: usize,
    /// Column, from 1 (0: no position).
    pub column: usize,
    /// What went wrong.
    pub cause: Cause,
}

impl ParseError {
    /// A grammar error at `pos`.
    pub fn syntax(
        path: &Path,
        pos: Pos,
        found: impl Into<String>,
        expected: impl Into<String>,
    ) -> Self {
        ParseError {
            path: path.to_path_buf(),
            line: pos.line,
            column: pos.column,
            cause: Cause::Syntax {
                found: found.into(),
                expected: expected.into(),
            },
        }
    }

    /// A semantic error at `pos`.
    pub fn semantic(path: &Path, pos: Pos, message: impl Into<String>) -> Self {
        ParseError {
            path: path.to_path_buf(),
            line: pos.line,
            column: pos.column,
            cause: Cause::Semantic(message.into()),
        }
    }

    /// A file that cannot be read or found.
    pub fn io(path: &Path, message: impl Into<String>) -> Self {
        ParseError {
            path: path.to_path_buf(),
            line: 0,
            column: 0,
            cause: Cause::Io(message.into()),
        }
    }

    /// What was found, for a grammar error.
    pub fn found(&self) -> Option<&str> {
        match &self.cause {
            Cause::Syntax { found, .. } => Some(found),
            _ => None,
        }
    }

    /// What the grammar allowed there, for a grammar error.
    pub fn expected(&self) -> Option<&str> {
        match &self.cause {
            Cause::Syntax { expected, .. } => Some(expected),
            _ => None,
        }
    }

    /// The position of the error (line 0 when it has none).
    pub fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        match &self.cause {
            Cause::Syntax { found, expected } => write!(f, ": found {found}, expected {expected}"),
            Cause::Semantic(message) | Cause::Io(message) => write!(f, ": {message}"),
        }
    }
}

impl std::error::Error for ParseError {}
