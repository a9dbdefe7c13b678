//! A small POSIX ustar archive writer and reader: plain files and directories with relative
//! names, nothing else (no links, no devices), so an archive brought back from a GPU machine
//! cannot write outside the folder it is unpacked into. A name ustar's fields cannot hold (a
//! last component over 100 bytes) goes in a pax extended header, as POSIX.1-2001 defines it.

use std::fmt;

/// Bytes of a header and of the unit file data is padded to.
const BLOCK: usize = 512;

/// One member of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A directory (name without the trailing `/`).
    Dir(String),
    /// A regular file and its bytes.
    File(String, Vec<u8>),
}

impl Entry {
    /// The member's name.
    pub fn name(&self) -> &str {
        match self {
            Entry::Dir(n) | Entry::File(n, _) => n,
        }
    }
}

/// Why an archive cannot be written or read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TarError(pub String);

impl fmt::Display for TarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TarError {}

/// Whether `name` is a safe relative name: non-empty components of letters, digits and
/// `. _ - + @ , =`, none of them `.` or `..`.
pub fn safe_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('/').all(|c| {
            !c.is_empty()
                && c != "."
                && c != ".."
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-+@,=".contains(&b))
        })
}

/// Splits a name into ustar's `prefix` (≤ 155 bytes) and `name` (≤ 100 bytes) at a `/`.
fn split_name(name: &str) -> Result<(&str, &str), TarError> {
    if name.len() <= 100 {
        return Ok(("", name));
    }
    name.match_indices('/')
        .map(|(i, _)| (&name[..i], &name[i + 1..]))
        .find(|(p, n)| p.len() <= 155 && n.len() <= 100 && !n.is_empty())
        .ok_or_else(|| TarError(format!("{name}: too long for a ustar name")))
}

/// An octal field of `width` bytes, NUL-terminated.
fn octal(field: &mut [u8], value: u64) -> Result<(), TarError> {
    let digits = field.len() - 1;
    let s = format!("{value:0digits$o}");
    if s.len() > digits {
        return Err(TarError(format!("{value} does not fit a ustar field")));
    }
    field[..digits].copy_from_slice(s.as_bytes());
    field[digits] = 0;
    Ok(())
}

/// A header block: `prefix` and `name` as ustar splits a member name, its mode, size and kind.
fn header(
    prefix: &str,
    name: &str,
    mode: u64,
    size: u64,
    kind: u8,
) -> Result<[u8; BLOCK], TarError> {
    let mut h = [0u8; BLOCK];
    h[..name.len()].copy_from_slice(name.as_bytes());
    octal(&mut h[100..108], mode)?;
    octal(&mut h[108..116], 0)?;
    octal(&mut h[116..124], 0)?;
    octal(&mut h[124..136], size)?;
    octal(&mut h[136..148], 0)?;
    h[156] = kind;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[345..345 + prefix.len()].copy_from_slice(prefix.as_bytes());
    h[148..156].fill(b' ');
    let sum: u64 = h.iter().map(|&b| u64::from(b)).sum();
    octal(&mut h[148..155], sum)?;
    h[155] = b' ';
    Ok(h)
}

/// A pax record `LEN path=NAME\n`, LEN counting the whole record with its own digits.
fn pax_path(name: &str) -> Vec<u8> {
    let body = format!(" path={name}\n");
    let mut len = body.len() + 1;
    while len.to_string().len() + body.len() != len {
        len = len.to_string().len() + body.len();
    }
    format!("{len}{body}").into_bytes()
}

/// Writes the header(s) of `entry`: one ustar header, or, for a name ustar cannot split (a
/// last component over 100 bytes, as long test names make), a pax header holding the whole
/// name before a ustar header holding its last component cut to 100 bytes.
fn headers(out: &mut Vec<u8>, entry: &Entry) -> Result<(), TarError> {
    let full = entry.name();
    if !safe_name(full) {
        return Err(TarError(format!("{full:?}: not a safe member name")));
    }
    let (mode, size, kind) = match entry {
        Entry::Dir(_) => (0o755, 0, b'5'),
        Entry::File(_, bytes) => (0o644, bytes.len() as u64, b'0'),
    };
    if let Ok((prefix, name)) = split_name(full) {
        out.extend_from_slice(&header(prefix, name, mode, size, kind)?);
        return Ok(());
    }
    let record = pax_path(full);
    out.extend_from_slice(&header("", PAX_NAME, 0o644, record.len() as u64, b'x')?);
    out.extend_from_slice(&record);
    out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
    let last = full.rsplit('/').next().unwrap_or(full);
    out.extend_from_slice(&header("", &last[..last.len().min(100)], mode, size, kind)?);
    Ok(())
}

