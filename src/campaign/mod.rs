//! Hardware campaigns that fit a short, strict GPU window: a checked-in manifest of steps
//! ([`manifest`]), what is already done according to `results/` ([`progress`]), and the
//! archives that carry each step's results back from a GPU machine ([`ustar`], checked
//! against what may come back, [`limits`]), and which steps a window of a given budget runs
//! ([`window`]). The commands that run, report and unpack a
//! campaign are in `app/campaign*.rs`.

pub mod limits;
pub mod manifest;
pub mod progress;
pub mod ustar;
pub mod window;
