//! The test shapes the throughput benchmarks measure, one list for every backend: 2-thread
//! (SB, MP, LB, 2+2W, CoRR), 3-thread (WRC) and 4-thread (IRIW) tests with relaxed `.gpu`
//! accesses to global memory, every thread in a CTA of its own; MP in the shared memory of one
//! CTA, and MP across the two CTAs of a cluster (a cluster launch); each `exists` condition
//! naming the non-SC outcome; and the loop every backend's benchmark runs them in.

use super::AppError;
use crate::harness::Control;
use crate::litmus::{self, ast::Test};
use crate::outcome::{observables, Histogram};
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// Name and litmus text of each shape.
pub const SHAPES: &[(&str, &str)] = &[
    (
        "SB",
        "PTX SB { x=0; y=0; }
         P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
         st.relaxed.gpu x, 1 | st.relaxed.gpu y, 1 ;
         ld.relaxed.gpu r0, y | ld.relaxed.gpu r1, x ;
         exists (P0:r0 == 0 /\\ P1:r1 == 0)",
    ),
    (
        "SB+fence.sc",
        "PTX SB+fence.sc { x=0; y=0; }
         P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
         st.relaxed.gpu x, 1 | st.relaxed.gpu y, 1 ;
         fence.sc.gpu | fence.sc.gpu ;
         ld.relaxed.gpu r0, y | ld.relaxed.gpu r1, x ;
         exists (P0:r0 == 0 /\\ P1:r1 == 0)",
    ),
    (
        "MP",
        "PTX MP { x=0; y=0; }
         P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
         st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, y ;
         st.relaxed.gpu y, 1 | ld.relaxed.gpu r1, x ;
         exists (P1:r0 == 1 /\\ P1:r1 == 0)",
    ),
    (
        "LB",
        "PTX LB { x=0; y=0; }
         P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
         ld.relaxed.gpu r0, x | ld.relaxed.gpu r1, y ;
         st.relaxed.gpu y, 1 | st.relaxed.gpu x, 1 ;
         exists (P0:r0 == 1 /\\ P1:r1 == 1)",
    ),
    (
        "2+2W",
        "PTX 2+2W { x=0; y=0; }
         P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
         st.relaxed.gpu x, 1 | st.relaxed.gpu y, 1 ;
         st.relaxed.gpu y, 2 | st.relaxed.gpu x, 2 ;
         exists (x == 1 /\\ y == 1)",
    ),
    (
        "CoRR",
        "PTX CoRR { x=0; }
         P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
         st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, x ;
                             | ld.relaxed.gpu r1, x ;
         exists (P1:r0 == 1 /\\ P1:r1 == 0)",
    ),
    (
        "MP+shared",
        "PTX MP+shared { x @ shared(P0) = 0; y @ shared(P0) = 0; }
         P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
         st.relaxed.cta x, 1 | ld.relaxed.cta r0, y ;
         st.relaxed.cta y, 1 | ld.relaxed.cta r1, x ;
         exists (P1:r0 == 1 /\\ P1:r1 == 0)",
    ),
    (
        "MP+cluster",
        "PTX MP+cluster { x=0; y=0; }
         P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;
         st.relaxed.cluster x, 1 | ld.relaxed.cluster r0, y ;
         st.relaxed.cluster y, 1 | ld.relaxed.cluster r1, x ;
         exists (P1:r0 == 1 /\\ P1:r1 == 0)",
    ),
    (
        "WRC",
        "PTX WRC { x=0; y=0; }
         P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 ;
         st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, x | ld.relaxed.gpu r1, y ;
                             | st.relaxed.gpu y, 1  | ld.relaxed.gpu r2, x ;
         exists (P1:r0 == 1 /\\ P2:r1 == 1 /\\ P2:r2 == 0)",
    ),
    (
        "IRIW",
        "PTX IRIW { x=0; y=0; }
         P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 | P3@cta 3,gpu 0 ;
         st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, x | st.relaxed.gpu y, 1 | ld.relaxed.gpu r2, y ;
                             | ld.relaxed.gpu r1, y |                     | ld.relaxed.gpu r3, x ;
         exists (P1:r0 == 1 /\\ P1:r1 == 0 /\\ P3:r2 == 1 /\\ P3:r3 == 0)",
    ),
];

/// Calls `body` with every shape whose name contains `only` (every shape without it), parsed,
/// and a control that never cancels and ignores progress.
pub fn each_shape(
    only: Option<&str>,
    mut body: impl FnMut(&str, &Test, Control<'_>) -> Result<(), AppError>,
) -> Result<(), AppError> {
    for (name, text) in SHAPES {
        if only.is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let test = litmus::parse(text, Path::new(name)).map_err(|e| e.to_string())?;
        let cancel = AtomicBool::new(false);
        let control = Control {
            cancel: &cancel,
            progress: &mut |_| {},
        };
        body(name, &test, control)?;
    }
    Ok(())
}

/// Instances of `histogram` that satisfy `test`'s condition: for these shapes, the non-SC
/// outcome.
pub fn weak(test: &Test, histogram: &Histogram) -> u64 {
    let obs = observables(test);
    histogram
        .counts
        .iter()
        .filter(|(o, _)| o.satisfies(&obs, &test.condition.prop))
        .map(|(_, n)| n)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_parses_and_only_selects_by_name() {
        let mut seen = Vec::new();
        each_shape(None, |name, test, _| {
            assert!(test.threads.len() >= 2, "{name}");
            seen.push(name.to_string());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), SHAPES.len());
        seen.clear();
        each_shape(Some("SB"), |name, _, _| {
            seen.push(name.to_string());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, ["SB", "SB+fence.sc"]);
    }
}
