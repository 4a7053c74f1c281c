//! The stack line parser: `address symbol (module)` split like inferno
//! splits it, as ranges ([`StackLineParts`]) and as text ([`StackLine`]).

use super::text::{Span, parse_address, trim_fast, trim_start_fast};

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
    /// the same text (see [`StackLineMemo`](super::StackLineMemo)); `None` when not numbered.
    pub id: Option<StackLineId>,
}

/// A [`PerfScriptReader`](super::PerfScriptReader)'s number for a distinct stack line text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StackLineId(pub(super) u32);

impl StackLineId {
    /// The id as an index from 0, dense in the order the texts were first
    /// read.
    pub fn index(self) -> usize {
        self.0 as usize
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

/// A parsed stack line as ranges into the text it was parsed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StackLineParts {
    /// The address parsed as hexadecimal; 0 when it does not parse.
    pub(super) address: u64,
    /// Range of the address text.
    pub(super) address_text: Span,
    /// Range of the symbol text.
    pub(super) symbol: Span,
    /// Range of the module text, without parentheses.
    pub(super) module: Span,
    /// The memo's number for the line, if it has one.
    pub(super) id: Option<StackLineId>,
}

impl StackLineParts {
    /// Splits `line` like inferno's `stack_line_parts`.
    pub(super) fn parse(line: &str) -> Option<StackLineParts> {
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
    pub(super) fn shifted(self, offset: usize) -> StackLineParts {
        StackLineParts {
            address: self.address,
            address_text: self.address_text.shifted(offset),
            symbol: self.symbol.shifted(offset),
            module: self.module.shifted(offset),
            id: self.id,
        }
    }

    /// These ranges moved `offset` bytes to the left.
    pub(super) fn shifted_left(self, offset: usize) -> StackLineParts {
        StackLineParts {
            address: self.address,
            address_text: self.address_text.shifted_left(offset),
            symbol: self.symbol.shifted_left(offset),
            module: self.module.shifted_left(offset),
            id: self.id,
        }
    }

    /// The stack line these ranges describe in `text`.
    pub(super) fn resolve(self, text: &str) -> StackLine<'_> {
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
