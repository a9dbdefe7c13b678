//! What makes two CTA barrier instructions of a test the same barrier.

use super::domain::Analysis;
use super::CodegenError;
use crate::litmus::ast::{Operand, Value};
use serde::{Deserialize, Serialize};

/// What makes two CTA barrier instructions of a test the same barrier: the id and, when
/// given, the value of the thread-count operand (the Dat3M reading the corpus follows, where
/// `bar.cta.sync 1, 1` and `bar.cta.sync 1, 2` are different barriers). Both must be constants
/// (immediates, or registers that can hold only one value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BarrierKey {
    /// The barrier id.
    pub id: Value,
    /// The count operand's value, when there is one.
    pub count: Option<Value>,
}

impl BarrierKey {
    /// The key of a CTA barrier instruction of `thread`, or why it has none.
    pub fn of(
        analysis: &Analysis,
        thread: usize,
        id: &Operand,
        count: &Option<Operand>,
    ) -> Result<BarrierKey, CodegenError> {
        let constant = |o: &Operand, what: &str| {
            analysis
                .constant(thread, o)
                .ok_or_else(|| CodegenError::Unsupported {
                    construct: format!(
                        "a barrier {what} of P{thread} that depends on a loaded value"
                    ),
                    reason: "the harness maps each test barrier to a hardware barrier before the \
                         launch, so ids and counts must be known then"
                        .into(),
                })
        };
        Ok(BarrierKey {
            id: constant(id, "id")?,
            count: count.as_ref().map(|c| constant(c, "count")).transpose()?,
        })
    }
}
