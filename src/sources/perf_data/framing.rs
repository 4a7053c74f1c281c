//! The records of a perf.data as bytes, apart from `linux-perf-data`: the
//! crate reads a data section it trusts, so a damaged one is walked here
//! first, by the chain of record sizes, to find where the crate must stop
//! ([`super::guards`]), and afterwards to name the byte offsets of the
//! records it could not parse. Also the input the crate reads: shared with
//! those walks, its header replaced to end the data section early.

use std::cell::RefCell;
use std::io::{Read, Seek, SeekFrom};
use std::rc::Rc;

use linux_perf_data::linux_perf_event_reader::{Endianness, RawEventRecord, ReadFormat, RecordType, SampleFormat};
use linux_perf_data::{PerfFile, PerfFileReader, PerfRecordIter};

use crate::error::ErrorCause;
use crate::formats::perf_data::{PerfDataError, PerfFileHeader, check_architecture};

/// The crate's reader of the records: the file's header and feature
/// sections, and the records in time order.
pub(super) struct Records<R: Read> {
    pub(super) perf_file: PerfFile,
    pub(super) record_iter: PerfRecordIter<SharedInput<R>>,
}

/// A reader of the records of `input` from its start, its first bytes
/// replaced by `header` (see [`SharedInput`]).
pub(super) fn open_records<R: Read + Seek>(
    input: &Rc<RefCell<R>>,
    header: Option<Vec<u8>>,
) -> Result<Records<R>, ErrorCause> {
    input.borrow_mut().seek(SeekFrom::Start(0))?;
    let shared = SharedInput { inner: Rc::clone(input), header, position: 0 };
    let PerfFileReader { perf_file, record_iter } =
        PerfFileReader::parse_file(shared).map_err(PerfDataError::Format)?;
    check_architecture(&perf_file)?;
    Ok(Records { perf_file, record_iter })
}

/// `PERF_RECORD_MISC_MMAP_BUILD_ID`: an MMAP2 record carries a build id
/// (its length, padding, 20 bytes) instead of device and inode numbers.
const MISC_MMAP_BUILD_ID: u16 = 1 << 14;
/// Where an MMAP2 record's build id length lies in its body: after pid,
/// tid, address, length and page offset.
const MMAP2_BUILD_ID_LENGTH_OFFSET: usize = 32;
/// The longest build id an MMAP2 record holds.
const MMAP2_BUILD_ID_CAPACITY: u8 = 20;

/// Why an MMAP2 record with a build id cannot be parsed: a build id length
/// past its 20 bytes, which `linux-perf-event-reader` (0.10) asserts against
/// instead of returning an error (a damaged record would abort the process).
pub(super) fn mmap2_build_id_problem(record: &RawEventRecord<'_>) -> Option<std::io::Error> {
    if record.record_type != RecordType::MMAP2 || record.misc & MISC_MMAP_BUILD_ID == 0 {
        return None;
    }
    let length = *record.data.as_slice().get(MMAP2_BUILD_ID_LENGTH_OFFSET)?;
    (length > MMAP2_BUILD_ID_CAPACITY).then(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a build id of {length} bytes, more than the {MMAP2_BUILD_ID_CAPACITY} an MMAP2 record holds"),
        )
    })
}

/// Why a record cannot be given to `linux-perf-event-reader` (0.10) to
/// parse: it would abort or panic on it instead of returning an error.
pub(super) fn record_the_crate_mishandles(record: &RawEventRecord<'_>) -> Option<std::io::Error> {
    mmap2_build_id_problem(record).or_else(|| sample_callchain_problem(record))
}

