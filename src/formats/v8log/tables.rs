//! The `code-source-info` tables at ingest: checked in one pass over their
//! text, kept as text, decoded on first use.
//!
//! Most code objects are never looked up, so their position and inlining
//! tables are not decoded while the log is read: [`check_tables`] only makes
//! sure that decoding will succeed and that the tables are consistent, which
//! is what the diagnostics need. It accepts only the plain forms V8 writes
//! (numbers of at most nine digits, parents before their children); anything
//! else is left to the full parser of [`super::record`], which gives the
//! exact error, so a garbled table is still reported while the log is read.

/// The longest number [`check_tables`] takes: nine digits fit any `u32`
/// and `i32`, so no range checks are needed.
const MAX_DIGITS: usize = 9;

/// What [`check_tables`] learned about tables that decode cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckedTables {
    /// Whether the tables are consistent: every inlining id and function
    /// index in range, every parent before its child (so no chain loops).
    /// When false they still decode, and
    /// [`crate::diagnostics::inlining_table_problem`] says what is wrong.
    pub consistent: bool,
}

/// How many ASCII digits `text` has from `at` on. Positions are most of a
/// table's bytes: eight are looked at in one step where eight remain.
#[inline(always)]
fn digit_run(text: &[u8], at: usize) -> usize {
    if let Some(bytes) = text.get(at..at + 8) {
        let word = u64::from_le_bytes(bytes.try_into().expect("eight bytes"));
        let non_digits = non_digit_bytes(word);
        if non_digits != 0 {
            return non_digits.trailing_zeros() as usize / 8;
        }
    }
    text.get(at..).unwrap_or_default().iter().take_while(|byte| byte.is_ascii_digit()).count()
}

/// The high bit of each byte of `word` that is no ASCII digit (0x30-0x39);
/// no carry crosses bytes.
fn non_digit_bytes(word: u64) -> u64 {
    const LOW_SEVEN: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let low = word & LOW_SEVEN;
    let above_nine = low + ONES * (0x7f - b'9' as u64);
    let from_zero = low + ONES * (0x80 - b'0' as u64);
    (above_nine | !from_zero | word) & HIGH
}

/// A cursor over a table's text, for [`check_tables`]: one pass, no values
/// computed but the ids that need a range check.
struct TableCursor<'table> {
    text: &'table [u8],
    at: usize,
}

impl TableCursor<'_> {
    #[inline(always)]
    fn at_end(&self) -> bool {
        self.at >= self.text.len()
    }

    /// Steps over `byte` when it comes next.
    #[inline(always)]
    fn take(&mut self, byte: u8) -> bool {
        let taken = self.text.get(self.at) == Some(&byte);
        self.at += usize::from(taken);
        taken
    }

    /// Steps over 1 to [`MAX_DIGITS`] digits; `None` for none or more.
    #[inline(always)]
    fn skip_number(&mut self) -> Option<()> {
        let digits = digit_run(self.text, self.at);
        self.at += digits;
        (1..=MAX_DIGITS).contains(&digits).then_some(())
    }

    /// Reads 0 to [`MAX_DIGITS`] digits (`Some(None)` for none); `None` for
    /// more.
    #[inline(always)]
    fn number(&mut self) -> Option<Option<u32>> {
        let start = self.at;
        let mut value: u32 = 0;
        while let Some(&byte) = self.text.get(self.at) {
            let digit = byte.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            value = value.wrapping_mul(10).wrapping_add(u32::from(digit));
            self.at += 1;
        }
        match self.at - start {
            0 => Some(None),
            1..=MAX_DIGITS => Some(Some(value)),
            _ => None,
        }
    }

    /// Steps over `O<offset>[I<id>]`; returns the `I` id, or `None` unless
    /// it is plain.
    #[inline(always)]
    fn offset_and_id(&mut self) -> Option<Option<u32>> {
        if !self.take(b'O') {
            return None;
        }
        self.take(b'-');
        self.skip_number()?;
        if !self.take(b'I') {
            return Some(None);
        }
        Some(Some(self.number()??))
    }
}

/// Checks the positions (`C<n>O<n>[I<n>]...`) and inlining positions
/// (`F[<n>]O<n>[I<n>]...`) of a `code-source-info` with
/// `inlined_function_count` inlined functions. `None`: not in the plain form
/// this check takes (the full parser decides).
pub fn check_tables(positions: &[u8], inlining: &[u8], inlined_function_count: usize) -> Option<CheckedTables> {
    let mut consistent = true;
    // Inlining positions first: the positions' ids must be below their count.
    let mut inlining_count: u32 = 0;
    let mut cursor = TableCursor { text: inlining, at: 0 };
    while !cursor.at_end() {
        if !cursor.take(b'F') {
            return None;
        }
        if cursor.number()?.is_some_and(|function_index| function_index as usize >= inlined_function_count) {
            consistent = false;
        }
        // V8 adds a caller before the functions it inlines.
        if cursor.offset_and_id()?.is_some_and(|parent| parent >= inlining_count) {
            consistent = false;
        }
        inlining_count += 1;
    }
    let mut cursor = TableCursor { text: positions, at: 0 };
    while !cursor.at_end() {
        if !cursor.take(b'C') {
            return None;
        }
        cursor.skip_number()?;
        if cursor.offset_and_id()?.is_some_and(|id| id >= inlining_count) {
            consistent = false;
        }
    }
    Some(CheckedTables { consistent })
}