/// The name of a pax extended header member (its readers use the name it carries instead).
const PAX_NAME: &str = "PaxHeader";

/// The archive of `entries`, in order.
pub fn write(entries: &[Entry]) -> Result<Vec<u8>, TarError> {
    let mut out = Vec::new();
    for e in entries {
        headers(&mut out, e)?;
        if let Entry::File(_, bytes) = e {
            out.extend_from_slice(bytes);
            out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
        }
    }
    out.resize(out.len() + 2 * BLOCK, 0);
    Ok(out)
}

/// The text of a NUL-padded field.
fn text(field: &[u8]) -> Result<&str, TarError> {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    std::str::from_utf8(&field[..end]).map_err(|_| TarError("a member name is not UTF-8".into()))
}

/// The value of an octal field.
fn number(field: &[u8], what: &str) -> Result<u64, TarError> {
    let t = text(field)?.trim_matches(|c| c == ' ' || c == '\0');
    u64::from_str_radix(if t.is_empty() { "0" } else { t }, 8)
        .map_err(|_| TarError(format!("bad {what} field {t:?}")))
}

/// Reads one header at `at`: the entry's name as the header spells it, kind and size.
fn read_header(h: &[u8], at: usize) -> Result<(String, u8, usize), TarError> {
    let stored = number(&h[148..156], "checksum")?;
    let sum: u64 = h
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(b)
            }
        })
        .sum();
    if sum != stored {
        return Err(TarError(format!(
            "member at byte {at}: bad header checksum"
        )));
    }
    let (prefix, name) = (text(&h[345..500])?, text(&h[..100])?);
    let full = if prefix.is_empty() {
        name.trim_end_matches('/').to_string()
    } else {
        format!("{prefix}/{}", name.trim_end_matches('/'))
    };
    let size = number(&h[124..136], "size")?;
    Ok((full, h[156], usize::try_from(size).unwrap_or(usize::MAX)))
}

/// The `path` a pax extended header's records give, if any.
fn pax_name(records: &[u8]) -> Result<Option<String>, TarError> {
    let text =
        std::str::from_utf8(records).map_err(|_| TarError("a pax header is not UTF-8".into()))?;
    let mut path = None;
    for record in text.split_terminator('\n') {
        let field = record.split_once(' ').map(|(_, f)| f);
        if let Some(p) = field.and_then(|f| f.strip_prefix("path=")) {
            path = Some(p.to_string());
        }
    }
    Ok(path)
}

/// The `size` bytes of member `name` at `at`, and where the next header starts.
fn body<'a>(
    bytes: &'a [u8],
    at: usize,
    size: usize,
    name: &str,
) -> Result<(&'a [u8], usize), TarError> {
    let end = at
        .checked_add(size)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| TarError(format!("member {name}: truncated")))?;
    Ok((&bytes[at..end], at + size.div_ceil(BLOCK) * BLOCK))
}

