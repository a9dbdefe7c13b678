//! Reading a file a user names, within a size bound: a mistaken path (a device, a huge log, a
//! binary) is refused with a clear cause before it can fill memory.

use std::fmt;
use std::io::Read;
use std::path::Path;

/// Why a file was not read as text.
#[derive(Debug)]
pub enum Unread {
    /// It cannot be opened or read.
    Io(std::io::Error),
    /// It holds more than this many bytes.
    TooLarge(u64),
    /// It is not UTF-8: the first bad byte's offset, and its 1-based line and column.
    Utf8 {
        /// Bytes before the first bad one.
        offset: usize,
        /// Its line.
        line: usize,
        /// Its column, in characters.
        column: usize,
    },
}

impl fmt::Display for Unread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unread::Io(e) => write!(f, "cannot read: {e}"),
            Unread::TooLarge(max) => write!(f, "larger than {max} bytes"),
            Unread::Utf8 { offset, .. } => write!(f, "invalid UTF-8 at byte offset {offset}"),
        }
    }
}

/// The text of the file at `path`, refused past `max` bytes or when it is not UTF-8.
pub fn text(path: &Path, max: u64) -> Result<String, Unread> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(max + 1).read_to_end(&mut bytes))
        .map_err(Unread::Io)?;
    if bytes.len() as u64 > max {
        return Err(Unread::TooLarge(max));
    }
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let good = String::from_utf8_lossy(&e.as_bytes()[..offset]);
        Unread::Utf8 {
            offset,
            line: good.matches('\n').count() + 1,
            column: good.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1,
        }
    })
}

/// [`text`] with a refusal as `PATH: cause` (`PATH:LINE:COLUMN: cause` for bad UTF-8), saying
/// what the file should have been (`what`) when it is too large.
pub fn text_of(path: &Path, max: u64, what: &str) -> Result<String, String> {
    let shown = path.display();
    text(path, max).map_err(|e| match e {
        Unread::TooLarge(_) => format!("{shown}: {e}; not {what}"),
        Unread::Utf8 { line, column, .. } => format!("{shown}:{line}:{column}: {e}"),
        Unread::Io(_) => format!("{shown}: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_within_its_bound_and_refused_past_it_or_when_not_utf8() {
        let dir = std::env::temp_dir().join(format!("input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.txt");
        std::fs::write(&f, "ab\ncd").unwrap();
        assert_eq!(text(&f, 5).unwrap(), "ab\ncd");
        assert!(matches!(text(&f, 4), Err(Unread::TooLarge(4))));
        let e = text_of(&f, 4, "a model").unwrap_err();
        assert!(
            e.ends_with("a.txt: larger than 4 bytes; not a model"),
            "{e}"
        );
        std::fs::write(&f, b"ab\nc\xffd").unwrap();
        assert!(matches!(
            text(&f, 100),
            Err(Unread::Utf8 {
                offset: 4,
                line: 2,
                column: 2
            })
        ));
        let e = text_of(&f, 100, "a model").unwrap_err();
        assert!(
            e.ends_with("a.txt:2:2: invalid UTF-8 at byte offset 4"),
            "{e}"
        );
        assert!(matches!(text(&dir.join("none"), 9), Err(Unread::Io(_))));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