/// Why a SAMPLE record cannot be parsed: a callchain length whose size in
/// bytes overflows, which `linux-perf-event-reader` 0.10.2 multiplies by 8
/// unchecked (`sample.rs`: a panic in a build with overflow checks, a
/// wrong length without). The fields before the callchain are skipped as
/// that crate reads them, its layout of the READ values included.
fn sample_callchain_problem(record: &RawEventRecord<'_>) -> Option<std::io::Error> {
    let info = &record.parse_info;
    let format = info.sample_format;
    if record.record_type != RecordType::SAMPLE || !format.contains(SampleFormat::CALLCHAIN) {
        return None;
    }
    let data = record.data.as_slice();
    let u64_at = |offset: usize| -> Option<u64> {
        let bytes: [u8; 8] = data.get(offset..offset.checked_add(8)?)?.try_into().ok()?;
        Some(match info.endian {
            Endianness::LittleEndian => u64::from_le_bytes(bytes),
            Endianness::BigEndian => u64::from_be_bytes(bytes),
        })
    };
    let fixed_fields = [
        SampleFormat::IDENTIFIER,
        SampleFormat::IP,
        SampleFormat::TID,
        SampleFormat::TIME,
        SampleFormat::ADDR,
        SampleFormat::ID,
        SampleFormat::STREAM_ID,
        SampleFormat::CPU,
        SampleFormat::PERIOD,
    ];
    let mut offset = 8 * fixed_fields.iter().filter(|&&field| format.contains(field)).count();
    if format.contains(SampleFormat::READ) {
        let read = info.read_format;
        let optional = |field: ReadFormat| if read.contains(field) { 8 } else { 0 };
        let times = optional(ReadFormat::TOTAL_TIME_ENABLED) + optional(ReadFormat::TOTAL_TIME_RUNNING);
        if read.contains(ReadFormat::GROUP) {
            offset += 8 + times + optional(ReadFormat::ID);
        } else {
            // The crate reads a count of values here (the kernel's group
            // layout): a count that overflows is read, and fails, there.
            let values = usize::try_from(u64_at(offset)?).ok()?;
            let value_size = 8 + optional(ReadFormat::ID);
            offset = (offset + 8 + times).checked_add(values.checked_mul(value_size)?)?;
        }
    }
    let length = u64_at(offset)?;
    (length > (usize::MAX / 8) as u64).then(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a callchain of {length} addresses, more than any record holds"),
        )
    })
}

/// `struct perf_event_header`: type, misc, size.
pub(super) const RECORD_HEADER_SIZE: u64 = 8;

/// `PERF_RECORD_FINISHED_ROUND`: a header alone.
const RECORD_FINISHED_ROUND: u32 = 68;

/// `PERF_RECORD_AUXTRACE`: its body (`struct perf_record_auxtrace`) starts
/// with the size of the trace data that follows the record in the file.
const RECORD_AUXTRACE: u32 = 71;

/// Where a walk of the records stopped (see [`walk_records`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RecordsEnd {
    /// The byte offset of the first record not whole, or the end.
    pub(super) offset: u64,
    /// When the record there is an AUXTRACE record whose trace data goes
    /// past the end: the size of the trace data it declares.
    pub(super) auxtrace_overrun: Option<u64>,
    /// When the record there is a FINISHED_ROUND record longer than its
    /// header: its size. linux-perf-data reads the header alone and would
    /// take the rest of the record for the next one.
    pub(super) finished_round_size: Option<u64>,
}

/// Walks the records of the data section from byte `start` to `end`, in
/// file order, calling `visit(offset, type, body)` for each whole one until
/// it returns `false`; the trace data after an AUXTRACE record is skipped.
/// Returns where the walk stopped: the end of the data, or the first record
/// that is smaller than its header or reaches past `end` (where a cut or a
/// damaged size breaks the chain of records), its trace data included, or
/// that is a FINISHED_ROUND record with a body.
pub(super) fn walk_records<R: Read + Seek>(
    input: &mut R,
    start: u64,
    end: u64,
    little_endian: bool,
    mut visit: impl FnMut(u64, u32, &[u8]) -> bool,
) -> std::io::Result<RecordsEnd> {
    input.seek(SeekFrom::Start(start))?;
    let mut offset = start;
    let mut body = Vec::new();
    while offset.saturating_add(RECORD_HEADER_SIZE) <= end {
        let RecordHeader { record_type, size } = read_record_header(input, little_endian)?;
        if record_type == RECORD_AUXTRACE && size >= RECORD_HEADER_SIZE + 8 && offset + size > end {
            // Past the end itself: linux-perf-data still reads it whole
            // when the file goes on, and allocates the trace data it
            // declares before reading that.
            if let Some(trace_size) = read_trace_size(input, little_endian) {
                return Ok(RecordsEnd { offset, auxtrace_overrun: Some(trace_size), finished_round_size: None });
            }
        }
        if size < RECORD_HEADER_SIZE || offset + size > end {
            break;
        }
        if record_type == RECORD_FINISHED_ROUND && size != RECORD_HEADER_SIZE {
            return Ok(RecordsEnd { offset, auxtrace_overrun: None, finished_round_size: Some(size) });
        }
        body.resize((size - RECORD_HEADER_SIZE) as usize, 0);
        input.read_exact(&mut body)?;
        let trace_size = match body.get(..8) {
            Some(mut field) if record_type == RECORD_AUXTRACE => {
                read_trace_size(&mut field, little_endian).unwrap_or(0)
            }
            _ => 0,
        };
        if (offset + size).checked_add(trace_size).is_none_or(|record_end| record_end > end) {
            return Ok(RecordsEnd { offset, auxtrace_overrun: Some(trace_size), finished_round_size: None });
        }
        let go_on = visit(offset, record_type, &body);
        offset += size + trace_size;
        if trace_size > 0 {
            input.seek(SeekFrom::Start(offset))?;
        }
        if !go_on {
            break;
        }
    }
    Ok(RecordsEnd { offset, auxtrace_overrun: None, finished_round_size: None })
}

