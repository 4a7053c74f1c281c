//! V8's escaping of names and sources in the code log.
//!
//! V8's log writer (`LogFile::MessageBuilder::AppendCharacter` in
//! [src/logging/log-file.cc](https://chromium.googlesource.com/v8/v8/+/refs/heads/main/src/logging/log-file.cc))
//! writes printable ASCII as is, `,` as `\x2C`, `\` as `\\`, a newline as `\n`,
//! every other code unit up to 0xFF as `\xNN` and UTF-16 code units above 0xFF
//! as `\uXXXX`. Each escape therefore stands for exactly one UTF-16 code unit,
//! which is the unit V8's script offsets count.

use std::borrow::Cow;

/// Calls `emit` with each UTF-16 code unit of an escaped log field.
///
/// A malformed escape (a `\` not followed by a known escape) is taken
/// literally, byte by byte, so nothing is lost.
pub fn for_each_code_unit(escaped: &[u8], mut emit: impl FnMut(u16)) {
    let mut index = 0;
    while index < escaped.len() {
        let byte = escaped[index];
        if byte != b'\\' {
            emit(u16::from(byte));
            index += 1;
            continue;
        }
        let (unit, consumed) = decode_escape(&escaped[index..]);
        emit(unit);
        index += consumed;
    }
}

/// Decodes one escape at the start of `escaped` (which starts with `\`):
/// returns the code unit and how many bytes it took.
fn decode_escape(escaped: &[u8]) -> (u16, usize) {
    match escaped.get(1) {
        Some(b'n') => (u16::from(b'\n'), 2),
        Some(b'\\') => (u16::from(b'\\'), 2),
        Some(b'x') => match hex_value(escaped.get(2..4)) {
            Some(value) => (value, 4),
            None => (u16::from(b'\\'), 1),
        },
        Some(b'u') => match hex_value(escaped.get(2..6)) {
            Some(value) => (value, 6),
            None => (u16::from(b'\\'), 1),
        },
        _ => (u16::from(b'\\'), 1),
    }
}

fn hex_value(digits: Option<&[u8]>) -> Option<u16> {
    let digits = digits?;
    let mut value: u16 = 0;
    for &digit in digits {
        value = (value << 4) | u16::from((digit as char).to_digit(16)? as u8);
    }
    Some(value)
}

/// Undoes V8's escapes for display. Unpaired surrogates become U+FFFD.
pub fn unescape(escaped: &[u8]) -> String {
    unescape_borrowed(escaped).into_owned()
}

/// [`unescape`], borrowing `escaped` when it has nothing to decode (the
/// common case: no escapes, valid UTF-8), so that callers storing the name
/// elsewhere allocate once.
pub fn unescape_borrowed(escaped: &[u8]) -> Cow<'_, str> {
    if memchr::memchr(b'\\', escaped).is_none() {
        // `from_utf8` checks ASCII faster than the lossy decoder walks it.
        return match std::str::from_utf8(escaped) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(escaped),
        };
    }
    let mut units = Vec::with_capacity(escaped.len());
    for_each_code_unit(escaped, |unit| units.push(unit));
    Cow::Owned(String::from_utf16_lossy(&units))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undoes_every_escape_form() {
        let cases: &[(&[u8], &str)] = &[
            (b"plain name", "plain name"),
            (b"a\\x2Cb", "a,b"),
            (b"back\\\\slash", "back\\slash"),
            (b"line\\nbreak", "line\nbreak"),
            (b"caf\\xE9", "caf\u{e9}"),
            (b"\\u4E2D\\u6587", "\u{4e2d}\u{6587}"),
            (b"\\uD83D\\uDE00", "\u{1F600}"),
            (b"dangling\\", "dangling\\"),
            (b"bad\\xZZ", "bad\\xZZ"),
            (b"short\\u12", "short\\u12"),
            (b"other\\t", "other\\t"),
        ];
        for (escaped, expected) in cases {
            assert_eq!(unescape(escaped), *expected, "input {:?}", String::from_utf8_lossy(escaped));
        }
    }

    #[test]
    fn counts_one_code_unit_per_escape() {
        let mut units = Vec::new();
        for_each_code_unit(b"a\\x2C\\u00E9\\n\\\\", |unit| units.push(unit));
        assert_eq!(units, vec![97, 44, 0xE9, 10, 92]);
    }
}
