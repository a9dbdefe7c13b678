//! Errors reading, writing and combining result sets; each names the file or test at fault.

use std::fmt;
use std::path::PathBuf;

/// Why a result set could not be read, written or combined.
#[derive(Debug)]
pub enum ResultsError {
    /// The file system refused.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not valid JSON (corrupt or truncated), or not of the record's shape.
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column where known.
        message: String,
    },
    /// The file is JSON but not a ptx-litmus record of the expected kind.
    Foreign {
        /// The file.
        path: PathBuf,
        /// What was expected and found.
        message: String,
    },
    /// The record has a schema version this build does not read.
    UnknownSchema {
        /// The file.
        path: PathBuf,
        /// The version found.
        found: String,
        /// The version this build reads.
        expected: u32,
    },
    /// Model data and observations (or two observations) of different tests were to be paired.
    HashMismatch {
        /// The file holding the record, when read from one.
        path: Option<PathBuf>,
        /// The test's name.
        test: String,
        /// The hashes involved.
        what: String,
    },
    /// A file would be overwritten without `--force`.
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// The record parses but breaks an invariant (counts that do not add up, a class the model
    /// data contradict, a test missing from a complete run).
    Invalid {
        /// The file.
        path: PathBuf,
        /// The field and what is wrong with it.
        message: String,
    },
    /// Another process is writing the result set.
    Locked {
        /// The lock file.
        path: PathBuf,
        /// Its owner, `pid@host`.
        owner: String,
    },
    /// Result sets that cannot be combined.
    Incompatible {
        /// Why.
        message: String,
    },
}

impl fmt::Display for ResultsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResultsError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ResultsError::Json { path, message } => {
                write!(
                    f,
                    "{}: not a valid result record: {message}",
                    path.display()
                )
            }
            ResultsError::Foreign { path, message } => {
                write!(
                    f,
                    "{}: not a ptx-litmus result record: {message}",
                    path.display()
                )
            }
            ResultsError::UnknownSchema {
                path,
                found,
                expected,
            } => write!(
                f,
                "{}: unknown schema_version {found}; this ptx-litmus reads schema_version {} \
                 (use the ptx-litmus release that wrote it)",
                path.display(),
                expected
            ),
            ResultsError::HashMismatch { path, test, what } => {
                if let Some(p) = path {
                    write!(f, "{}: ", p.display())?;
                }
                write!(
                    f,
                    "test {test}: refusing to pair data of different tests ({what})"
                )
            }
            ResultsError::Exists { path } => write!(
                f,
                "{}: already exists; refusing to overwrite it without --force",
                path.display()
            ),
            ResultsError::Invalid { path, message } => {
                write!(f, "{}: inconsistent record: {message}", path.display())
            }
            ResultsError::Locked { path, owner } => write!(
                f,
                "{}: another run ({}) is writing this result set; choose another --run-id, or \
                 remove the lock if that run is gone",
                path.display(),
                owner.trim()
            ),
            ResultsError::Incompatible { message } => f.write_str(message),
        }
    }
}

impl std::error::Error for ResultsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ResultsError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
