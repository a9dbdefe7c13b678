//! Cat text to a [`Model`]. Operators bind, loosest first: `|`, `;`, `\`, `&`, prefix `~`, then
//! postfix `+ * ? ^-1` and binary `*` (cartesian product) — the precedence of Dat3M's cat
//! grammar, so Dat3M's models read as their authors meant.

use super::ast::{CheckKind, Expr, Model, Stmt};
use super::lexer::{lex, Tok, Token};
use super::CatError;

const KEYWORDS: &[&str] = &[
    "let",
    "rec",
    "and",
    "as",
    "acyclic",
    "irreflexive",
    "empty",
    "flag",
    "show",
    "include",
    "undefined_unless",
];

/// Parses a model.
pub fn parse(src: &str) -> Result<Model, CatError> {
    let toks = lex(src)?;
    let mut p = Parser { toks, pos: 0 };
    let mut title = Vec::new();
    while let Some(t) = p.peek() {
        match t {
            Tok::Name(n) if !KEYWORDS.contains(&n.as_str()) => title.push(n.clone()),
            Tok::Str(s) => title.push(s.clone()),
            _ => break,
        }
        p.pos += 1;
    }
    let (mut stmts, mut lines) = (Vec::new(), Vec::new());
    while p.peek().is_some() {
        let line = p.line();
        if let Some(s) = p.stmt()? {
            stmts.push(s);
            lines.push(line);
        }
    }
    Ok(Model {
        title: title.join(" "),
        stmts,
        lines,
    })
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
}

