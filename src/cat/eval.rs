//! Evaluates a model's statements on one candidate execution: `let` binds, `let rec` takes the
//! least fixed point, each check passes or names the first one that fails.

use super::ast::{CheckKind, Expr, Model, Stmt};
use super::matrix::{all, Mat, Set};
use super::CatError;
use crate::fx::FxHashMap;
use std::borrow::Cow;
use std::collections::HashMap;

/// A value: a set of events or a relation over them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    /// A set.
    Set(Set),
    /// A relation.
    Rel(Mat),
}

/// Names bound to values: the base relations and tags, then the model's definitions.
pub type Env = FxHashMap<String, Val>;

/// Evaluates `model` over `n` events in `env`; `Ok(None)` when every check passes, else the
/// name (or line) of the first check that fails.
pub fn run(model: &Model, n: usize, env: &mut Env) -> Result<Option<String>, CatError> {
    let all = vec![0; model.stmts.len()];
    let failed = run_stage(model, &all, 0, n, env)?;
    Ok(failed.map(|i| check_name(model, i)))
}

/// The name of the check that is statement `i` of `model`, or its line when it has none.
pub fn check_name(model: &Model, i: usize) -> String {
    match &model.stmts[i] {
        Stmt::Check {
            name: Some(name), ..
        } => name.clone(),
        Stmt::Check { line, .. } => format!("line {line}"),
        _ => format!("line {}", model.lines[i]),
    }
}

/// Per statement, the latest choice of a candidate it depends on, through the definitions it
/// reads: 0 none (fixed by the program), 1 reads-from or Fence-SC order, 2 coherence. A
/// statement of stage `k` evaluates once per choice of stage `k`, not once per candidate.
pub fn stages(model: &Model) -> Vec<u8> {
    let mut stage_of: HashMap<String, u8> = HashMap::from([
        ("rf".to_string(), 1),
        ("sync_fence".to_string(), 1),
        ("co".to_string(), 2),
        ("fr".to_string(), 2),
    ]);
    // The highest stage of a statement that read each name so far: a later rebinding of the
    // name may not run before that reader.
    let mut read_at: HashMap<String, u8> = HashMap::new();
    let mut out = Vec::new();
    for stmt in &model.stmts {
        let (exprs, bound): (Vec<&Expr>, Vec<&String>) = match stmt {
            Stmt::Let(name, e) => (vec![e], vec![name]),
            Stmt::LetRec(binds) => binds.iter().map(|(n, e)| (e, n)).unzip(),
            Stmt::Check { expr, .. } => (vec![expr], vec![]),
        };
        let mut names = Vec::new();
        for e in &exprs {
            free_names(e, &mut names);
        }
        let mut k = names
            .iter()
            .map(|x| stage_of.get(*x).copied().unwrap_or(0))
            .max()
            .unwrap_or(0);
        for b in &bound {
            k = k.max(read_at.get(*b).copied().unwrap_or(0));
        }
        for x in names {
            let r = read_at.entry(x.to_string()).or_insert(0);
            *r = (*r).max(k);
        }
        for b in bound {
            stage_of.insert(b.clone(), k);
        }
        out.push(k);
    }
    out
}

fn free_names<'a>(e: &'a Expr, out: &mut Vec<&'a str>) {
    match e {
        Expr::Name(n) => out.push(n),
        Expr::Union(a, b)
        | Expr::Inter(a, b)
        | Expr::Diff(a, b)
        | Expr::Seq(a, b)
        | Expr::Cartesian(a, b) => {
            free_names(a, out);
            free_names(b, out);
        }
        Expr::Plus(a)
        | Expr::Star(a)
        | Expr::Opt(a)
        | Expr::Inverse(a)
        | Expr::Complement(a)
        | Expr::Identity(a)
        | Expr::Domain(a)
        | Expr::Range(a) => free_names(a, out),
    }
}

