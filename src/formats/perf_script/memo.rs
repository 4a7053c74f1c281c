//! The memo of stack lines already parsed ([`StackLineMemo`]): each
//! distinct line is numbered and its parts kept, so a line read again needs
//! only its address parsed and its text compared.

use rustc_hash::FxHashMap;

use super::stack_line::{StackLineId, StackLineParts};
use super::text::{Span, parse_address};

/// At most this many distinct stack lines are numbered by a
/// [`StackLineMemo`]; later new ones are parsed every time (inputs with
/// ever new addresses).
const MEMO_LINES_LIMIT: usize = 1 << 20;

/// The distinct stack lines a reader has parsed, numbered: most lines
/// repeat, and a line seen before needs only its address parsed and its
/// text compared. Carried from reader to reader with
/// [`PerfScriptReader::with_memo`](super::PerfScriptReader::with_memo) so that the numbers stay the same.
///
/// Kept small, because each folding thread has one: lines are kept in
/// blocks with `u16` offsets rather than as boxed strings (measured in
/// docs/performance-log.md, "stack-line memo").
#[derive(Debug, Default)]
pub struct StackLineMemo {
    /// The last line numbered per address.
    by_address: FxHashMap<u64, StackLineId>,
    /// The lines by id.
    lines: Vec<MemoLine>,
    /// Their texts.
    texts: LineTexts,
    /// Per line, the line that followed it last (its caller's frame), or
    /// [`NO_SUCCESSOR`]: the caller of a return address is mostly the same
    /// one, so the next line is tried first, by its text alone.
    successors: Vec<u32>,
}

/// No line followed this one yet.
const NO_SUCCESSOR: u32 = u32::MAX;

/// One numbered stack line. Lines of 64 KiB or more are not numbered.
#[derive(Debug)]
struct MemoLine {
    /// Its address.
    address: u64,
    /// Where its text (from the address to the end, trimmed) is in the
    /// memo's [`LineTexts`].
    text_start: u32,
    /// Its text's length.
    text_length: u16,
    /// The ranges of its parts in the text (the address text starts at 0):
    /// address text end, symbol start and end, module start and end.
    ends: [u16; 5],
}

impl MemoLine {
    /// Its parts, numbered `id`.
    fn parts(&self, id: StackLineId) -> StackLineParts {
        let span = |start: u16, end: u16| Span { start: start.into(), end: end.into() };
        let [address_text_end, symbol_start, symbol_end, module_start, module_end] = self.ends;
        StackLineParts {
            address: self.address,
            address_text: span(0, address_text_end),
            symbol: span(symbol_start, symbol_end),
            module: span(module_start, module_end),
            id: Some(id),
        }
    }
}

/// The texts of a memo's lines, one after another in blocks of
/// [`LINE_TEXT_BLOCK_BYTES`] that are never moved (a growing string would
/// copy itself and leave up to half its capacity unused).
#[derive(Debug, Default)]
struct LineTexts {
    blocks: Vec<Vec<u8>>,
}

/// The size of a [`LineTexts`] block; a line of a memo is shorter.
const LINE_TEXT_BLOCK_BYTES: usize = 1 << 16;

impl LineTexts {
    /// Stores `text` (shorter than a block); returns where it starts, or
    /// `None` past the 4 GiB that `u32` offsets reach.
    fn push(&mut self, text: &str) -> Option<u32> {
        let fits = self.blocks.last().is_some_and(|block| block.len() + text.len() <= LINE_TEXT_BLOCK_BYTES);
        if !fits {
            u32::try_from((self.blocks.len() + 1) * LINE_TEXT_BLOCK_BYTES).ok()?;
            self.blocks.push(Vec::with_capacity(LINE_TEXT_BLOCK_BYTES));
        }
        let index = self.blocks.len() - 1;
        let block = &mut self.blocks[index];
        let start = index * LINE_TEXT_BLOCK_BYTES + block.len();
        block.extend_from_slice(text.as_bytes());
        Some(start as u32)
    }

    /// The text of `line`.
    fn text(&self, line: &MemoLine) -> &[u8] {
        let start = line.text_start as usize;
        let within = start % LINE_TEXT_BLOCK_BYTES;
        self.blocks
            .get(start / LINE_TEXT_BLOCK_BYTES)
            .and_then(|block| block.get(within..within + usize::from(line.text_length)))
            .unwrap_or_default()
    }
}

