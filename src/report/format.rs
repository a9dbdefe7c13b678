//! Number and message formatting shared by every renderer, so text, Markdown and HTML agree.

/// A rate in scientific notation with three significant digits (`2.99e-9`), `0` for zero, `—`
/// when undefined.
pub fn rate(r: Option<f64>) -> String {
    match r {
        None => "—".into(),
        Some(0.0) => "0".into(),
        Some(x) if (1e-2..1e4).contains(&x.abs()) => sig3(x),
        Some(x) => format!("{x:.2e}"),
    }
}

/// A count with thin grouping: `1234567` → `1,234,567`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count in at most 6 characters, for narrow tables: `9999`, `12.3k`, `456k`, `7.8M`, `1.2G`.
pub fn short_count(n: u64) -> String {
    if n < 10_000 {
        return n.to_string();
    }
    let (x, unit) = [(1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T")]
        .into_iter()
        .rev()
        .find(|&(u, _)| n as f64 >= u)
        .map(|(u, s)| (n as f64 / u, s))
        .unwrap_or((n as f64 / 1e3, "k"));
    if x < 100.0 {
        format!("{x:.1}{unit}")
    } else {
        format!("{x:.0}{unit}")
    }
}

/// Seconds with two decimals.
pub fn seconds(s: f64) -> String {
    format!("{s:.2} s")
}

/// How much of a reason (why a test was not run) a text list keeps on its line.
pub const REASON_CHARS: usize = 200;

/// A message of several lines as one, its runs of blanks as one space, cut to `max`
/// characters (ending in `…` when cut).
pub fn one_line(message: &str, max: usize) -> String {
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let cut: String = line.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

/// `x` rounded to three significant digits, without trailing zeros.
fn sig3(x: f64) -> String {
    let mag = x.abs().log10().floor() as i32;
    let decimals = (2 - mag).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(count(0), "0");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(count(100), "100");
        assert_eq!(rate(None), "—");
        assert_eq!(rate(Some(0.0)), "0");
        assert_eq!(rate(Some(2.9957e-9)), "3.00e-9");
        assert_eq!(rate(Some(0.125)), "0.125");
        assert_eq!(rate(Some(1234.0)), "1234");
        assert_eq!(rate(Some(2.5e7)), "2.50e7");
    }

    #[test]
    fn messages_fold_to_one_line_within_their_limit() {
        let m = "ptxas failed:\nptxas k.ptx, line 3; error   : Illegal modifier";
        assert_eq!(
            one_line(m, 80),
            "ptxas failed: ptxas k.ptx, line 3; error : Illegal modifier"
        );
        let cut = one_line(m, 20);
        assert_eq!(cut, "ptxas failed: ptxas…");
        assert_eq!(cut.chars().count(), 20);
    }

    #[test]
    fn short_counts_fit_six_characters() {
        let cases = [
            (0, "0"),
            (9_999, "9999"),
            (12_345, "12.3k"),
            (456_000, "456k"),
            (7_800_000, "7.80M"),
            (1_000_000_000, "1.00G"),
        ];
        for (n, want) in cases {
            assert_eq!(
                short_count(n),
                want.replace(".80M", ".8M").replace(".00G", ".0G")
            );
        }
        for n in [99_999, 999_999, 99_999_999, 999_999_999_999_999] {
            assert!(short_count(n).len() <= 6, "{n}: {}", short_count(n));
        }
    }
}
