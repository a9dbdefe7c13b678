//! Splits a test file into tokens, dropping whitespace and comments (`(* .. *)`, `// ..`).
//!
//! The test name after the architecture word is read as one raw non-space run, because herd
//! names such as `MP+rel+acq` or `CoRR.x` are not identifiers.

use super::ast::Value;
use super::error::Pos;

/// One token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// A word: letters, digits, `_`, `.`, `%`, `$` and `::` (`st.shared::cta`, `r0`, `LC00`).
    Ident(String),
    /// A non-negative integer (a minus sign is a token of its own).
    Int(Value),
    /// The contents of a `"..."` string.
    Str(String),
    /// The test name: the non-space run after the architecture word.
    Name(String),
    /// Punctuation such as `;`, `|`, `==`, `/\`.
    Punct(&'static str),
    /// The end of the file.
    Eof,
}

/// A token and where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    /// The token.
    pub tok: Tok,
    /// Its first character.
    pub pos: Pos,
}

/// A lexical error: where, what was found, what was expected.
pub(crate) type LexError = (Pos, String, String);

const PUNCTS: [&str; 23] = [
    "==", "!=", "<=", ">=", "/\\", "\\/", "{", "}", "(", ")", "[", "]", ";", ",", "|", ":", "@",
    "+", "-", "~", "=", "<", ">",
];

impl Tok {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) | Tok::Name(s) => format!("`{s}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::Str(s) => {
                let short: String = s.chars().take(20).collect();
                let more = if s.chars().count() > 20 { "..." } else { "" };
                format!("string \"{short}{more}\"")
            }
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "end of file".to_string(),
        }
    }
}

struct Cursor<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    rest: &'a str,
    pos: Pos,
}

