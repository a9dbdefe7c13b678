//! How `tune` measures one configuration: the family's tests run one chunk each on the
//! backend, the configuration applied as stress settings (GPU) or backend options (CPU), and
//! the instances satisfying each test's condition counted as weak.

use super::bench_shapes::weak;
use crate::codegen::Stress;
use crate::harness::notes;
use crate::harness::{self, Backend, Budget, Control, Options, RunError, RunParams};
use crate::litmus::ast::Test;
use crate::tune::{Evaluator, Point, Refusal, Sample, Space};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// The measuring side of one family's search.
pub struct Measure<'a> {
    /// The backend (resolved).
    pub backend: Backend,
    /// The family's tests.
    pub tests: &'a [Test],
    /// The space searched.
    pub space: &'a Space,
    /// The preset the GPU settings go on top of.
    pub stress: &'a Stress,
    /// The fixed `-o` options.
    pub options: &'a BTreeMap<String, String>,
    /// One chunk's budget, per test.
    pub chunk: Budget,
    /// When the search proper must end.
    pub deadline: Instant,
    /// When the family's time is up (the final race runs until then).
    pub final_deadline: Instant,
}

/// The stress configuration `point` gives on top of `base` (testing CTAs clamped to the grid).
pub fn stress_of(space: &Space, point: &Point, base: &Stress) -> Result<Stress, String> {
    let mut s = base.clone();
    for (k, v) in space.settings(point) {
        s.set(k, v)?;
    }
    s.testing_ctas = s.testing_ctas.min(s.max_ctas);
    s.validate()?;
    Ok(s)
}

/// The backend options `point` gives on top of the fixed ones (CPU: the searched options).
pub fn options_of(
    backend: Backend,
    space: &Space,
    point: &Point,
    fixed: &BTreeMap<String, String>,
) -> Result<Options, String> {
    let mut map = fixed.clone();
    match backend {
        Backend::Cpu => {
            for (k, v) in space.settings(point) {
                map.insert(k.to_string(), v.to_string());
            }
        }
        // The search weighs rates; the code of the preset it finds is checked by the runs
        // that use it, so no configuration waits for a disassembler.
        Backend::Cuda => {
            map.entry("sass_check".into())
                .or_insert_with(|| "off".into());
        }
        _ => {}
    }
    Options::parse(backend, &map)
}

impl Measure<'_> {
    fn params(&self, point: &Point, seed: u64) -> Result<RunParams, String> {
        let mut params = RunParams::new(self.chunk, seed);
        params.stress = match self.backend {
            Backend::Cuda => stress_of(self.space, point, self.stress)?,
            _ => self.stress.clone(),
        };
        params.options = options_of(self.backend, self.space, point, self.options)?;
        Ok(params)
    }
}

/// A failed run as the search sees it: a lost device ends the search, anything else is this
/// configuration's.
fn refusal(test: &str, e: RunError) -> Refusal {
    // Most of the GPU's messages already begin with the test's name.
    let text = e.to_string();
    let why = match text.starts_with(&format!("{test}: ")) {
        true => text,
        false => format!("{test}: {text}"),
    };
    match e {
        RunError::TimedOut(_) | RunError::DeviceError(_) | RunError::DeviceLost(_) => {
            Refusal::Fatal(why)
        }
        RunError::Unsupported(_) | RunError::Failed(_) => Refusal::Infeasible(why),
    }
}

impl Evaluator for Measure<'_> {
    fn sample(&mut self, point: &Point, seed: u64) -> Result<Sample, Refusal> {
        let params = self.params(point, seed).map_err(Refusal::Infeasible)?;
        let mut total = Sample {
            instances: 0,
            weak: 0,
            seconds: 0.0,
            link_ns: None,
        };
        for test in self.tests {
            let cancel = AtomicBool::new(false);
            let control = Control {
                cancel: &cancel,
                progress: &mut |_| {},
            };
            let run = harness::run(self.backend, test, &params, control)
                .map_err(|e| refusal(&test.name, e))?;
            total.instances += run.info.instances;
            total.weak += weak(test, &run.histogram);
            total.seconds += run.info.elapsed_s;
            // The state the chunk started in: its first test's probe (the CPU backend's).
            total.link_ns = total.link_ns.or_else(|| {
                let ns = run.info.provenance.get(notes::ROUND_TRIP_NS)?;
                ns.parse().ok()
            });
        }
        Ok(total)
    }

    fn time_left(&self) -> bool {
        Instant::now() < self.deadline
    }

    fn final_phase(&mut self) {
        self.deadline = self.final_deadline;
    }
}
