//! Script offsets to 1-based line and column.
//!
//! V8's script offsets count UTF-16 code units, and its lines end at `\n`,
//! `\r\n`, `\r`, U+2028 and U+2029 (`String::CalculateLineEnds` in
//! [src/objects/string.cc](https://chromium.googlesource.com/v8/v8/+/refs/heads/main/src/objects/string.cc)).

use crate::formats::v8log::escape;

/// The position [`LineTable::position`] gives, parsed with V8's names in
/// [`crate::formats::v8log::name`]; also here for the benches and fuzz
/// targets that take it from this module.
use crate::formats::v8log::name::LineColumn;

/// Where each line of a script starts, in UTF-16 code units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineTable {
    /// Offset of the first unit of each line; `line_starts[0] == 0`.
    line_starts: Vec<u32>,
    /// Length of the script in UTF-16 units.
    length: u32,
}

impl LineTable {
    /// Builds the table from UTF-16 code units.
    pub fn from_code_units(units: impl IntoIterator<Item = u16>) -> LineTable {
        let mut line_starts = vec![0];
        let mut offset: u32 = 0;
        let mut previous_was_carriage_return = false;
        for unit in units {
            offset = offset.saturating_add(1);
            match unit {
                0x0A => {
                    line_starts.push(offset);
                }
                0x0D | 0x2028 | 0x2029 => line_starts.push(offset),
                _ => {}
            }
            // `\r\n` is one line end: move the start past the `\n`.
            if unit == 0x0A && previous_was_carriage_return {
                line_starts.pop();
                if let Some(last) = line_starts.last_mut() {
                    *last = offset;
                }
            }
            previous_was_carriage_return = unit == 0x0D;
        }
        LineTable { line_starts, length: offset }
    }

    /// Builds the table from a source escaped as in the code log.
    pub fn from_escaped_source(escaped: &[u8]) -> LineTable {
        let mut units = Vec::with_capacity(escaped.len());
        escape::for_each_code_unit(escaped, |unit| units.push(unit));
        LineTable::from_code_units(units)
    }

    /// Builds the table from UTF-8 text (a script read from disk).
    pub fn from_text(text: &str) -> LineTable {
        LineTable::from_code_units(text.encode_utf16())
    }

    /// The line and column of a script offset; `None` if it is negative or
    /// past the end of the script.
    pub fn position(&self, offset: i64) -> Option<LineColumn> {
        let offset = u32::try_from(offset).ok()?;
        if offset > self.length {
            return None;
        }
        // The last line start at or before the offset.
        let line_index = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let line_start = self.line_starts[line_index];
        Some(LineColumn { line: line_index as u32 + 1, column: offset - line_start + 1 })
    }

    /// Number of lines.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The last 0-based column of a 0-based line, in UTF-16 units: that of
    /// the last unit of its line break, or the end of the script on the last
    /// line; `None` past the last line.
    pub fn last_column(&self, line_index: usize) -> Option<u32> {
        let start = *self.line_starts.get(line_index)?;
        Some(match self.line_starts.get(line_index + 1) {
            Some(next) => next - start - 1,
            None => self.length - start,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_terminator() {
        // "a\nb\r\nc\rd\u{2028}e\u{2029}f"
        let table = LineTable::from_text("a\nb\r\nc\rd\u{2028}e\u{2029}f");
        let expected = [(0, 1, 1), (1, 1, 2), (2, 2, 1), (5, 3, 1), (7, 4, 1), (9, 5, 1), (11, 6, 1)];
        for (offset, line, column) in expected {
            assert_eq!(table.position(offset), Some(LineColumn { line, column }), "offset {offset}");
        }
        assert_eq!(table.line_count(), 6);
        // "a\n" ends at its \n, "b\r\n" at its \n, "f" at the script's end.
        let last_columns: Vec<Option<u32>> = (0..7).map(|line| table.last_column(line)).collect();
        assert_eq!(last_columns, [Some(1), Some(2), Some(1), Some(1), Some(1), Some(1), None]);
        assert_eq!(table.position(-1), None);
        assert_eq!(table.position(13), None);
    }

    #[test]
    fn columns_count_utf16_units() {
        // U+1F600 is two UTF-16 units; é is one.
        let table = LineTable::from_text("x\u{1F600}é = 1;\nfoo");
        assert_eq!(table.position(3), Some(LineColumn { line: 1, column: 4 }));
        assert_eq!(table.position(4), Some(LineColumn { line: 1, column: 5 }));
        assert_eq!(table.position(10), Some(LineColumn { line: 2, column: 1 }));
    }

    #[test]
    fn escaped_sources_match_plain_ones() {
        let escaped = LineTable::from_escaped_source(b"a\\x2Cb\\nc\\x0D\\nd\\u2028e");
        let plain = LineTable::from_text("a,b\nc\r\nd\u{2028}e");
        assert_eq!(escaped, plain);
    }
}
