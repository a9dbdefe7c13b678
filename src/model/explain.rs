//! Explanations of verdicts.
