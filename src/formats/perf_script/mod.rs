//! Streaming reader of `perf script` text output.
//!
//! The input is a sequence of samples. Each sample starts with an event line
//!
//! ```text
//! node  2696   102.105295:    1003009 cpu-clock:
//! ```
//!
//! followed by one stack line per frame (indented with a tab), leaf first,
//! and a blank line:
//!
//! ```text
//!               e1f174 v8::internal::interpreter::ConstantArrayBuilder::Insert+0x44 (/usr/bin/node)
//!                  15c JS:~toRealPath node:internal/modules/helpers:57:20+0xdc (/tmp/perf-2696.map)
//! ```
//!
//! The line rules are those of inferno 0.12.8's `perf` collapser, quirks
//! included, because `crate::collapse` must reproduce its output byte for byte:
//!
//! * each line is decoded with `String::from_utf8_lossy`, then lines starting
//!   with `#` are skipped wherever they appear, and trailing whitespace
//!   (including `\r`) is trimmed;
//! * a blank line ends the current sample (and forgets the last period);
//! * outside a sample, a line is an event line: the comm is everything before
//!   the first all-digit word that follows a space (`2696` or `2690/2696`);
//!   after it, the text up to the first `:` holds the optional `[cpu]` and the
//!   time, the text up to the second `:` ends with `period event` (the period
//!   only if exactly one space separates them), and anything after the event's
//!   own modifiers (`cycles:uppp:`) is a stack line printed on the same line,
//!   which makes the sample complete at once;
//! * an event line that cannot be split is skipped with a warning, and the next
//!   line is tried as an event line again (even if it is a stack line);
//! * a sample whose event differs from the selected one ([`EventSelection`]) is
//!   skipped up to the next blank line, even when it was a combined line;
//! * inside a sample, a stack line is `address symbol (module)`, split at the
//!   first and at the last space; other lines are skipped with a warning.

use std::fmt;
use std::io::{self, BufRead};

use rustc_hash::FxHashMap;

use crate::model::sample::SampleTime;

/// The longest line text a [`WarningExample`] keeps, in bytes.
const WARNING_EXAMPLE_MAX_BYTES: usize = 512;

/// Parses a time as `perf script` prints it (`seconds[.fraction]`, e.g.
/// `102.105295`), with any number of decimal digits exactly (digits beyond
/// nanoseconds are dropped). Returns `None` for anything else or when the
/// value does not fit in `u64` nanoseconds.
pub fn parse_sample_time(text: &str) -> Option<SampleTime> {
    const NANOSECONDS_PER_SECOND: u64 = 1_000_000_000;
    let (seconds_text, fraction_text) = match text.split_once('.') {
        Some((seconds, fraction)) => (seconds, fraction),
        None => (text, ""),
    };
    let has_point = seconds_text.len() != text.len();
    if seconds_text.is_empty()
        || !seconds_text.bytes().all(|byte| byte.is_ascii_digit())
        || !fraction_text.bytes().all(|byte| byte.is_ascii_digit())
    {
        return None;
    }
    let mut seconds: u64 = 0;
    for digit in seconds_text.bytes() {
        seconds = seconds.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
    }
    let mut fraction_nanoseconds: u64 = 0;
    let mut resolution_nanoseconds = NANOSECONDS_PER_SECOND;
    for position in 0..9 {
        let digit = fraction_text.as_bytes().get(position).map_or(0, |byte| byte - b'0');
        fraction_nanoseconds = fraction_nanoseconds * 10 + u64::from(digit);
        if position < fraction_text.len() {
            resolution_nanoseconds /= 10;
        }
    }
    if !has_point {
        resolution_nanoseconds = NANOSECONDS_PER_SECOND;
    }
    let nanoseconds = seconds.checked_mul(NANOSECONDS_PER_SECOND)?.checked_add(fraction_nanoseconds)?;
    Some(SampleTime { nanoseconds, resolution_nanoseconds })
}

/// Which event type a [`PerfScriptReader`] yields samples of.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EventSelection {
    /// Only the event type of the first event line that names one, like
    /// inferno (merging cycles with instructions would mislead).
    #[default]
    FirstSeen,
    /// Only this event type (the text before the event's own `:`, e.g.
    /// `cpu-clock` or `cycles`).
    Only(String),
    /// Every event type.
    All,
}

/// A byte range inside the reader's sample text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Span {
    /// Offset of the first byte.
    start: usize,
    /// Offset one past the last byte.
    end: usize,
}

impl Span {
    /// The range that `inner`, a subslice of `outer`, occupies in `outer`.
    fn within(outer: &str, inner: &str) -> Span {
        let start = (inner.as_ptr() as usize).wrapping_sub(outer.as_ptr() as usize);
        debug_assert!(start + inner.len() <= outer.len());
        Span { start, end: start + inner.len() }
    }

    /// This range moved `offset` bytes to the right.
    fn shifted(self, offset: usize) -> Span {
        Span { start: self.start + offset, end: self.end + offset }
    }

    /// This range moved `offset` bytes to the left.
    fn shifted_left(self, offset: usize) -> Span {
        Span { start: self.start - offset, end: self.end - offset }
    }

    /// The text this range covers in `text`; empty if out of range.
    fn of(self, text: &str) -> &str {
        text.get(self.start..self.end).unwrap_or("")
    }
}

/// One stack line of a sample: `address symbol (module)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackLine<'a> {
    /// The address parsed as hexadecimal; 0 when it does not parse.
    pub address: u64,
    /// The address as printed.
    pub address_text: &'a str,
    /// The symbol as printed, including any `+0x` offset; empty when perf
    /// printed none (inferno names such a frame `" "`).
    pub symbol: &'a str,
    /// The module (DSO) without its parentheses, e.g. `/usr/bin/node`,
    /// `[kernel.kallsyms]`, `[unknown]`.
    pub module: &'a str,
    /// The whole line from the address to the module's closing parenthesis:
    /// two stack lines with the same text are the same frame.
    pub text: &'a str,
    /// The reader's number for this text: stack lines with the same id have
    /// the same text (see [`StackLineMemo`]); `None` when not numbered.
    pub id: Option<StackLineId>,
}

