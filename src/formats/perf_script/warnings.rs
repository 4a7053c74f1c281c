//! What a reader skipped ([`ReaderWarnings`]: a [`WarningTally`] per kind
//! of unparsable line, with its first example) and what it read
//! ([`ReaderStatistics`]).

use std::fmt;

/// The longest line text a [`WarningExample`] keeps, in bytes.
const WARNING_EXAMPLE_MAX_BYTES: usize = 512;

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
    pub(super) fn record(&mut self, line_number: u64, line: &str) {
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

/// The lines a [`PerfScriptReader`](super::PerfScriptReader) skipped because it could not parse them.
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

/// Counters of what a [`PerfScriptReader`](super::PerfScriptReader) has read so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReaderStatistics {
    /// Lines read.
    pub lines: u64,
    /// Samples yielded.
    pub samples: u64,
    /// Samples skipped because their event was not the selected one.
    pub samples_filtered_out: u64,
}