/// Appends the addresses of `S0x<address>...` to `addresses`; `false` unless
/// the list is in the plain form (at most 16 hex digits each).
pub fn inlined_function_addresses(table: &[u8], addresses: &mut Vec<u64>) -> bool {
    let mut at = 0;
    while at < table.len() {
        if !table[at..].starts_with(b"S0x") {
            return false;
        }
        at += 3;
        let mut value: u64 = 0;
        let start = at;
        while let Some(&byte) = table.get(at) {
            let digit = match byte {
                b'0'..=b'9' => byte - b'0',
                b'a'..=b'f' => byte - b'a' + 10,
                b'A'..=b'F' => byte - b'A' + 10,
                _ => break,
            };
            value = (value << 4) | u64::from(digit);
            at += 1;
        }
        if at == start || at - start > 16 {
            return false;
        }
        addresses.push(value);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::v8log::record::{parse_inlined_functions, parse_inlining_positions, parse_positions};

    /// Whatever the check takes, the full parser takes too, to the same
    /// effect; what it leaves, the full parser may refuse.
    #[test]
    fn plain_tables_pass_and_the_rest_goes_to_the_full_parser() {
        let cases: &[(&str, &str, usize, Option<bool>)] = &[
            ("", "", 0, Some(true)),
            ("C0O68C39O28I0C114O-1I1", "F0O81FO88I0", 1, Some(true)),
            ("C0O5I2", "F0O100F1O200I0", 2, Some(false)),
            ("C0O5", "F2O100", 2, Some(false)),
            ("C0O5", "F0O100I0", 1, Some(false)),
            ("C0O5", "F0O100I1F0O1", 1, Some(false)),
            ("C1C2O3", "", 0, None),
            ("C1O2I3I4", "", 0, None),
            ("C1", "", 0, None),
            ("C1O", "", 0, None),
            ("C1O-", "", 0, None),
            ("C1OI", "", 0, None),
            ("C1O2I", "", 0, None),
            ("C1O2Z", "", 0, None),
            ("C1234567890O1", "", 0, None),
            ("C1O1", "F0", 1, None),
            ("C1O1", "F0O1I2I3", 1, None),
            ("C1O1", "C0O1", 1, None),
            ("C1O1", "F1234567890O1", 1, None),
        ];
        for &(positions, inlining, functions, expected) in cases {
            let checked = check_tables(positions.as_bytes(), inlining.as_bytes(), functions);
            assert_eq!(checked.map(|checked| checked.consistent), expected, "{positions} {inlining}");
            if checked.is_some() {
                assert!(parse_positions(positions.as_bytes()).is_ok(), "{positions}");
                assert!(parse_inlining_positions(inlining.as_bytes()).is_ok(), "{inlining}");
            }
        }
    }

    #[test]
    fn digit_runs_of_every_length_and_byte() {
        for byte in 0..=255u8 {
            for run in 0..12 {
                let mut text = vec![b'7'; run];
                text.push(byte);
                text.extend_from_slice(b"123456789");
                let expected = run + if byte.is_ascii_digit() { 1 + 9 } else { 0 };
                assert_eq!(digit_run(&text, 0), expected, "{run} digits then {byte}");
                assert_eq!(digit_run(&text[..run], 0), run);
            }
        }
        assert_eq!(digit_run(b"12", 5), 0);
    }

    #[test]
    fn inlined_function_lists() {
        for (table, expected) in [
            ("", Some(vec![])),
            ("S0x1a2BS0x3c4d", Some(vec![0x1a2b, 0x3c4d])),
            ("S0xffffffffffffffff", Some(vec![u64::MAX])),
            ("S0x1ffffffffffffffff", None),
            ("S0x", None),
            ("S0X1", None),
            ("S0x1S", None),
            ("S0x1g", None),
        ] {
            let mut addresses = Vec::new();
            let plain = inlined_function_addresses(table.as_bytes(), &mut addresses);
            assert_eq!(plain.then_some(addresses.clone()), expected, "{table}");
            if plain {
                assert_eq!(parse_inlined_functions(table.as_bytes()).unwrap(), addresses, "{table}");
            }
        }
    }
}
