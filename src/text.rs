//! Plain-text layout shared by every table the tool prints, and the escaping of text for
//! Markdown and HTML pages.

/// `s` followed by spaces up to `width` characters. Unlike a `{:width$}` format, any width
/// works: formatting panics on widths over 65,535, which a long test name can reach.
pub fn pad(s: &str, width: usize) -> String {
    let n = s.chars().count();
    let mut out = String::with_capacity(s.len() + width.saturating_sub(n));
    out.push_str(s);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(n)));
    out
}

/// Markdown text shown as written: the characters that can format, link, open HTML or an entity, or
/// split a cell are backslash-escaped, so a test name such as `a_b*c|d` or `<img>` shows as
/// itself. (Characters that matter only at the start of a line never start one here.)
pub fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '!'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A Markdown code span showing `s` verbatim: backslashes are literal inside code, so only `|` is
/// escaped (GitHub tables split on it even there), and the fence is one backtick longer than
/// any run of backticks in `s`.
pub fn md_code(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let body = s.replace('|', "\\|").replace('\n', " ");
    let pad = if body.starts_with('`') || body.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

/// Text escaped for HTML, in element content and in quoted attribute values.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The width tables are fitted to: `COLUMNS` when set to a number of at least 40, else the
/// terminal's when stdout is one, else 100 (a pipe or a file: the same table whatever
/// terminal the command was started from, for logs and scripts).
pub fn width() -> usize {
    let at_least_40 = |w: usize| (w >= 40).then_some(w);
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .and_then(at_least_40)
        .or_else(|| {
            let term = console::Term::stdout();
            let (_, cols) = term.is_term().then(|| term.size_checked())??;
            at_least_40(cols as usize)
        })
        .unwrap_or(100)
}

/// `s` in at most `width` characters: a longer one keeps its start and end around a `…`.
pub fn elide(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        return s.to_string();
    }
    let keep = width.saturating_sub(1);
    let tail = keep / 2;
    let head: String = s.chars().take(keep - tail).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{head}…{end}")
}

#[cfg(test)]
mod tests {
    use super::{elide, pad};

    #[test]
    fn elides_in_the_middle_to_the_width() {
        assert_eq!(elide("short", 5), "short");
        assert_eq!(elide("SB+fence.sc.gpu", 7), "SB+…gpu");
        assert_eq!(elide("héllo-wörld", 6).chars().count(), 6);
    }

    #[test]
    fn pads_by_characters_and_takes_any_width() {
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(pad("héllo", 3), "héllo");
        assert_eq!(pad("x", 70_000).len(), 70_000);
    }
}
