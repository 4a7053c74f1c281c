//! Record layouts (as on disk) and the decoded records.

use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashSet;

use object::Endianness;
use object::endian::{I32, U32, U64};
use object::pod::Pod;
use object::read::Bytes;

/// The prefix of every record (`struct jr_prefix`).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct RecordPrefix {
    /// Record type, see [`JitDumpRecordKind`].
    pub id: U32<Endianness>,
    /// Size of the whole record including this prefix.
    pub total_size: U32<Endianness>,
    /// Time the record was written (V8: `CLOCK_MONOTONIC` nanoseconds).
    pub timestamp: U64<Endianness>,
}

/// Size of [`RecordPrefix`] in bytes.
pub const RECORD_PREFIX_SIZE: usize = size_of::<RecordPrefix>();

/// The fixed fields of a CODE_LOAD record after the prefix
/// (`struct jr_code_load`); followed by the NUL-terminated name and
/// `code_size` bytes of code.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct CodeLoadFields {
    /// Process id.
    pub pid: U32<Endianness>,
    /// Thread id.
    pub tid: U32<Endianness>,
    /// Virtual address of the code (V8: same as `code_addr`).
    pub vma: U64<Endianness>,
    /// Address of the first instruction.
    pub code_addr: U64<Endianness>,
    /// Size of the code in bytes.
    pub code_size: U64<Endianness>,
    /// Unique index of the code object, counted from 0 by V8.
    pub code_index: U64<Endianness>,
}

/// The fields of a CODE_MOVE record after the prefix (`struct jr_code_move`).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct CodeMoveFields {
    /// Process id.
    pub pid: U32<Endianness>,
    /// Thread id.
    pub tid: U32<Endianness>,
    /// Virtual address of the code.
    pub vma: U64<Endianness>,
    /// Address of the code before the move.
    pub old_code_addr: U64<Endianness>,
    /// Address of the code after the move.
    pub new_code_addr: U64<Endianness>,
    /// Size of the code in bytes.
    pub code_size: U64<Endianness>,
    /// Index of the moved code object (as in its CODE_LOAD).
    pub code_index: U64<Endianness>,
}

/// The fixed fields of a DEBUG_INFO record after the prefix
/// (`struct jr_code_debug_info`); followed by `nr_entry` entries.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct DebugInfoFields {
    /// Address of the code object described (its CODE_LOAD follows).
    pub code_addr: U64<Endianness>,
    /// Number of entries.
    pub nr_entry: U64<Endianness>,
}

/// The fixed fields of one DEBUG_INFO entry (`struct debug_entry`); followed
/// by a NUL-terminated file name (`"\xff\0"` = same as the previous entry).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct DebugEntryFields {
    /// Code address the entry starts at (V8 adds 0x40, see
    /// [`DebugEntry::code_offset`]).
    pub addr: U64<Endianness>,
    /// Line number, from 1.
    pub lineno: I32<Endianness>,
    /// Discriminator in the specification; V8 writes the column (from 1).
    pub discrim: I32<Endianness>,
}

/// The fixed fields of an UNWINDING_INFO record after the prefix
/// (`struct jr_code_unwinding_info`); followed by the unwinding data.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct UnwindingInfoFields {
    /// Size of the unwinding data (`.eh_frame` + `.eh_frame_hdr`).
    pub unwinding_size: U64<Endianness>,
    /// Size of the `.eh_frame_hdr` part.
    pub eh_frame_hdr_size: U64<Endianness>,
    /// Size of the data mapped with the code.
    pub mapped_size: U64<Endianness>,
}

// SAFETY: each is a `repr(C)` struct made only of byte arrays (alignment 1, no
// padding), so every bit pattern is valid.
unsafe impl Pod for RecordPrefix {}
// SAFETY: as above.
unsafe impl Pod for CodeLoadFields {}
// SAFETY: as above.
unsafe impl Pod for CodeMoveFields {}
// SAFETY: as above.
unsafe impl Pod for DebugInfoFields {}
// SAFETY: as above.
unsafe impl Pod for DebugEntryFields {}
// SAFETY: as above.
unsafe impl Pod for UnwindingInfoFields {}

/// The record type given by a record prefix's `id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JitDumpRecordKind {
    /// 0: a code object was created (`JIT_CODE_LOAD`).
    CodeLoad,
    /// 1: a code object moved (`JIT_CODE_MOVE`).
    CodeMove,
    /// 2: source lines of the code object loaded next (`JIT_CODE_DEBUG_INFO`).
    DebugInfo,
    /// 3: end of the file (`JIT_CODE_CLOSE`).
    CodeClose,
    /// 4: unwinding data of the code object loaded next
    /// (`JIT_CODE_UNWINDING_INFO`).
    UnwindingInfo,
    /// Any other id.
    Unknown(u32),
}

