//! The canonical printer: the inverse of the parser on `Test`. Every instruction is printed in
//! its fullest spelling (`atom.relaxed.add`, `bar.cta.sync 0`), threads in aligned columns.

use super::ast::*;
use std::fmt::Write;

/// The canonical text of a test; `parse(print(t)) == t` for every parsed test.
pub fn print(test: &Test) -> String {
    let mut out = format!("PTX {}\n", test.name);
    for d in &test.doc {
        let _ = writeln!(out, "\"{d}\"");
    }
    out.push_str(&body(test));
    out
}

/// Everything after the name and doc strings: initial state, threads and condition.
pub(crate) fn body(test: &Test) -> String {
    let mut out = String::from("{\n");
    for l in &test.locations {
        let _ = match &l.kind {
            LocationKind::Memory {
                init,
                space: Space::Global,
            } => writeln!(out, "{} = {init};", l.name),
            LocationKind::Memory {
                init,
                space: Space::Shared { owner },
            } => writeln!(out, "{} @ shared(P{owner}) = {init};", l.name),
            LocationKind::Alias { proxy, target } => {
                writeln!(out, "{} @ {} aliases {target};", l.name, proxy.as_str())
            }
        };
    }
    for r in &test.reg_init {
        let _ = writeln!(out, "P{}:{} = {};", r.thread, r.reg, r.value);
    }
    out.push_str("}\n");
    out.push_str(&table(&test.threads));
    if !test.extra_observed.is_empty() {
        out.push_str("locations [");
        for t in &test.extra_observed {
            let _ = write!(out, "{}; ", term(t));
        }
        out.pop();
        out.push_str("]\n");
    }
    let q = match test.condition.quantifier {
        Quantifier::Exists => "exists",
        Quantifier::NotExists => "~exists",
        Quantifier::Forall => "forall",
    };
    let _ = writeln!(out, "{q} ({})", prop(&test.condition.prop, 0));
    out
}

/// The thread header, innermost level first: `P0@warp 0,cta 0,cluster 0,gpu 0`.
pub(crate) fn header(t: &Thread) -> String {
    let mut s = format!("P{}@", t.id);
    if let Some(w) = t.place.warp {
        let _ = write!(s, "warp {w},");
    }
    let _ = write!(s, "cta {},", t.place.cta);
    if let Some(c) = t.place.cluster {
        let _ = write!(s, "cluster {c},");
    }
    let _ = write!(s, "gpu {}", t.place.gpu);
    s
}

