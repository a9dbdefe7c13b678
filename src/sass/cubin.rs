//! What a cubin's machine code is, apart from its metadata. A cubin is an ELF64 image; the
//! driver's JIT and an offline ptxas of the same release can emit the same code in files that
//! differ elsewhere (tool notes, debug frames, section order), so comparing cubin bytes says
//! "different" where the GPU ran the same instructions. The code hash covers what a kernel
//! executes and reads: the `.text.*` sections, their relocations by symbol name, and the
//! constant banks (`.nv.constant*`: parameters, literals, jump tables).

use crate::litmus::fnv1a64;

/// ELF section type of a symbol table.
const SHT_SYMTAB: u32 = 2;
/// ELF section type of relocations with addends.
const SHT_RELA: u32 = 4;
/// ELF section type of a section with no bytes in the file (its size is all it has).
const SHT_NOBITS: u32 = 8;
/// ELF section type of relocations without addends.
const SHT_REL: u32 = 9;
/// Bytes of one ELF64 section header.
const SHDR_BYTES: usize = 64;
/// Bytes of one ELF64 symbol.
const SYM_BYTES: usize = 24;

/// One section of an ELF64 image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section<'a> {
    /// Its name, from the section-name string table.
    pub name: String,
    /// `sh_type`.
    pub kind: u32,
    /// `sh_link`: for relocations, the symbol table they name symbols in.
    pub link: u32,
    /// `sh_info`: for relocations, the section they apply to.
    pub info: u32,
    /// `sh_size`, which NOBITS sections have without bytes.
    pub size: u64,
    /// Its bytes in the file (empty for NOBITS).
    pub bytes: &'a [u8],
}

/// Why an image could not be read as ELF64.
fn bad(what: &str) -> String {
    format!("not a readable ELF64 cubin: {what}")
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The NUL-terminated string at `at` of a string table.
fn c_str(table: &[u8], at: usize) -> Option<String> {
    let tail = table.get(at..)?;
    let end = tail.iter().position(|&b| b == 0)?;
    Some(String::from_utf8_lossy(&tail[..end]).into_owned())
}

/// The section header at `index`, as (name offset, section) with the name still unread.
fn header(image: &[u8], table: usize, index: usize) -> Option<(usize, Section<'_>)> {
    let at = table.checked_add(index.checked_mul(SHDR_BYTES)?)?;
    let h = image.get(at..at.checked_add(SHDR_BYTES)?)?;
    let kind = u32_at(h, 4)?;
    let offset = usize::try_from(u64_at(h, 24)?).ok()?;
    let size = u64_at(h, 32)?;
    let bytes = if kind == SHT_NOBITS {
        &[][..]
    } else {
        image.get(offset..offset.checked_add(usize::try_from(size).ok()?)?)?
    };
    let section = Section {
        name: String::new(),
        kind,
        link: u32_at(h, 40)?,
        info: u32_at(h, 44)?,
        size,
        bytes,
    };
    Some((u32_at(h, 0)? as usize, section))
}

/// The sections of a little-endian ELF64 image, in file order, or why it is not one.
pub fn sections(image: &[u8]) -> Result<Vec<Section<'_>>, String> {
    if image.get(..6) != Some(&[0x7f, b'E', b'L', b'F', 2, 1][..]) {
        return Err(bad("no little-endian ELF64 header"));
    }
    let table = u64_at(image, 0x28).and_then(|t| usize::try_from(t).ok());
    let entry = u16_at(image, 0x3a);
    let (count, names) = (u16_at(image, 0x3c), u16_at(image, 0x3e));
    let (Some(table), Some(entry), Some(count), Some(names)) = (table, entry, count, names) else {
        return Err(bad("header cut short"));
    };
    if usize::from(entry) != SHDR_BYTES {
        return Err(bad(&format!("section headers of {entry} bytes")));
    }
    let mut out = (0..usize::from(count))
        .map(|i| header(image, table, i).ok_or_else(|| bad(&format!("section {i} out of bounds"))))
        .collect::<Result<Vec<_>, _>>()?;
    let strings = out
        .get(usize::from(names))
        .map(|(_, s)| s.bytes)
        .ok_or_else(|| bad("no section-name table"))?;
    for (at, s) in &mut out {
        s.name = c_str(strings, *at).ok_or_else(|| bad("a section name out of bounds"))?;
    }
    Ok(out.into_iter().map(|(_, s)| s).collect())
}

/// Whether a section is part of what the kernel executes or reads.
fn is_code(s: &Section<'_>) -> bool {
    s.name.starts_with(".text.") || s.name.starts_with(".nv.constant")
}