/// A [`PerfScriptReader`]'s number for a distinct stack line text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StackLineId(u32);

impl StackLineId {
    /// The id as an index from 0, dense in the order the texts were first
    /// read.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// At most this many distinct stack lines are numbered by a
/// [`StackLineMemo`]; later new ones are parsed every time (inputs with
/// ever new addresses).
const MEMO_LINES_LIMIT: usize = 1 << 20;

/// The distinct stack lines a reader has parsed, numbered: most lines
/// repeat, and a line seen before needs only its address parsed and its
/// text compared. Carried from reader to reader with
/// [`PerfScriptReader::with_memo`] so that the numbers stay the same.
///
/// Kept small, because each folding thread has one: a 20 s recording of a
/// real app has 11,637 distinct stack lines of 65 bytes on average, and
/// lines as boxed strings with `u32` offsets took 1.2 MB per thread where
/// these blocks and `u16` offsets take 0.7.
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
    fn parts(&mut self, line: &str, previous: Option<StackLineId>) -> Option<StackLineParts> {
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

impl<'a> StackLine<'a> {
    /// Parses a stack line the way inferno does: the address ends at the first
    /// space, the module is the last space-separated word and must be wrapped
    /// in parentheses, the symbol is what lies between (trimmed). Returns
    /// `None` for lines that do not have this shape.
    pub fn parse(line: &'a str) -> Option<StackLine<'a>> {
        let parts = StackLineParts::parse(line)?;
        Some(parts.resolve(line))
    }

    /// The symbol without a trailing `+0x<hex digits>` offset (inferno strips
    /// it even when no digit follows `+0x`).
    pub fn function(&self) -> &'a str {
        strip_symbol_offset(self.symbol)
    }
}

/// Returns `symbol` without a trailing `+0x<hex digits>` offset (also when
/// no digit follows `+0x`), as inferno strips it.
pub fn strip_symbol_offset(symbol: &str) -> &str {
    // The last `+0x` can only be followed by hex digits if it starts at the
    // last `+`, so looking at that one is enough (and faster than `rfind`).
    if let Some(offset) = memchr::memrchr(b'+', symbol.as_bytes()) {
        let after = &symbol[offset + 1..];
        if let Some(digits) = after.strip_prefix("0x")
            && digits.bytes().all(|byte| byte.is_ascii_hexdigit())
        {
            return &symbol[..offset];
        }
    }
    symbol
}

/// `text.trim_end()`, dropping ASCII whitespace bytewise first (the
/// Unicode-aware scan runs only when a non-ASCII byte is left at the end).
fn trim_end_fast(text: &str) -> &str {
    let bytes = text.as_bytes();
    let kept = bytes.iter().rposition(|byte| !matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c));
    let trimmed = &text[..kept.map_or(0, |last| last + 1)];
    if trimmed.as_bytes().last().is_some_and(|byte| !byte.is_ascii()) { trimmed.trim_end() } else { trimmed }
}

/// `text.trim_start()`, skipping ASCII spaces and tabs bytewise first.
fn trim_start_fast(text: &str) -> &str {
    let blanks = text.bytes().position(|byte| byte != b' ' && byte != b'\t').unwrap_or(text.len());
    text[blanks..].trim_start()
}

/// `text.trim()`, answering without a Unicode-aware scan when both ends are
/// ASCII non-blanks (almost always).
fn trim_fast(text: &str) -> &str {
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
fn parse_address(text: &str) -> u64 {
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

/// How many bytes the reader takes from its input at a time (more when a
/// line is longer).
const BLOCK_BYTES: usize = 128 * 1024;

/// The longest line read: a longer one is damage, dropped as it is read
/// and counted as a skipped line. Real lines are a few kilobytes (the
/// longest in testdata/ is 7,201 bytes: a stack line of a long C++ name);
/// names of megabytes are still read.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// What stands in the text for a line over [`MAX_LINE_BYTES`]: no event
/// or stack line (no digits, no address), so it is skipped and counted
/// where the line was, and shown as the example.
pub const TOO_LONG_LINE: &str = "<v8inline: a line of more than sixty-four MiB, skipped>";

/// Past this many bytes without a line end the input is no text at all
/// (`/dev/zero` through a pipe): an error, not an endless read.
pub const MAX_UNENDED_BYTES: u64 = 1 << 30;

/// The most a sample may hold: its stack lines and the bytes from its event
/// line on. Real stacks have at most perf's `kernel.perf_event_max_stack`
/// (127 by default) frames. A larger sample is damage: dropped, counted as
/// a skipped line, the memory it held let go.
pub const MAX_SAMPLE_LINES: usize = 1 << 16;
/// See [`MAX_SAMPLE_LINES`].
pub const MAX_SAMPLE_BYTES: usize = 64 << 20;

/// A parsed stack line as ranges into the text it was parsed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StackLineParts {
    /// The address parsed as hexadecimal; 0 when it does not parse.
    address: u64,
    /// Range of the address text.
    address_text: Span,
    /// Range of the symbol text.
    symbol: Span,
    /// Range of the module text, without parentheses.
    module: Span,
    /// The memo's number for the line, if it has one.
    id: Option<StackLineId>,
}

impl StackLineParts {
    /// Splits `line` like inferno's `stack_line_parts`.
    fn parse(line: &str) -> Option<StackLineParts> {
        let trimmed = trim_start_fast(line);
        let first_space = memchr::memchr(b' ', trimmed.as_bytes())?;
        let address_text = trimmed[..first_space].trim_end();
        let rest = &trimmed[first_space + 1..];
        let last_space = memchr::memrchr(b' ', rest.as_bytes())?;
        let module = &rest[last_space + 1..];
        if !(module.starts_with('(') && module.ends_with(')')) {
            return None;
        }
        let module = &module[1..module.len() - 1];
        let symbol = trim_fast(&rest[..last_space]);
        Some(StackLineParts {
            address: parse_address(address_text),
            address_text: Span::within(line, address_text),
            symbol: Span::within(line, symbol),
            module: Span::within(line, module),
            id: None,
        })
    }

    /// These ranges moved `offset` bytes to the right.
    fn shifted(self, offset: usize) -> StackLineParts {
        StackLineParts {
            address: self.address,
            address_text: self.address_text.shifted(offset),
            symbol: self.symbol.shifted(offset),
            module: self.module.shifted(offset),
            id: self.id,
        }
    }

    /// These ranges moved `offset` bytes to the left.
    fn shifted_left(self, offset: usize) -> StackLineParts {
        StackLineParts {
            address: self.address,
            address_text: self.address_text.shifted_left(offset),
            symbol: self.symbol.shifted_left(offset),
            module: self.module.shifted_left(offset),
            id: self.id,
        }
    }

    /// The stack line these ranges describe in `text`.
    fn resolve(self, text: &str) -> StackLine<'_> {
        StackLine {
            address: self.address,
            address_text: self.address_text.of(text),
            symbol: self.symbol.of(text),
            module: self.module.of(text),
            text: Span { start: self.address_text.start, end: self.module.end + 1 }.of(text),
            id: self.id,
        }
    }
}

/// The stack lines of a [`ScriptSample`], leaf (the sampled instruction) first.
#[derive(Debug, Clone)]
pub struct StackLines<'a> {
    /// The text the ranges point into.
    text: &'a str,
    /// The remaining stack lines.
    parts: std::slice::Iter<'a, StackLineParts>,
}

