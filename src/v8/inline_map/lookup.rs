//! The map by address and time: the [`AddressIndex`] of the code objects
//! that ever covered each address, and [`InlineMap::find`], which picks the
//! one loaded last by a sample's time, then its inline frames.

use crate::v8::inline_stack::{FrameFunction, InlineFrame, PositionRule, WalkProblem, inlining_stack};

use super::InlineMap;
use super::codes::CodeId;
use super::join::{CodeKey, KeyedLoad};

/// The code object found for an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressMatch {
    /// The code object.
    pub code: CodeId,
    /// `address - code.address`.
    pub offset: u64,
    /// False when a time was given but no object covering the address had
    /// been loaded by then (a clock mismatch): the oldest one was taken.
    pub time_matched: bool,
    /// The times for which the same address gives the same answer: from
    /// this object's load to the next load covering the address
    /// (`u64::MAX` for the newest). Callers cache by it.
    pub same_answer: TimeRange,
}

/// Times from `start` up to, not including, `end` (jitdump clock, ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    /// The first time in the range.
    pub start: u64,
    /// The first time after it.
    pub end: u64,
}

impl TimeRange {
    /// Whether `time` lies in the range.
    pub fn contains(self, time: u64) -> bool {
        self.start <= time && time < self.end
    }
}

impl InlineMap {
    /// The code object covering `address` at `time` (jitdump clock, ns):
    /// the newest one loaded at or before `time`; without a time, the newest.
    pub fn find(&self, address: u64, time: Option<u64>) -> Option<AddressMatch> {
        let candidates = self.index.covering(address);
        let load_time =
            |index: usize| candidates.get(index).map(|&code| self.codes[code as usize].load_time().unwrap_or(0));
        // The answer is the newest candidate loaded by `time` (the oldest
        // when none was): `chosen`, valid until the next one's load.
        let (chosen, time_matched) = match time {
            None => (candidates.len().checked_sub(1)?, true),
            Some(time) => {
                let loaded =
                    candidates.partition_point(|&code| self.codes[code as usize].load_time().unwrap_or(0) <= time);
                match loaded {
                    0 if candidates.is_empty() => return None,
                    0 => (0, false),
                    count => (count - 1, true),
                }
            }
        };
        let same_answer = match time {
            None => TimeRange { start: 0, end: u64::MAX },
            Some(_) if !time_matched => TimeRange { start: 0, end: load_time(0).unwrap_or(u64::MAX) },
            Some(_) => {
                TimeRange { start: load_time(chosen).unwrap_or(0), end: load_time(chosen + 1).unwrap_or(u64::MAX) }
            }
        };
        let code = CodeId(candidates[chosen]);
        Some(AddressMatch { code, offset: address - self.code(code).address, time_matched, same_answer })
    }

    /// The inline stack of `offset` in `code`, innermost first. A code object
    /// without source positions gives just its own frame.
    pub fn inline_frames(
        &self,
        code: CodeId,
        offset: u64,
        rule: PositionRule,
        frames: &mut Vec<InlineFrame>,
    ) -> Option<WalkProblem> {
        let tables = self.log_object(code).zip(self.log_of(code)).and_then(|(object, log)| log.source_tables(object));
        match tables {
            Some(tables) => inlining_stack(&tables, offset, rule, frames),
            None => {
                frames.push(InlineFrame { function: FrameFunction::Outer, script_offset: -1 });
                None
            }
        }
    }
}

/// For each address, the code objects that ever covered it, in load order.
///
/// The address space is cut at every code object's start and end into
/// segments; each segment lists the objects covering it. Lookups are one
/// binary search.
pub(super) struct AddressIndex {
    /// Sorted segment boundaries; segment i is `boundaries[i]..boundaries[i+1]`.
    boundaries: Vec<u64>,
    /// `segment_starts[i]..segment_starts[i+1]` indexes `covering` for segment i.
    segment_starts: Vec<u32>,
    /// Code ids, ascending (= load order) within each segment.
    covering: Vec<u32>,
}

