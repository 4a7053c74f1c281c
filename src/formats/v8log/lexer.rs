//! Logos lexers for the code log: the record kind that starts each line, and
//! the compact tables of `code-source-info` records.

use logos::{Lexer, Logos};

/// The kind of a code-log record: the first field of its line.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[logos(utf8 = false)]
pub enum LogRecordKind {
    /// `code-creation`: a code object was created.
    #[token("code-creation")]
    CodeCreation,
    /// `code-source-info`: source positions and inlining of the code object just created.
    #[token("code-source-info")]
    CodeSourceInfo,
    /// `script-source`: the full text of a script.
    #[token("script-source")]
    ScriptSource,
    /// `script-details`: a script's name and offsets.
    #[token("script-details")]
    ScriptDetails,
    /// `sfi-move`: the GC moved a SharedFunctionInfo.
    #[token("sfi-move")]
    SfiMove,
    /// `code-move`: the GC moved a code object or bytecode array.
    #[token("code-move")]
    CodeMove,
    /// `code-delete`: a code object was freed (old logs only).
    #[token("code-delete")]
    CodeDelete,
    /// `shared-library`: a native library mapped into the process.
    #[token("shared-library")]
    SharedLibrary,
    /// `tick`: one of V8's own samples (`--prof`).
    #[token("tick")]
    Tick,
    /// `v8-version`: the V8 version; a second one marks another isolate.
    #[token("v8-version")]
    V8Version,
}

impl LogRecordKind {
    /// Recognizes the record kind of a whole first field, or `None` for a kind
    /// this reader skips.
    pub fn of_field(field: &[u8]) -> Option<LogRecordKind> {
        let mut lexer = LogRecordKind::lexer(field);
        let kind = lexer.next()?.ok()?;
        // The token must be the whole field: `tick-foo` is not `tick`.
        (lexer.span().end == field.len()).then_some(kind)
    }
}

fn decimal(lexer: &mut Lexer<'_, TableToken>) -> Option<i64> {
    parse_decimal(&lexer.slice()[1..])
}

fn optional_decimal(lexer: &mut Lexer<'_, TableToken>) -> Option<Option<i64>> {
    let digits = &lexer.slice()[1..];
    if digits.is_empty() {
        return Some(None);
    }
    parse_decimal(digits).map(Some)
}

fn hexadecimal(lexer: &mut Lexer<'_, TableToken>) -> Option<u64> {
    parse_hex_address(&lexer.slice()[1..])
}

/// A token of the `code-source-info` tables:
/// positions `C<code_offset>O<script_offset>[I<inlining_id>]`, inlining
/// positions `F[<function_index>]O<call_offset>[I<parent>]` and inlined
/// functions `S<sfi_address>`.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(utf8 = false)]
pub enum TableToken {
    /// `C<code_offset>`: starts a position entry.
    #[regex(b"C[0-9]+", decimal)]
    CodeOffset(i64),
    /// `O<script_offset>` (may be `O-1`: no position).
    #[regex(b"O-?[0-9]+", decimal)]
    ScriptOffset(i64),
    /// `I<inlining_id>`: the entry is inside inlined code.
    #[regex(b"I[0-9]+", decimal)]
    InliningId(i64),
    /// `F[<index>]`: starts an inlining position; no index = no function.
    #[regex(b"F[0-9]*", optional_decimal)]
    Function(Option<i64>),
    /// `S<address>`: an inlined SharedFunctionInfo.
    #[regex(b"S0x[0-9a-fA-F]+", hexadecimal)]
    SharedFunction(u64),
}

/// Parses an optionally negative decimal number, `None` on overflow or junk.
pub fn parse_decimal(digits: &[u8]) -> Option<i64> {
    let (negative, digits) = match digits.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, digits),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i64 = 0;
    if digits.len() <= 18 {
        // 18 digits cannot overflow an i64: no checks per digit.
        for &digit in digits {
            if !digit.is_ascii_digit() {
                return None;
            }
            value = value * 10 + i64::from(digit - b'0');
        }
    } else {
        for &digit in digits {
            if !digit.is_ascii_digit() {
                return None;
            }
            value = value.checked_mul(10)?.checked_add(i64::from(digit - b'0'))?;
        }
    }
    Some(if negative { -value } else { value })
}

