//! Tokens of the cat language (the subset of herd7's and Dat3M's dialect that PTX models use):
//! names may hold `-` and `.`, comments are `(* *)`, `/* */` and `//`.

use super::CatError;

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A name, keyword or number.
    Name(String),
    /// A quoted string.
    Str(String),
    /// `=`.
    Eq,
    /// `*`.
    Star,
    /// `+`.
    Plus,
    /// `?`.
    Opt,
    /// `^-1`.
    Inv,
    /// `^+`.
    HatPlus,
    /// `^*`.
    HatStar,
    /// `~`.
    Not,
    /// `&`.
    Amp,
    /// `|`.
    Bar,
    /// `;`.
    Semi,
    /// `\`.
    Bslash,
    /// `(`.
    LPar,
    /// `)`.
    RPar,
    /// `[`.
    LBrac,
    /// `]`.
    RBrac,
    /// `,`.
    Comma,
}

/// A token with the line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// 1-based line.
    pub line: usize,
}

fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// Splits `src` into tokens.
pub fn lex(src: &str) -> Result<Vec<Token>, CatError> {
    let mut l = Lexer {
        cs: src.chars().collect(),
        i: 0,
        line: 1,
    };
    let mut out = Vec::new();
    while let Some(&c) = l.cs.get(l.i) {
        let start = l.line;
        let next = l.cs.get(l.i + 1).copied();
        let tok = if c == '\n' {
            l.line += 1;
            l.i += 1;
            None
        } else if c.is_whitespace() {
            l.i += 1;
            None
        } else if c == '/' && next == Some('/') {
            l.line_comment();
            None
        } else if (c == '(' || c == '/') && next == Some('*') {
            l.block_comment(if c == '(' { ')' } else { '/' })?;
            None
        } else if c == '"' {
            Some(l.string()?)
        } else if c == '^' {
            Some(l.hat()?)
        } else if name_char(c) {
            Some(l.name())
        } else {
            l.i += 1;
            Some(
                punctuation(c)
                    .ok_or_else(|| CatError::at(start, &format!("unexpected character {c:?}")))?,
            )
        };
        out.extend(tok.map(|tok| Token { tok, line: start }));
    }
    Ok(out)
}

/// The text being lexed and where the lexer stands in it.
struct Lexer {
    cs: Vec<char>,
    i: usize,
    line: usize,
}

impl Lexer {
    /// Skips a `//` comment, up to the end of its line.
    fn line_comment(&mut self) {
        while self.i < self.cs.len() && self.cs[self.i] != '\n' {
            self.i += 1;
        }
    }

    /// Skips a `(* … *)` or `/* … */` comment, `close` being its last character.
    fn block_comment(&mut self, close: char) -> Result<(), CatError> {
        let start = self.line;
        self.i += 2;
        loop {
            if self.i + 1 >= self.cs.len() {
                return Err(CatError::at(start, "comment never closed"));
            }
            if self.cs[self.i] == '\n' {
                self.line += 1;
            }
            if self.cs[self.i] == '*' && self.cs[self.i + 1] == close {
                self.i += 2;
                return Ok(());
            }
            self.i += 1;
        }
    }

    /// A `"…"` string, which may span lines.
    fn string(&mut self) -> Result<Tok, CatError> {
        let start = self.line;
        let mut s = String::new();
        self.i += 1;
        while self.i < self.cs.len() && self.cs[self.i] != '"' {
            if self.cs[self.i] == '\n' {
                self.line += 1;
            }
            s.push(self.cs[self.i]);
            self.i += 1;
        }
        if self.i >= self.cs.len() {
            return Err(CatError::at(start, "string never closed"));
        }
        self.i += 1;
        Ok(Tok::Str(s))
    }

    /// `^-1`, `^+` or `^*`.
    fn hat(&mut self) -> Result<Tok, CatError> {
        let (tok, len) = match (self.cs.get(self.i + 1), self.cs.get(self.i + 2)) {
            (Some('-'), Some('1')) => (Tok::Inv, 3),
            (Some('+'), _) => (Tok::HatPlus, 2),
            (Some('*'), _) => (Tok::HatStar, 2),
            _ => {
                return Err(CatError::at(
                    self.line,
                    "`^` must be followed by -1, + or *",
                ))
            }
        };
        self.i += len;
        Ok(tok)
    }

    /// A name: the longest run of name characters.
    fn name(&mut self) -> Tok {
        let mut s = String::new();
        while self.i < self.cs.len() && name_char(self.cs[self.i]) {
            s.push(self.cs[self.i]);
            self.i += 1;
        }
        Tok::Name(s)
    }
}

/// The one-character token `c`, if it is one.
fn punctuation(c: char) -> Option<Tok> {
    Some(match c {
        '=' => Tok::Eq,
        '*' => Tok::Star,
        '+' => Tok::Plus,
        '?' => Tok::Opt,
        '~' => Tok::Not,
        '&' => Tok::Amp,
        '|' => Tok::Bar,
        ';' => Tok::Semi,
        '\\' => Tok::Bslash,
        '(' => Tok::LPar,
        ')' => Tok::RPar,
        '[' => Tok::LBrac,
        ']' => Tok::RBrac,
        ',' => Tok::Comma,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_hyphens_and_inverse_is_one_token() {
        let t = lex("let po-loc = rf^-1 (* c *) // x\n;co+").unwrap();
        let toks: Vec<Tok> = t.iter().map(|t| t.tok.clone()).collect();
        assert_eq!(
            toks,
            vec![
                Tok::Name("let".into()),
                Tok::Name("po-loc".into()),
                Tok::Eq,
                Tok::Name("rf".into()),
                Tok::Inv,
                Tok::Semi,
                Tok::Name("co".into()),
                Tok::Plus,
            ]
        );
        assert_eq!(t[5].line, 2);
    }

    #[test]
    fn unclosed_comment_names_its_line() {
        let e = lex("let a = b\n(* open").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("comment"));
    }
}
