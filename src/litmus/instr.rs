//! Parses one instruction of a cell: the mnemonic with its dot-separated qualifiers, then the
//! operands. Qualifiers are read in PTX order (`atom.sem.scope.space.op.type`); spelling variants
//! collapse into one `Instr` and type suffixes are dropped.

use super::ast::*;
use super::error::{ParseError, Pos};
use super::lexer::Tok;
use super::parser::{Access, Parser, SpaceQual};

const SCOPE: &str = "a scope (`.cta`, `.cluster`, `.gpu`, `.sys`)";
const SPACE: &str = "a state space (`.global`, `.shared`, `.shared::cta`, `.shared::cluster`)";
const TYPE: &str = "a type (`.u32`, `.s32`, `.b32`, `.u64`, `.s64`, `.b64`)";
const ATOM_OP: &str = "an operation (`.add`, `.sub`, `.exch`, `.cas`, `.inc`, `.dec`, `.and`, `.or`, `.xor`, `.min`, `.max`)";
const INSTRUCTIONS: &str = "an instruction (`ld`, `st`, `tld`, `suld`, `sust`, `cold`, `atom`, `red`, `fence`, `membar`, `bar`, `barrier`, `mov`, `add`, `sub`, `mul`, `and`, `or`, `xor`, `beq`, `bne`, `blt`, `ble`, `bgt`, `bge`, `goto`, `bra`) or a label `L:`";

/// The qualifiers of a mnemonic, consumed left to right.
struct Quals {
    mnemonic: String,
    words: Vec<(String, Pos)>,
    next: usize,
    end: Pos,
    /// What could have come at the current point, for the error message.
    missed: Vec<&'static str>,
}

impl Quals {
    fn new(mnemonic: &str, pos: Pos) -> (String, Quals) {
        let mut parts = mnemonic.split('.');
        let base = parts.next().unwrap_or_default().to_string();
        let mut words = Vec::new();
        let mut column = pos.column + base.chars().count();
        for w in parts {
            words.push((
                w.to_string(),
                Pos {
                    line: pos.line,
                    column,
                },
            ));
            column += 1 + w.chars().count();
        }
        let quals = Quals {
            mnemonic: mnemonic.to_string(),
            words,
            next: 0,
            end: Pos {
                line: pos.line,
                column,
            },
            missed: Vec::new(),
        };
        (base, quals)
    }

    fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Consumes the next qualifier when `f` accepts it.
    fn take<T>(&mut self, what: &'static str, f: impl Fn(&str) -> Option<T>) -> Option<T> {
        if let Some(v) = self.words.get(self.next).and_then(|(w, _)| f(w)) {
            self.next += 1;
            self.missed.clear();
            Some(v)
        } else {
            self.missed.push(what);
            None
        }
    }

    /// Consumes `word` if it is next.
    fn take_word(&mut self, what: &'static str, word: &str) -> bool {
        self.take(what, |w| (w == word).then_some(())).is_some()
    }

    /// Consumes a qualifier that must be there.
    fn require<T>(
        &mut self,
        p: &Parser<'_>,
        what: &'static str,
        f: impl Fn(&str) -> Option<T>,
    ) -> Result<T, ParseError> {
        match self.take(what, f) {
            Some(v) => Ok(v),
            None => Err(self.error(p)),
        }
    }

    /// Drops an optional type suffix.
    fn skip_type(&mut self) {
        self.take(TYPE, |w| {
            matches!(w, "u32" | "s32" | "b32" | "u64" | "s64" | "b64").then_some(())
        });
    }

    fn error(&self, p: &Parser<'_>) -> ParseError {
        let expected = join_alternatives(&self.missed);
        match self.words.get(self.next) {
            Some((w, pos)) => ParseError::syntax(
                p.path,
                *pos,
                format!("`.{w}` in `{}`", self.mnemonic),
                expected,
            ),
            None => ParseError::syntax(
                p.path,
                self.end,
                format!("the end of `{}`", self.mnemonic),
                expected,
            ),
        }
    }

    /// Fails if qualifiers are left over.
    fn finish(&mut self, p: &Parser<'_>) -> Result<(), ParseError> {
        if self.next < self.words.len() {
            if self.missed.is_empty() {
                self.missed.push("no further qualifier");
            }
            return Err(self.error(p));
        }
        Ok(())
    }
}