/// Parses `0x`-prefixed hexadecimal, as V8 prints addresses.
pub fn parse_hex_address(text: &[u8]) -> Option<u64> {
    let digits = text.strip_prefix(b"0x").or_else(|| text.strip_prefix(b"0X"))?;
    parse_hex_digits(digits)
}

/// Parses bare hexadecimal digits, `None` on overflow or junk.
pub fn parse_hex_digits(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let mut value: u64 = 0;
    for &digit in digits {
        let digit = HEX_DIGIT_VALUES[usize::from(digit)];
        if digit == NOT_HEX {
            return None;
        }
        value = (value << 4) | u64::from(digit);
    }
    Some(value)
}

/// [`HEX_DIGIT_VALUES`] of a byte that is no hexadecimal digit.
const NOT_HEX: u8 = 0xff;

/// Each byte's value as a hexadecimal digit (either case), or [`NOT_HEX`]:
/// one load per digit where addresses are read by the million.
static HEX_DIGIT_VALUES: [u8; 256] = {
    let mut values = [NOT_HEX; 256];
    let mut byte = 0;
    while byte < 256 {
        values[byte] = match byte as u8 {
            digit @ b'0'..=b'9' => digit - b'0',
            digit @ b'a'..=b'f' => digit - b'a' + 10,
            digit @ b'A'..=b'F' => digit - b'A' + 10,
            _ => NOT_HEX,
        };
        byte += 1;
    }
    values
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_kinds_table() {
        let cases: &[(&[u8], Option<LogRecordKind>)] = &[
            (b"code-creation", Some(LogRecordKind::CodeCreation)),
            (b"code-source-info", Some(LogRecordKind::CodeSourceInfo)),
            (b"script-source", Some(LogRecordKind::ScriptSource)),
            (b"script-details", Some(LogRecordKind::ScriptDetails)),
            (b"sfi-move", Some(LogRecordKind::SfiMove)),
            (b"code-move", Some(LogRecordKind::CodeMove)),
            (b"code-delete", Some(LogRecordKind::CodeDelete)),
            (b"shared-library", Some(LogRecordKind::SharedLibrary)),
            (b"tick", Some(LogRecordKind::Tick)),
            (b"v8-version", Some(LogRecordKind::V8Version)),
            (b"heap-capacity", None),
            (b"code-creation-x", None),
            (b"tickle", None),
            (b"", None),
            (b"\xff\xfe", None),
        ];
        for (field, expected) in cases {
            assert_eq!(LogRecordKind::of_field(field), *expected, "{:?}", String::from_utf8_lossy(field));
        }
    }

    #[test]
    fn table_tokens() {
        let lexed: Vec<_> = TableToken::lexer(b"C0O68C39O-1I12FO81F3O88I0S0x1a2B").map(|token| token.ok()).collect();
        use TableToken::*;
        assert_eq!(
            lexed,
            vec![
                Some(CodeOffset(0)),
                Some(ScriptOffset(68)),
                Some(CodeOffset(39)),
                Some(ScriptOffset(-1)),
                Some(InliningId(12)),
                Some(Function(None)),
                Some(ScriptOffset(81)),
                Some(Function(Some(3))),
                Some(ScriptOffset(88)),
                Some(InliningId(0)),
                Some(SharedFunction(0x1a2b)),
            ]
        );
    }

    #[test]
    fn junk_in_tables_is_an_error_token_not_a_panic() {
        let lexed: Vec<_> = TableToken::lexer(b"C99999999999999999999999O1Zq").collect();
        assert!(lexed.iter().any(|token| token.is_err()));
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_decimal(b"-1"), Some(-1));
        assert_eq!(parse_decimal(b"123"), Some(123));
        assert_eq!(parse_decimal(b""), None);
        assert_eq!(parse_decimal(b"-"), None);
        assert_eq!(parse_decimal(b"1a"), None);
        assert_eq!(parse_decimal(b"99999999999999999999"), None);
        assert_eq!(parse_decimal(b"999999999999999999"), Some(999_999_999_999_999_999));
        assert_eq!(parse_decimal(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_decimal(b"-9223372036854775807"), Some(-i64::MAX));
        assert_eq!(parse_decimal(b"9223372036854775808"), None);
        assert_eq!(parse_hex_address(b"0x7f3e9a7e5a40"), Some(0x7f3e9a7e5a40));
        assert_eq!(parse_hex_address(b"7f3e"), None);
        assert_eq!(parse_hex_address(b"0x"), None);
        assert_eq!(parse_hex_address(b"0x11112222333344445"), None);
    }
}