/// The name of symbol `index` of the symbol table at `symtab`: its own name, or for a section
/// symbol (which has none) its section's.
fn symbol_name(all: &[Section<'_>], symtab: usize, index: usize) -> Option<String> {
    let table = all.get(symtab).filter(|s| s.kind == SHT_SYMTAB)?;
    let strings = all.get(table.link as usize)?.bytes;
    let at = index.checked_mul(SYM_BYTES)?;
    let name = c_str(strings, u32_at(table.bytes, at)? as usize)?;
    if !name.is_empty() {
        return Some(name);
    }
    let shndx = u16_at(table.bytes, at + 6)?;
    Some(all.get(usize::from(shndx))?.name.clone())
}

/// The relocations of section `r` as lines `offset type symbol addend`, symbols by name so that
/// the order of the symbol table does not count.
fn relocations(all: &[Section<'_>], r: &Section<'_>) -> Result<Vec<String>, String> {
    let step = if r.kind == SHT_RELA { 24 } else { 16 };
    let chunks = r.bytes.chunks_exact(step);
    if !chunks.remainder().is_empty() {
        return Err(bad(&format!("{} holds a partial entry", r.name)));
    }
    chunks
        .map(|e| {
            let (offset, info) = (u64_at(e, 0).unwrap_or(0), u64_at(e, 8).unwrap_or(0));
            let addend = if step == 24 {
                u64_at(e, 16).unwrap_or(0)
            } else {
                0
            };
            let symbol = symbol_name(all, r.link as usize, (info >> 32) as usize)
                .ok_or_else(|| bad(&format!("{} names a symbol out of bounds", r.name)))?;
            Ok(format!("{offset:x} {} {symbol} {addend:x}", info as u32))
        })
        .collect()
}

/// FNV-1a of the machine code of a cubin (see the module comment), 16 hex digits: equal for
/// two cubins whose code sections, relocations and constant banks are equal, whatever else
/// their files hold.
pub fn code_hash(image: &[u8]) -> Result<String, String> {
    let all = sections(image)?;
    let mut parts: Vec<(String, Vec<u8>)> = Vec::new();
    for s in all.iter().filter(|s| is_code(s)) {
        let mut body = format!("{} {}\n", s.name, s.size).into_bytes();
        body.extend_from_slice(s.bytes);
        parts.push((s.name.clone(), body));
    }
    for r in all.iter().filter(|s| matches!(s.kind, SHT_REL | SHT_RELA)) {
        let target = all.get(r.info as usize).filter(|t| is_code(t));
        let Some(target) = target else { continue };
        let lines = relocations(&all, r)?.join("\n");
        let body = format!("relocations of {}\n{lines}\n", target.name).into_bytes();
        parts.push((format!("{}\u{1}", target.name), body));
    }
    parts.sort();
    let text: Vec<u8> = parts.into_iter().flat_map(|(_, b)| b).collect();
    Ok(format!("{:016x}", fnv1a64(&text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A section to build: name, type, link, info, bytes.
    type Spec = (&'static str, u32, u32, u32, Vec<u8>);

    /// An ELF64 image of `specs` (after a null section and the name table, so a spec's index is
    /// its position plus 2), with its sections' bytes in the order given.
    fn image(specs: &[Spec]) -> Vec<u8> {
        let mut names = vec![0u8];
        let mut offsets = Vec::new();
        for (name, ..) in specs.iter().chain([&(".shstrtab", 3, 0, 0, vec![])]) {
            offsets.push(names.len() as u32);
            names.extend_from_slice(name.as_bytes());
            names.push(0);
        }
        let mut out = vec![0u8; 64];
        out[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1]);
        let mut placed = vec![(0u32, 0u32, 0u32, 0u32, 0usize, 0usize)];
        let strtab = out.len();
        out.extend_from_slice(&names);
        placed.push((offsets[specs.len()], 3, 0, 0, strtab, names.len()));
        for ((_, kind, link, info, bytes), name) in specs.iter().zip(&offsets) {
            placed.push((*name, *kind, *link, *info, out.len(), bytes.len()));
            out.extend_from_slice(bytes);
        }
        let table = out.len();
        for (name, kind, link, info, offset, size) in placed.iter().copied() {
            let mut h = [0u8; 64];
            h[0..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[24..32].copy_from_slice(&(offset as u64).to_le_bytes());
            h[32..40].copy_from_slice(&(size as u64).to_le_bytes());
            h[40..44].copy_from_slice(&link.to_le_bytes());
            h[44..48].copy_from_slice(&info.to_le_bytes());
            out.extend_from_slice(&h);
        }
        out[0x28..0x30].copy_from_slice(&(table as u64).to_le_bytes());
        out[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        out[0x3c..0x3e].copy_from_slice(&(placed.len() as u16).to_le_bytes());
        out[0x3e..0x40].copy_from_slice(&1u16.to_le_bytes());
        out
    }

    /// A symbol table entry naming string `name` of its string table.
    fn symbol(name: u32) -> Vec<u8> {
        let mut s = vec![0u8; SYM_BYTES];
        s[..4].copy_from_slice(&name.to_le_bytes());
        s
    }

    /// One RELA entry at `offset` for symbol `sym`.
    fn rela(offset: u64, sym: u64) -> Vec<u8> {
        let mut e = offset.to_le_bytes().to_vec();
        e.extend_from_slice(&((sym << 32) | 0x39).to_le_bytes());
        e.extend_from_slice(&0u64.to_le_bytes());
        e
    }

    /// A cubin with a kernel `k`, a tool note, and a relocation of `k`'s code against the
    /// symbol `callee` (symbols in the given order).
    fn cubin(code: &[u8], note: &[u8], symbols: [&str; 2], callee: &str) -> Vec<u8> {
        let strings = format!("\0{}\0{}\0", symbols[0], symbols[1]).into_bytes();
        let first = 1 + symbols[0].len() as u64 + 1;
        let index = if symbols[0] == callee { 1 } else { 2 };
        let mut syms = symbol(0);
        syms.extend(symbol(1));
        syms.extend(symbol(first as u32));
        image(&[
            (".note.nv.tkinfo", 7, 0, 0, note.to_vec()),
            (".strtab", 3, 0, 0, strings),
            (".symtab", SHT_SYMTAB, 3, 0, syms),
            (".text.k", 1, 0, 0, code.to_vec()),
            (".rela.text.k", SHT_RELA, 4, 5, rela(0x10, index)),
            (".nv.constant0.k", 1, 0, 0, vec![0; 8]),
        ])
    }

    #[test]
    fn sections_are_read_with_their_names_and_bytes() {
        let img = cubin(b"CODE", b"note", ["f", "g"], "f");
        let all = sections(&img).unwrap();
        let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "",
                ".shstrtab",
                ".note.nv.tkinfo",
                ".strtab",
                ".symtab",
                ".text.k"
            ]
            .into_iter()
            .chain([".rela.text.k", ".nv.constant0.k"])
            .collect::<Vec<_>>()
        );
        assert_eq!(all[5].bytes, b"CODE");
        let rel = relocations(&all, &all[6]).unwrap();
        assert_eq!(rel, ["10 57 f 0"]);
    }

    #[test]
    fn the_code_hash_ignores_metadata_and_the_order_of_symbols() {
        let a = code_hash(&cubin(b"CODE", b"ptxas 13.0", ["f", "g"], "f")).unwrap();
        let note = code_hash(&cubin(b"CODE", b"driver JIT", ["f", "g"], "f")).unwrap();
        let order = code_hash(&cubin(b"CODE", b"ptxas 13.0", ["g", "f"], "f")).unwrap();
        assert_eq!(a, note);
        assert_eq!(a, order);
        assert_eq!(a.len(), 16);
        let code = code_hash(&cubin(b"CODF", b"ptxas 13.0", ["f", "g"], "f")).unwrap();
        let callee = code_hash(&cubin(b"CODE", b"ptxas 13.0", ["f", "g"], "g")).unwrap();
        assert_ne!(a, code);
        assert_ne!(a, callee);
    }

    #[test]
    fn a_damaged_image_is_refused_and_never_panics() {
        assert!(code_hash(b"\x7fELF\x01\x01").unwrap_err().contains("ELF64"));
        assert!(code_hash(b"PTXL-SIM-CUBIN").is_err());
        let img = cubin(b"CODE", b"note", ["f", "g"], "f");
        for n in 0..img.len() {
            let _ = code_hash(&img[..n]);
        }
        assert!(
            code_hash(&img[..img.len() - 1]).is_err(),
            "the last header cut short"
        );
        let mut far = img.clone();
        far[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(code_hash(&far).unwrap_err().contains("out of bounds"));
        let mut bad_symbol = cubin(b"CODE", b"note", ["f", "g"], "f");
        let at = bad_symbol
            .windows(8)
            .position(|w| w == 0x10u64.to_le_bytes())
            .unwrap();
        bad_symbol[at + 12..at + 16].copy_from_slice(&9u32.to_le_bytes());
        assert!(code_hash(&bad_symbol)
            .unwrap_err()
            .contains("symbol out of bounds"));
    }
}
