//! Recursive-descent parser for the document structure of a test: header, initial state, thread
//! headers, instruction rows, `locations` clause and condition. Instructions are in `instr.rs`,
//! semantic checks in `validate.rs`.

use super::ast::*;
use super::error::{ParseError, Pos};
use super::lexer::{lex, Tok, Token};
use std::path::Path;

/// A state-space qualifier written on an access (`.global`, `.shared::cta`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SpaceQual {
    /// `.global`.
    Global,
    /// `.shared` or `.shared::cta`.
    SharedCta,
    /// `.shared::cluster`.
    SharedCluster,
}

/// A memory access as written, for the checks that need the whole test first.
#[derive(Clone, Debug)]
pub(crate) struct Access {
    /// Thread index.
    pub thread: usize,
    /// Location name.
    pub loc: String,
    /// Where the location name is.
    pub pos: Pos,
    /// The state-space qualifier on the instruction, if any.
    pub space: Option<SpaceQual>,
}

/// Source positions the AST does not keep, for semantic errors.
#[derive(Debug, Default)]
pub(crate) struct Spans {
    /// Every memory access.
    pub accesses: Vec<Access>,
    /// Per thread: labels defined.
    pub labels: Vec<Vec<(String, Pos)>>,
    /// Per thread: branch targets.
    pub branches: Vec<Vec<(String, Pos)>>,
    /// Thread indices named outside headers (initial state, shared owners, condition).
    pub thread_refs: Vec<(usize, Pos)>,
    /// Declared locations with the position of the name.
    pub decls: Vec<(String, Pos)>,
    /// Alias declarations: alias name and position of its target.
    pub alias_targets: Vec<(String, Pos)>,
    /// Per thread: the position of its header cell.
    pub headers: Vec<Pos>,
}

/// The parser state: tokens, cursor, and positions collected along the way.
pub(crate) struct Parser<'a> {
    /// The file, for errors.
    pub path: &'a Path,
    toks: Vec<Token>,
    i: usize,
    /// Parentheses and negations open around the current token of a condition.
    nesting: usize,
    /// Positions collected so far.
    pub spans: Spans,
}

/// The deepest condition accepted: far beyond any real test (a `forall` listing every outcome
/// of a large test is a few hundred deep), and shallow enough for every stage that walks it
/// recursively to stay within a thread's stack.
const MAX_PROP_DEPTH: usize = 1000;

/// Parses a whole test; `Spans` carry positions for `validate`.
pub(crate) fn parse_document(src: &str, path: &Path) -> Result<(Test, Spans), ParseError> {
    let toks = lex(src)
        .map_err(|(pos, found, expected)| ParseError::syntax(path, pos, found, expected))?;
    let mut p = Parser {
        path,
        toks,
        i: 0,
        nesting: 0,
        spans: Spans::default(),
    };
    let test = p.test()?;
    Ok((test, p.spans))
}

impl<'a> Parser<'a> {
    /// The next token.
    pub fn peek(&self) -> &Token {
        &self.toks[self.i]
    }