/// What the walk needs of a record's header (`struct perf_event_header`).
struct RecordHeader {
    record_type: u32,
    /// The record's size, its header included.
    size: u64,
}

/// The header of the record at `input`'s position.
fn read_record_header(input: &mut impl Read, little_endian: bool) -> std::io::Result<RecordHeader> {
    let mut header = [0; RECORD_HEADER_SIZE as usize];
    input.read_exact(&mut header)?;
    let (record_type, size) = if little_endian {
        (u32::from_le_bytes([header[0], header[1], header[2], header[3]]), u16::from_le_bytes([header[6], header[7]]))
    } else {
        (u32::from_be_bytes([header[0], header[1], header[2], header[3]]), u16::from_be_bytes([header[6], header[7]]))
    };
    Ok(RecordHeader { record_type, size: u64::from(size) })
}

/// The trace data size an AUXTRACE body starts with (`struct
/// perf_record_auxtrace`'s `size`), read from `input`.
fn read_trace_size(input: &mut impl Read, little_endian: bool) -> Option<u64> {
    let mut field = [0; 8];
    input.read_exact(&mut field).ok()?;
    Some(if little_endian { u64::from_le_bytes(field) } else { u64::from_be_bytes(field) })
}

/// Where the records of the data section stop being whole before `end`:
/// the first one smaller than its header or reaching past `end`, else `end`.
pub(super) fn whole_records_end<R: Read + Seek>(
    input: &mut R,
    header: &PerfFileHeader,
    end: u64,
) -> std::io::Result<u64> {
    Ok(walk_records(input, header.data.offset, end, header.little_endian, |_, _, _| true)?.offset)
}

/// The perf.data as `linux-perf-data` reads it: shared with
/// [`PerfDataReader::read`](super::reader::PerfDataReader::read),
/// which locates the records the crate could not parse afterwards, and with
/// the first bytes replaced (the header of a cut file, see
/// [`PerfFileHeader::cut_at`]).
pub(super) struct SharedInput<R> {
    inner: Rc<RefCell<R>>,
    /// What the first bytes of the file read as instead.
    header: Option<Vec<u8>>,
    /// Where the next read starts.
    position: u64,
}

impl<R: Read> Read for SharedInput<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let count = self.inner.borrow_mut().read(buffer)?;
        if let Some(header) = &self.header
            && let Some(replaced) = header.get(self.position as usize..)
        {
            let overlap = count.min(replaced.len());
            buffer[..overlap].copy_from_slice(&replaced[..overlap]);
        }
        self.position += count as u64;
        Ok(count)
    }
}

impl<R: Seek> Seek for SharedInput<R> {
    fn seek(&mut self, position: SeekFrom) -> std::io::Result<u64> {
        self.position = self.inner.borrow_mut().seek(position)?;
        Ok(self.position)
    }
}

/// A record `linux-perf-data` framed but could not parse, kept to be located
/// in the file for the warning.
pub(super) struct UnparsableRecord {
    pub(super) record_type: u32,
    pub(super) body: Vec<u8>,
    pub(super) error: String,
}

/// The byte offsets of `records` in the data section: the first record of
/// the same type and body not yet taken (`None` where none is, e.g. inside a
/// compressed record).
pub(super) fn locate_records<R: Read + Seek>(
    input: &mut R,
    header: &PerfFileHeader,
    records: &[UnparsableRecord],
) -> Vec<Option<u64>> {
    let mut offsets = vec![None; records.len()];
    let _ = walk_records(
        input,
        header.data.offset,
        header.data_end(),
        header.little_endian,
        |offset, record_type, body| {
            let wanted = records
                .iter()
                .zip(&mut offsets)
                .find(|(record, found)| found.is_none() && record.record_type == record_type && record.body == body);
            if let Some((_, found)) = wanted {
                *found = Some(offset);
            }
            offsets.iter().any(Option::is_none)
        },
    );
    offsets
}
