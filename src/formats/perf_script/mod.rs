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
//!
//! The reader is split by concern:
//!
//! * `reader`: [`PerfScriptReader`], which reads whole lines in blocks and
//!   keeps the state of the sample being read;
//! * `event_line` and `stack_line`: the two line parsers;
//! * `memo`: the numbered stack lines already parsed ([`StackLineMemo`]);
//! * `sample`: the [`ScriptSample`] yielded, as ranges into the text;
//! * `warnings`: the tallies of skipped lines and the reader's counters;
//! * `limits`: the sizes past which input is damage;
//! * `text`: byte ranges and the fast trims and hex parse the parsers use.

mod event_line;
mod limits;
mod memo;
mod reader;
mod sample;
mod stack_line;
mod text;
mod warnings;

pub use event_line::parse_sample_time;
pub use limits::{MAX_LINE_BYTES, MAX_SAMPLE_BYTES, MAX_SAMPLE_LINES, MAX_UNENDED_BYTES, TOO_LONG_LINE};
pub use memo::StackLineMemo;
pub use reader::{EventSelection, PerfScriptReader};
pub use sample::{ScriptSample, StackLines};
pub use stack_line::{StackLine, StackLineId, strip_symbol_offset};
pub use warnings::{ReaderStatistics, ReaderWarnings, WarningExample, WarningTally};
