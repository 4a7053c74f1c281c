//! DEBUG_INFO records whose `total_size` V8 got wrong, framed by their
//! entries instead.
//!
//! V8's `LinuxPerfJitLogger::LogWriteDebugInfo` (src/diagnostics/perf-jit.cc,
//! node 26 / V8 14.6, Deno 2.9 / V8 15.0) counts the record's size with each
//! entry's own script name, but writes each entry with the name of the entry
//! before it: its index into the script names moves on only after an entry
//! of a new script is written. When optimized code inlines functions of
//! another script and the record's first and last entries lie in different
//! scripts, the declared size is off by the difference of those two names'
//! lengths, and the zero padding written (computed from the declared size)
//! no longer ends on the next record. Readers that trust the size (perf
//! inject, samply) lose every record after it.
//!
//! The recovery is exact and narrow: only where the declared size does not
//! land on a plausible record header does the reader walk the record's
//! entries (16 fixed bytes and a NUL-terminated name each), then the up to 7
//! zero bytes of padding V8 wrote, and take that length when a plausible
//! header starts there. Node 18–24 write names from a freed buffer that can
//! hold NULs ([`super::debug_info`]), so walking entries is wrong there; their
//! declared sizes are right and are kept.

use object::Endianness;
use object::read::Bytes;

use super::record::{DebugEntryFields, DebugInfoFields, JitDumpRecordKind, RECORD_PREFIX_SIZE, RecordPrefix};

/// A DEBUG_INFO record that V8 mis-sized, read by its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MisSizedDebugInfo {
    /// Byte offset of the record in the file.
    pub record_offset: u64,
    /// The `total_size` V8 wrote.
    pub declared_size: u32,
    /// The bytes of the prefix, fixed fields and entries (up to the last
    /// name's NUL).
    pub entries_size: u32,
    /// The bytes V8 really wrote: the entries and the padding computed from
    /// the wrong size; the next record starts this far from this one.
    pub written_size: u32,
}

impl MisSizedDebugInfo {
    /// The record's size once repaired: its entries padded to 8 bytes, as V8
    /// means to write it.
    pub fn repaired_size(&self) -> u32 {
        self.entries_size.next_multiple_of(8)
    }
}

/// The longest script name V8 is taken to write (Linux's `PATH_MAX`, NUL
/// included). A mis-size is the difference of two names' sizes, so a record
/// runs at most this far past its declared size.
pub(crate) const MOST_NAME_BYTES: usize = 4096;

/// The bytes of a record prefix the plausibility check reads.
pub(crate) const PROBE_BYTES: usize = RECORD_PREFIX_SIZE;

/// How much later than the DEBUG_INFO the record after it may have been
/// written: V8 writes a code object's DEBUG_INFO, UNWINDING_INFO and
/// CODE_LOAD in one call under one lock, microseconds apart.
const MOST_NANOSECONDS_TO_NEXT_RECORD: u64 = 1_000_000_000;

/// Where a DEBUG_INFO record ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DebugInfoFraming {
    /// Where its `total_size` says (also when nothing better was found:
    /// then the damage is reported as any other).
    Declared,
    /// V8 mis-sized it; its entries and padding end here.
    ByEntries(MisSizedDebugInfo),
    /// Deciding needs bytes past the end of the window read so far.
    NeedMoreBytes,
}

