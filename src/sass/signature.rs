//! What a kernel's SASS is, in two summaries a matrix of assemblers compares: the memory-op
//! signature (each role's accesses, fences and barriers in order, with strength, scope and
//! location offset: what the memory model sees) and a hash of every instruction of the roles'
//! functions (any change of code at all). Both ignore addresses, the batch prefix of symbol
//! names and the numbering of branch labels, so that a kernel assembled alone or in a batch
//! gives the same summaries.

use super::check::is_relevant;
use super::disasm::SassInstr;
use crate::codegen::Kernel;
use crate::litmus::fnv1a64;
use std::collections::BTreeMap;

/// The summaries of one kernel's SASS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// Per role, its memory events in order (`STG.E.STRONG.GPU [+0x4]`, `MEMBAR.SC.GPU`).
    pub memory_ops: Vec<Vec<String>>,
    /// FNV-1a of the roles' instructions, 16 hex digits.
    pub hash: String,
}

/// The memory events of one function's main path (up to its first `RET`, as the check reads
/// it).
pub fn memory_events(instrs: &[SassInstr]) -> Vec<String> {
    instrs
        .iter()
        .take_while(|i| i.base() != "RET")
        .filter(|i| is_relevant(i))
        .map(SassInstr::short)
        .collect()
}

/// An instruction's text with the batch prefix `b<i>_` dropped from symbols and branch labels
/// (`.L_x_<n>`) numbered by first appearance in the function.
fn canonical(i: &SassInstr, prefix: &str, labels: &mut BTreeMap<String, usize>) -> String {
    let mut text = format!(
        "{} {} {}",
        i.pred.as_deref().unwrap_or(""),
        i.opcode,
        i.operands
    );
    if !prefix.is_empty() {
        text = text.replace(prefix, "");
    }
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find(".L_x_") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 5..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let next = labels.len();
        let n = *labels.entry(tail[..digits].to_string()).or_insert(next);
        out.push_str(&format!(".L{n}"));
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// The summaries of `kernel`'s roles among `funcs`, whose names carry `prefix`.
pub fn of(kernel: &Kernel, funcs: &BTreeMap<String, Vec<SassInstr>>, prefix: &str) -> Signature {
    let mut memory_ops = Vec::new();
    let mut text = String::new();
    for r in &kernel.roles {
        let instrs = funcs
            .get(&format!("{prefix}{}", r.func))
            .map_or(&[][..], Vec::as_slice);
        memory_ops.push(memory_events(instrs));
        let mut labels = BTreeMap::new();
        text.push_str(&r.func);
        text.push('\n');
        for i in instrs {
            text.push_str(&canonical(i, prefix, &mut labels));
            text.push('\n');
        }
    }
    Signature {
        memory_ops,
        hash: format!("{:016x}", fnv1a64(text.as_bytes())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instr(opcode: &str, operands: &str) -> SassInstr {
        SassInstr {
            addr: 0,
            pred: None,
            opcode: opcode.into(),
            operands: operands.into(),
        }
    }

    #[test]
    fn labels_and_batch_prefixes_do_not_count() {
        let mut a = BTreeMap::new();
        let mut b = BTreeMap::new();
        let x = canonical(&instr("BRA", "`(.L_x_17)"), "b3_", &mut a);
        let y = canonical(&instr("BRA", "`(.L_x_2)"), "", &mut b);
        assert_eq!(x, y);
        let x2 = canonical(&instr("CALL.REL", "`($b3_litmus_f) .L_x_18"), "b3_", &mut a);
        assert_eq!(x2, " CALL.REL `($litmus_f) .L1");
    }

    #[test]
    fn memory_events_stop_at_the_first_return() {
        let f = [
            instr("STG.E.STRONG.GPU", "desc[UR4][R2.64+0x4], R5"),
            instr("IADD3", "R1, R1, 1, RZ"),
            instr("MEMBAR.SC.GPU", ""),
            instr("RET.REL.NODEC", "R20 0x0"),
            instr("LDG.E", "R3, desc[UR4][R2.64]"),
        ];
        assert_eq!(
            memory_events(&f),
            ["STG.E.STRONG.GPU [+0x4]", "MEMBAR.SC.GPU"]
        );
    }
}