impl<'a> Iterator for StackLines<'a> {
    type Item = StackLine<'a>;

    fn next(&mut self) -> Option<StackLine<'a>> {
        self.parts.next().map(|parts| parts.resolve(self.text))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.parts.size_hint()
    }
}

impl DoubleEndedIterator for StackLines<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.parts.next_back().map(|parts| parts.resolve(self.text))
    }
}

impl ExactSizeIterator for StackLines<'_> {}

/// One sample: its event line's fields and its stack lines.
///
/// Borrows the reader's buffers; it is valid until the next call of
/// [`PerfScriptReader::next_sample`].
#[derive(Debug, Clone, Copy)]
pub struct ScriptSample<'a> {
    /// The command name (thread name) as printed, trimmed; may contain spaces.
    pub comm: &'a str,
    /// The process id, when perf printed `pid/tid` and it fits `u32`.
    pub pid: Option<u32>,
    /// The thread id (perf's default output prints only this one); 0 when
    /// it does not fit `u32`.
    pub tid: u32,
    /// The process id text as inferno uses it in root frames: `?` when perf
    /// printed only the thread id.
    pub pid_text: &'a str,
    /// The thread id text.
    pub tid_text: &'a str,
    /// The CPU, when perf printed `[cpu]`.
    pub cpu: Option<u32>,
    /// The timestamp, when perf printed one.
    pub time: Option<SampleTime>,
    /// The sample period (e.g. nanoseconds of `cpu-clock`), when perf printed
    /// it. A counting consumer counts the sample this many times, or once.
    pub period: Option<u64>,
    /// The event type, e.g. `cpu-clock` or `cycles` (its `:u`-style
    /// modifiers are not part of it); empty when the line names none.
    pub event: &'a str,
    /// The 1-based line number of the event line.
    pub line_number: u64,
    /// The text the stack line ranges point into.
    text: &'a str,
    /// The stack lines, leaf first.
    stack: &'a [StackLineParts],
}

impl<'a> ScriptSample<'a> {
    /// The stack lines, leaf (the sampled instruction) first.
    pub fn frames(&self) -> StackLines<'a> {
        StackLines { text: self.text, parts: self.stack.iter() }
    }

    /// The number of stack lines.
    pub fn frame_count(&self) -> usize {
        self.stack.len()
    }

    /// The stack line at `index` (0 = leaf).
    pub fn frame(&self, index: usize) -> Option<StackLine<'a>> {
        self.stack.get(index).map(|parts| parts.resolve(self.text))
    }

    /// The reader's number of the stack line at `index`, without resolving
    /// its text (a caller that knows the line by its number needs no more).
    pub fn stack_line_id(&self, index: usize) -> Option<StackLineId> {
        self.stack.get(index).and_then(|parts| parts.id)
    }

    /// How much this sample weighs in folded output: its period, or 1.
    pub fn weight(&self) -> u64 {
        self.period.unwrap_or(1)
    }
}

/// The first line that caused a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarningExample {
    /// Its 1-based line number.
    pub line_number: u64,
    /// Its text (trimmed at the end, cut to 512 bytes).
    pub line: String,
}

/// How often one kind of warning occurred, with the first occurrence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarningTally {
    /// How many lines caused it.
    pub count: u64,
    /// The first of them.
    pub first_example: Option<WarningExample>,
}

impl WarningTally {
    /// Counts one more line, remembering it if it is the first.
    fn record(&mut self, line_number: u64, line: &str) {
        self.count += 1;
        if self.first_example.is_none() {
            let mut end = line.len().min(WARNING_EXAMPLE_MAX_BYTES);
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            self.first_example = Some(WarningExample { line_number, line: line[..end].to_owned() });
        }
    }
}