impl AddressIndex {
    /// The index of the codes whose keys `keys` gives, in load order;
    /// `order` lists them (with their keys) by address, as [`key_order`](super::join::key_order)
    /// gives it.
    pub(super) fn new(keys: impl Iterator<Item = CodeKey> + Clone, order: Vec<KeyedLoad>) -> AddressIndex {
        let end = |key: &CodeKey| key.address.saturating_add(key.size);
        // Starts come in order; ends nearly so (code objects rarely overlap).
        let mut ends: Vec<u64> = order.iter().filter(|(key, _)| key.size > 0).map(|(key, _)| end(key)).collect();
        ends.sort_unstable();
        // The boundaries, merged in order without repeats; each code's first
        // segment is where its start went (no search per code).
        let mut boundaries: Vec<u64> = Vec::with_capacity(ends.len() * 2);
        let push = |boundaries: &mut Vec<u64>, at: u64| {
            if boundaries.last() != Some(&at) {
                boundaries.push(at);
            }
        };
        let mut first_segments = vec![0u32; order.len()];
        let mut next_end = 0;
        for (key, id) in order.iter().filter(|(key, _)| key.size > 0) {
            while ends.get(next_end).is_some_and(|&end| end < key.address) {
                push(&mut boundaries, ends[next_end]);
                next_end += 1;
            }
            push(&mut boundaries, key.address);
            first_segments[*id as usize] = (boundaries.len() - 1) as u32;
        }
        for &end in &ends[next_end..] {
            push(&mut boundaries, end);
        }
        drop(ends);
        drop(order);
        let segment_count = boundaries.len().saturating_sub(1);
        // A code's segments run from its first to the boundary at its end.
        let segments = |id: usize, key: &CodeKey| {
            let first = first_segments[id] as usize;
            let end = end(key);
            first..first + boundaries[first..].iter().take_while(|&&at| at < end).count()
        };
        let mut segment_starts = vec![0u32; segment_count + 1];
        for (id, key) in keys.clone().enumerate().filter(|(_, key)| key.size > 0) {
            for segment in segments(id, &key) {
                segment_starts[segment + 1] += 1;
            }
        }
        for segment in 0..segment_count {
            segment_starts[segment + 1] += segment_starts[segment];
        }
        // Filled in load order: each segment lists its codes ascending.
        let mut filled: Vec<u32> = segment_starts[..segment_count].to_vec();
        let mut covering = vec![0u32; segment_starts[segment_count] as usize];
        for (id, key) in keys.enumerate().filter(|(_, key)| key.size > 0) {
            for segment in segments(id, &key) {
                covering[filled[segment] as usize] = id as u32;
                filled[segment] += 1;
            }
        }
        AddressIndex { boundaries, segment_starts, covering }
    }

    pub(super) fn covering(&self, address: u64) -> &[u32] {
        let after = self.boundaries.partition_point(|&boundary| boundary <= address);
        if after == 0 || after >= self.boundaries.len() {
            return &[];
        }
        let segment = after - 1;
        let start = self.segment_starts[segment] as usize;
        let end = self.segment_starts[segment + 1] as usize;
        &self.covering[start..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v8::inline_map::codes::JitCode;
    use crate::v8::inline_map::codes::tests::code;
    use crate::v8::inline_map::join::{address_order, code_keys};

    #[test]
    fn address_index_lists_every_object_that_covered_an_address() {
        let codes = vec![code(100, 50, 1), code(120, 10, 2), code(140, 40, 3), code(300, 0, 4)];
        let index = AddressIndex::new(code_keys(&codes), address_order(&codes));
        assert_eq!(index.covering(99), &[] as &[u32]);
        assert_eq!(index.covering(100), &[0]);
        assert_eq!(index.covering(125), &[0, 1]);
        assert_eq!(index.covering(130), &[0]);
        assert_eq!(index.covering(145), &[0, 2]);
        assert_eq!(index.covering(150), &[2]);
        assert_eq!(index.covering(179), &[2]);
        assert_eq!(index.covering(180), &[] as &[u32]);
        assert_eq!(index.covering(300), &[] as &[u32]);
    }

    /// Against the definition, on overlapping code objects of random
    /// places and sizes (some empty, some at one address).
    #[test]
    fn address_index_agrees_with_a_scan_of_every_object() {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let codes: Vec<JitCode> = (0..400).map(|time| code(next(1000), next(60), time)).collect();
        let index = AddressIndex::new(code_keys(&codes), address_order(&codes));
        for address in 0..1100 {
            let expected: Vec<u32> = (0..codes.len() as u32)
                .filter(|&id| {
                    let code = &codes[id as usize];
                    code.address <= address && address < code.address + code.size
                })
                .collect();
            assert_eq!(index.covering(address), expected, "address {address}");
        }
    }
}
