//! DEBUG_INFO records, read defensively.
//!
//! A DEBUG_INFO body is `code_addr u64, nr_entry u64` followed by `nr_entry`
//! entries `{addr u64, lineno i32, discrim i32, file name, NUL}` and up to 7
//! zero bytes of padding. Node 18–24 copy some file names from a buffer that
//! was already freed (V8's `GetScriptName` returns a view into a
//! `std::unique_ptr` that dies at the end of the loop iteration), so such a
//! name starts with allocator bookkeeping bytes, NULs included, while its
//! length is right. Reading entries NUL by NUL then loses its place. The
//! record's `total_size` still frames the record, and inside it the reader
//! resynchronizes: an entry must start right after a NUL and its address must
//! be plausible (not below the previous entry's, less than 16 MiB above it,
//! not below the code address).

use object::Endianness;
use object::read::Bytes;

use super::record::{DebugEntry, DebugEntryFields, DebugInfo, DebugInfoFields, RecordProblem};

/// How far above the previous entry's address the next one may be. Code
/// objects are far smaller; garbage read as an address is almost never this
/// close.
const PLAUSIBLE_ADDRESS_WINDOW: u64 = 16 << 20;

/// Size of the fixed part of an entry.
const ENTRY_FIELDS_SIZE: usize = size_of::<DebugEntryFields>();

/// A decoded DEBUG_INFO body and where reading it went wrong, if it did.
pub(crate) struct DebugInfoOutcome {
    /// The record with every entry that could be read.
    pub info: DebugInfo,
    /// The record's `nr_entry`.
    pub declared: u64,
    /// Offset into the body of the first implausible entry, if any.
    pub first_resync: Option<u64>,
    /// Offset into the body where the next entry could not be read, if the
    /// record holds fewer than `declared` readable entries.
    pub incomplete_at: Option<u64>,
}

/// Decodes a DEBUG_INFO body (the record after its prefix). Fails only if the
/// body cannot hold `code_addr` and `nr_entry`.
pub(crate) fn parse_debug_info(
    body: &[u8],
    endian: Endianness,
    timestamp: u64,
) -> Result<DebugInfoOutcome, (u64, RecordProblem)> {
    let Ok((fields, area)) = object::pod::from_bytes::<DebugInfoFields>(body) else {
        return Err((
            0,
            RecordProblem::BodyTooShort { needed: size_of::<DebugInfoFields>() as u64, found: body.len() as u64 },
        ));
    };
    let area_offset = size_of::<DebugInfoFields>() as u64;
    let code_address = fields.code_addr.get(endian);
    let declared = fields.nr_entry.get(endian);
    // Every entry takes at least its fixed part and a NUL.
    let most_entries = area.len() / (ENTRY_FIELDS_SIZE + 1);
    let capacity = usize::try_from(declared).map_or(most_entries, |count| count.min(most_entries));
    let mut entries: Vec<DebugEntry> = Vec::with_capacity(capacity);

    let mut position = 0_usize;
    let mut previous_address = code_address;
    let mut last_name_start: Option<usize> = None;
    let mut resyncs = 0_u32;
    let mut first_resync: Option<usize> = None;
    let mut incomplete_at: Option<usize> = None;

    while (entries.len() as u64) < declared {
        let Some(mut entry_fields) = entry_at(area, position) else {
            incomplete_at = Some(position);
            break;
        };
        let plausible = |address: u64| is_plausible(address, previous_address, code_address);
        if !plausible(entry_fields.addr.get(endian)) {
            let Some((candidate, found)) = find_plausible_entry(area, position, endian, plausible) else {
                incomplete_at = Some(position);
                break;
            };
            resyncs = resyncs.saturating_add(1);
            first_resync.get_or_insert(position);
            // The previous name ran on past its first NUL: it ends at the NUL
            // right before the entry found.
            if let (Some(start), Some(last)) = (last_name_start, entries.last_mut())
                && let Some(name) = area.get(start..candidate.saturating_sub(1))
            {
                last.file_name = name.to_vec();
            }
            position = candidate;
            entry_fields = found;
        }
        let name_start = position.saturating_add(ENTRY_FIELDS_SIZE);
        let rest = area.get(name_start..).unwrap_or_default();
        let Some(name_length) = memchr::memchr(0, rest) else {
            incomplete_at = Some(name_start);
            break;
        };
        let raw_name = rest.get(..name_length).unwrap_or_default();
        let file_name = match (raw_name, entries.last()) {
            ([0xff], Some(previous)) => previous.file_name.clone(),
            _ => raw_name.to_vec(),
        };
        let address = entry_fields.addr.get(endian);
        entries.push(DebugEntry {
            address,
            line: entry_fields.lineno.get(endian),
            column: entry_fields.discrim.get(endian),
            file_name,
        });
        previous_address = address;
        last_name_start = Some(name_start);
        position = name_start.saturating_add(name_length).saturating_add(1);
    }

    // V8 pads the record with fewer than 8 zero bytes. Anything else after the
    // last entry is the rest of its file name, cut at an early NUL.
    if incomplete_at.is_none()
        && let Some(tail) = area.get(position..)
        && let Some(last_non_zero) = tail.iter().rposition(|&byte| byte != 0)
        && let (Some(start), Some(last)) = (last_name_start, entries.last_mut())
    {
        let name_end = position.saturating_add(last_non_zero).saturating_add(1);
        if let Some(name) = area.get(start..name_end) {
            last.file_name = name.to_vec();
            resyncs = resyncs.saturating_add(1);
            first_resync.get_or_insert(position);
        }
    }

    let body_offset = |position: usize| area_offset.saturating_add(position as u64);
    Ok(DebugInfoOutcome {
        info: DebugInfo { timestamp, code_address, entries, resyncs },
        declared,
        first_resync: first_resync.map(body_offset),
        incomplete_at: incomplete_at.map(body_offset),
    })
}

/// Whether `address` can follow an entry at `previous_address` in the code
/// object at `code_address`.
fn is_plausible(address: u64, previous_address: u64, code_address: u64) -> bool {
    address >= code_address
        && address >= previous_address
        && address < previous_address.saturating_add(PLAUSIBLE_ADDRESS_WINDOW)
}

/// The fixed part of the entry at `position`, if it fits in `area`.
fn entry_at(area: &[u8], position: usize) -> Option<&DebugEntryFields> {
    Bytes(area).read_at::<DebugEntryFields>(position).ok()
}

/// The first entry after `position` that starts right after a NUL and has a
/// plausible address, with its offset.
fn find_plausible_entry(
    area: &[u8],
    position: usize,
    endian: Endianness,
    plausible: impl Fn(u64) -> bool,
) -> Option<(usize, &DebugEntryFields)> {
    let searched = area.get(position..)?;
    for nul_index in memchr::memchr_iter(0, searched) {
        let candidate = position.checked_add(nul_index)?.checked_add(1)?;
        // Later candidates do not fit either.
        let entry_fields = entry_at(area, candidate)?;
        if plausible(entry_fields.addr.get(endian)) {
            return Some((candidate, entry_fields));
        }
    }
    None
}