/// The lines a [`PerfScriptReader`] skipped because it could not parse them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReaderWarnings {
    /// Lines where an event line was expected but no `comm tid` start was
    /// found (inferno's "Weird event line").
    pub weird_event_lines: WarningTally,
    /// Lines inside a sample that are not `address symbol (module)`
    /// (inferno's "Weird stack line").
    pub weird_stack_lines: WarningTally,
}

impl ReaderWarnings {
    /// The number of skipped lines.
    pub fn total(&self) -> u64 {
        self.weird_event_lines.count + self.weird_stack_lines.count
    }

    /// Whether no line was skipped.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }
}

impl fmt::Display for ReaderWarnings {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kinds = [("weird event line", &self.weird_event_lines), ("weird stack line", &self.weird_stack_lines)];
        let mut first = true;
        for (kind, tally) in kinds {
            if tally.count == 0 {
                continue;
            }
            if !first {
                formatter.write_str("; ")?;
            }
            first = false;
            write!(formatter, "{} {kind}(s)", tally.count)?;
            if let Some(example) = &tally.first_example {
                write!(formatter, ", first at line {}: {:?}", example.line_number, example.line)?;
            }
        }
        if first {
            formatter.write_str("no warnings")?;
        }
        Ok(())
    }
}

/// Counters of what a [`PerfScriptReader`] has read so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReaderStatistics {
    /// Lines read.
    pub lines: u64,
    /// Samples yielded.
    pub samples: u64,
    /// Samples skipped because their event was not the selected one.
    pub samples_filtered_out: u64,
}

/// The event line fields of the sample being read, as ranges into the text.
#[derive(Debug, Clone, Copy)]
struct PendingSample {
    /// Range of the comm.
    comm: Span,
    /// Range of the pid text, `None` for the tid-only form.
    pid_text: Option<Span>,
    /// Range of the tid text.
    tid_text: Span,
    /// The `[cpu]` value.
    cpu: Option<u32>,
    /// The timestamp.
    time: Option<SampleTime>,
    /// The period in effect for this sample.
    period: Option<u64>,
    /// Range of the event name (empty if none).
    event: Span,
    /// Line number of the event line.
    line_number: u64,
}

impl PendingSample {
    /// Moves the ranges `offset` bytes to the left.
    fn shift_left(&mut self, offset: usize) {
        self.comm = self.comm.shifted_left(offset);
        self.pid_text = self.pid_text.map(|span| span.shifted_left(offset));
        self.tid_text = self.tid_text.shifted_left(offset);
        self.event = self.event.shifted_left(offset);
    }
}

/// What the reader does after one line.
enum LineOutcome {
    /// Keep reading.
    Continue,
    /// A sample is complete: yield it.
    Yield,
}

/// A streaming reader of `perf script` output, yielding one [`ScriptSample`] at a
/// time from reused buffers (memory does not grow with the number of
/// samples).
///
/// ```
/// use v8inline::internals::formats::perf_script::PerfScriptReader;
///
/// let text = "node  2696   102.105295:    1003009 cpu-clock: \n\
///             \t          e1f174 main+0x44 (/usr/bin/node)\n\n";
/// let mut reader = PerfScriptReader::new(text.as_bytes());
/// let sample = reader.next_sample().unwrap().unwrap();
/// assert_eq!(sample.comm, "node");
/// assert_eq!(sample.tid, 2696);
/// assert_eq!(sample.period, Some(1003009));
/// assert_eq!(sample.frame(0).unwrap().symbol, "main+0x44");
/// assert!(reader.next_sample().unwrap().is_none());
/// ```
pub struct PerfScriptReader<R> {
    /// The input text.
    input: R,
    /// Which events to yield.
    selection: EventSelection,
    /// The event samples must have, once known.
    selected_event: Option<String>,
    /// Whole lines of the input as text (bytes that are not UTF-8 replaced
    /// as `String::from_utf8_lossy` replaces them): the current sample's
    /// lines, then the lines not processed yet. Samples are parsed in place.
    block: String,
    /// Where the next line to process starts in `block`.
    position: usize,
    /// Where the current sample's event line starts in `block`.
    sample_start: usize,
    /// Bytes taken from the input after the last whole line in `block`.
    partial_line: Vec<u8>,
    /// The bytes so far of a line over [`MAX_LINE_BYTES`] being dropped.
    dropping_line: Option<u64>,
    /// The current sample's stack lines as ranges into `block`.
    stack: Vec<StackLineParts>,
    /// The distinct stack lines read so far.
    memo: StackLineMemo,
    /// The current sample, once its event line was read.
    pending: Option<PendingSample>,
    /// Whether lines are stack lines of an event (inferno's `in_event`).
    in_event: bool,
    /// Whether the stack lines of the current event are being skipped.
    skipping: bool,
    /// The last parsed period; inferno forgets it only at the end of a
    /// sample, so an event line naming no event inherits it.
    period: Option<u64>,
    /// The number of lines read.
    line_number: u64,
    /// Counters.
    statistics: ReaderStatistics,
    /// Skipped lines.
    warnings: ReaderWarnings,
}

impl<R: BufRead> PerfScriptReader<R> {
    /// A reader of `input` that yields samples of the first event type seen.
    pub fn new(input: R) -> PerfScriptReader<R> {
        PerfScriptReader {
            input,
            selection: EventSelection::FirstSeen,
            selected_event: None,
            block: String::new(),
            position: 0,
            sample_start: 0,
            partial_line: Vec::new(),
            dropping_line: None,
            stack: Vec::with_capacity(64),
            memo: StackLineMemo::default(),
            pending: None,
            in_event: false,
            skipping: false,
            period: None,
            line_number: 0,
            statistics: ReaderStatistics::default(),
            warnings: ReaderWarnings::default(),
        }
    }