fn join_alternatives(items: &[&str]) -> String {
    match items {
        [] => "nothing".to_string(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn scope(w: &str) -> Option<Scope> {
    Scope::ALL.into_iter().find(|s| s.as_str() == w)
}

fn space(w: &str) -> Option<SpaceQual> {
    match w {
        "global" => Some(SpaceQual::Global),
        "shared" | "shared::cta" => Some(SpaceQual::SharedCta),
        "shared::cluster" => Some(SpaceQual::SharedCluster),
        _ => None,
    }
}

fn sem_in<S: Copy + Into<Sem>>(allowed: &'static [S]) -> impl Fn(&str) -> Option<S> {
    move |w| allowed.iter().copied().find(|s| (*s).into().as_str() == w)
}

fn atom_op(w: &str) -> Option<AtomOp> {
    use AtomOp::*;
    [Add, Sub, Exch, Cas, Inc, Dec, And, Or, Xor, Min, Max]
        .into_iter()
        .find(|o| o.as_str() == w)
}

impl Parser<'_> {
    /// Parses the instruction at the cursor for thread `thread`.
    pub(crate) fn instr(&mut self, thread: usize) -> Result<Instr, ParseError> {
        let (mnemonic, pos) = self.ident(INSTRUCTIONS)?;
        let (base, mut q) = Quals::new(&mnemonic, pos);
        let instr = match base.as_str() {
            "ld" | "tld" | "suld" | "cold" => self.load(&base, &mut q, thread)?,
            "st" | "sust" => self.store(&base, &mut q, thread)?,
            "atom" | "red" => self.rmw(&base, &mut q, thread)?,
            "fence" => Instr::Fence(fence(self, &mut q)?),
            "membar" => {
                let what = "a level (`.cta`, `.gl`, `.sys`)";
                let level = q.require(self, what, MembarLevel::spelled)?;
                q.finish(self)?;
                Instr::Fence(Fence::Membar(level))
            }
            "bar" | "barrier" => Instr::Barrier(self.barrier(&mut q)?),
            "mov" => self.mov(&mut q)?,
            "add" | "sub" | "mul" | "and" | "or" | "xor" => self.alu(&base, &mut q)?,
            b if CmpOp::ALL.iter().any(|o| o.branch() == b) => self.branch(b, &mut q, thread)?,
            "goto" | "bra" => self.goto(&base, &mut q, thread)?,
            _ => {
                return Err(ParseError::syntax(
                    self.path,
                    pos,
                    format!("`{mnemonic}`"),
                    INSTRUCTIONS,
                ))
            }
        };
        Ok(instr)
    }

    /// `mov{.type} dst, src`.
    fn mov(&mut self, q: &mut Quals) -> Result<Instr, ParseError> {
        q.skip_type();
        q.finish(self)?;
        let dst = self.reg()?;
        self.comma()?;
        let src = self.operand()?;
        Ok(Instr::Mov { dst, src })
    }

    /// `add`, `sub`, `mul{.lo}`, `and`, `or`, `xor` with a type: `dst, a, b`.
    fn alu(&mut self, base: &str, q: &mut Quals) -> Result<Instr, ParseError> {
        let op = AluOp::spelled(base).expect("an ALU mnemonic of the caller's arm");
        if op == AluOp::Mul {
            q.take_word("`.lo`", "lo");
        }
        q.skip_type();
        q.finish(self)?;
        let dst = self.reg()?;
        self.comma()?;
        let a = self.operand()?;
        self.comma()?;
        let b = self.operand()?;
        Ok(Instr::Alu { op, dst, a, b })
    }

    /// A conditional branch (`beq`, `bne`, ...): `a, b, label`.
    fn branch(&mut self, base: &str, q: &mut Quals, thread: usize) -> Result<Instr, ParseError> {
        let op = CmpOp::ALL
            .into_iter()
            .find(|o| o.branch() == base)
            .expect("a branch mnemonic of the caller's arm");
        q.finish(self)?;
        let a = self.operand()?;
        self.comma()?;
        let b = self.operand()?;
        self.comma()?;
        let target = self.label(thread)?;
        Ok(Instr::Branch {
            cond: Some(BranchCond { op, a, b }),
            target,
        })
    }

    /// An unconditional branch: `goto label` or `bra{.uni} label`.
    fn goto(&mut self, base: &str, q: &mut Quals, thread: usize) -> Result<Instr, ParseError> {
        if base == "bra" {
            q.take_word("`.uni`", "uni");
        }
        q.finish(self)?;
        Ok(Instr::Branch {
            cond: None,
            target: self.label(thread)?,
        })
    }

    fn load(&mut self, base: &str, q: &mut Quals, thread: usize) -> Result<Instr, ParseError> {
        let proxy = Proxy::of_mnemonic(base).unwrap_or(Proxy::Generic);
        let bare = q.is_empty();
        let (sem, scope) = if proxy == Proxy::Generic {
            let sem = q.take(
                "load semantics (`.weak`, `.relaxed`, `.acquire`, `.volatile`)",
                sem_in(LoadSem::ALL),
            );
            let scope = match sem {
                Some(LoadSem::Relaxed | LoadSem::Acquire) => q.take(SCOPE, scope),
                _ => None,
            };
            (sem.unwrap_or(LoadSem::Weak), scope)
        } else {
            q.take("`.weak`", sem_in(&[LoadSem::Weak]));
            (LoadSem::Weak, None)
        };
        let space = q.take(SPACE, space);
        q.skip_type();
        q.finish(self)?;
        let dst = self.reg()?;
        self.comma()?;
        // Dat3M reads `ld r, 1` as a register move.
        if bare && matches!(self.peek().tok, Tok::Int(_) | Tok::Punct("-")) {
            let src = Operand::Imm(self.value("an integer")?);
            return Ok(Instr::Mov { dst, src });
        }
        let addr = self.addr(thread, space)?;
        Ok(Instr::Load {
            sem,
            scope,
            proxy,
            dst,
            addr,
        })
    }

    fn store(&mut self, base: &str, q: &mut Quals, thread: usize) -> Result<Instr, ParseError> {
        let proxy = Proxy::of_mnemonic(base).unwrap_or(Proxy::Generic);
        let (sem, scope) = if proxy == Proxy::Generic {
            let sem = q.take(
                "store semantics (`.weak`, `.relaxed`, `.release`, `.volatile`)",
                sem_in(StoreSem::ALL),
            );
            let scope = match sem {
                Some(StoreSem::Relaxed | StoreSem::Release) => q.take(SCOPE, scope),
                _ => None,
            };
            (sem.unwrap_or(StoreSem::Weak), scope)
        } else {
            q.take("`.weak`", sem_in(&[StoreSem::Weak]));
            (StoreSem::Weak, None)
        };
        let space = q.take(SPACE, space);
        q.skip_type();
        q.finish(self)?;
        let addr = self.addr(thread, space)?;
        self.comma()?;
        let src = self.operand()?;
        Ok(Instr::Store {
            sem,
            scope,
            proxy,
            addr,
            src,
        })
    }

    fn rmw(&mut self, base: &str, q: &mut Quals, thread: usize) -> Result<Instr, ParseError> {
        let sem = q
            .take(
                "semantics (`.relaxed`, `.acquire`, `.release`, `.acq_rel`)",
                sem_in(RmwSem::ALL),
            )
            .unwrap_or(RmwSem::Relaxed);
        let scope = q.take(SCOPE, scope);
        let space = q.take(SPACE, space);
        let op = q.require(self, ATOM_OP, atom_op)?;
        q.skip_type();
        q.finish(self)?;
        if base == "red" {
            let addr = self.addr(thread, space)?;
            self.comma()?;
            let src = self.operand()?;
            return Ok(Instr::Red {
                sem,
                scope,
                op,
                addr,
                src,
            });
        }
        let dst = self.reg()?;
        self.comma()?;
        let addr = self.addr(thread, space)?;
        self.comma()?;
        let src = self.operand()?;
        let src2 = if op == AtomOp::Cas {
            self.comma()?;
            Some(self.operand()?)
        } else {
            None
        };
        Ok(Instr::Atom {
            sem,
            scope,
            op,
            dst,
            addr,
            src,
            src2,
        })
    }

    /// `bar`/`barrier` with `[.cta].{sync,arrive,red.op}` or `.cluster.{arrive,wait}`.
    fn barrier(&mut self, q: &mut Quals) -> Result<Barrier, ParseError> {
        if q.take_word("`.cluster`", "cluster") {
            return self.cluster_barrier(q);
        }
        q.take_word("`.cta`", "cta");
        let kind = q.require(self, "`.sync`, `.arrive` or `.red`", |w| match w {
            "sync" | "arrive" | "red" => Some(w.to_string()),
            _ => None,
        })?;
        let red_op = if kind == "red" {
            Some(q.require(
                self,
                "a reduction (`.popc`, `.and`, `.or`)",
                BarRedOp::spelled,
            )?)
        } else {
            None
        };
        q.take_word("`.aligned`", "aligned");
        q.take("a type (`.u32`, `.pred`)", |w| {
            matches!(w, "u32" | "pred").then_some(())
        });
        q.finish(self)?;
        let dst = match red_op {
            Some(_) => {
                let d = self.reg()?;
                self.comma()?;
                Some(d)
            }
            None => None,
        };
        self.cta_barrier_operands(q, &kind, red_op.zip(dst))
    }

    /// `barrier.cluster.arrive[.release|.relaxed]` or `barrier.cluster.wait[.acquire]`, past
    /// `.cluster`.
    fn cluster_barrier(&mut self, q: &mut Quals) -> Result<Barrier, ParseError> {
        let arrive = q.require(self, "`.arrive` or `.wait`", |w| match w {
            "arrive" => Some(true),
            "wait" => Some(false),
            _ => None,
        })?;
        let barrier = if arrive {
            let relaxed = q
                .take("`.release` or `.relaxed`", |w| {
                    [false, true]
                        .into_iter()
                        .find(|&r| cluster_arrive_sem(r) == w)
                })
                .unwrap_or(false);
            Barrier::ClusterArrive { relaxed }
        } else {
            q.take_word("`.acquire`", "acquire");
            Barrier::ClusterWait
        };
        q.take_word("`.aligned`", "aligned");
        q.finish(self)?;
        Ok(barrier)
    }

    /// A CTA barrier's operands after its qualifiers (and, for `bar.red`, its destination):
    /// the barrier id, then Dat3M's instance count and quorum, or `bar.red`'s predicate.
    fn cta_barrier_operands(
        &mut self,
        q: &Quals,
        kind: &str,
        red: Option<(BarRedOp, Reg)>,
    ) -> Result<Barrier, ParseError> {
        let id = self.operand()?;
        let mut rest = Vec::new();
        let mut starts = Vec::new();
        while self.eat(",") {
            starts.push(self.peek().pos);
            rest.push(self.operand()?);
        }
        // An error points at the first operand past those allowed.
        let too_many = |p: &Parser<'_>, at: usize| {
            ParseError::semantic(
                p.path,
                starts.get(at).copied().unwrap_or(p.peek().pos),
                format!(
                    "`{}` takes at most {at} operands after the barrier id",
                    q.mnemonic
                ),
            )
        };
        let op = match red {
            Some((op, dst)) => {
                let Some(pred) = rest.pop() else {
                    return Err(self.unexpected("`,` and the predicate operand of `bar.red`"));
                };
                if rest.len() > 1 {
                    return Err(too_many(self, 2));
                }
                BarOp::Red { op, dst, pred }
            }
            None if kind == "sync" => BarOp::Sync,
            None => BarOp::Arrive,
        };
        // Dat3M's form: instance, then resource, then quorum (`bar.cta.sync 1, 1, 3`).
        if rest.len() > 2 {
            return Err(too_many(self, 2));
        }
        let mut rest = rest.into_iter();
        Ok(Barrier::Cta {
            op,
            id,
            count: rest.next(),
            quorum: rest.next(),
        })
    }

    fn reg(&mut self) -> Result<Reg, ParseError> {
        Ok(Reg(self.ident("a register")?.0))
    }

    fn comma(&mut self) -> Result<(), ParseError> {
        self.expect(",", "`,` and the next operand").map(|_| ())
    }

    fn operand(&mut self) -> Result<Operand, ParseError> {
        match &self.peek().tok {
            Tok::Ident(_) => Ok(Operand::Reg(self.reg()?)),
            Tok::Int(_) | Tok::Punct("-") => Ok(Operand::Imm(self.value("an integer")?)),
            _ => Err(self.unexpected("a register or an integer")),
        }
    }

    fn label(&mut self, thread: usize) -> Result<Label, ParseError> {
        let (l, pos) = self.ident("a label")?;
        self.spans.branches[thread].push((l.clone(), pos));
        Ok(Label(l))
    }

    /// `x`, `x+r1`, `[x]` or `[x+r1]`.
    fn addr(&mut self, thread: usize, space: Option<SpaceQual>) -> Result<Addr, ParseError> {
        let bracket = self.eat("[");
        let (loc, pos) = self.ident("a location")?;
        let offset = if self.eat("+") {
            Some(self.reg()?)
        } else {
            None
        };
        if bracket {
            self.expect("]", "`]` closing the address")?;
        }
        self.spans.accesses.push(Access {
            thread,
            loc: loc.clone(),
            pos,
            space,
        });
        Ok(Addr { loc, offset })
    }
}

/// `fence.{sc,acq_rel,acquire,release}.scope`, `fence.scope`, `fence.proxy.kind`.
fn fence(p: &Parser<'_>, q: &mut Quals) -> Result<Fence, ParseError> {
    if q.take_word("`.proxy`", "proxy") {
        let kind = q.require(
            p,
            "a proxy kind (`.alias`, `.texture`, `.surface`, `.constant`)",
            |w| ProxyFenceKind::ALL.into_iter().find(|k| k.as_str() == w),
        )?;
        q.finish(p)?;
        return Ok(Fence::Proxy(kind));
    }
    let sem = q
        .take(
            "fence semantics (`.sc`, `.acq_rel`, `.acquire`, `.release`)",
            FenceSem::spelled,
        )
        .unwrap_or(FenceSem::AcqRel);
    let scope = q.require(p, SCOPE, scope)?;
    q.finish(p)?;
    Ok(Fence::Memory { sem, scope })
}
