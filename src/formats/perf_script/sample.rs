//! The sample a reader yields ([`ScriptSample`], its frames as
//! [`StackLines`]) and the one it is reading ([`PendingSample`]), both as
//! ranges into the reader's text.

use crate::model::sample::SampleTime;

use super::stack_line::{StackLine, StackLineId, StackLineParts};
use super::text::Span;

/// The stack lines of a [`ScriptSample`], leaf (the sampled instruction) first.
#[derive(Debug, Clone)]
pub struct StackLines<'a> {
    /// The text the ranges point into.
    pub(super) text: &'a str,
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
/// [`PerfScriptReader::next_sample`](super::PerfScriptReader::next_sample).
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
    pub(super) text: &'a str,
    /// The stack lines, leaf first.
    pub(super) stack: &'a [StackLineParts],
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

/// The event line fields of the sample being read, as ranges into the text.
#[derive(Debug, Clone, Copy)]
pub(super) struct PendingSample {
    /// Range of the comm.
    pub(super) comm: Span,
    /// Range of the pid text, `None` for the tid-only form.
    pub(super) pid_text: Option<Span>,
    /// Range of the tid text.
    pub(super) tid_text: Span,
    /// The `[cpu]` value.
    pub(super) cpu: Option<u32>,
    /// The timestamp.
    pub(super) time: Option<SampleTime>,
    /// The period in effect for this sample.
    pub(super) period: Option<u64>,
    /// Range of the event name (empty if none).
    pub(super) event: Span,
    /// Line number of the event line.
    pub(super) line_number: u64,
}

impl PendingSample {
    /// Moves the ranges `offset` bytes to the left.
    pub(super) fn shift_left(&mut self, offset: usize) {
        self.comm = self.comm.shifted_left(offset);
        self.pid_text = self.pid_text.map(|span| span.shifted_left(offset));
        self.tid_text = self.tid_text.shifted_left(offset);
        self.event = self.event.shifted_left(offset);
    }
}