    /// This reader, yielding the samples `selection` picks.
    pub fn with_event_selection(mut self, selection: EventSelection) -> PerfScriptReader<R> {
        self.selected_event = match &selection {
            EventSelection::Only(event) => Some(event.clone()),
            EventSelection::FirstSeen | EventSelection::All => None,
        };
        self.selection = selection;
        self
    }

    /// This reader, numbering stack lines on from `memo` (another reader's,
    /// see [`Self::into_memo_and_text`]).
    pub fn with_memo(mut self, memo: StackLineMemo) -> PerfScriptReader<R> {
        self.memo = memo;
        self
    }

    /// This reader, reading `text` (whole lines) before its input: a chunk
    /// of a parallel fold is parsed where it lies, not copied in blocks.
    pub fn with_text(mut self, text: String) -> PerfScriptReader<R> {
        self.block = text;
        self.position = 0;
        self
    }

    /// The stack lines this reader numbered, and its text buffer (to reuse).
    pub fn into_memo_and_text(self) -> (StackLineMemo, String) {
        (self.memo, self.block)
    }

    /// The event type samples are filtered by: the one given, or the first
    /// seen once an event line named one; `None` with [`EventSelection::All`].
    pub fn selected_event(&self) -> Option<&str> {
        self.selected_event.as_deref()
    }

    /// Counters of what was read so far.
    pub fn statistics(&self) -> ReaderStatistics {
        self.statistics
    }

    /// The lines skipped so far.
    pub fn warnings(&self) -> &ReaderWarnings {
        &self.warnings
    }

