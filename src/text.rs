//! Plain-text layout shared by every table the tool prints.

/// `s` followed by spaces up to `width` characters. Unlike a `{:width$}` format, any width
/// works: formatting panics on widths over 65,535, which a long test name can reach.
pub fn pad(s: &str, width: usize) -> String {
    let n = s.chars().count();
    let mut out = String::with_capacity(s.len() + width.saturating_sub(n));
    out.push_str(s);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(n)));
    out
}

#[cfg(test)]
mod tests {
    use super::pad;

    #[test]
    fn pads_by_characters_and_takes_any_width() {
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(pad("héllo", 3), "héllo");
        assert_eq!(pad("x", 70_000).len(), 70_000);
    }
}
