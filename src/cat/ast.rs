//! A cat model as a syntax tree: definitions and checks in file order.

/// An expression over sets and relations of events.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A name: a definition, a base relation or a tag set.
    Name(String),
    /// `e1 | e2`.
    Union(Box<Expr>, Box<Expr>),
    /// `e1 & e2`.
    Inter(Box<Expr>, Box<Expr>),
    /// `e1 \ e2`.
    Diff(Box<Expr>, Box<Expr>),
    /// `e1 ; e2`.
    Seq(Box<Expr>, Box<Expr>),
    /// `e1 * e2`: every pair of a member of one set and a member of the other.
    Cartesian(Box<Expr>, Box<Expr>),
    /// `e+`.
    Plus(Box<Expr>),
    /// `e*`.
    Star(Box<Expr>),
    /// `e?`.
    Opt(Box<Expr>),
    /// `e^-1`.
    Inverse(Box<Expr>),
    /// `~e`: the complement (of a set among events, of a relation among pairs).
    Complement(Box<Expr>),
    /// `[e]`: the identity on a set.
    Identity(Box<Expr>),
    /// `domain(e)`.
    Domain(Box<Expr>),
    /// `range(e)`.
    Range(Box<Expr>),
}

/// What a check requires of its expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckKind {
    /// `acyclic`.
    Acyclic,
    /// `irreflexive`.
    Irreflexive,
    /// `empty`.
    Empty,
}

/// One statement of a model.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `let name = e`.
    Let(String, Expr),
    /// `let rec a = e and b = e ...`: the least fixed point of the bindings together.
    LetRec(Vec<(String, Expr)>),
    /// `[flag] [~]acyclic|irreflexive|empty e [as name]`.
    Check {
        /// Which requirement.
        kind: CheckKind,
        /// `~` before the keyword: the requirement is negated.
        negated: bool,
        /// `flag`: reported, never excluding an execution.
        flag: bool,
        /// The expression.
        expr: Expr,
        /// The name after `as`, if any.
        name: Option<String>,
        /// The line of the keyword.
        line: usize,
    },
}

/// A parsed model.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The title (the names and string before the first statement).
    pub title: String,
    /// The statements in order.
    pub stmts: Vec<Stmt>,
    /// The line each statement starts on.
    pub lines: Vec<usize>,
}