    /// Reads up to the end of the next sample of the selected event type and
    /// returns it, or `None` at the end of the input. Only I/O errors are
    /// errors; unparsable lines are skipped (see [`Self::warnings`]).
    pub fn next_sample(&mut self) -> io::Result<Option<ScriptSample<'_>>> {
        // The block is moved out while its lines are processed, which
        // borrow it; the sample yielded borrows it back in place.
        let mut block = std::mem::take(&mut self.block);
        let advanced = self.advance(&mut block);
        self.block = block;
        advanced?;
        Ok(self.take_sample())
    }

    /// Processes lines until a sample is complete or the input ends.
    fn advance(&mut self, block: &mut String) -> io::Result<()> {
        loop {
            if self.position >= block.len() && !self.refill(block)? {
                self.in_event = false;
                self.skipping = false;
                return Ok(());
            }
            let start = self.position;
            let rest = &block.as_bytes()[start..];
            let end = memchr::memchr(b'\n', rest).map_or(block.len(), |newline| start + newline + 1);
            self.position = end;
            if let LineOutcome::Yield = self.process_line(block, start, end) {
                return Ok(());
            }
        }
    }

    /// Replaces the processed lines of `block` by more whole lines of the
    /// input, keeping those of a sample still being read (its ranges move
    /// with them). Returns `false` at the end of the input.
    fn refill(&mut self, block: &mut String) -> io::Result<bool> {
        let keep_from = if self.pending.is_some() { self.sample_start } else { block.len() };
        if let Some(pending) = &mut self.pending {
            pending.shift_left(keep_from);
            for parts in &mut self.stack {
                *parts = parts.shifted_left(keep_from);
            }
            self.sample_start = 0;
        }
        let mut bytes = std::mem::take(block).into_bytes();
        bytes.drain(..keep_from);
        let kept = bytes.len();
        self.position = kept;
        bytes.append(&mut self.partial_line);
        // Where the last line of `bytes` starts (the partial line has no
        // line end).
        let mut last_line_start = kept;
        let mut at_end = false;
        loop {
            let available = match self.input.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    *block = String::from_utf8_lossy(&bytes[..kept]).into_owned();
                    return Err(error);
                }
            };
            if available.is_empty() {
                if self.dropping_line.take().is_some() {
                    bytes.extend_from_slice(TOO_LONG_LINE.as_bytes());
                }
                at_end = true;
                break;
            }
            let length = available.len();
            if let Some(dropped) = self.dropping_line {
                // A line too long is dropped up to its end, then stands as
                // one short line that is skipped.
                match memchr::memchr(b'\n', available) {
                    Some(newline) => {
                        self.input.consume(newline + 1);
                        self.dropping_line = None;
                        bytes.extend_from_slice(TOO_LONG_LINE.as_bytes());
                        bytes.push(b'\n');
                        last_line_start = bytes.len();
                    }
                    None => {
                        self.input.consume(length);
                        let dropped = dropped + length as u64;
                        if dropped > MAX_UNENDED_BYTES {
                            *block = String::from_utf8_lossy(&bytes[..kept]).into_owned();
                            return Err(no_line_end());
                        }
                        self.dropping_line = Some(dropped);
                    }
                }
                continue;
            }
            let appended_at = bytes.len();
            bytes.extend_from_slice(available);
            self.input.consume(length);
            if let Some(newline) = memchr::memrchr(b'\n', &bytes[appended_at..]) {
                last_line_start = appended_at + newline + 1;
            }
            if bytes.len() - last_line_start > MAX_LINE_BYTES {
                self.dropping_line = Some((bytes.len() - last_line_start) as u64);
                bytes.truncate(last_line_start);
                continue;
            }
            if bytes.len() - kept >= BLOCK_BYTES && last_line_start > kept {
                break;
            }
        }
        if !at_end {
            // The block ends with a whole line; the rest waits.
            let last_newline = memchr::memrchr(b'\n', &bytes[kept..]).map_or(kept, |newline| kept + newline + 1);
            self.partial_line.extend_from_slice(&bytes[last_newline..]);
            bytes.truncate(last_newline);
        }
        *block = match String::from_utf8(bytes) {
            Ok(text) => text,
            // Valid lines stay as they are, so kept ranges stay right.
            Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
        };
        Ok(self.position < block.len())
    }

    /// Applies the line at `start..end` of `block` to the reader's state.
    fn process_line(&mut self, block: &str, start: usize, end: usize) -> LineOutcome {
        self.line_number += 1;
        self.statistics.lines += 1;
        let line = &block[start..end];
        if line.starts_with('#') {
            return LineOutcome::Continue;
        }
        if line.len() > MAX_LINE_BYTES {
            // Damage (read in place from a mapped file: a stream's were
            // dropped as they were read).
            let tally =
                if self.in_event { &mut self.warnings.weird_stack_lines } else { &mut self.warnings.weird_event_lines };
            tally.record(self.line_number, line);
            return LineOutcome::Continue;
        }
        let line = trim_end_fast(line);
        if line.is_empty() {
            self.in_event = false;
            self.skipping = false;
            self.period = None;
            return if self.pending.is_some() { LineOutcome::Yield } else { LineOutcome::Continue };
        }
        if self.in_event {
            if !self.skipping {
                self.add_stack_line(line, start);
            }
            return LineOutcome::Continue;
        }
        self.start_sample(block, line, start)
    }

    /// Parses `line`, at `offset` in the block, as a stack line of the
    /// current sample. Returns its ranges, or `None` (with a warning) if it
    /// is not one.
    fn add_stack_line(&mut self, line: &str, offset: usize) -> Option<StackLineParts> {
        if self.pending.is_some()
            && (self.stack.len() >= MAX_SAMPLE_LINES || offset.saturating_sub(self.sample_start) > MAX_SAMPLE_BYTES)
        {
            // A sample this large is damage (an endless stack): dropped,
            // and the rest of its lines skipped, so that its text is let go.
            self.warnings.weird_stack_lines.record(self.line_number, line);
            self.pending = None;
            self.stack.clear();
            self.skipping = true;
            return None;
        }
        let trimmed = trim_start_fast(line);
        let previous = self.stack.last().and_then(|parts| parts.id);
        match self.memo.parts(trimmed, previous) {
            Some(parts) => {
                let parts = parts.shifted(offset + (line.len() - trimmed.len()));
                self.stack.push(parts);
                Some(parts)
            }
            None => {
                self.warnings.weird_stack_lines.record(self.line_number, line);
                None
            }
        }
    }

    /// Handles a line read outside a sample, at `offset` in `block`: an
    /// event line, possibly with a stack line on it.
    fn start_sample(&mut self, block: &str, line: &str, offset: usize) -> LineOutcome {
        let Some(start) = EventLineStart::parse(line) else {
            self.warnings.weird_event_lines.record(self.line_number, line);
            self.in_event = false;
            return LineOutcome::Continue;
        };
        self.in_event = true;
        let rest = EventLineRest::parse(line, start.rest_start);
        if let Some(event) = rest.event {
            self.period = rest.period;
            let event = event.of(line);
            if !matches!(self.selection, EventSelection::All) {
                match &self.selected_event {
                    Some(selected) if selected != event => {
                        self.skipping = true;
                        self.statistics.samples_filtered_out += 1;
                        return LineOutcome::Continue;
                    }
                    Some(_) => {}
                    None => self.selected_event = Some(event.to_owned()),
                }
            }
        }
        self.stack.clear();
        self.sample_start = offset;
        self.pending = Some(PendingSample {
            comm: start.comm.shifted(offset),
            pid_text: start.pid_text.map(|span| span.shifted(offset)),
            tid_text: start.tid_text.shifted(offset),
            cpu: rest.cpu,
            time: rest.time,
            period: self.period,
            event: rest.event.unwrap_or_default().shifted(offset),
            line_number: self.line_number,
        });
        let Some(stack_span) = rest.combined_stack else {
            return LineOutcome::Continue;
        };
        // A combined event and stack line: the sample is complete. Inferno
        // ends it (forgetting the period) only if the frame was kept.
        self.in_event = false;
        let stack_text = stack_span.of(line);
        let kept = self
            .add_stack_line(stack_text, offset + stack_span.start)
            .is_some_and(|parts| !parts.resolve(block).function().starts_with('('));
        if kept {
            self.period = None;
        }
        LineOutcome::Yield
    }

    /// The completed sample, if any, as borrowed from the block.
    fn take_sample(&mut self) -> Option<ScriptSample<'_>> {
        let pending = self.pending.take()?;
        self.statistics.samples += 1;
        let text = self.block.as_str();
        let pid_text = pending.pid_text.map_or("?", |span| span.of(text));
        let tid_text = pending.tid_text.of(text);
        Some(ScriptSample {
            comm: pending.comm.of(text),
            pid: pid_text.parse().ok(),
            tid: tid_text.parse().unwrap_or(0),
            pid_text,
            tid_text,
            cpu: pending.cpu,
            time: pending.time,
            period: pending.period,
            event: pending.event.of(text),
            line_number: pending.line_number,
            text,
            stack: &self.stack,
        })
    }
}

/// The start of an event line: comm, pid and tid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EventLineStart {
    /// Range of the comm (trimmed).
    comm: Span,
    /// Range of the pid text; `None` when only a tid was printed.
    pid_text: Option<Span>,
    /// Range of the tid text.
    tid_text: Span,
    /// Offset just after the space that ends the tid.
    rest_start: usize,
}

