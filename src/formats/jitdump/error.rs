//! The error (unusable header) and the warnings (everything after the header)
//! of the jitdump reader. Every message names a byte offset into the file and
//! what was expected there: `byte offset N: expected ...`.

use std::io;
use std::path::PathBuf;

use super::record::{JitDumpRecordKind, RecordProblem};

/// Why the jitdump cannot be read at all: its header is unusable. Any
/// problem after the header is a [`JitDumpWarning`]. Displays as
/// `byte offset N: expected ...`; [`read_path`](super::read_path) puts the
/// file's path before it ([`ReadPathError`]).
#[derive(Debug, thiserror::Error)]
#[error("byte offset {offset}: expected {expected}")]
pub struct JitDumpError {
    /// Offset of the offending header field.
    pub offset: u64,
    /// What the header should have held.
    pub expected: HeaderProblem,
}

/// Why [`read_path`](super::read_path) read no jitdump: the file and why.
/// Displays as `PATH: what`.
#[derive(Debug, thiserror::Error)]
#[error("{}: {cause}", path.display())]
pub struct ReadPathError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub cause: ReadPathCause,
}

/// Why a jitdump file could not be read: the file's or the header's fault.
#[derive(Debug, thiserror::Error)]
pub enum ReadPathCause {
    /// It could not be opened or read.
    #[error("{0}")]
    Read(io::Error),
    /// Its header is unusable.
    #[error("{0}")]
    Header(JitDumpError),
}

/// What an unusable header should have held (the part after `expected`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HeaderProblem {
    /// The file is shorter than the 40-byte header.
    #[error("a 40-byte jitdump header, the file has only {length} bytes")]
    TooShort {
        /// File length in bytes.
        length: u64,
    },
    /// The magic is neither `"JiTD"` nor its byte swap.
    #[error("magic 0x4A695444 (\"JiTD\") in either byte order, found 0x{found:08X}")]
    BadMagic {
        /// The first four bytes read as a little-endian `u32`.
        found: u32,
    },
    /// The version is not 1 or 2.
    #[error("jitdump version 1 or 2, found {version}")]
    UnsupportedVersion {
        /// The version found.
        version: u32,
    },
    /// The header's `total_size` is below 40.
    #[error("a header total_size of at least 40, found {size}")]
    SizeTooSmall {
        /// The size found.
        size: u32,
    },
    /// The header's `total_size` runs past the end of the file.
    #[error("a header total_size within the file ({length} bytes), found {size}")]
    SizePastEnd {
        /// The size found.
        size: u32,
        /// File length in bytes.
        length: u64,
    },
}

/// A problem after the header. Reading goes on (malformed record, DEBUG_INFO
/// trouble) or stops with every whole record before it kept (truncation, bad
/// record size).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JitDumpWarning {
    /// The file ends inside a record: the writer was probably killed while
    /// writing. `offset` is where the partial record starts; every record
    /// before it was used. Reading stopped.
    #[error(
        "byte offset {offset}: expected a whole record of {needed} bytes, the file ends {available} bytes later (cut short); reading stopped"
    )]
    Truncated {
        /// Start of the partial record.
        offset: u64,
        /// Bytes the record needs: 16 for the record prefix, or its `total_size`.
        needed: u64,
        /// Bytes left in the file from `offset`.
        available: u64,
    },
    /// A record prefix has a `total_size` below the 16-byte prefix itself, so
    /// the next record cannot be found. Reading stopped.
    #[error("byte offset {offset}: expected a record total_size of at least 16, found {total_size}; reading stopped")]
    RecordSizeTooSmall {
        /// Start of the record.
        offset: u64,
        /// The `total_size` found.
        total_size: u32,
    },
    /// A record's body does not hold what its id requires; the record was
    /// skipped using its `total_size` and reading went on.
    #[error(
        "byte offset {offset}: expected {expected} in the {kind} record at byte offset {record_offset}; record skipped"
    )]
    MalformedRecord {
        /// Where the missing or inconsistent part is.
        offset: u64,
        /// Start of the record.
        record_offset: u64,
        /// The record's id.
        kind: JitDumpRecordKind,
        /// What the body should have held.
        expected: RecordProblem,
    },
    /// Inside a DEBUG_INFO record, an entry did not start where the previous
    /// file name ended: node 18–24 write file names from a freed buffer, so a
    /// name may hold NUL bytes. The reader found the following entries by
    /// their plausible addresses. The entries were kept.
    #[error(
        "byte offset {offset}: expected a DEBUG_INFO entry with a plausible address after the previous file name; resynchronized {resyncs} time(s) in the record at byte offset {record_offset}"
    )]
    DebugInfoResynced {
        /// Where the first implausible entry was read.
        offset: u64,
        /// Start of the DEBUG_INFO record.
        record_offset: u64,
        /// Number of resynchronizations in the record.
        resyncs: u32,
    },
    /// A DEBUG_INFO record ended (or turned unreadable) before its `nr_entry`
    /// entries were read; the entries read were kept.
    #[error(
        "byte offset {offset}: expected {declared} DEBUG_INFO entries in the record at byte offset {record_offset}, could read {read}"
    )]
    DebugInfoIncomplete {
        /// Where the next entry could not be read.
        offset: u64,
        /// Start of the DEBUG_INFO record.
        record_offset: u64,
        /// The record's `nr_entry`.
        declared: u64,
        /// Entries read and kept.
        read: u64,
    },
}

/// The unit a killed writer's jitdump ends at a multiple of. V8 writes the
/// jitdump through a stdio `FILE`, whose buffer glibc sizes to the file
/// system's block (4 KiB, or a multiple); a process killed by a signal
/// (test runners stop their workers so) never flushes the rest. Measured:
/// the jitdumps of workers killed with SIGTERM by node 18, 20, 22 and 26
/// ended at multiples of 4096 bytes, inside a record.
pub const WRITER_FLUSH_BYTES: u64 = 4096;

impl JitDumpWarning {
    /// Whether this is the cut a writer killed while writing leaves: the
    /// file ends inside a record at a multiple of [`WRITER_FLUSH_BYTES`],
    /// where its buffer was last flushed (every record before it whole).
    pub fn is_cut_by_writers_death(&self) -> bool {
        match self {
            JitDumpWarning::Truncated { offset, available, .. } => {
                let end = offset.saturating_add(*available);
                end > 0 && end % WRITER_FLUSH_BYTES == 0
            }
            _ => false,
        }
    }

    /// Whether reading stopped here, before the file's end: everything
    /// after it (code loads included) is lost.
    pub fn stops_reading(&self) -> bool {
        matches!(self, JitDumpWarning::Truncated { .. } | JitDumpWarning::RecordSizeTooSmall { .. })
    }

    /// Byte offset into the file the warning is about.
    pub fn offset(&self) -> u64 {
        match self {
            JitDumpWarning::Truncated { offset, .. }
            | JitDumpWarning::RecordSizeTooSmall { offset, .. }
            | JitDumpWarning::MalformedRecord { offset, .. }
            | JitDumpWarning::DebugInfoResynced { offset, .. }
            | JitDumpWarning::DebugInfoIncomplete { offset, .. } => *offset,
        }
    }
}