fn is_kw(t: Option<&Tok>, kw: &str) -> bool {
    matches!(t, Some(Tok::Name(n)) if n == kw)
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }

    fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(1, |t| t.line)
    }

    fn err(&self, msg: &str) -> CatError {
        let found = match self.peek() {
            Some(t) => format!("{t:?}"),
            None => "the end of the file".into(),
        };
        CatError::at(self.line(), &format!("{msg}, found {found}"))
    }

    fn expect(&mut self, t: Tok, what: &str) -> Result<(), CatError> {
        if self.eat(&t) {
            Ok(())
        } else {
            Err(self.err(&format!("expected {what}")))
        }
    }

    fn name(&mut self) -> Result<String, CatError> {
        match self.peek() {
            Some(Tok::Name(n)) if !KEYWORDS.contains(&n.as_str()) => {
                let n = n.clone();
                self.pos += 1;
                Ok(n)
            }
            _ => Err(self.err("expected a name")),
        }
    }

    /// Consumes keyword `kw` if it comes next; says whether it did.
    fn eat_kw(&mut self, kw: &str) -> bool {
        let here = is_kw(self.peek(), kw);
        self.pos += usize::from(here);
        here
    }

    /// Consumes token `t` if it comes next; says whether it did.
    fn eat(&mut self, t: &Tok) -> bool {
        let here = self.peek() == Some(t);
        self.pos += usize::from(here);
        here
    }

    /// One statement; `None` for one that only displays (`show`).
    fn stmt(&mut self) -> Result<Option<Stmt>, CatError> {
        if self.eat_kw("let") {
            return self.let_stmt().map(Some);
        }
        if is_kw(self.peek(), "include") {
            return Err(CatError::at(
                self.line(),
                "`include` is not supported: give one file",
            ));
        }
        if self.eat_kw("show") {
            self.show()?;
            return Ok(None);
        }
        self.check().map(Some)
    }

    /// After `let`: one binding, or `rec` and bindings joined by `and`.
    fn let_stmt(&mut self) -> Result<Stmt, CatError> {
        if !self.eat_kw("rec") {
            let (n, e) = self.binding()?;
            return Ok(Stmt::Let(n, e));
        }
        let mut binds = vec![self.binding()?];
        while self.eat_kw("and") {
            binds.push(self.binding()?);
        }
        Ok(Stmt::LetRec(binds))
    }

    /// After `show`: its expressions, each perhaps named with `as`, read and dropped (they
    /// only display).
    fn show(&mut self) -> Result<(), CatError> {
        loop {
            self.expr()?;
            if self.eat_kw("as") {
                self.name()?;
            }
            if !self.eat(&Tok::Comma) {
                return Ok(());
            }
        }
    }

    /// `[flag] [~] acyclic|irreflexive|empty EXPR [as NAME]`.
    fn check(&mut self) -> Result<Stmt, CatError> {
        let line = self.line();
        let flag = self.eat_kw("flag");
        let negated = self.eat(&Tok::Not);
        let kind = match self.peek() {
            Some(Tok::Name(n)) if n == "acyclic" => CheckKind::Acyclic,
            Some(Tok::Name(n)) if n == "irreflexive" => CheckKind::Irreflexive,
            Some(Tok::Name(n)) if n == "empty" => CheckKind::Empty,
            _ => return Err(self.err("expected let, acyclic, irreflexive or empty")),
        };
        self.pos += 1;
        let expr = self.expr()?;
        let name = if self.eat_kw("as") {
            Some(self.name()?)
        } else {
            None
        };
        Ok(Stmt::Check {
            kind,
            negated,
            flag,
            expr,
            name,
            line,
        })
    }

    fn binding(&mut self) -> Result<(String, Expr), CatError> {
        let n = self.name()?;
        if self.peek() == Some(&Tok::LPar) {
            return Err(self.err("functions (`let f(x) = ...`) are not supported"));
        }
        self.expect(Tok::Eq, "`=`")?;
        Ok((n, self.expr()?))
    }

    fn expr(&mut self) -> Result<Expr, CatError> {
        self.binary(0)
    }

    /// Left-associative binary levels: `|`, `;`, `\`, `&`.
    fn binary(&mut self, level: usize) -> Result<Expr, CatError> {
        const OPS: [Tok; 4] = [Tok::Bar, Tok::Semi, Tok::Bslash, Tok::Amp];
        if level == OPS.len() {
            return self.unary();
        }
        let mut e = self.binary(level + 1)?;
        while self.eat(&OPS[level]) {
            let r = Box::new(self.binary(level + 1)?);
            let l = Box::new(e);
            e = match level {
                0 => Expr::Union(l, r),
                1 => Expr::Seq(l, r),
                2 => Expr::Diff(l, r),
                _ => Expr::Inter(l, r),
            };
        }
        Ok(e)
    }

    fn unary(&mut self) -> Result<Expr, CatError> {
        if self.eat(&Tok::Not) {
            return Ok(Expr::Complement(Box::new(self.unary()?)));
        }
        self.postfix()
    }

    fn starts_primary(&self, k: usize) -> bool {
        match self.peek_at(k) {
            Some(Tok::Name(n)) => !KEYWORDS.contains(&n.as_str()),
            Some(Tok::LPar | Tok::LBrac) => true,
            Some(Tok::Not) => {
                !matches!(self.peek_at(k + 1), Some(Tok::Name(n)) if KEYWORDS.contains(&n.as_str()))
            }
            _ => false,
        }
    }

    fn postfix(&mut self) -> Result<Expr, CatError> {
        let mut e = self.primary()?;
        loop {
            let b = Box::new(e.clone());
            e = match self.peek() {
                Some(Tok::Star) if self.starts_primary(1) => {
                    self.pos += 1;
                    // The right operand of a product is itself a postfix expression.
                    let r = if self.peek() == Some(&Tok::Not) {
                        self.unary()?
                    } else {
                        self.primary()?
                    };
                    Expr::Cartesian(b, Box::new(r))
                }
                Some(Tok::Star | Tok::HatStar) => Expr::Star(b),
                Some(Tok::Plus | Tok::HatPlus) => Expr::Plus(b),
                Some(Tok::Opt) => Expr::Opt(b),
                Some(Tok::Inv) => Expr::Inverse(b),
                _ => return Ok(e),
            };
            if !matches!(e, Expr::Cartesian(..)) {
                self.pos += 1;
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, CatError> {
        match self.peek().cloned() {
            Some(Tok::LPar) => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect(Tok::RPar, "`)`")?;
                Ok(e)
            }
            Some(Tok::LBrac) => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect(Tok::RBrac, "`]`")?;
                Ok(Expr::Identity(Box::new(e)))
            }
            Some(Tok::Name(n)) if !KEYWORDS.contains(&n.as_str()) => {
                self.pos += 1;
                if self.peek() != Some(&Tok::LPar) {
                    return Ok(Expr::Name(n));
                }
                self.pos += 1;
                let arg = Box::new(self.expr()?);
                self.expect(Tok::RPar, "`)`")?;
                match n.as_str() {
                    "domain" => Ok(Expr::Domain(arg)),
                    "range" => Ok(Expr::Range(arg)),
                    "toid" => Ok(Expr::Identity(arg)),
                    _ => Err(CatError::at(
                        self.line(),
                        &format!("`{n}(...)`: function calls are not supported"),
                    )),
                }
            }
            _ => Err(self.err("expected an expression")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Box<Expr> {
        Box::new(Expr::Name(s.into()))
    }

    #[test]
    fn precedence_follows_the_dat3m_grammar() {
        let m = parse("T\nlet a = b | c ; d \\ e & f").unwrap();
        let want = Expr::Union(
            n("b"),
            Box::new(Expr::Seq(
                n("c"),
                Box::new(Expr::Diff(n("d"), Box::new(Expr::Inter(n("e"), n("f"))))),
            )),
        );
        assert_eq!(m.title, "T");
        assert_eq!(m.stmts, vec![Stmt::Let("a".into(), want)]);
    }

    #[test]
    fn star_is_a_product_before_an_operand_and_a_closure_otherwise() {
        let m = parse("let a = M * M\nlet b = po*\nacyclic b as x").unwrap();
        assert_eq!(
            m.stmts[0],
            Stmt::Let("a".into(), Expr::Cartesian(n("M"), n("M")))
        );
        assert_eq!(m.stmts[1], Stmt::Let("b".into(), Expr::Star(n("po"))));
        assert!(matches!(
            &m.stmts[2],
            Stmt::Check { kind: CheckKind::Acyclic, name: Some(x), line: 3, .. } if x == "x"
        ));
    }

    #[test]
    fn let_rec_and_errors_name_the_line() {
        let m = parse("let rec a = b | a ; c and c = a").unwrap();
        assert!(matches!(&m.stmts[0], Stmt::LetRec(v) if v.len() == 2));
        let e = parse("let a = b\nlet c = (d").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("`)`"), "{}", e.message);
        assert!(parse("let f(x) = x").is_err());
        assert!(parse("include \"x.cat\"").is_err());
    }

    #[test]
    fn show_is_read_and_dropped_and_a_flag_keeps_its_line() {
        let m = parse("show po as p, rf\nflag ~empty po as f").unwrap();
        assert_eq!(m.stmts.len(), 1, "{:?}", m.stmts);
        assert!(matches!(
            &m.stmts[0],
            Stmt::Check {
                kind: CheckKind::Empty,
                negated: true,
                flag: true,
                line: 2,
                ..
            }
        ));
        assert!(parse("show po,").is_err());
    }
}