impl EventLineStart {
    /// Finds the first all-digit word (optionally `digits/digits`) that
    /// follows a space and is followed by one, like inferno's
    /// `event_line_parts`.
    fn parse(line: &str) -> Option<EventLineStart> {
        let bytes = line.as_bytes();
        let mut word_start = 0;
        let mut all_digits = false;
        let mut last_was_space = false;
        let mut slash_at: Option<usize> = None;
        for (index, &byte) in bytes.iter().enumerate() {
            if byte == b' ' {
                if all_digits && !last_was_space {
                    let (pid_text, tid_text) = match slash_at {
                        Some(slash) => {
                            (Some(Span { start: word_start, end: slash }), Span { start: slash + 1, end: index })
                        }
                        None => (None, Span { start: word_start, end: index }),
                    };
                    let comm = line[..word_start - 1].trim();
                    return Some(EventLineStart {
                        comm: Span::within(line, comm),
                        pid_text,
                        tid_text,
                        rest_start: index + 1,
                    });
                }
                word_start = index + 1;
                all_digits = true;
            } else if byte == b'/' {
                if all_digits {
                    slash_at = Some(index);
                }
            } else if !byte.is_ascii_digit() {
                all_digits = false;
                slash_at = None;
            }
            last_was_space = byte == b' ';
        }
        None
    }
}

/// The part of an event line after the tid.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct EventLineRest {
    /// The `[cpu]` value.
    cpu: Option<u32>,
    /// The timestamp.
    time: Option<SampleTime>,
    /// The period, when the event's word is preceded by a number and one space.
    period: Option<u64>,
    /// Range of the event name, if the line has a `:` after the tid.
    event: Option<Span>,
    /// Range of a stack line printed on the same line.
    combined_stack: Option<Span>,
}

impl EventLineRest {
    /// Parses `line[rest_start..]` like inferno's `on_event_line`.
    fn parse(line: &str, rest_start: usize) -> EventLineRest {
        let rest = &line[rest_start..];
        let Some(first_colon) = memchr::memchr(b':', rest.as_bytes()) else {
            return EventLineRest::default();
        };
        let mut result = EventLineRest::default();
        let time_part = &rest[..first_colon];
        for word in time_part.split_ascii_whitespace() {
            if let Some(cpu) = word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
                result.cpu = cpu.parse().ok();
            }
        }
        result.time = time_part.split_ascii_whitespace().next_back().and_then(parse_sample_time);
        let after_first = &rest[first_colon + 1..];
        let (event_part, after_event) = match memchr::memchr(b':', after_first.as_bytes()) {
            Some(second_colon) => (&after_first[..second_colon], Some(&after_first[second_colon + 1..])),
            None => (after_first, None),
        };
        let event = match memchr::memrchr(b' ', event_part.as_bytes()) {
            Some(last_space) => {
                let before = &event_part[..last_space];
                let period_start = memchr::memrchr(b' ', before.as_bytes()).map_or(0, |i| i + 1);
                result.period = before[period_start..].parse::<u64>().ok();
                &event_part[last_space + 1..]
            }
            None => event_part,
        };
        result.event = Some(Span::within(line, event));
        if let Some(after_event) = after_event {
            let stack_start = after_event.find([':', ' ']).map_or(0, |i| i + 1);
            let stack = after_event[stack_start..].trim();
            if !stack.is_empty() {
                result.combined_stack = Some(Span::within(line, stack));
            }
        }
        result
    }
}