impl JitDumpRecordKind {
    /// The kind of a record `id`.
    pub fn from_id(id: u32) -> JitDumpRecordKind {
        match id {
            0 => JitDumpRecordKind::CodeLoad,
            1 => JitDumpRecordKind::CodeMove,
            2 => JitDumpRecordKind::DebugInfo,
            3 => JitDumpRecordKind::CodeClose,
            4 => JitDumpRecordKind::UnwindingInfo,
            other => JitDumpRecordKind::Unknown(other),
        }
    }

    /// The record `id` of this kind.
    pub fn id(self) -> u32 {
        match self {
            JitDumpRecordKind::CodeLoad => 0,
            JitDumpRecordKind::CodeMove => 1,
            JitDumpRecordKind::DebugInfo => 2,
            JitDumpRecordKind::CodeClose => 3,
            JitDumpRecordKind::UnwindingInfo => 4,
            JitDumpRecordKind::Unknown(id) => id,
        }
    }
}

impl fmt::Display for JitDumpRecordKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JitDumpRecordKind::CodeLoad => formatter.write_str("CODE_LOAD"),
            JitDumpRecordKind::CodeMove => formatter.write_str("CODE_MOVE"),
            JitDumpRecordKind::DebugInfo => formatter.write_str("DEBUG_INFO"),
            JitDumpRecordKind::CodeClose => formatter.write_str("CODE_CLOSE"),
            JitDumpRecordKind::UnwindingInfo => formatter.write_str("UNWINDING_INFO"),
            JitDumpRecordKind::Unknown(id) => write!(formatter, "unknown (id {id})"),
        }
    }
}

/// A CODE_LOAD record: a code object now lives at
/// `code_address..code_address + code_size`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeLoad {
    /// Record timestamp (V8: `CLOCK_MONOTONIC` nanoseconds).
    pub timestamp: u64,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Virtual address of the code (V8: same as `code_address`).
    pub vma: u64,
    /// Address of the first instruction.
    pub code_address: u64,
    /// Size of the code in bytes.
    pub code_size: u64,
    /// Index of the code object (V8 counts 0, 1, 2, ... in file order).
    pub code_index: u64,
    /// Symbol name, e.g. `JS:*kernel /app/deep.js:24:16`; invalid UTF-8 is
    /// replaced by U+FFFD. Loads of one name share it.
    pub name: Arc<str>,
    /// Byte offset of the record in the file.
    pub record_offset: u64,
}

/// A CODE_MOVE record: a code object moved (V8 does not write these today).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeMove {
    /// Record timestamp.
    pub timestamp: u64,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Virtual address of the code.
    pub vma: u64,
    /// Address before the move.
    pub old_code_address: u64,
    /// Address after the move.
    pub new_code_address: u64,
    /// Size of the code in bytes.
    pub code_size: u64,
    /// Index of the code object (as in its CODE_LOAD).
    pub code_index: u64,
}

/// A DEBUG_INFO record: source positions of the code object whose CODE_LOAD
/// is the next one in the file with the same code address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebugInfo {
    /// Record timestamp.
    pub timestamp: u64,
    /// Address of the code object described.
    pub code_address: u64,
    /// The entries that could be read, in file order (addresses ascending).
    pub entries: Vec<DebugEntry>,
    /// How many times an entry did not start where the previous file name
    /// ended (a name holding NUL bytes, or trailing bytes after the last
    /// entry) and the reader had to find it by its plausible address.
    pub resyncs: u32,
}

/// One DEBUG_INFO entry: from `address` on, the code is at `line:column` of
/// `file_name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebugEntry {
    /// Code address as written: V8 adds 0x40; see [`DebugEntry::code_offset`].
    pub address: u64,
    /// Line number, from 1 (V8 writes 0 for an unknown position).
    pub line: i32,
    /// Column, from 1 (V8 writes it in the specification's `discrim` field).
    pub column: i32,
    /// Script name as written. `"\xff"` (same as previous) is replaced by the
    /// previous entry's name. Node 18–24 write some names from a freed buffer:
    /// such a name starts with garbage bytes (possibly NULs) and only its end
    /// is right, e.g. `<16 garbage bytes>stdata/app/deep.js`; the reader keeps
    /// every byte up to the NUL before the next entry.
    pub file_name: Vec<u8>,
}

/// V8's bias on DEBUG_INFO addresses: the size of the ELF header that
/// `perf inject --jit` puts before the code in the `jitted-PID-N.so` it writes.
pub const V8_DEBUG_ADDRESS_BIAS: u64 = 0x40;

