//! The model that judges `run`: the built-in checker (the default, PTX v7.5) or a cat model
//! given by `--model` (a `.cat` file or a built-in transcription, chosen as `check --model`
//! chooses it). Its allowed outcomes decide what is forbidden; the built-in checker still says
//! which allowed outcomes are SC. Every check is bounded by `--timeout` and Ctrl-C.

use super::bounded_check;
use crate::cat::builtin::{choose, Chosen, NAMED};
use crate::cat::check::CatVerdict;
use crate::litmus::ast::Test;
use crate::model::ModelVerdict;
use crate::results::{JudgeModel, RunRecord};
use std::path::Path;
use std::time::Duration;

/// The judge of a run and what provenance records of it.
pub struct RunModel {
    /// What `run.json` records.
    pub id: JudgeModel,
    /// The cat model, when one judges.
    cat: Option<Chosen>,
}

impl RunModel {
    /// The model of `--model SPEC`, or the built-in checker without one.
    pub fn choose(spec: Option<&str>) -> Result<RunModel, String> {
        let Some(spec) = spec else {
            return Ok(RunModel {
                id: JudgeModel::built_in(),
                cat: None,
            });
        };
        let chosen = choose(spec).map_err(|e| format!("--model {e}"))?;
        let file = (!NAMED.iter().any(|(n, _)| *n == spec)).then_some(spec);
        Ok(RunModel {
            id: JudgeModel::cat(spec, file, &chosen.text, &chosen.model.title),
            cat: Some(chosen),
        })
    }

    /// Whether PTX judges: the built-in checker or a built-in transcription of PTX's model
    /// (a cat file may be any model, e.g. one stronger than the machine under test).
    pub fn is_ptx(&self) -> bool {
        self.cat.is_none() || NAMED.iter().any(|(n, _)| *n == self.id.name)
    }

    /// The model a replayed run recorded (or `--model SPEC` when given), refused when the
    /// recorded model's text has changed since: the replay would be judged differently.
    pub fn replayed(run: &RunRecord, path: &Path, spec: Option<&str>) -> Result<RunModel, String> {
        if spec.is_some() {
            return RunModel::choose(spec);
        }
        let was = JudgeModel::of_run(run);
        if was.checker != crate::results::judge_model::CAT {
            return RunModel::choose(None);
        }
        let now = RunModel::choose(Some(&was.name))
            .map_err(|e| format!("{}: the recorded model: {e}", path.display()))?;
        if now.id.hash != was.hash {
            return Err(format!(
                "{}: the model {} has changed since the run ({} then, {} now); give --model to \
                 judge the replay with it as it is",
                path.display(),
                was.name,
                was.hash.as_deref().unwrap_or("no hash"),
                now.id.hash.as_deref().unwrap_or("no hash"),
            ));
        }
        Ok(now)
    }

    /// The verdict that judges `test`, and for a cat model how its allowed set compares with
    /// the built-in checker's (a note for the test's record).
    pub fn verdict(
        &self,
        test: &Test,
        limit: Duration,
    ) -> Result<(ModelVerdict, Option<String>), String> {
        let Some(m) = &self.cat else {
            return Ok((bounded_check::check(test, limit)?, None));
        };
        let cat = bounded_check::check_cat(m, test, limit)?;
        let built_in = bounded_check::check(test, limit)?;
        let note = compared(&built_in, &cat);
        Ok((judged_by_cat(built_in, cat, test)?, Some(note)))
    }
}

/// The built-in verdict with the cat model's allowed outcomes, answer and counts; SC outcomes
/// are those of the built-in checker that the cat model allows. The built-in checker's witnesses
/// and exclusions describe its own executions, so they are dropped.
fn judged_by_cat(
    mut v: ModelVerdict,
    cat: CatVerdict,
    test: &Test,
) -> Result<ModelVerdict, String> {
    if cat.observables != v.observables {
        return Err("the cat interpreter and the checker name different observables".into());
    }
    v.result = cat.result(test);
    v.sc.retain(|o| cat.allowed.contains(o));
    v.allowed = cat.allowed;
    v.candidates = cat.candidates;
    v.consistent = cat.consistent;
    v.witnesses.clear();
    v.excluded.clear();
    Ok(v)
}