/// The error of an input with no line end in [`MAX_UNENDED_BYTES`].
fn no_line_end() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("no line end in {} MiB: no perf script text (an endless stream?)", MAX_UNENDED_BYTES >> 20),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples larger than a block, a line longer than a block, a byte that
    /// is not UTF-8 after more than a block of input, and input without a
    /// final newline, read through a small `BufReader` (so blocks fill from
    /// many `fill_buf`s): each sample is read whole and in place.
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

    #[test]
    fn trim_end_fast_trims_as_trim_end() {
        for text in ["", " ", "a \t\r\n", "a\u{0b}\u{0c}", "a\u{a0}\n", "\u{3000} a \u{2028}", "é", "a\u{85}"] {
            assert_eq!(trim_end_fast(text), text.trim_end(), "{text:?}");
        }
    }

    #[test]
    fn samples_and_lines_longer_than_a_block_are_read_whole() {
        let deep_frames = 2 * BLOCK_BYTES / 40;
        let long_symbol = "s".repeat(BLOCK_BYTES + 17);
        let mut text: Vec<u8> = Vec::new();
        text.extend_from_slice(b"node 1/1 1.000000: 1 cpu-clock:\n\t1 first (/bin/a)\n\n");
        text.extend_from_slice(b"node 1/2 2.000000: 1 cpu-clock:\n");
        for index in 0..deep_frames {
            text.extend_from_slice(format!("\t{index:x} frame{index:06} (/bin/a)\n").as_bytes());
        }
        text.extend_from_slice(b"\n");
        text.extend_from_slice(format!("node 1/3 3.000000: 1 cpu-clock:\n\t2 {long_symbol} (/bin/a)\n\n").as_bytes());
        // Filler up to just before a multiple of the block size, then a line
        // with a byte that is not UTF-8.
        let filler = "node 1/4 4.000000: 1 cpu-clock:\n\t3 filler (/bin/a)\n\n";
        while (text.len() + filler.len() + 8) % BLOCK_BYTES > 8 {
            text.extend_from_slice(filler.as_bytes());
        }
        text.extend_from_slice(b"node 1/5 5.000000: 1 cpu-clock:\n\t4 caf\xe9 (/bin/a)\n\n");
        text.extend_from_slice(b"node 1/6 6.000000: 1 cpu-clock:\n\t5 last (/bin/a)");
        let input = std::io::BufReader::with_capacity(1000, text.as_slice());
        let mut reader = PerfScriptReader::new(input);
        let mut tids = Vec::new();
        while let Some(sample) = reader.next_sample().unwrap() {
            let symbols: Vec<&str> = sample.frames().map(|frame| frame.symbol).collect();
            match sample.tid {
                1 => assert_eq!(symbols, ["first"]),
                2 => {
                    assert_eq!(symbols.len(), deep_frames);
                    assert_eq!(symbols[0], "frame000000");
                    assert_eq!(symbols[deep_frames - 1], format!("frame{:06}", deep_frames - 1));
                    assert_eq!(sample.comm, "node");
                    assert_eq!(sample.event, "cpu-clock");
                }
                3 => assert_eq!(symbols, [long_symbol.as_str()]),
                4 => assert_eq!(symbols, ["filler"]),
                5 => assert_eq!(symbols, ["caf\u{fffd}"]),
                6 => assert_eq!(symbols, ["last"]),
                other => panic!("unexpected tid {other}"),
            }
            if tids.last() != Some(&sample.tid) {
                tids.push(sample.tid);
            }
        }
        assert_eq!(tids, [1, 2, 3, 4, 5, 6]);
        assert!(reader.warnings().is_empty());
        assert_eq!(reader.statistics().lines, text.iter().filter(|&&byte| byte == b'\n').count() as u64 + 1);
    }

    fn read_all(text: &str) -> Vec<String> {
        let mut reader = PerfScriptReader::new(text.as_bytes());
        let mut out = Vec::new();
        while let Some(sample) = reader.next_sample().unwrap() {
            let frames: Vec<String> = sample
                .frames()
                .map(|frame| format!("{}|{}|{}", frame.address_text, frame.symbol, frame.module))
                .collect();
            out.push(format!(
                "{}|{}|{}|{:?}|{}|{}",
                sample.comm,
                sample.pid_text,
                sample.tid_text,
                sample.period,
                sample.event,
                frames.join(",")
            ));
        }
        out
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

    #[test]
    fn parses_times() {
        assert_eq!(
            parse_sample_time("102.105295"),
            Some(SampleTime { nanoseconds: 102_105_295_000, resolution_nanoseconds: 1000 })
        );
        assert_eq!(
            parse_sample_time("7"),
            Some(SampleTime { nanoseconds: 7_000_000_000, resolution_nanoseconds: 1_000_000_000 })
        );
        assert_eq!(
            parse_sample_time("1.1234567891"),
            Some(SampleTime { nanoseconds: 1_123_456_789, resolution_nanoseconds: 1 })
        );
        assert_eq!(
            parse_sample_time("0.5"),
            Some(SampleTime { nanoseconds: 500_000_000, resolution_nanoseconds: 100_000_000 })
        );
        assert_eq!(parse_sample_time("x.5"), None);
        assert_eq!(parse_sample_time(".5"), None);
        assert_eq!(parse_sample_time("99999999999999999999.5"), None);
    }

    #[test]
    fn reads_event_and_stack_lines() {
        let text = "node  2696 [003]  102.105295:    1003009 cpu-clock: \n\
                    \t            e3aa _dl_relocate_object+0x78a (/usr/lib/ld.so)\n\
                    \t               0 [unknown] ([unknown])\n\n";
        let mut reader = PerfScriptReader::new(text.as_bytes());
        let sample = reader.next_sample().unwrap().unwrap();
        assert_eq!(sample.comm, "node");
        assert_eq!(sample.pid, None);
        assert_eq!(sample.pid_text, "?");
        assert_eq!(sample.tid, 2696);
        assert_eq!(sample.cpu, Some(3));
        assert_eq!(sample.time.map(|time| time.nanoseconds), Some(102_105_295_000));
        assert_eq!(sample.period, Some(1003009));
        assert_eq!(sample.event, "cpu-clock");
        assert_eq!(sample.line_number, 1);
        let frames: Vec<StackLine<'_>> = sample.frames().collect();
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].address, 0xe3aa);
        assert_eq!(frames[0].symbol, "_dl_relocate_object+0x78a");
        assert_eq!(frames[0].function(), "_dl_relocate_object");
        assert_eq!(frames[0].module, "/usr/lib/ld.so");
        assert_eq!(frames[1].symbol, "[unknown]");
        assert!(reader.next_sample().unwrap().is_none());
        assert!(reader.warnings().is_empty());
    }

    #[test]
    fn handles_pid_tid_combined_lines_and_filters() {
        let text = "V8 Worker 10/11 1.5: 7 cycles:uppp:\n\
                    \t1 f (m)\n\n\
                    a 5 1.0: 3 instructions:u:  ff g (m)\n\
                    b 6 1.0: 4 cycles:u:  ff h+0x1 (m)\n\n\
                    b 6 1.0: 4 cycles:u:  ff i (m)\n";
        assert_eq!(
            read_all(text),
            vec![
                "V8 Worker|10|11|Some(7)|cycles|1|f|m".to_owned(),
                // The filtered combined line swallows the next line, like inferno.
                "b|?|6|Some(4)|cycles|ff|i|m".to_owned(),
            ]
        );
    }

    #[test]
    fn warns_and_recovers() {
        let text = "garbage\n\tnot a stack line\n\n\
                    node 1 1.0: 1 cpu-clock:\n\tbad\n\t5 ok (m)\n";
        let mut reader = PerfScriptReader::new(text.as_bytes());
        let mut symbols = Vec::new();
        while let Some(sample) = reader.next_sample().unwrap() {
            symbols.extend(sample.frames().map(|frame| frame.symbol.to_owned()));
        }
        assert_eq!(symbols, vec!["ok"]);
        let warnings = reader.warnings();
        assert_eq!(warnings.weird_event_lines.count, 2);
        assert_eq!(warnings.weird_stack_lines.count, 1);
        assert_eq!(warnings.weird_stack_lines.first_example.as_ref().unwrap().line_number, 5);
    }
}