fn table(threads: &[Thread]) -> String {
    let rows = threads.iter().map(|t| t.body.len()).max().unwrap_or(0);
    let columns: Vec<Vec<String>> = threads
        .iter()
        .map(|t| {
            let mut col = vec![header(t)];
            col.extend(t.body.iter().map(instr));
            col.resize(rows + 1, String::new());
            col
        })
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .map(|c| c.iter().map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in 0..=rows {
        let cells: Vec<String> = columns
            .iter()
            .zip(&widths)
            .map(|(c, w)| crate::text::pad(&c[r], *w))
            .collect();
        let _ = writeln!(out, " {} ;", cells.join(" | "));
    }
    out
}

fn scoped(sem: impl Into<Sem>, scope: Option<Scope>) -> String {
    let sem: Sem = sem.into();
    match scope {
        Some(s) => format!("{}.{}", sem.as_str(), s.as_str()),
        None => sem.as_str().to_string(),
    }
}

fn operand(o: &Operand) -> String {
    match o {
        Operand::Imm(v) => v.to_string(),
        Operand::Reg(r) => r.0.clone(),
    }
}

fn addr(a: &Addr) -> String {
    match &a.offset {
        Some(r) => format!("{}+{r}", a.loc),
        None => a.loc.clone(),
    }
}

/// One instruction in canonical spelling.
// One arm per instruction: the spellings read best side by side.
#[allow(clippy::too_many_lines)]
pub fn instr(i: &Instr) -> String {
    match i {
        Instr::Load {
            sem,
            scope,
            proxy,
            dst,
            addr: a,
        } => {
            let mn = proxy.load_mnemonic();
            format!("{mn}.{} {dst}, {}", scoped(*sem, *scope), addr(a))
        }
        Instr::Store {
            sem,
            scope,
            proxy,
            addr: a,
            src,
        } => {
            // The parser makes stores only through proxies that have one.
            let mn = proxy.store_mnemonic().unwrap_or("st");
            format!(
                "{mn}.{} {}, {}",
                scoped(*sem, *scope),
                addr(a),
                operand(src)
            )
        }
        Instr::Atom {
            sem,
            scope,
            op,
            dst,
            addr: a,
            src,
            src2,
        } => {
            let mut s = format!(
                "atom.{}.{} {dst}, {}, {}",
                scoped(*sem, *scope),
                op.as_str(),
                addr(a),
                operand(src)
            );
            if let Some(b) = src2 {
                let _ = write!(s, ", {}", operand(b));
            }
            s
        }
        Instr::Red {
            sem,
            scope,
            op,
            addr: a,
            src,
        } => format!(
            "red.{}.{} {}, {}",
            scoped(*sem, *scope),
            op.as_str(),
            addr(a),
            operand(src)
        ),
        Instr::Fence(f) => fence(f),
        Instr::Barrier(b) => barrier(b),
        Instr::Mov { dst, src } => format!("mov {dst}, {}", operand(src)),
        Instr::Alu { op, dst, a, b } => {
            format!("{} {dst}, {}, {}", op.as_str(), operand(a), operand(b))
        }
        Instr::Branch { cond: None, target } => format!("goto {target}"),
        Instr::Branch {
            cond: Some(BranchCond { op, a, b }),
            target,
        } => {
            format!("{} {}, {}, {target}", op.branch(), operand(a), operand(b))
        }
        Instr::Label(l) => format!("{l}:"),
    }
}

/// A fence: `fence.sc.gpu`, `membar.gl`, `fence.proxy.alias`.
fn fence(f: &Fence) -> String {
    match f {
        Fence::Memory { sem, scope } => {
            format!("fence.{}.{}", sem.as_str(), scope.as_str())
        }
        Fence::Membar(level) => format!("membar.{}", level.as_str()),
        Fence::Proxy(kind) => format!("fence.proxy.{}", kind.as_str()),
    }
}

/// A barrier: `bar.cta.sync 0`, `barrier.cluster.arrive.release`, ...
fn barrier(b: &Barrier) -> String {
    match b {
        Barrier::Cta {
            op,
            id,
            count,
            quorum,
        } => {
            let count: String = count
                .iter()
                .chain(quorum)
                .map(|c| format!(", {}", operand(c)))
                .collect();
            match op {
                BarOp::Sync => format!("bar.cta.sync {}{count}", operand(id)),
                BarOp::Arrive => format!("bar.cta.arrive {}{count}", operand(id)),
                BarOp::Red { op, dst, pred } => format!(
                    "bar.cta.red.{} {dst}, {}{count}, {}",
                    op.as_str(),
                    operand(id),
                    operand(pred)
                ),
            }
        }
        Barrier::ClusterArrive { relaxed } => {
            format!("barrier.cluster.arrive.{}", cluster_arrive_sem(*relaxed))
        }
        Barrier::ClusterWait => "barrier.cluster.wait.acquire".to_string(),
    }
}

/// A condition term: `P1:r0`, `x`, `-1`.
pub(crate) fn term(t: &Term) -> String {
    match t {
        Term::Reg { thread, reg } => format!("P{thread}:{reg}"),
        Term::Loc(l) => l.clone(),
        Term::Const(v) => v.to_string(),
    }
}

/// A proposition; `ctx` is how tightly the context binds (0 top or left of `\/`, 1 right of
/// `\/` or left of `/\`, 2 right of `/\`, 3 operand of `~`).
/// The parser reads `/\` and `\/` left-associatively, so a right operand of the same operator
/// keeps its parentheses and the tree survives the round trip.
fn prop(p: &Prop, ctx: u8) -> String {
    match p {
        Prop::True => "true".into(),
        Prop::False => "false".into(),
        Prop::Cmp { lhs, op, rhs } => {
            let s = format!("{} {} {}", term(lhs), op.symbol(), term(rhs));
            if ctx >= 3 {
                format!("({s})")
            } else {
                s
            }
        }
        Prop::Not(q) => format!("~{}", prop(q, 3)),
        Prop::And(a, b) => {
            let s = format!("{} /\\ {}", prop(a, 1), prop(b, 2));
            if ctx >= 2 {
                format!("({s})")
            } else {
                s
            }
        }
        Prop::Or(a, b) => {
            let s = format!("{} \\/ {}", prop(a, 0), prop(b, 1));
            if ctx >= 1 {
                format!("({s})")
            } else {
                s
            }
        }
    }
}