/// Evaluates the statements of stage `stage` (see [`stages`]) in order; `Ok(None)` when each of
/// their checks passes, else the index of the first that fails (named by [`check_name`]).
pub fn run_stage(
    model: &Model,
    stages: &[u8],
    stage: u8,
    n: usize,
    env: &mut Env,
) -> Result<Option<usize>, CatError> {
    for (i, ((stmt, &line), _)) in model
        .stmts
        .iter()
        .zip(&model.lines)
        .zip(stages)
        .enumerate()
        .filter(|(_, (_, k))| **k == stage)
    {
        let at = |e: String| CatError::at(line, &e);
        match stmt {
            Stmt::Let(name, e) => {
                let v = eval(e, n, env).map_err(at)?.into_owned();
                bind(env, name, v);
            }
            Stmt::LetRec(binds) => let_rec(binds, n, env).map_err(at)?,
            Stmt::Check {
                kind,
                negated,
                flag,
                expr,
                ..
            } => {
                let v = eval(expr, n, env).map_err(at)?;
                let holds = check(*kind, &v).map_err(at)? != *negated;
                if !holds && !flag {
                    return Ok(Some(i));
                }
            }
        }
    }
    Ok(None)
}

/// Binds `name` to `v`, reusing the name's entry when it has one (this runs once per
/// statement per candidate).
pub fn bind(env: &mut Env, name: &str, v: Val) {
    match env.get_mut(name) {
        Some(slot) => *slot = v,
        None => {
            env.insert(name.to_string(), v);
        }
    }
}

fn check(kind: CheckKind, v: &Val) -> Result<bool, String> {
    Ok(match (kind, v) {
        (CheckKind::Empty, Val::Set(s)) => *s == 0,
        (CheckKind::Empty, Val::Rel(m)) => m.no_pairs(),
        (CheckKind::Acyclic, Val::Rel(m)) => m.acyclic(),
        (CheckKind::Irreflexive, Val::Rel(m)) => m.irreflexive(),
        (k, Val::Set(_)) => return Err(format!("{k:?} needs a relation, not a set")),
    })
}

/// `let rec`: every name starts empty and all are re-evaluated until nothing changes (the
/// operators are monotone in each name, so this is the least fixed point and it terminates).
fn let_rec(binds: &[(String, Expr)], n: usize, env: &mut Env) -> Result<(), String> {
    for (name, _) in binds {
        bind(env, name, Val::Rel(Mat::empty(n)));
    }
    for _ in 0..=n * n * binds.len() + 1 {
        let mut changed = false;
        for (name, e) in binds {
            let v = eval(e, n, env)?.into_owned();
            if env.get(name) != Some(&v) {
                changed = true;
                bind(env, name, v);
            }
        }
        if !changed {
            return Ok(());
        }
    }
    Err("`let rec` does not reach a fixed point (is it monotone?)".into())
}

fn rel<'e>(e: &Expr, n: usize, env: &'e Env) -> Result<Cow<'e, Mat>, String> {
    match eval(e, n, env)? {
        Cow::Borrowed(Val::Rel(m)) => Ok(Cow::Borrowed(m)),
        Cow::Owned(Val::Rel(m)) => Ok(Cow::Owned(m)),
        _ => Err(format!("{} is a set where a relation is needed", show(e))),
    }
}

fn set(e: &Expr, n: usize, env: &Env) -> Result<Set, String> {
    match *eval(e, n, env)? {
        Val::Set(s) => Ok(s),
        Val::Rel(_) => Err(format!("{} is a relation where a set is needed", show(e))),
    }
}

fn show(e: &Expr) -> String {
    match e {
        Expr::Name(n) => format!("`{n}`"),
        _ => "an expression".into(),
    }
}

