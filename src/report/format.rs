//! Number formatting shared by every renderer, so text, Markdown and HTML agree.

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

/// Seconds with two decimals.
pub fn seconds(s: f64) -> String {
    format!("{s:.2} s")
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
}
