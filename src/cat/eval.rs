//! Evaluates a model's statements on one candidate execution: `let` binds, `let rec` takes the
//! least fixed point, each check passes or names the first one that fails.

use super::ast::{CheckKind, Expr, Model, Stmt};
use super::matrix::{all, Mat, Set};
use super::CatError;
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
pub type Env = HashMap<String, Val>;

/// Evaluates `model` over `n` events in `env`; `Ok(None)` when every check passes, else the
/// name (or line) of the first check that fails.
pub fn run(model: &Model, n: usize, env: &mut Env) -> Result<Option<String>, CatError> {
    for (stmt, &line) in model.stmts.iter().zip(&model.lines) {
        let at = |e: String| CatError::at(line, &e);
        match stmt {
            Stmt::Let(name, e) => {
                let v = eval(e, n, env).map_err(at)?;
                env.insert(name.clone(), v);
            }
            Stmt::LetRec(binds) => let_rec(binds, n, env).map_err(at)?,
            Stmt::Check {
                kind,
                negated,
                flag,
                expr,
                name,
                line,
            } => {
                let v = eval(expr, n, env).map_err(at)?;
                let holds = check(*kind, &v).map_err(at)? != *negated;
                if !holds && !flag {
                    return Ok(Some(name.clone().unwrap_or_else(|| format!("line {line}"))));
                }
            }
        }
    }
    Ok(None)
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
        env.insert(name.clone(), Val::Rel(Mat::empty(n)));
    }
    for _ in 0..=n * n * binds.len() + 1 {
        let mut changed = false;
        for (name, e) in binds {
            let v = eval(e, n, env)?;
            if env.get(name) != Some(&v) {
                changed = true;
                env.insert(name.clone(), v);
            }
        }
        if !changed {
            return Ok(());
        }
    }
    Err("`let rec` does not reach a fixed point (is it monotone?)".into())
}

fn rel(e: &Expr, n: usize, env: &Env) -> Result<Mat, String> {
    match eval(e, n, env)? {
        Val::Rel(m) => Ok(m),
        Val::Set(_) => Err(format!("{} is a set where a relation is needed", show(e))),
    }
}

fn set(e: &Expr, n: usize, env: &Env) -> Result<Set, String> {
    match eval(e, n, env)? {
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

/// Evaluates an expression.
pub fn eval(e: &Expr, n: usize, env: &Env) -> Result<Val, String> {
    let r = |x: &Expr| rel(x, n, env);
    Ok(match e {
        Expr::Name(name) => match (name.as_str(), env.get(name)) {
            (_, Some(v)) => v.clone(),
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
            match (eval(a, n, env)?, eval(b, n, env)?) {
                (Val::Set(x), Val::Set(y)) => Val::Set(op(x, y)),
                (Val::Rel(x), Val::Rel(y)) => Val::Rel(x.zip(&y, op)),
                _ => return Err("a set and a relation combined by | & or \\".into()),
            }
        }
        Expr::Seq(a, b) => Val::Rel(r(a)?.seq(&r(b)?)),
        Expr::Cartesian(a, b) => Val::Rel(Mat::product(n, set(a, n, env)?, set(b, n, env)?)),
        Expr::Plus(a) => Val::Rel(r(a)?.plus()),
        Expr::Star(a) => Val::Rel(r(a)?.plus().reflexive()),
        Expr::Opt(a) => Val::Rel(r(a)?.reflexive()),
        Expr::Inverse(a) => Val::Rel(r(a)?.inverse()),
        Expr::Complement(a) => match eval(a, n, env)? {
            Val::Set(s) => Val::Set(all(n) & !s),
            Val::Rel(m) => Val::Rel(Mat {
                rows: m.rows.iter().map(|row| all(n) & !row).collect(),
            }),
        },
        Expr::Identity(a) => Val::Rel(Mat::id_on(n, set(a, n, env)?)),
        Expr::Domain(a) => Val::Set(r(a)?.domain()),
        Expr::Range(a) => Val::Set(r(a)?.range()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cat::parser::parse;

    fn env3() -> Env {
        let mut env = Env::new();
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
