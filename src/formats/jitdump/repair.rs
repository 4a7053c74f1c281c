//! `repair-jitdump`: the same jitdump with V8's mis-sized DEBUG_INFO records
//! ([`super::v8_mis_sized`]) given their true size, so that every jitdump
//! reader (`perf inject -j`, samply) reads the file whole.

use object::Endianness;

use super::error::JitDumpError;
use super::reader::{JitDump, ReadOptions, read};

/// Offset of `total_size` in a record prefix.
const TOTAL_SIZE_OFFSET: usize = 4;

/// A jitdump with its mis-sized records corrected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairedJitDump {
    /// The file: every byte as it was, but for each corrected record its
    /// `total_size` and its zero padding (now up to the next multiple of 8
    /// after its entries).
    pub bytes: Vec<u8>,
    /// The input as read: its `mis_sized_debug_infos` are the records
    /// corrected, its warnings the damage found (not repaired: those bytes
    /// are copied as they are).
    pub original: JitDump,
}

/// Corrects the size and padding of each DEBUG_INFO record V8 mis-sized in
/// the jitdump `bytes`; only an unusable header is an error.
pub fn repair(bytes: &[u8]) -> Result<RepairedJitDump, JitDumpError> {
    let dump = read(bytes, &ReadOptions::default())?;
    let mut repaired = Vec::with_capacity(bytes.len());
    let mut copied_to = 0;
    for record in &dump.mis_sized_debug_infos {
        // The reader framed these records within `bytes`.
        let start = record.record_offset as usize;
        repaired.extend_from_slice(&bytes[copied_to..start]);
        let repaired_start = repaired.len();
        repaired.extend_from_slice(&bytes[start..start + record.entries_size as usize]);
        let size = match dump.header.endianness {
            Endianness::Little => record.repaired_size().to_le_bytes(),
            Endianness::Big => record.repaired_size().to_be_bytes(),
        };
        let size_field = repaired_start + TOTAL_SIZE_OFFSET;
        repaired[size_field..size_field + size.len()].copy_from_slice(&size);
        repaired.resize(repaired_start + record.repaired_size() as usize, 0);
        copied_to = start + record.written_size as usize;
    }
    repaired.extend_from_slice(&bytes[copied_to..]);
    Ok(RepairedJitDump { bytes: repaired, original: dump })
}
