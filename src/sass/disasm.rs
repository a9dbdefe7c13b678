//! Reading `nvdisasm -c` output: functions and their instructions in address order.

use std::collections::BTreeMap;

/// One SASS instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SassInstr {
    /// Byte address in the section.
    pub addr: u64,
    /// Guard predicate (`P0`, `!P1`), when there is one.
    pub pred: Option<String>,
    /// The opcode with its modifiers, e.g. `LDG.E.STRONG.GPU`.
    pub opcode: String,
    /// The operands as printed.
    pub operands: String,
}

impl SassInstr {
    /// The opcode without modifiers, e.g. `LDG`.
    pub fn base(&self) -> &str {
        self.opcode.split('.').next().unwrap_or("")
    }

    /// Whether the opcode carries modifier `m`.
    pub fn has(&self, m: &str) -> bool {
        self.opcode.split('.').skip(1).any(|x| x == m)
    }

    /// The immediate byte offset of the memory operand (`[R2.64+0x10]` → 16), 0 when none.
    pub fn offset(&self) -> u64 {
        let Some(open) = self.operands.rfind('[') else {
            return 0;
        };
        let inner = &self.operands[open + 1..];
        let inner = inner.split(']').next().unwrap_or("");
        match inner.split_once("+0x") {
            Some((_, hex)) => u64::from_str_radix(hex.trim(), 16).unwrap_or(0),
            None => 0,
        }
    }

    /// The instruction as a short text (`LDG.E.STRONG.GPU [+0x10]`).
    pub fn short(&self) -> String {
        let off = self.offset();
        if off > 0 {
            format!("{} [+{off:#x}]", self.opcode)
        } else {
            self.opcode.clone()
        }
    }
}

/// The functions of a disassembly by name (a subroutine `$kernel$f` is named `f`), each with
/// its instructions in address order.
pub fn functions(sass: &str) -> BTreeMap<String, Vec<SassInstr>> {
    let mut out: BTreeMap<String, Vec<SassInstr>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in sass.lines() {
        let t = line.trim_end();
        if !t.starts_with(' ') && !t.starts_with('\t') && t.ends_with(':') && !t.starts_with('.') {
            let name = t.trim_end_matches(':');
            let name = name.rsplit('$').next().unwrap_or(name).to_string();
            out.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        if t.starts_with("//--") {
            current = None;
            continue;
        }
        let Some(name) = &current else { continue };
        // `        /*0110*/   @!P0 LDG.E.STRONG.GPU R7, desc[UR4][R4.64] ;`
        let Some(rest) = t.trim_start().strip_prefix("/*") else {
            continue;
        };
        let Some((addr, rest)) = rest.split_once("*/") else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
            continue;
        };
        let body = rest.trim().trim_end_matches(';').trim();
        if body.is_empty() {
            continue;
        }
        let (pred, body) = match body.strip_prefix('@') {
            Some(b) => {
                let (p, r) = b.split_once(char::is_whitespace).unwrap_or((b, ""));
                (Some(p.to_string()), r.trim())
            }
            None => (None, body),
        };
        let (opcode, operands) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
        out.get_mut(name)
            .expect("current function exists")
            .push(SassInstr {
                addr,
                pred,
                opcode: opcode.to_string(),
                operands: operands.trim().to_string(),
            });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_functions_predicates_and_offsets() {
        let text = "\
//--------------------- .text.k                   --------------------------
k:
.text.k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0050*/                   CALL.REL.NOINC `($k$role0) ;
$k$role0:
        /*0070*/              @!P0 LDG.E.STRONG.GPU R7, desc[UR4][R4.64+0x20] ;
        /*0080*/                   CCTL.IVALL ;
";
        let f = functions(text);
        assert_eq!(f["k"].len(), 2);
        let r = &f["role0"];
        assert_eq!(r[0].pred.as_deref(), Some("!P0"));
        assert_eq!(r[0].base(), "LDG");
        assert!(r[0].has("STRONG") && r[0].has("GPU"));
        assert_eq!(r[0].offset(), 0x20);
        assert_eq!(r[1].opcode, "CCTL.IVALL");
    }
}