    /// The token `k` places ahead (the end of file past the end).
    pub fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].tok
    }

    /// Consumes the next token; the end of file is never consumed.
    pub fn bump(&mut self) -> Token {
        let t = self.toks[self.i].clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }

    /// Whether the next token is punctuation `p`.
    pub fn is_punct(&self, p: &str) -> bool {
        matches!(&self.peek().tok, Tok::Punct(q) if *q == p)
    }

    /// Consumes punctuation `p` if it is next.
    pub fn eat(&mut self, p: &str) -> bool {
        let hit = self.is_punct(p);
        if hit {
            self.bump();
        }
        hit
    }

    /// An error at the next token: it was found where `expected` was.
    pub fn unexpected(&self, expected: impl Into<String>) -> ParseError {
        let t = self.peek();
        ParseError::syntax(self.path, t.pos, t.tok.describe(), expected)
    }

    /// Consumes punctuation `p`, or fails saying `expected`.
    pub fn expect(&mut self, p: &str, expected: &str) -> Result<Pos, ParseError> {
        if self.is_punct(p) {
            Ok(self.bump().pos)
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// Consumes a word, or fails saying `expected`.
    pub fn ident(&mut self, expected: &str) -> Result<(String, Pos), ParseError> {
        match &self.peek().tok {
            Tok::Ident(s) => {
                let s = s.clone();
                Ok((s, self.bump().pos))
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    /// An integer with an optional minus sign.
    pub fn value(&mut self, expected: &str) -> Result<Value, ParseError> {
        let neg = self.is_punct("-");
        let k = usize::from(neg);
        match self.peek_at(k) {
            Tok::Int(v) => {
                let v = if neg { -*v } else { *v };
                if !(i64::from(i32::MIN)..=i64::from(u32::MAX)).contains(&v) {
                    // The kernels compute in 32 bits: a wider constant would be allowed by the
                    // model yet never observable on the GPU.
                    let at = self.toks[self.i + k].pos;
                    return Err(ParseError::syntax(
                        self.path,
                        at,
                        format!("`{v}`"),
                        "a 32-bit value (-2147483648 to 4294967295)",
                    ));
                }
                self.bump();
                if neg {
                    self.bump();
                }
                Ok(v)
            }
            _ => {
                if neg {
                    self.bump();
                }
                Err(self.unexpected(expected))
            }
        }
    }

    fn test(&mut self) -> Result<Test, ParseError> {
        let (arch, pos) = self.ident("`PTX` (the architecture word that starts a test)")?;
        if arch != "PTX" {
            return Err(ParseError::syntax(
                self.path,
                pos,
                format!("`{arch}`"),
                "`PTX` (the architecture word that starts a test)",
            ));
        }
        let name = match &self.peek().tok {
            Tok::Name(n) => n.clone(),
            _ => return Err(self.unexpected("the test name")),
        };
        self.bump();
        let mut doc = Vec::new();
        while let Tok::Str(s) = &self.peek().tok {
            doc.push(s.clone());
            self.bump();
        }
        self.expect("{", "`{` opening the initial state")?;
        let (mut locations, reg_init) = self.init()?;
        let places = self.headers()?;
        let mut bodies: Vec<Vec<Instr>> = vec![Vec::new(); places.len()];
        self.spans.labels = vec![Vec::new(); places.len()];
        self.spans.branches = vec![Vec::new(); places.len()];
        while !self.at_condition() {
            self.row(&mut bodies)?;
        }
        let extra_observed = self.locations_clause()?;
        let condition = self.condition()?;
        if self.peek().tok != Tok::Eof {
            return Err(self.unexpected("end of file after the condition"));
        }
        let threads: Vec<Thread> = places
            .into_iter()
            .zip(bodies)
            .enumerate()
            .map(|(id, (place, body))| Thread { id, place, body })
            .collect();
        add_implicit_locations(&mut locations, &threads, &extra_observed, &condition);
        Ok(Test {
            name,
            doc,
            locations,
            reg_init,
            threads,
            extra_observed,
            condition,
        })
    }

    /// The entries of `{ ... }` after the opening brace, through the closing one.
    fn init(&mut self) -> Result<(Vec<Location>, Vec<RegInit>), ParseError> {
        let mut locations: Vec<Location> = Vec::new();
        let mut regs: Vec<(RegInit, Pos)> = Vec::new();
        loop {
            if self.eat("}") {
                return Ok((locations, regs.into_iter().map(|(r, _)| r).collect()));
            }
            if self.eat(";") {
                continue;
            }
            if let Some((thread, tpos)) = self.thread_prefix()? {
                let r = self.reg_init(thread, tpos, &regs)?;
                regs.push((r, tpos));
            } else {
                locations.push(self.location_init()?);
            }
            if !self.is_punct("}") {
                self.expect(";", "`;` after the declaration, or `}`")?;
            }
        }
    }

    /// The rest of `P<thread>:reg = value` (the prefix read, at `tpos`), refused when `earlier`
    /// already initialises the register.
    fn reg_init(
        &mut self,
        thread: usize,
        tpos: Pos,
        earlier: &[(RegInit, Pos)],
    ) -> Result<RegInit, ParseError> {
        let (reg, _) = self.ident("a register name")?;
        self.expect("=", "`=` and the register's initial value")?;
        let value = self.value("an integer initial value")?;
        let twice = earlier
            .iter()
            .find(|(r, _)| r.thread == thread && r.reg.0 == reg);
        if let Some((_, first)) = twice {
            return Err(ParseError::semantic(
                self.path,
                tpos,
                format!(
                    "P{thread}:{reg} is initialised twice (first at {}:{})",
                    first.line, first.column
                ),
            ));
        }
        self.spans.thread_refs.push((thread, tpos));
        Ok(RegInit {
            thread,
            reg: Reg(reg),
            value,
        })
    }

    /// A location's declaration (`x = 0`, `x @ shared(P0) = 0`, …), refused when the location
    /// was declared before.
    fn location_init(&mut self) -> Result<Location, ParseError> {
        const EXPECTED: &str = "a location (`x = 0`), a register (`P0:r0 = 0`) or `}`";
        let (name, pos) = match &self.peek().tok {
            Tok::Ident(_) => self.ident(EXPECTED)?,
            _ => return Err(self.unexpected(EXPECTED)),
        };
        if let Some((_, first)) = self.spans.decls.iter().find(|(n, _)| *n == name) {
            return Err(ParseError::semantic(
                self.path,
                pos,
                format!(
                    "location `{name}` is declared twice (first at {}:{})",
                    first.line, first.column
                ),
            ));
        }
        let kind = self.location_decl(&name)?;
        self.spans.decls.push((name.clone(), pos));
        Ok(Location { name, kind })
    }

    /// `P1:` or `1:` before a register; `None` (consuming nothing) when absent.
    pub fn thread_prefix(&mut self) -> Result<Option<(usize, Pos)>, ParseError> {
        if self.peek_at(1) != &Tok::Punct(":") {
            return Ok(None);
        }
        let t = self.peek().clone();
        let thread = match &t.tok {
            Tok::Int(n) => usize::try_from(*n).ok(),
            Tok::Ident(s) => s.strip_prefix('P').and_then(thread_number),
            _ => None,
        };
        match thread {
            Some(n) => {
                self.bump();
                self.bump();
                Ok(Some((n, t.pos)))
            }
            None if matches!(t.tok, Tok::Ident(_) | Tok::Int(_)) => Err(ParseError::syntax(
                self.path,
                t.pos,
                t.tok.describe(),
                "a thread such as `P0` before `:`",
            )),
            None => Ok(None),
        }
    }

    /// After a location's name: `= v`, `@ global = v`, `@ shared(P0) = v`, `@ proxy aliases y`.
    fn location_decl(&mut self, name: &str) -> Result<LocationKind, ParseError> {
        let mut space = Space::Global;
        if self.eat("@") {
            let (word, wpos) = self.ident(
                "`global`, `shared(P0)` or a proxy (`generic`, `texture`, `surface`, `constant`)",
            )?;
            let proxy = match word.as_str() {
                "global" => None,
                "shared" => {
                    self.expect("(", "`(` and the thread whose CTA owns the shared memory")?;
                    let t = self.peek().clone();
                    let owner = match &t.tok {
                        Tok::Ident(s) => s.strip_prefix('P').and_then(thread_number),
                        Tok::Int(n) => usize::try_from(*n).ok(),
                        _ => None,
                    };
                    let Some(owner) = owner else {
                        return Err(self.unexpected("a thread such as `P0`"));
                    };
                    self.bump();
                    self.spans.thread_refs.push((owner, t.pos));
                    self.expect(")", "`)`")?;
                    space = Space::Shared { owner };
                    None
                }
                w => Some(Proxy::spelled(w).ok_or_else(|| {
                    ParseError::syntax(
                        self.path,
                        wpos,
                        format!("`{word}`"),
                        "`global`, `shared(P0)` or a proxy (`generic`, `texture`, `surface`, `constant`)",
                    )
                })?),
            };
            if let Some(proxy) = proxy {
                let (kw, kpos) = self.ident("`aliases` and the location this name aliases")?;
                if kw != "aliases" {
                    return Err(ParseError::syntax(
                        self.path,
                        kpos,
                        format!("`{kw}`"),
                        "`aliases` and the location this name aliases",
                    ));
                }
                let (target, tpos) = self.ident("the name of the aliased location")?;
                self.spans.alias_targets.push((name.to_string(), tpos));
                return Ok(LocationKind::Alias { proxy, target });
            }
        }
        self.expect("=", "`=` and the location's initial value")?;
        let init = self.value("an integer initial value")?;
        Ok(LocationKind::Memory { init, space })
    }

    /// The thread header row: `P0@cta 0,gpu 0 | P1 ;`.
    fn headers(&mut self) -> Result<Vec<Placement>, ParseError> {
        let mut places = Vec::new();
        loop {
            let i = places.len();
            let expected = format!("the thread header `P{i}`");
            let (word, pos) = self.ident(&expected)?;
            if word.strip_prefix('P').and_then(thread_number) != Some(i) {
                return Err(ParseError::syntax(
                    self.path,
                    pos,
                    format!("`{word}`"),
                    format!("`P{i}` (threads are numbered P0, P1, ... in column order)"),
                ));
            }
            self.spans.headers.push(pos);
            places.push(self.placement(i)?);
            if self.eat(";") {
                return Ok(places);
            }
            self.expect(
                "|",
                "`|` and the next thread header, or `;` ending the header row",
            )?;
        }
    }

    /// `@cta 0,gpu 0` after a thread name (CTA `i`, GPU 0 when absent).
    fn placement(&mut self, i: usize) -> Result<Placement, ParseError> {
        let mut place = Placement {
            warp: None,
            cta: u32::try_from(i).unwrap_or(u32::MAX),
            cluster: None,
            gpu: 0,
        };
        if !self.eat("@") {
            return Ok(place);
        }
        let mut seen: Vec<String> = Vec::new();
        loop {
            const KEYS: &str = "`warp`, `cta`, `cluster` or `gpu`";
            let (key, kpos) = self.ident(KEYS)?;
            if !["warp", "cta", "cluster", "gpu"].contains(&key.as_str()) {
                return Err(ParseError::syntax(
                    self.path,
                    kpos,
                    format!("`{key}`"),
                    KEYS,
                ));
            }
            if seen.contains(&key) {
                return Err(ParseError::semantic(
                    self.path,
                    kpos,
                    format!("`{key}` is given twice in the header of P{i}"),
                ));
            }
            let t = self.peek().clone();
            let n = match t.tok {
                Tok::Int(n) => u32::try_from(n).ok(),
                _ => None,
            };
            let Some(n) = n else {
                return Err(self.unexpected(format!("the {key} number (0 to {})", u32::MAX)));
            };
            self.bump();
            match key.as_str() {
                "warp" => place.warp = Some(n),
                "cta" => place.cta = n,
                "cluster" => place.cluster = Some(n),
                _ => place.gpu = n,
            }
            seen.push(key);
            if !self.eat(",") {
                return Ok(place);
            }
        }
    }

    /// Whether the instruction rows are over.
    fn at_condition(&self) -> bool {
        match &self.peek().tok {
            Tok::Ident(w) => matches!(w.as_str(), "exists" | "forall" | "locations"),
            Tok::Punct("~") | Tok::Eof => true,
            _ => false,
        }
    }

    /// One instruction row: a cell per thread, separated by `|`, ended by `;`.
    fn row(&mut self, bodies: &mut [Vec<Instr>]) -> Result<(), ParseError> {
        let n = bodies.len();
        for (t, body) in bodies.iter_mut().enumerate() {
            self.cell(t, body)?;
            if t + 1 < n {
                if !self.eat("|") {
                    return Err(self.unexpected(format!(
                        "`|` and the cell of P{} (each row has one cell per thread)",
                        t + 1
                    )));
                }
            } else if !self.eat(";") {
                return Err(self.unexpected(format!(
                    "`;` ending the row (the test has {n} thread{})",
                    if n == 1 { "" } else { "s" }
                )));
            }
        }
        Ok(())
    }

    /// `[Label:]* [instruction]` up to the next `|` or `;`.
    fn cell(&mut self, thread: usize, body: &mut Vec<Instr>) -> Result<(), ParseError> {
        loop {
            if self.is_punct("|") || self.is_punct(";") {
                return Ok(());
            }
            if let (Tok::Ident(l), Tok::Punct(":")) = (&self.peek().tok, self.peek_at(1)) {
                let l = l.clone();
                let pos = self.bump().pos;
                self.bump();
                self.spans.labels[thread].push((l.clone(), pos));
                body.push(Instr::Label(Label(l)));
                continue;
            }
            if self.peek().tok == Tok::Eof {
                return Err(self.unexpected("an instruction, `|` or `;`"));
            }
            let instr = self.instr(thread)?;
            body.push(instr);
            if !(self.is_punct("|") || self.is_punct(";")) {
                return Err(
                    self.unexpected("`|` or `;` after the instruction (one instruction per cell)")
                );
            }
        }
    }

    /// `locations [x; P0:r1;]`, or nothing.
    fn locations_clause(&mut self) -> Result<Vec<Term>, ParseError> {
        let mut out = Vec::new();
        if self.peek().tok != Tok::Ident("locations".into()) {
            return Ok(out);
        }
        self.bump();
        self.expect(
            "[",
            "`[` opening the list of observed locations and registers",
        )?;
        loop {
            if self.eat("]") {
                return Ok(out);
            }
            if self.eat(";") {
                continue;
            }
            if let Some((thread, pos)) = self.thread_prefix()? {
                let (reg, _) = self.ident("a register name")?;
                self.spans.thread_refs.push((thread, pos));
                out.push(Term::Reg {
                    thread,
                    reg: Reg(reg),
                });
            } else {
                let (loc, _) = self.ident("a location, a register (`P0:r0`) or `]`")?;
                out.push(Term::Loc(loc));
            }
        }
    }

    fn condition(&mut self) -> Result<Condition, ParseError> {
        const EXPECTED: &str = "the condition (`exists`, `~exists` or `forall`)";
        let quantifier = if self.eat("~") {
            match &self.peek().tok {
                Tok::Ident(w) if w == "exists" => Quantifier::NotExists,
                _ => return Err(self.unexpected("`exists` after `~`")),
            }
        } else {
            match &self.peek().tok {
                Tok::Ident(w) if w == "exists" => Quantifier::Exists,
                Tok::Ident(w) if w == "forall" => Quantifier::Forall,
                _ => return Err(self.unexpected(EXPECTED)),
            }
        };
        self.bump();
        let (prop, _) = self.prop_or()?;
        Ok(Condition { quantifier, prop })
    }

    // Each proposition parser returns the depth of the tree it built, so that a condition
    // nested (or chained) deeper than `MAX_PROP_DEPTH` is refused here rather than overflowing
    // the stack of every later stage that walks it.
    fn prop_or(&mut self) -> Result<(Prop, usize), ParseError> {
        let (mut p, mut d) = self.prop_and()?;
        while self.eat("\\/") {
            let (q, e) = self.prop_and()?;
            d = self.deeper(d.max(e))?;
            p = Prop::Or(Box::new(p), Box::new(q));
        }
        Ok((p, d))
    }

    fn prop_and(&mut self) -> Result<(Prop, usize), ParseError> {
        let (mut p, mut d) = self.prop_unary()?;
        while self.eat("/\\") {
            let (q, e) = self.prop_unary()?;
            d = self.deeper(d.max(e))?;
            p = Prop::And(Box::new(p), Box::new(q));
        }
        Ok((p, d))
    }

    fn deeper(&self, depth: usize) -> Result<usize, ParseError> {
        if depth >= MAX_PROP_DEPTH {
            return Err(
                self.unexpected(format!("a condition nested at most {MAX_PROP_DEPTH} deep"))
            );
        }
        Ok(depth + 1)
    }

    fn prop_unary(&mut self) -> Result<(Prop, usize), ParseError> {
        if self.eat("~") {
            self.deeper(self.nesting)?;
            self.nesting += 1;
            let (p, d) = self.prop_unary()?;
            self.nesting -= 1;
            return Ok((Prop::Not(Box::new(p)), self.deeper(d)?));
        }
        if self.eat("(") {
            self.deeper(self.nesting)?;
            self.nesting += 1;
            let p = self.prop_or()?;
            self.nesting -= 1;
            self.expect(")", "`)`, `/\\` or `\\/`")?;
            return Ok(p);
        }
        match &self.peek().tok {
            Tok::Ident(w) if w == "true" => {
                self.bump();
                return Ok((Prop::True, 1));
            }
            Tok::Ident(w) if w == "false" => {
                self.bump();
                return Ok((Prop::False, 1));
            }
            _ => {}
        }
        let lhs = self.term()?;
        let op = match &self.peek().tok {
            // herd also writes equality as `=`.
            Tok::Punct("=") => CmpOp::Eq,
            Tok::Punct(p) if CmpOp::ALL.iter().any(|o| o.symbol() == *p) => CmpOp::ALL
                .into_iter()
                .find(|o| o.symbol() == *p)
                .expect("a comparison"),
            _ => return Err(self.unexpected("a comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`)")),
        };
        self.bump();
        let rhs = self.term()?;
        Ok((Prop::Cmp { lhs, op, rhs }, 1))
    }

    fn term(&mut self) -> Result<Term, ParseError> {
        const EXPECTED: &str =
            "a register (`P0:r0`), a location, an integer, `true`, `false`, `~` or `(`";
        if let Some((thread, pos)) = self.thread_prefix()? {
            let (reg, _) = self.ident("a register name")?;
            self.spans.thread_refs.push((thread, pos));
            return Ok(Term::Reg {
                thread,
                reg: Reg(reg),
            });
        }
        match &self.peek().tok {
            Tok::Ident(_) => Ok(Term::Loc(self.ident(EXPECTED)?.0)),
            Tok::Int(_) | Tok::Punct("-") => Ok(Term::Const(self.value(EXPECTED)?)),
            _ => Err(self.unexpected(EXPECTED)),
        }
    }
}

/// `"12"` as a thread number; no sign, no leading `+`.
fn thread_number(digits: &str) -> Option<usize> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Appends every location used but not declared, as global memory holding 0 (herd's rule), in
/// order of first use: threads in order, then the `locations` clause, then the condition.
fn add_implicit_locations(
    locations: &mut Vec<Location>,
    threads: &[Thread],
    extra: &[Term],
    cond: &Condition,
) {
    fn prop_locs<'p>(p: &'p Prop, out: &mut Vec<&'p str>) {
        match p {
            Prop::True | Prop::False => {}
            Prop::Cmp { lhs, rhs, .. } => {
                for t in [lhs, rhs] {
                    if let Term::Loc(l) = t {
                        out.push(l);
                    }
                }
            }
            Prop::Not(p) => prop_locs(p, out),
            Prop::And(a, b) | Prop::Or(a, b) => {
                prop_locs(a, out);
                prop_locs(b, out);
            }
        }
    }
    let mut used: Vec<&str> = threads
        .iter()
        .flat_map(|t| {
            t.body
                .iter()
                .filter_map(|i| addr_of(i).map(|a| a.loc.as_str()))
        })
        .collect();
    used.extend(extra.iter().filter_map(|t| match t {
        Term::Loc(l) => Some(l.as_str()),
        _ => None,
    }));
    prop_locs(&cond.prop, &mut used);
    for name in used {
        if !locations.iter().any(|l| l.name == name) {
            locations.push(Location {
                name: name.to_string(),
                kind: LocationKind::Memory {
                    init: 0,
                    space: Space::Global,
                },
            });
        }
    }
}

/// The address an instruction accesses, if it accesses memory.
pub(crate) fn addr_of(instr: &Instr) -> Option<&Addr> {
    match instr {
        Instr::Load { addr, .. }
        | Instr::Store { addr, .. }
        | Instr::Atom { addr, .. }
        | Instr::Red { addr, .. } => Some(addr),
        _ => None,
    }
}