impl DebugEntry {
    /// Offset of this entry into the code object starting at `code_address`
    /// (the DEBUG_INFO's [`DebugInfo::code_address`]), or `None` if the entry
    /// lies before it.
    ///
    /// V8 writes `address = code_start + code_offset + 0x40`, not the runtime
    /// address: `perf inject --jit` turns each code object into an ELF file
    /// whose code starts right after the 64-byte ELF header, and perf reads the
    /// DEBUG_INFO addresses as addresses in that file. See `LogWriteDebugInfo`
    /// in V8's `src/diagnostics/perf-jit.cc`
    /// (<https://chromium.googlesource.com/v8/v8/+/refs/heads/main/src/diagnostics/perf-jit.cc>):
    /// "The entry point of the function will be placed straight after the ELF
    /// header when processed by "perf inject". Adjust the position addresses
    /// accordingly."
    pub fn code_offset(&self, code_address: u64) -> Option<u64> {
        self.address.checked_sub(code_address)?.checked_sub(V8_DEBUG_ADDRESS_BIAS)
    }
}

/// What a malformed record's body should have held (the part after
/// `expected`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecordProblem {
    /// The body is shorter than the record's fixed fields.
    #[error("a body of at least {needed} bytes, found {found}")]
    BodyTooShort {
        /// Size of the fixed fields.
        needed: u64,
        /// Body size (`total_size` - 16).
        found: u64,
    },
    /// The CODE_LOAD name has no NUL before the end of the record.
    #[error("a NUL-terminated name")]
    NameNotTerminated,
    /// The CODE_LOAD `code_size` is larger than what is left after the name.
    #[error("code_size of at most {room} (the bytes left after the name), found {code_size}")]
    CodeOutsideRecord {
        /// The `code_size` found.
        code_size: u64,
        /// Bytes in the record after the name's NUL.
        room: u64,
    },
}

/// Decodes a CODE_LOAD body (the record after its prefix). Reads the fixed
/// fields and the name; the code bytes are only counted, never read.
pub(crate) fn parse_code_load(
    body: &[u8],
    endian: Endianness,
    timestamp: u64,
    record_offset: u64,
    names: &mut NameInterner,
) -> Result<CodeLoad, (u64, RecordProblem)> {
    let mut cursor = Bytes(body);
    let Ok(fields) = cursor.read::<CodeLoadFields>() else {
        return Err((
            0,
            RecordProblem::BodyTooShort { needed: size_of::<CodeLoadFields>() as u64, found: body.len() as u64 },
        ));
    };
    let name_offset = size_of::<CodeLoadFields>() as u64;
    let Ok(name) = cursor.read_string() else {
        return Err((name_offset, RecordProblem::NameNotTerminated));
    };
    let code_size = fields.code_size.get(endian);
    let room = cursor.len() as u64;
    if code_size > room {
        return Err((
            name_offset.saturating_add(name.len() as u64).saturating_add(1),
            RecordProblem::CodeOutsideRecord { code_size, room },
        ));
    }
    Ok(CodeLoad {
        timestamp,
        pid: fields.pid.get(endian),
        tid: fields.tid.get(endian),
        vma: fields.vma.get(endian),
        code_address: fields.code_addr.get(endian),
        code_size,
        code_index: fields.code_index.get(endian),
        name: names.intern(name),
        record_offset,
    })
}

/// The names of the code loads read so far, each kept once: V8 loads code of
/// one name again and again (every isolate its builtins, each tier a
/// function's code).
#[derive(Debug, Default)]
pub(crate) struct NameInterner {
    names: FxHashSet<Arc<str>>,
}

impl NameInterner {
    /// The shared copy of `name` (invalid UTF-8 replaced by U+FFFD).
    pub(crate) fn intern(&mut self, name: &[u8]) -> Arc<str> {
        // `from_utf8` checks valid text faster than the lossy decoder walks it.
        let name = match std::str::from_utf8(name) {
            Ok(name) => std::borrow::Cow::Borrowed(name),
            Err(_) => String::from_utf8_lossy(name),
        };
        if let Some(shared) = self.names.get(name.as_ref()) {
            return shared.clone();
        }
        let shared: Arc<str> = name.into();
        self.names.insert(shared.clone());
        shared
    }
}

/// Decodes a CODE_MOVE body.
pub(crate) fn parse_code_move(
    body: &[u8],
    endian: Endianness,
    timestamp: u64,
) -> Result<CodeMove, (u64, RecordProblem)> {
    let Ok((fields, _)) = object::pod::from_bytes::<CodeMoveFields>(body) else {
        return Err((
            0,
            RecordProblem::BodyTooShort { needed: size_of::<CodeMoveFields>() as u64, found: body.len() as u64 },
        ));
    };
    Ok(CodeMove {
        timestamp,
        pid: fields.pid.get(endian),
        tid: fields.tid.get(endian),
        vma: fields.vma.get(endian),
        old_code_address: fields.old_code_addr.get(endian),
        new_code_address: fields.new_code_addr.get(endian),
        code_size: fields.code_size.get(endian),
        code_index: fields.code_index.get(endian),
    })
}