impl StackLineMemo {
    /// The parts of `line` (trimmed at both ends), numbered; `None` if it is
    /// not a stack line.
    pub(super) fn parts(&mut self, line: &str, previous: Option<StackLineId>) -> Option<StackLineParts> {
        if let Some(previous) = previous
            && let Some(&successor) = self.successors.get(previous.index())
            && let Some(known) = self.lines.get(successor as usize)
            && self.texts.text(known) == line.as_bytes()
        {
            return Some(known.parts(StackLineId(successor)));
        }
        let parts = self.parts_by_address(line)?;
        if let (Some(previous), Some(id)) = (previous, parts.id)
            && let Some(successor) = self.successors.get_mut(previous.index())
        {
            *successor = id.0;
        }
        Some(parts)
    }

    /// [`StackLineMemo::parts`] without a guess: found by the line's address.
    fn parts_by_address(&mut self, line: &str) -> Option<StackLineParts> {
        let first_space = memchr::memchr(b' ', line.as_bytes())?;
        let address = parse_address(line[..first_space].trim_end());
        if let Some(&id) = self.by_address.get(&address)
            && let Some(known) = self.lines.get(id.index())
            && self.texts.text(known) == line.as_bytes()
        {
            return Some(known.parts(id));
        }
        let parts = StackLineParts::parse(line)?;
        if self.lines.len() < MEMO_LINES_LIMIT
            && let Some(entry) = self.numbered(line, parts)
        {
            let id = StackLineId(self.lines.len() as u32);
            self.lines.push(entry);
            self.successors.push(NO_SUCCESSOR);
            self.by_address.insert(address, id);
            return Some(StackLineParts { id: Some(id), ..parts });
        }
        Some(parts)
    }

    /// The entry of a new line with `parts`, its text stored; `None` for a
    /// line of 64 KiB or more (kept unnumbered, parsed each time).
    fn numbered(&mut self, text: &str, parts: StackLineParts) -> Option<MemoLine> {
        let offset = |position: usize| u16::try_from(position).ok();
        let text_length = offset(text.len())?;
        let ends = [
            offset(parts.address_text.end)?,
            offset(parts.symbol.start)?,
            offset(parts.symbol.end)?,
            offset(parts.module.start)?,
            offset(parts.module.end)?,
        ];
        let text_start = self.texts.push(text)?;
        Some(MemoLine { address: parts.address, text_start, text_length, ends })
    }

    /// The number of lines numbered.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether no line is numbered.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines numbered across several text blocks read back as parsed, with
    /// their numbers; a line too long for the memo's offsets is parsed
    /// each time, unnumbered, and the one after it still gets the next id.
    #[test]
    fn memo_numbers_lines_across_text_blocks_and_skips_overlong_ones() {
        let longest_numbered = format!("ffff1 {} (/bin/a)", "s".repeat(usize::from(u16::MAX) - 15));
        assert_eq!(longest_numbered.len(), usize::from(u16::MAX));
        let too_long = format!("ffff2 {} (/bin/a)", "t".repeat(usize::from(u16::MAX)));
        let mut lines: Vec<String> =
            (0..3000).map(|index| format!("{index:x} function_{index:050} (/bin/a)")).collect();
        lines.insert(1500, longest_numbered);
        lines.insert(2000, too_long.clone());
        let mut memo = StackLineMemo::default();
        for round in 0..2 {
            let mut next_id = 0;
            for line in &lines {
                let parts = memo.parts_by_address(line).unwrap();
                let parsed = StackLineParts::parse(line).unwrap();
                assert_eq!(parts, StackLineParts { id: parts.id, ..parsed }, "round {round}: {line:.40}");
                if *line == too_long {
                    assert_eq!(parts.id, None);
                } else {
                    assert_eq!(parts.id, Some(StackLineId(next_id)), "round {round}: {line:.40}");
                    next_id += 1;
                }
            }
        }
        assert_eq!(memo.len(), 3001);
        assert!(memo.texts.blocks.len() >= 4, "{} blocks", memo.texts.blocks.len());
    }
}