/// Evaluates an expression; a name's value is borrowed from `env`, not copied (names are
/// most of what a model reads).
pub fn eval<'e>(e: &Expr, n: usize, env: &'e Env) -> Result<Cow<'e, Val>, String> {
    let r = |x: &Expr| rel(x, n, env);
    Ok(Cow::Owned(match e {
        Expr::Name(name) => match (name.as_str(), env.get(name)) {
            (_, Some(v)) => return Ok(Cow::Borrowed(v)),
            ("_", None) => Val::Set(all(n)),
            ("0", None) => Val::Rel(Mat::empty(n)),
            _ => return Err(format!("unknown name `{name}`")),
        },
        Expr::Union(a, b) | Expr::Inter(a, b) | Expr::Diff(a, b) => {
            let op = |x: Set, y: Set| match e {
                Expr::Union(..) => x | y,
                Expr::Inter(..) => x & y,
                _ => x & !y,
            };
            match (&*eval(a, n, env)?, &*eval(b, n, env)?) {
                (Val::Set(x), Val::Set(y)) => Val::Set(op(*x, *y)),
                (Val::Rel(x), Val::Rel(y)) => Val::Rel(x.zip(y, op)),
                _ => return Err("a set and a relation combined by | & or \\".into()),
            }
        }
        Expr::Seq(a, b) => Val::Rel(r(a)?.seq(&*r(b)?)),
        Expr::Cartesian(a, b) => Val::Rel(Mat::product(n, set(a, n, env)?, set(b, n, env)?)),
        Expr::Plus(a) => Val::Rel(r(a)?.plus()),
        Expr::Star(a) => Val::Rel(r(a)?.plus().reflexive()),
        Expr::Opt(a) => Val::Rel(r(a)?.reflexive()),
        Expr::Inverse(a) => Val::Rel(r(a)?.inverse()),
        Expr::Complement(a) => match &*eval(a, n, env)? {
            Val::Set(s) => Val::Set(all(n) & !s),
            Val::Rel(m) => Val::Rel(Mat {
                rows: m.rows.iter().map(|row| all(n) & !row).collect(),
            }),
        },
        Expr::Identity(a) => Val::Rel(Mat::id_on(n, set(a, n, env)?)),
        Expr::Domain(a) => Val::Set(r(a)?.domain()),
        Expr::Range(a) => Val::Set(r(a)?.range()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cat::parser::parse;

    fn env3() -> Env {
        let mut env = Env::default();
        let mut po = Mat::empty(3);
        po.rows[0] = 0b110;
        po.rows[1] = 0b100;
        env.insert("po".into(), Val::Rel(po));
        env.insert("W".into(), Val::Set(0b001));
        env
    }

    #[test]
    fn checks_pass_and_fail_by_name() {
        let m = parse("M\nlet r = [W]; po\nacyclic r as ok\nempty r as no").unwrap();
        assert_eq!(run(&m, 3, &mut env3()).unwrap(), Some("no".into()));
        let m = parse("M\nirreflexive po^-1; po\n").unwrap();
        assert_eq!(run(&m, 3, &mut env3()).unwrap(), Some("line 2".into()));
        let m = parse("M\nflag ~empty po as f\n~acyclic po? as cyc").unwrap();
        assert_eq!(run(&m, 3, &mut env3()).unwrap(), None);
    }

    #[test]
    fn statements_are_staged_by_the_choices_they_read() {
        let m =
            parse("M\nlet a = po\nlet b = rf | a\nlet co = co+\nlet c = a\nacyclic b\nempty co")
                .unwrap();
        assert_eq!(stages(&m), vec![0, 1, 2, 0, 1, 2]);
        // Rebinding a name read by a later stage waits for that reader.
        let m = parse("M\nlet b = rf | a\nlet a = po\nacyclic a").unwrap();
        assert_eq!(stages(&m), vec![1, 1, 1]);
    }

    #[test]
    fn let_rec_is_the_least_fixed_point() {
        let m = parse("M\nlet rec t = po | (t; t)\nlet d = t \\ po\nempty d as closed").unwrap();
        let mut env = env3();
        assert_eq!(run(&m, 3, &mut env).unwrap(), None);
        assert_eq!(env["t"], env["po"]);
    }

    #[test]
    fn type_errors_and_unknown_names_name_the_line() {
        let m = parse("M\nlet a = po\nlet b = W ; po").unwrap();
        let e = run(&m, 3, &mut env3()).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("`W` is a set"), "{}", e.message);
        let m = parse("M\nacyclic nope").unwrap();
        assert!(run(&m, 3, &mut env3())
            .unwrap_err()
            .message
            .contains("unknown name `nope`"));
    }
}
