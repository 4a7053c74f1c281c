//! Where `linux-perf-data` must stop reading a perf.data, decided before it
//! starts: the crate trusts the header and the record sizes, so a file cut
//! short, one `perf record` never finished, and records the crate would
//! mishandle (allocating what a damaged size declares, losing track of the
//! records after, decompressing a bomb) would abort the process or derail
//! the reading. Each becomes a warning and a header that ends the data
//! section before the damage.

use std::io::{Read, Seek};
use std::path::Path;

use super::compressed::ExpansionCheck;
use super::framing::{RECORD_HEADER_SIZE, walk_records, whole_records_end};
use crate::diagnostics::{Diagnostics, WarningKind};
use crate::formats::perf_data::PerfFileHeader;

/// A record the reading must end before.
struct BrokenRecord {
    /// Its byte offset in the file.
    offset: u64,
    /// What is wrong with it, for the warning.
    problem: String,
}

/// The header `linux-perf-data` is to read the file with instead of its own
/// ([`PerfFileHeader::cut_at`]), when the reading must end early: at the
/// last whole record of a cut or unfinished file, or before a record the
/// crate would mishandle. Warns about each.
pub(super) fn replacement_header<R: Read + Seek>(
    input: &mut R,
    header: &PerfFileHeader,
    path: &Path,
    diagnostics: &mut Diagnostics,
) -> std::io::Result<Option<Vec<u8>>> {
    let whole_records_end = whole_records_of_damaged_file(input, header, path, diagnostics)?;
    let mut replaced_header = whole_records_end.map(|data_end| header.cut_at(data_end));
    let end = whole_records_end.unwrap_or_else(|| header.data_end());
    if let Some(BrokenRecord { offset, problem }) = first_record_mishandled(input, header, end)? {
        diagnostics.warn(WarningKind::PerfDataBrokenRecord, || {
            format!("{}: byte offset {offset}: {problem}; the records before it were used", path.display())
        });
        replaced_header = Some(header.cut_at(offset));
    }
    Ok(replaced_header)
}

/// Where the whole records of a file cut short or never finished end (the
/// crate then reads up to there as the whole data section); `None` for a
/// whole file.
fn whole_records_of_damaged_file<R: Read + Seek>(
    input: &mut R,
    header: &PerfFileHeader,
    path: &Path,
    diagnostics: &mut Diagnostics,
) -> std::io::Result<Option<u64>> {
    if header.is_cut() {
        let data_end = whole_records_end(input, header, header.file_length)?;
        diagnostics.warn(WarningKind::PerfDataCutShort, || {
            format!(
                "{}: byte offset {}: expected a data section of {} bytes, the file ends {} bytes into it (cut short); \
                 the records up to byte offset {data_end} were used, the feature sections (build ids, event names) are lost",
                path.display(),
                header.data.offset,
                header.data.size,
                header.file_length.saturating_sub(header.data.offset)
            )
        });
        Ok(Some(data_end))
    } else if header.is_unfinished() {
        let data_end = whole_records_end(input, header, header.file_length)?;
        diagnostics.warn(WarningKind::PerfDataUnfinished, || {
            format!(
                "{}: byte offset 48: expected the size of the data section, found 0: the recording was not finished \
                 (perf record was killed before it could write the header); the whole records from byte offset {} \
                 up to byte offset {data_end} of the file's {} bytes were used, the feature sections (build ids, \
                 event names) are missing",
                path.display(),
                header.data.offset,
                header.file_length
            )
        });
        Ok(Some(data_end))
    } else {
        Ok(None)
    }
}

/// The first record before `end` that ends the reading as a broken one
/// does, because the crate would mishandle it: an AUXTRACE record declaring
/// more trace data than there is (the crate allocates it before reading: a
/// damaged size would abort the process), a FINISHED_ROUND record with a
/// body (the crate would lose track of the records after it), and
/// compressed records expanding past the limits of [`super::compressed`]
/// (the crate decompresses each whole). A compressed record going too far
/// comes first: the walk that decompresses stops there.
fn first_record_mishandled<R: Read + Seek>(
    input: &mut R,
    header: &PerfFileHeader,
    end: u64,
) -> std::io::Result<Option<BrokenRecord>> {
    let mut expanded = None;
    let mut walk = |expansion_check: &mut ExpansionCheck| {
        walk_records(input, header.data.offset, end, header.little_endian, |offset, record_type, body| {
            match expansion_check.visit(record_type, body) {
                Ok(()) => true,
                Err(expansion) => {
                    expanded = Some(BrokenRecord { offset, problem: expansion.to_string() });
                    false
                }
            }
        })
    };
    let mut expansion_check = ExpansionCheck::new(header.little_endian);
    let walked = walk(&mut expansion_check)?;
    if expansion_check.is_undecided() {
        // The zstd headers alone could not tell: decompress.
        walk(&mut ExpansionCheck::decompressing(header.little_endian))?;
    }
    if expanded.is_some() {
        return Ok(expanded);
    }
    let broken = if let Some(trace_size) = walked.auxtrace_overrun {
        Some(BrokenRecord {
            offset: walked.offset,
            problem: format!(
                "expected an AUXTRACE record and the {trace_size} bytes of trace data it declares, the data \
                 section ends {} bytes after its start",
                end - walked.offset
            ),
        })
    } else {
        walked.finished_round_size.map(|size| BrokenRecord {
            offset: walked.offset,
            problem: format!(
                "expected a FINISHED_ROUND record of {RECORD_HEADER_SIZE} bytes (a header alone), found one of \
                 {size} bytes"
            ),
        })
    };
    Ok(broken)
}