/// Frames the DEBUG_INFO record at the start of `rest` (`declared_size`
/// being its `total_size`). `at_end`: `rest` runs to the end of the file.
pub(crate) fn frame_debug_info(
    rest: &[u8],
    record_offset: u64,
    declared_size: u32,
    timestamp: u64,
    endian: Endianness,
    at_end: bool,
) -> DebugInfoFraming {
    let declared = declared_size as usize;
    let next_is_plausible = |at: usize| starts_plausible_record(rest, at, timestamp, endian);
    if !at_end && rest.len() < declared.saturating_add(PROBE_BYTES) {
        return DebugInfoFraming::NeedMoreBytes;
    }
    if (at_end && declared == rest.len()) || next_is_plausible(declared) {
        return DebugInfoFraming::Declared;
    }
    // V8 pads every DEBUG_INFO to 8 bytes, the wrong size included.
    if !declared.is_multiple_of(8) {
        return DebugInfoFraming::Declared;
    }
    if !at_end && rest.len() < declared.saturating_add(MOST_NAME_BYTES + PROBE_BYTES) {
        return DebugInfoFraming::NeedMoreBytes;
    }
    let Some(EntriesEnd { entries_end, first_name_size }) =
        entries_end(rest, declared.saturating_add(MOST_NAME_BYTES), endian)
    else {
        return DebugInfoFraming::Declared;
    };
    // V8's padding: fewer than 8 zero bytes.
    for padding in 0..8 {
        let written = entries_end + padding;
        if rest.get(entries_end..written).is_none_or(|bytes| bytes.iter().any(|&byte| byte != 0)) {
            break;
        }
        // The entries carry each name one entry late, so the name the size
        // counted for the last entry was never written; its size follows
        // from the sizes, and must be one a script name can have.
        let last_name_size = (declared + first_name_size).checked_sub(written);
        let name_size_possible = last_name_size.is_some_and(|size| (2..=MOST_NAME_BYTES).contains(&size));
        // The end of the file does not count as the next record here: a
        // record cut in its padding would look mis-sized.
        if written != declared && name_size_possible && next_is_plausible(written) {
            let (Ok(entries_size), Ok(written_size)) = (u32::try_from(entries_end), u32::try_from(written)) else {
                break;
            };
            return DebugInfoFraming::ByEntries(MisSizedDebugInfo {
                record_offset,
                declared_size,
                entries_size,
                written_size,
            });
        }
    }
    DebugInfoFraming::Declared
}

/// Where a DEBUG_INFO record's entries end.
struct EntriesEnd {
    /// Offset from the record's start of the byte after the last name's NUL.
    entries_end: usize,
    /// The size of the first entry's name with its NUL.
    first_name_size: usize,
}

/// Walks the `nr_entry` entries of the DEBUG_INFO record at the start of
/// `rest` without looking past `limit`; `None` if they do not fit.
fn entries_end(rest: &[u8], limit: usize, endian: Endianness) -> Option<EntriesEnd> {
    let area = rest.get(..limit.min(rest.len()))?;
    let fields = Bytes(area).read_at::<DebugInfoFields>(RECORD_PREFIX_SIZE).ok()?;
    let mut position = RECORD_PREFIX_SIZE + size_of::<DebugInfoFields>();
    let mut first_name_size = None;
    for _ in 0..fields.nr_entry.get(endian) {
        let name_start = position.checked_add(size_of::<DebugEntryFields>())?;
        let name_size = memchr::memchr(0, area.get(name_start..)?)? + 1;
        first_name_size.get_or_insert(name_size);
        position = name_start + name_size;
    }
    Some(EntriesEnd { entries_end: position, first_name_size: first_name_size? })
}

/// Whether a record that could follow a DEBUG_INFO written at `timestamp`
/// starts at `at` in `rest`: a prefix with a known id, a size that holds the
/// prefix and a timestamp from the next second.
fn starts_plausible_record(rest: &[u8], at: usize, timestamp: u64, endian: Endianness) -> bool {
    let Some(Ok(prefix)) = rest.get(at..).map(|bytes| Bytes(bytes).read_at::<RecordPrefix>(0)) else {
        return false;
    };
    let known = !matches!(JitDumpRecordKind::from_id(prefix.id.get(endian)), JitDumpRecordKind::Unknown(_));
    let next_timestamp = prefix.timestamp.get(endian);
    known
        && prefix.total_size.get(endian) as usize >= RECORD_PREFIX_SIZE
        && next_timestamp >= timestamp
        && next_timestamp - timestamp <= MOST_NANOSECONDS_TO_NEXT_RECORD
}
