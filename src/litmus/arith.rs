//! What a test's arithmetic computes: register operations and the write of a read-modify-write,
//! with the GPU's 32-bit semantics (the kernels use `.u32`/`.b32` operations). Values are shown
//! as the test writes them, so a 32-bit result is read back as signed and `0 - 1` stays `-1`.
//! The model, its SC reference and the kernel's value domains all compute through here, so they
//! can never disagree on what an instruction produces.

use super::ast::{AluOp, AtomOp, Value};

/// A 32-bit device value as the test writes it: small negative numbers stay negative.
pub fn normalise(v: Value) -> Value {
    Value::from(v as u32 as i32)
}

/// Register arithmetic `op a, b`.
pub fn alu(op: AluOp, a: Value, b: Value) -> Value {
    let (a, b) = (a as u32, b as u32);
    normalise(Value::from(match op {
        AluOp::Add => a.wrapping_add(b),
        AluOp::Sub => a.wrapping_sub(b),
        AluOp::Mul => a.wrapping_mul(b),
        AluOp::And => a & b,
        AluOp::Or => a | b,
        AluOp::Xor => a ^ b,
    }))
}

/// The value an `atom`/`red` writes over `old` with operands `a` (and `b` for `cas`), or `None`
/// when it writes nothing (a `cas` whose comparison fails). Comparisons are unsigned, as in the
/// `.u32` forms the kernels use.
pub fn rmw(op: AtomOp, old: Value, a: Value, b: Option<Value>) -> Option<Value> {
    let (o, x) = (old as u32, a as u32);
    let r = match op {
        AtomOp::Add => o.wrapping_add(x),
        AtomOp::Sub => o.wrapping_sub(x),
        AtomOp::Exch => x,
        AtomOp::Cas => {
            if o != x {
                return None;
            }
            b.map_or(x, |b| b as u32)
        }
        AtomOp::Inc => {
            if o >= x {
                0
            } else {
                o + 1
            }
        }
        AtomOp::Dec => {
            if o == 0 || o > x {
                x
            } else {
                o - 1
            }
        }
        AtomOp::And => o & x,
        AtomOp::Or => o | x,
        AtomOp::Xor => o ^ x,
        AtomOp::Min => o.min(x),
        AtomOp::Max => o.max(x),
    };
    Some(normalise(Value::from(r)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_modify_writes_follow_ptx_32_bit_semantics() {
        assert_eq!(rmw(AtomOp::Inc, 3, 3, None), Some(0));
        assert_eq!(rmw(AtomOp::Inc, 2, 3, None), Some(3));
        assert_eq!(rmw(AtomOp::Dec, 0, 5, None), Some(5));
        assert_eq!(rmw(AtomOp::Dec, 9, 5, None), Some(5));
        assert_eq!(rmw(AtomOp::Cas, 1, 1, Some(7)), Some(7));
        assert_eq!(rmw(AtomOp::Cas, 2, 1, Some(7)), None);
        assert_eq!(rmw(AtomOp::Sub, 0, 1, None), Some(-1));
        assert_eq!(rmw(AtomOp::Add, -1, 1, None), Some(0));
        // Unsigned comparison: -1 is 0xffff_ffff, the largest value.
        assert_eq!(rmw(AtomOp::Max, -1, 3, None), Some(-1));
        assert_eq!(rmw(AtomOp::Min, -1, 3, None), Some(3));
    }

    #[test]
    fn register_arithmetic_wraps_at_32_bits() {
        assert_eq!(alu(AluOp::Mul, 0x10000, 0x10000), 0);
        assert_eq!(alu(AluOp::Add, i32::MAX as Value, 1), i32::MIN as Value);
        assert_eq!(alu(AluOp::Sub, 0, 1), -1);
        assert_eq!(alu(AluOp::Xor, 5, 5), 0);
    }
}
