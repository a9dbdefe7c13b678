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
    let cs: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < cs.len() {
        let c = cs[i];
        let start = line;
        let next = cs.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < cs.len() && cs[i] != '\n' {
                i += 1;
            }
        } else if (c == '(' && next == Some('*')) || (c == '/' && next == Some('*')) {
            let close = if c == '(' { ')' } else { '/' };
            i += 2;
            loop {
                if i + 1 >= cs.len() {
                    return Err(CatError::at(start, "comment never closed"));
                }
                if cs[i] == '\n' {
                    line += 1;
                }
                if cs[i] == '*' && cs[i + 1] == close {
                    i += 2;
                    break;
                }
                i += 1;
            }
        } else if c == '"' {
            let mut s = String::new();
            i += 1;
            while i < cs.len() && cs[i] != '"' {
                if cs[i] == '\n' {
                    line += 1;
                }
                s.push(cs[i]);
                i += 1;
            }
            if i >= cs.len() {
                return Err(CatError::at(start, "string never closed"));
            }
            i += 1;
            out.push(Token {
                tok: Tok::Str(s),
                line: start,
            });
        } else if c == '^' {
            let (tok, len) = match (next, cs.get(i + 2)) {
                (Some('-'), Some('1')) => (Tok::Inv, 3),
                (Some('+'), _) => (Tok::HatPlus, 2),
                (Some('*'), _) => (Tok::HatStar, 2),
                _ => return Err(CatError::at(start, "`^` must be followed by -1, + or *")),
            };
            out.push(Token { tok, line: start });
            i += len;
        } else if name_char(c) {
            let mut s = String::new();
            while i < cs.len() && name_char(cs[i]) {
                s.push(cs[i]);
                i += 1;
            }
            out.push(Token {
                tok: Tok::Name(s),
                line: start,
            });
        } else {
            let tok = match c {
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
                _ => return Err(CatError::at(start, &format!("unexpected character {c:?}"))),
            };
            out.push(Token { tok, line: start });
            i += 1;
        }
    }
    Ok(out)
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
