//! Byte ranges into the reader's text ([`Span`]), and the trims and the hex
//! parse the line parsers use: fast paths for ASCII that agree with the
//! standard ones.

/// A byte range inside the reader's sample text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Span {
    /// Offset of the first byte.
    pub(super) start: usize,
    /// Offset one past the last byte.
    pub(super) end: usize,
}

impl Span {
    /// The range that `inner`, a subslice of `outer`, occupies in `outer`.
    pub(super) fn within(outer: &str, inner: &str) -> Span {
        let start = (inner.as_ptr() as usize).wrapping_sub(outer.as_ptr() as usize);
        debug_assert!(start + inner.len() <= outer.len());
        Span { start, end: start + inner.len() }
    }

    /// This range moved `offset` bytes to the right.
    pub(super) fn shifted(self, offset: usize) -> Span {
        Span { start: self.start + offset, end: self.end + offset }
    }

    /// This range moved `offset` bytes to the left.
    pub(super) fn shifted_left(self, offset: usize) -> Span {
        Span { start: self.start - offset, end: self.end - offset }
    }

    /// The text this range covers in `text`; empty if out of range.
    pub(super) fn of(self, text: &str) -> &str {
        text.get(self.start..self.end).unwrap_or("")
    }
}

/// `text.trim_end()`, dropping ASCII whitespace bytewise first (the
/// Unicode-aware scan runs only when a non-ASCII byte is left at the end).
pub(super) fn trim_end_fast(text: &str) -> &str {
    let bytes = text.as_bytes();
    let kept = bytes.iter().rposition(|byte| !matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c));
    let trimmed = &text[..kept.map_or(0, |last| last + 1)];
    if trimmed.as_bytes().last().is_some_and(|byte| !byte.is_ascii()) { trimmed.trim_end() } else { trimmed }
}

/// `text.trim_start()`, skipping ASCII spaces and tabs bytewise first.
pub(super) fn trim_start_fast(text: &str) -> &str {
    let blanks = text.bytes().position(|byte| byte != b' ' && byte != b'\t').unwrap_or(text.len());
    text[blanks..].trim_start()
}

/// `text.trim()`, answering without a Unicode-aware scan when both ends are
/// ASCII non-blanks (almost always).
pub(super) fn trim_fast(text: &str) -> &str {
    match (text.as_bytes().first(), text.as_bytes().last()) {
        (Some(first), Some(last))
            if first.is_ascii() && !first.is_ascii_whitespace() && last.is_ascii() && !last.is_ascii_whitespace() =>
        {
            text
        }
        _ => text.trim(),
    }
}

/// `u64::from_str_radix(text, 16)`, 0 when it fails: a loop over at most 16
/// hex digits, the standard parser for anything else (a sign, overflow).
pub(super) fn parse_address(text: &str) -> u64 {
    let digits = text.as_bytes();
    if digits.is_empty() || digits.len() > 16 {
        return u64::from_str_radix(text, 16).unwrap_or(0);
    }
    let mut value: u64 = 0;
    for &digit in digits {
        let nibble = match digit {
            b'0'..=b'9' => digit - b'0',
            b'a'..=b'f' => digit - b'a' + 10,
            b'A'..=b'F' => digit - b'A' + 10,
            _ => return u64::from_str_radix(text, 16).unwrap_or(0),
        };
        value = (value << 4) | u64::from(nibble);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_end_fast_trims_as_trim_end() {
        for text in ["", " ", "a \t\r\n", "a\u{0b}\u{0c}", "a\u{a0}\n", "\u{3000} a \u{2028}", "é", "a\u{85}"] {
            assert_eq!(trim_end_fast(text), text.trim_end(), "{text:?}");
        }
    }

    #[test]
    fn fast_address_and_trim_agree_with_the_standard_ones() {
        for text in
            ["0", "7f3a177ea696", "FFFFFFFFFFFFFFFF", "ffffffffffffffff1", "+ff", "+", "", "x1", "00000000000000001"]
        {
            assert_eq!(parse_address(text), u64::from_str_radix(text, 16).unwrap_or(0), "{text:?}");
        }
        for text in ["a", " a ", "a\t", "\u{3000}a\u{3000}", "", "  ", "main+0x44"] {
            assert_eq!(trim_fast(text), text.trim(), "{text:?}");
        }
    }
}