/// The entries of an archive. Only directories and regular files with safe relative names
/// (a pax header may give the name) are accepted; anything else is an error naming the member.
pub fn read(bytes: &[u8]) -> Result<Vec<Entry>, TarError> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut long_name: Option<String> = None;
    while at + BLOCK <= bytes.len() {
        let h = &bytes[at..at + BLOCK];
        if h.iter().all(|&b| b == 0) {
            return Ok(out);
        }
        let (spelled, kind, size) = read_header(h, at)?;
        let name = long_name.take().unwrap_or(spelled);
        if !safe_name(&name) {
            return Err(TarError(format!(
                "member {name:?}: not a safe relative name"
            )));
        }
        let (data, next) = body(bytes, at + BLOCK, size, &name)?;
        at = next;
        match kind {
            b'5' => out.push(Entry::Dir(name)),
            b'0' | 0 => out.push(Entry::File(name, data.to_vec())),
            b'x' => long_name = pax_name(data)?,
            k => {
                return Err(TarError(format!(
                    "member {name}: type {:?} is not a file or directory",
                    k as char
                )))
            }
        }
    }
    Err(TarError("the archive ends without its end marker".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_directories_round_trip_with_long_names() {
        let long = format!("{}/tests/{}.json", "g".repeat(60), "MP+x".repeat(20));
        let entries = vec![
            Entry::Dir("g".into()),
            Entry::File("g/run.json".into(), b"{}".to_vec()),
            Entry::File("g/empty".into(), Vec::new()),
            Entry::File(long.clone(), vec![7u8; 1500]),
            // A last component over ustar's 100 bytes (long test names) and a folder path
            // over its 155: each goes in a pax header.
            Entry::File(
                format!("g/sass/{}-1a2b.cubin", "IRIW+rlx".repeat(17)),
                vec![1; 9],
            ),
            Entry::Dir(format!("{}/x", "d".repeat(200))),
        ];
        let bytes = write(&entries).unwrap();
        assert_eq!(bytes.len() % BLOCK, 0);
        assert_eq!(read(&bytes).unwrap(), entries);
    }

    #[test]
    fn unsafe_or_damaged_archives_are_refused() {
        for bad in ["../x", "/abs", "a//b", "a/./b", "", "a b", "a\\b"] {
            assert!(write(&[Entry::Dir(bad.into())]).is_err(), "{bad:?}");
        }
        let mut bytes = write(&[Entry::File("a".into(), b"hello".to_vec())]).unwrap();
        bytes[0] = b'b';
        assert!(read(&bytes).unwrap_err().0.contains("checksum"));
        let bytes = write(&[Entry::File("a".into(), vec![1; 2000])]).unwrap();
        assert!(read(&bytes[..1024]).unwrap_err().0.contains("truncated"));
        assert!(read(&[]).unwrap_err().0.contains("end marker"));
        // A pax header cannot smuggle in an unsafe name.
        let record = pax_path("../evil");
        let mut smuggled = header("", PAX_NAME, 0o644, record.len() as u64, b'x')
            .unwrap()
            .to_vec();
        smuggled.extend_from_slice(&record);
        smuggled.resize(smuggled.len().div_ceil(BLOCK) * BLOCK, 0);
        smuggled.extend_from_slice(&write(&[Entry::Dir("ok".into())]).unwrap());
        assert!(read(&smuggled)
            .unwrap_err()
            .0
            .contains("\"../evil\": not a safe"));
        // A symbolic link (type '2') is refused by name.
        let mut link = write(&[Entry::Dir("l".into())]).unwrap();
        link[156] = b'2';
        link[148..156].fill(b' ');
        let sum: u64 = link[..BLOCK].iter().map(|&b| u64::from(b)).sum();
        octal(&mut link[148..155], sum).unwrap();
        assert!(read(&link)
            .unwrap_err()
            .0
            .contains("not a file or directory"));
    }

    #[test]
    fn system_tar_reads_what_we_write() {
        let dir = std::env::temp_dir().join(format!("ustar-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let long = format!("d/{}/f.txt", "n".repeat(120));
        let longer = format!("d/{}.json", "IRIW+rlx".repeat(17));
        let bytes = write(&[
            Entry::File(long.clone(), b"x\n".to_vec()),
            Entry::File(longer.clone(), b"y\n".to_vec()),
        ])
        .unwrap();
        std::fs::write(dir.join("a.tar"), bytes).unwrap();
        match std::process::Command::new("tar")
            .arg("-xf")
            .arg("a.tar")
            .current_dir(&dir)
            .status()
        {
            Ok(s) => {
                assert!(s.success());
                assert_eq!(std::fs::read(dir.join(&long)).unwrap(), b"x\n");
                assert_eq!(std::fs::read(dir.join(&longer)).unwrap(), b"y\n");
            }
            Err(e) => eprintln!("no tar here ({e}): checked only our own reader"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
