//! The test shapes the throughput benchmarks measure, one list for every backend: 2-thread
//! (SB, MP, LB, 2+2W, CoRR), 3-thread (WRC) and 4-thread (IRIW) tests with relaxed `.gpu`
//! accesses, every thread in a CTA of its own, each `exists` condition naming the non-SC outcome.

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
