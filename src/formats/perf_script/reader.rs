//! The streaming reader ([`PerfScriptReader`]): it takes whole lines from
//! its input in blocks, parses each sample in place and yields it borrowed.

use std::io::{self, BufRead};

use super::event_line::{EventLineRest, EventLineStart};
use super::limits::{
    BLOCK_BYTES, MAX_LINE_BYTES, MAX_SAMPLE_BYTES, MAX_SAMPLE_LINES, MAX_UNENDED_BYTES, TOO_LONG_LINE, no_line_end,
};
use super::memo::StackLineMemo;
use super::sample::{PendingSample, ScriptSample};
use super::stack_line::StackLineParts;
use super::text::{trim_end_fast, trim_start_fast};
use super::warnings::{ReaderStatistics, ReaderWarnings};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::perf_script::StackLine;

    /// Samples larger than a block, a line longer than a block, a byte that
    /// is not UTF-8 after more than a block of input, and input without a
    /// final newline, read through a small `BufReader` (so blocks fill from
    /// many `fill_buf`s): each sample is read whole and in place.
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