/// `same as the built-in checker`, or how many outcomes only one of the two allows.
fn compared(built_in: &ModelVerdict, cat: &CatVerdict) -> String {
    let more = cat.allowed.difference(&built_in.allowed).count();
    let fewer = built_in.allowed.difference(&cat.allowed).count();
    if more + fewer == 0 {
        "same as the built-in checker".into()
    } else {
        format!("allows {more} outcome(s) the built-in checker forbids, forbids {fewer} it allows")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Parameters;

    const M4: &str = "PTX M4\n{ x=0; }\n P0@cta 1,gpu 0 | P1@cta 0,gpu 0 ;\n \
        atom.relaxed.cta.exch r0, x, 1 | atom.relaxed.gpu.exch r0, x, 2 ;\n\
        exists (P0:r0 == 2 /\\ P1:r0 == 1)\n";

    fn test(src: &str) -> Test {
        crate::litmus::parse(src, Path::new("M4.litmus")).unwrap()
    }

    fn forever() -> Duration {
        Duration::from_secs(60)
    }

    #[test]
    fn a_cat_model_decides_what_is_allowed_and_sc_stays_within_it() {
        let t = test(M4);
        let dir = std::env::temp_dir().join(format!("run-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // No axiom at all: every candidate is consistent, M4's outcome included.
        let all = dir.join("all.cat");
        std::fs::write(&all, "PTX anything\nlet a = po\n").unwrap();
        let m = RunModel::choose(all.to_str()).unwrap();
        let (v, note) = m.verdict(&t, forever()).unwrap();
        let (b, none) = RunModel::choose(None)
            .unwrap()
            .verdict(&t, forever())
            .unwrap();
        assert!(none.is_none());
        assert!(
            v.allowed.is_superset(&b.allowed) && v.allowed.len() > b.allowed.len(),
            "{:?} vs {:?}",
            v.allowed,
            b.allowed
        );
        assert_eq!(v.result, crate::model::CheckResult::Ok);
        assert_eq!(b.result, crate::model::CheckResult::No);
        let more = v.allowed.len() - b.allowed.len();
        assert_eq!(
            note.unwrap(),
            format!("allows {more} outcome(s) the built-in checker forbids, forbids 0 it allows")
        );
        // Every execution inconsistent: nothing allowed, so nothing is SC either.
        let none = dir.join("none.cat");
        std::fs::write(&none, "PTX nothing\nacyclic id as never\n").unwrap();
        let (v, _) = RunModel::choose(none.to_str())
            .unwrap()
            .verdict(&t, forever())
            .unwrap();
        assert!(v.allowed.is_empty() && v.sc.is_empty() && v.witnesses.is_empty());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn built_in_names_choose_the_compiled_in_transcriptions_checked_against_the_corpus() {
        for (name, text) in NAMED {
            let m = RunModel::choose(Some(name)).unwrap();
            assert_eq!(m.id.file, None);
            assert_eq!(
                m.id.hash,
                Some(crate::results::judge_model::text_hash(text))
            );
        }
        let (v, note) = RunModel::choose(Some("ptx-7.5"))
            .unwrap()
            .verdict(&test(M4), forever())
            .unwrap();
        assert_eq!(note.as_deref(), Some("same as the built-in checker"));
        assert_eq!(v.result, crate::model::CheckResult::No);
    }

    #[test]
    fn a_replay_keeps_the_recorded_model_and_refuses_a_changed_one() {
        let mut run = RunRecord::new("r", "cpu", vec![], Parameters::default(), "t");
        let p = Path::new("run.json");
        assert!(RunModel::replayed(&run, p, None).unwrap().cat.is_none());
        RunModel::choose(Some("ptx-6.0"))
            .unwrap()
            .id
            .record(&mut run.provenance);
        let again = RunModel::replayed(&run, p, None).unwrap();
        assert_eq!(again.id.name, "ptx-6.0");
        run.provenance
            .insert("model.hash".into(), "fnv1a64:0000000000000000".into());
        let e = RunModel::replayed(&run, p, None).err().unwrap();
        assert!(e.contains("run.json: the model ptx-6.0 has changed"), "{e}");
        let given = RunModel::replayed(&run, p, Some("ptx-7.5")).unwrap();
        assert_eq!(given.id.name, "ptx-7.5");
    }
}