impl<'a> Cursor<'a> {
    fn new(src: &'a str) -> Self {
        Cursor {
            chars: src.chars().peekable(),
            rest: src,
            pos: Pos { line: 1, column: 1 },
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        self.rest.starts_with(s)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        self.rest = &self.rest[c.len_utf8()..];
        if c == '\n' {
            self.pos.line += 1;
            self.pos.column = 1;
        } else {
            self.pos.column += 1;
        }
        Some(c)
    }

    fn bump_n(&mut self, n: usize) {
        for _ in 0..n {
            self.bump();
        }
    }

    /// Skips whitespace and comments; herd comments nest.
    fn skip_trivia(&mut self) -> Result<(), LexError> {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('/') if self.starts_with("//") => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.bump();
                    }
                }
                Some('(') if self.starts_with("(*") => {
                    let start = self.pos;
                    self.bump_n(2);
                    let mut depth = 1;
                    while depth > 0 {
                        if self.starts_with("*)") {
                            self.bump_n(2);
                            depth -= 1;
                        } else if self.starts_with("(*") {
                            self.bump_n(2);
                            depth += 1;
                        } else if self.bump().is_none() {
                            return Err((
                                self.pos,
                                "end of file".into(),
                                format!(
                                    "`*)` closing the comment opened at {}:{}",
                                    start.line, start.column
                                ),
                            ));
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '%' || c == '$'
}

fn is_ident_continue(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

/// Splits `src` into tokens, ending with one `Eof`.
pub(crate) fn lex(src: &str) -> Result<Vec<Token>, LexError> {
    let mut cur = Cursor::new(src);
    let mut out: Vec<Token> = Vec::new();
    loop {
        cur.skip_trivia()?;
        let pos = cur.pos;
        let Some(c) = cur.peek() else {
            out.push(Token { tok: Tok::Eof, pos });
            return Ok(out);
        };
        let tok = if out.len() == 1 && !matches!(c, '{' | '"') {
            lex_name(&mut cur)
        } else if c == '"' {
            lex_str(&mut cur, pos)?
        } else if c.is_ascii_digit() {
            lex_int(&mut cur, pos)?
        } else if is_ident_start(c) {
            lex_ident(&mut cur, c)
        } else if let Some(p) = PUNCTS.iter().find(|p| cur.starts_with(p)) {
            cur.bump_n(p.chars().count());
            Tok::Punct(p)
        } else {
            return Err((
                pos,
                format!("character `{c}`"),
                "a name, a number, a string or punctuation".into(),
            ));
        };
        let is_name = matches!(tok, Tok::Name(_));
        out.push(Token { tok, pos });
        if is_name {
            lex_doc(&mut cur, &mut out)?;
        }
    }
}

/// The text between the name and the `{` of the initial state: quoted strings, and any
/// unquoted text (herd metadata such as `Cycle=..`, or stray words between quotes), one `Str`
/// per quoted string and per line of unquoted text, so no text is lost and none contains `"`.
fn lex_doc(cur: &mut Cursor<'_>, out: &mut Vec<Token>) -> Result<(), LexError> {
    loop {
        cur.skip_trivia()?;
        let pos = cur.pos;
        match cur.peek() {
            None | Some('{') => return Ok(()),
            Some('"') => {
                let tok = lex_str(cur, pos)?;
                out.push(Token { tok, pos });
            }
            Some(_) => {
                let mut s = String::new();
                while let Some(c) = cur.peek() {
                    if matches!(c, '"' | '{' | '\n')
                        || cur.starts_with("(*")
                        || cur.starts_with("//")
                    {
                        break;
                    }
                    s.push(c);
                    cur.bump();
                }
                out.push(Token {
                    tok: Tok::Str(s.trim_end().to_string()),
                    pos,
                });
            }
        }
    }
}

/// The test's name: everything up to the next white space.
fn lex_name(cur: &mut Cursor<'_>) -> Tok {
    let mut name = String::new();
    while let Some(c) = cur.peek().filter(|c| !c.is_whitespace()) {
        name.push(c);
        cur.bump();
    }
    Tok::Name(name)
}

/// A quoted string starting at `pos`, the cursor on its opening `"`.
fn lex_str(cur: &mut Cursor<'_>, pos: Pos) -> Result<Tok, LexError> {
    cur.bump();
    let mut s = String::new();
    loop {
        match cur.bump() {
            Some('"') => return Ok(Tok::Str(s)),
            Some(c) => s.push(c),
            None => {
                return Err((
                    cur.pos,
                    "end of file".into(),
                    format!(
                        "`\"` closing the string opened at {}:{}",
                        pos.line, pos.column
                    ),
                ))
            }
        }
    }
}

/// A word starting with `first`, the character at the cursor: a mnemonic with its
/// qualifiers, a register, a location, a label; `::` joins words (`shared::cta`).
fn lex_ident(cur: &mut Cursor<'_>, first: char) -> Tok {
    // The first character is taken unconditionally: `%` and `$` may start a word but not
    // continue one, and a loop that only takes continuing characters would never move past
    // them.
    let mut s = String::from(first);
    cur.bump();
    loop {
        match cur.peek() {
            Some(c) if is_ident_continue(c) => {
                s.push(c);
                cur.bump();
            }
            Some(':')
                if cur.starts_with("::")
                    && cur.rest[2..].chars().next().is_some_and(is_ident_start) =>
            {
                s.push_str("::");
                cur.bump_n(2);
            }
            _ => return Tok::Ident(s),
        }
    }
}

fn lex_int(cur: &mut Cursor<'_>, pos: Pos) -> Result<Tok, LexError> {
    let radix = if cur.starts_with("0x") || cur.starts_with("0X") {
        cur.bump_n(2);
        16
    } else {
        10
    };
    let digits = |c: char| c.is_digit(radix);
    let mut text = String::new();
    while let Some(c) = cur.peek() {
        if digits(c) {
            text.push(c);
            cur.bump();
        } else if is_ident_continue(c) {
            return Err((
                pos,
                format!("`{text}{c}`"),
                "a number or a name that starts with a letter".into(),
            ));
        } else {
            break;
        }
    }
    Value::from_str_radix(&text, radix)
        .map(Tok::Int)
        .map_err(|_| {
            (
                pos,
                format!("`{text}`"),
                "a number that fits in 64 bits".into(),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        lex(src).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn percent_and_dollar_words_end() {
        // A lone `%` or `$` is a word of its own; lexing must move past it.
        let t = toks("PTX t { % ,$ %r1 s@$");
        assert_eq!(t[3], Tok::Ident("%".into()));
        assert_eq!(t[4], Tok::Punct(","));
        assert_eq!(t[5], Tok::Ident("$".into()));
        assert_eq!(t[6], Tok::Ident("%r1".into()));
        assert_eq!(t[9], Tok::Ident("$".into()));
        assert_eq!(t.last(), Some(&Tok::Eof));
    }

    #[test]
    fn name_is_raw_and_comments_nest() {
        let t = toks("PTX MP+rel.acq (* a (* nested *) comment *) \"doc\" // tail\n{x=-0x1f;}");
        assert_eq!(
            t,
            vec![
                Tok::Ident("PTX".into()),
                Tok::Name("MP+rel.acq".into()),
                Tok::Str("doc".into()),
                Tok::Punct("{"),
                Tok::Ident("x".into()),
                Tok::Punct("="),
                Tok::Punct("-"),
                Tok::Int(31),
                Tok::Punct(";"),
                Tok::Punct("}"),
                Tok::Eof,
            ]
        );
    }

    #[test]
    fn state_space_qualifiers_and_colons() {
        let t = toks("PTX t { st.shared::cta x, 1 | LC00: | P1:r0 /\\ 1:r2 >= 3");
        assert_eq!(t[3], Tok::Ident("st.shared::cta".into()));
        assert_eq!(&t[8..10], &[Tok::Ident("LC00".into()), Tok::Punct(":")]);
        assert_eq!(
            &t[11..14],
            &[
                Tok::Ident("P1".into()),
                Tok::Punct(":"),
                Tok::Ident("r0".into())
            ]
        );
        assert_eq!(t[14], Tok::Punct("/\\"));
        assert_eq!(t[18], Tok::Punct(">="));
    }

    #[test]
    fn positions_are_one_based_lines_and_columns() {
        let t = lex("PTX a\n  { x").unwrap();
        assert_eq!(t[2].pos, Pos { line: 2, column: 3 });
        assert_eq!(t[3].pos, Pos { line: 2, column: 5 });
        assert_eq!(t[4].pos, Pos { line: 2, column: 6 });
    }

    #[test]
    fn unterminated_comment_and_string_name_the_opening() {
        let e = lex("PTX a (* open").unwrap_err();
        assert_eq!(e.1, "end of file");
        assert!(e.2.contains("opened at 1:7"), "{}", e.2);
        let e = lex("PTX a\n\"doc").unwrap_err();
        assert!(e.2.contains("opened at 2:1"), "{}", e.2);
    }
}
