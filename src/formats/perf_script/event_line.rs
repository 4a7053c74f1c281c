//! The event line parser: the comm, pid and tid ([`EventLineStart`]), then
//! the cpu, time, period, event and any stack line on the same line
//! ([`EventLineRest`]), like inferno's `event_line_parts` and
//! `on_event_line`.

use crate::model::sample::SampleTime;

use super::text::Span;

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

/// The start of an event line: comm, pid and tid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EventLineStart {
    /// Range of the comm (trimmed).
    pub(super) comm: Span,
    /// Range of the pid text; `None` when only a tid was printed.
    pub(super) pid_text: Option<Span>,
    /// Range of the tid text.
    pub(super) tid_text: Span,
    /// Offset just after the space that ends the tid.
    pub(super) rest_start: usize,
}

impl EventLineStart {
    /// Finds the first all-digit word (optionally `digits/digits`) that
    /// follows a space and is followed by one, like inferno's
    /// `event_line_parts`.
    pub(super) fn parse(line: &str) -> Option<EventLineStart> {
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
pub(super) struct EventLineRest {
    /// The `[cpu]` value.
    pub(super) cpu: Option<u32>,
    /// The timestamp.
    pub(super) time: Option<SampleTime>,
    /// The period, when the event's word is preceded by a number and one space.
    pub(super) period: Option<u64>,
    /// Range of the event name, if the line has a `:` after the tid.
    pub(super) event: Option<Span>,
    /// Range of a stack line printed on the same line.
    pub(super) combined_stack: Option<Span>,
}

impl EventLineRest {
    /// Parses `line[rest_start..]` like inferno's `on_event_line`.
    pub(super) fn parse(line: &str, rest_start: usize) -> EventLineRest {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
