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
    let mut p = Parser {
        toks,
        pos: 0,
        nesting: 0,
    };
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

/// The deepest an expression may be, as a tree and as nesting in the text: deeper text is
/// refused with its line rather than overflowing the stack of the parser or the evaluator.
pub const MAX_DEPTH: usize = 200;

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    /// How many expressions the parser is inside now.
    nesting: usize,
}

/// An expression and its depth as a tree (a name is 1 deep).
struct Tree {
    e: Expr,
    depth: usize,
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
        Ok(self.binary(0)?.e)
    }

    /// An operator node over operands as deep as `depth`, refused past [`MAX_DEPTH`].
    fn node(&self, e: Expr, depth: usize) -> Result<Tree, CatError> {
        if depth >= MAX_DEPTH {
            return Err(self.too_deep());
        }
        Ok(Tree {
            e,
            depth: depth + 1,
        })
    }

    fn too_deep(&self) -> CatError {
        CatError::at(
            self.line(),
            &format!("an expression nested more than {MAX_DEPTH} deep"),
        )
    }

    /// Left-associative binary levels: `|`, `;`, `\`, `&`.
    fn binary(&mut self, level: usize) -> Result<Tree, CatError> {
        const OPS: [Tok; 4] = [Tok::Bar, Tok::Semi, Tok::Bslash, Tok::Amp];
        if level == OPS.len() {
            return self.unary();
        }
        let mut t = self.binary(level + 1)?;
        while self.eat(&OPS[level]) {
            let r = self.binary(level + 1)?;
            let depth = t.depth.max(r.depth);
            let (l, r) = (Box::new(t.e), Box::new(r.e));
            let e = match level {
                0 => Expr::Union(l, r),
                1 => Expr::Seq(l, r),
                2 => Expr::Diff(l, r),
                _ => Expr::Inter(l, r),
            };
            t = self.node(e, depth)?;
        }
        Ok(t)
    }

    /// A prefix `~` or a postfix expression. Every recursion of the parser passes here, so
    /// this is where its nesting is bounded.
    fn unary(&mut self) -> Result<Tree, CatError> {
        self.nesting += 1;
        let t = if self.nesting > MAX_DEPTH {
            Err(self.too_deep())
        } else if self.eat(&Tok::Not) {
            self.unary()
                .and_then(|t| self.node(Expr::Complement(Box::new(t.e)), t.depth))
        } else {
            self.postfix()
        };
        self.nesting -= 1;
        t
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

    fn postfix(&mut self) -> Result<Tree, CatError> {
        let mut t = self.primary()?;
        loop {
            let wrap: fn(Box<Expr>) -> Expr = match self.peek() {
                Some(Tok::Star) if self.starts_primary(1) => {
                    self.pos += 1;
                    // The right operand of a product is itself a postfix expression.
                    let r = if self.peek() == Some(&Tok::Not) {
                        self.unary()?
                    } else {
                        self.primary()?
                    };
                    let depth = t.depth.max(r.depth);
                    t = self.node(Expr::Cartesian(Box::new(t.e), Box::new(r.e)), depth)?;
                    continue;
                }
                Some(Tok::Star | Tok::HatStar) => Expr::Star,
                Some(Tok::Plus | Tok::HatPlus) => Expr::Plus,
                Some(Tok::Opt) => Expr::Opt,
                Some(Tok::Inv) => Expr::Inverse,
                _ => return Ok(t),
            };
            self.pos += 1;
            t = self.node(wrap(Box::new(t.e)), t.depth)?;
        }
    }

    fn primary(&mut self) -> Result<Tree, CatError> {
        match self.peek().cloned() {
            Some(Tok::LPar) => {
                self.pos += 1;
                let t = self.binary(0)?;
                self.expect(Tok::RPar, "`)`")?;
                Ok(t)
            }
            Some(Tok::LBrac) => {
                self.pos += 1;
                let t = self.binary(0)?;
                self.expect(Tok::RBrac, "`]`")?;
                self.node(Expr::Identity(Box::new(t.e)), t.depth)
            }
            Some(Tok::Name(n)) if !KEYWORDS.contains(&n.as_str()) => {
                self.pos += 1;
                if self.peek() != Some(&Tok::LPar) {
                    return Ok(Tree {
                        e: Expr::Name(n),
                        depth: 1,
                    });
                }
                self.pos += 1;
                let arg = self.binary(0)?;
                self.expect(Tok::RPar, "`)`")?;
                let call: fn(Box<Expr>) -> Expr = match n.as_str() {
                    "domain" => Expr::Domain,
                    "range" => Expr::Range,
                    "toid" => Expr::Identity,
                    _ => {
                        return Err(CatError::at(
                            self.line(),
                            &format!("`{n}(...)`: function calls are not supported"),
                        ))
                    }
                };
                self.node(call(Box::new(arg.e)), arg.depth)
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
    fn text_nested_too_deep_is_refused_with_its_line_not_a_stack_overflow() {
        let k = 100_000;
        let deep = [
            format!("{}po{}", "(".repeat(k), ")".repeat(k)),
            format!("{}po{}", "[".repeat(k), "]".repeat(k)),
            format!("po{}", "|po".repeat(k)),
            format!("{}po", "~".repeat(k)),
            format!("po{}", "+".repeat(k)),
            format!("M{}", " * M".repeat(k)),
            format!("{}po{}", "domain(".repeat(k), ")".repeat(k)),
        ];
        for body in deep {
            let e = parse(&format!("M\n\nlet a = {body}\n")).unwrap_err();
            assert_eq!(e.line, 3, "{}", e.message);
            assert!(e.message.contains("200 deep"), "{}", e.message);
        }
        // At the bound a chain is read and evaluated (on the test thread's small stack).
        let edge = |n: usize| format!("M\nlet a = po{}\nacyclic a as x\n", "|po".repeat(n));
        assert!(crate::cat::load(&edge(MAX_DEPTH - 1)).is_ok());
        assert!(parse(&edge(MAX_DEPTH)).is_err());
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
