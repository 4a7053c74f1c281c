//! The record loop: frames records by their `total_size` and decodes the ones
//! asked for.

use std::path::Path;

use object::Endianness;
use object::read::Bytes;

use super::debug_info::parse_debug_info;
use super::error::{JitDumpError, JitDumpWarning, RecordProblem};
use super::header::Header;
use super::record::{
    CodeLoad, CodeMove, DebugInfo, RECORD_PREFIX_SIZE, RecordKind, RecordPrefix, parse_code_load, parse_code_move,
};

/// What to decode besides CODE_LOAD and CODE_MOVE records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadOptions {
    /// Decode DEBUG_INFO records into [`JitDump::debug_infos`]. Off by
    /// default: their bodies are then not even looked at.
    pub debug_info: bool,
}

/// Everything read from one jitdump file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitDump {
    /// The file header.
    pub header: Header,
    /// CODE_LOAD records, in file order.
    pub loads: Vec<CodeLoad>,
    /// CODE_MOVE records, in file order.
    pub moves: Vec<CodeMove>,
    /// DEBUG_INFO records in file order; empty unless
    /// [`ReadOptions::debug_info`]. Each describes the next CODE_LOAD in the
    /// file with the same code address.
    pub debug_infos: Vec<DebugInfo>,
    /// Truncation, malformed records and DEBUG_INFO resynchronizations, each
    /// with its byte offset.
    pub warnings: Vec<JitDumpWarning>,
    /// Well-framed records whose content is not returned: CODE_CLOSE,
    /// UNWINDING_INFO, unknown ids, and DEBUG_INFO when
    /// [`ReadOptions::debug_info`] is off.
    pub skipped_records: u64,
}

/// Reads a jitdump from memory (a whole file, possibly memory-mapped).
///
/// Only an unusable header is an error. After it, every whole record is used;
/// a cut or unframeable record stops reading with a warning, a malformed record
/// is skipped with a warning. Never panics. Without
/// [`ReadOptions::debug_info`] only record prefixes, CODE_LOAD fixed fields and
/// names, and CODE_MOVE bodies are read; code bytes are never touched.
pub fn read(bytes: &[u8], options: &ReadOptions) -> Result<JitDump, JitDumpError> {
    let header = Header::parse(bytes)?;
    let mut reader = Reader {
        endian: header.endianness,
        options: *options,
        dump: JitDump {
            header,
            loads: Vec::new(),
            moves: Vec::new(),
            debug_infos: Vec::new(),
            warnings: Vec::new(),
            skipped_records: 0,
        },
    };
    reader.read_records(bytes);
    Ok(reader.dump)
}

/// Reads the jitdump file at `path` (not compressed: the caller decompresses a
/// `.gz`). Errors display as `PATH: byte offset N: expected ...`.
pub fn read_path(path: &Path, options: &ReadOptions) -> Result<JitDump, JitDumpError> {
    let bytes = std::fs::read(path).map_err(|error| JitDumpError::Io { path: path.to_owned(), error })?;
    read(&bytes, options).map_err(|error| JitDumpError::File { path: path.to_owned(), error: Box::new(error) })
}

/// State of one read.
struct Reader {
    endian: Endianness,
    options: ReadOptions,
    dump: JitDump,
}

impl Reader {
    /// Walks the records after the header.
    fn read_records(&mut self, bytes: &[u8]) {
        // Header::parse checked that the header size is within the file.
        let mut offset = usize::try_from(self.dump.header.header_size).unwrap_or(usize::MAX);
        while let Some(rest) = bytes.get(offset..)
            && !rest.is_empty()
        {
            let record_offset = offset as u64;
            let available = rest.len() as u64;
            let Ok(prefix) = Bytes(rest).read_at::<RecordPrefix>(0) else {
                self.dump.warnings.push(JitDumpWarning::Truncated {
                    offset: record_offset,
                    needed: RECORD_PREFIX_SIZE as u64,
                    available,
                });
                return;
            };
            let total_size = prefix.total_size.get(self.endian);
            let record_size = usize::try_from(total_size).unwrap_or(usize::MAX);
            if record_size < RECORD_PREFIX_SIZE {
                self.dump.warnings.push(JitDumpWarning::RecordSizeTooSmall { offset: record_offset, total_size });
                return;
            }
            let Some(body) = rest.get(RECORD_PREFIX_SIZE..record_size) else {
                self.dump.warnings.push(JitDumpWarning::Truncated {
                    offset: record_offset,
                    needed: u64::from(total_size),
                    available,
                });
                return;
            };
            let kind = RecordKind::from_id(prefix.id.get(self.endian));
            let timestamp = prefix.timestamp.get(self.endian);
            self.read_record(kind, timestamp, body, record_offset);
            offset = offset.saturating_add(record_size);
        }
    }

    /// Decodes one framed record.
    fn read_record(&mut self, kind: RecordKind, timestamp: u64, body: &[u8], record_offset: u64) {
        let endian = self.endian;
        let result = match kind {
            RecordKind::CodeLoad => {
                parse_code_load(body, endian, timestamp, record_offset).map(|load| self.dump.loads.push(load))
            }
            RecordKind::CodeMove => {
                parse_code_move(body, endian, timestamp).map(|code_move| self.dump.moves.push(code_move))
            }
            RecordKind::DebugInfo if self.options.debug_info => self.read_debug_info(body, timestamp, record_offset),
            RecordKind::DebugInfo | RecordKind::CodeClose | RecordKind::UnwindingInfo | RecordKind::Unknown(_) => {
                self.dump.skipped_records = self.dump.skipped_records.saturating_add(1);
                Ok(())
            }
        };
        if let Err((offset_in_body, expected)) = result {
            self.dump.warnings.push(JitDumpWarning::MalformedRecord {
                offset: body_offset(record_offset, offset_in_body),
                record_offset,
                kind,
                expected,
            });
        }
    }

    /// Decodes a DEBUG_INFO record and reports its resynchronizations.
    fn read_debug_info(&mut self, body: &[u8], timestamp: u64, record_offset: u64) -> Result<(), (u64, RecordProblem)> {
        let outcome = parse_debug_info(body, self.endian, timestamp)?;
        if let Some(first_resync) = outcome.first_resync {
            self.dump.warnings.push(JitDumpWarning::DebugInfoResynced {
                offset: body_offset(record_offset, first_resync),
                record_offset,
                resyncs: outcome.info.resyncs,
            });
        }
        if let Some(incomplete_at) = outcome.incomplete_at {
            self.dump.warnings.push(JitDumpWarning::DebugInfoIncomplete {
                offset: body_offset(record_offset, incomplete_at),
                record_offset,
                declared: outcome.declared,
                read: outcome.info.entries.len() as u64,
            });
        }
        self.dump.debug_infos.push(outcome.info);
        Ok(())
    }
}

/// File offset of `offset_in_body` in the body of the record at
/// `record_offset`.
fn body_offset(record_offset: u64, offset_in_body: u64) -> u64 {
    record_offset.saturating_add(RECORD_PREFIX_SIZE as u64).saturating_add(offset_in_body)
}
