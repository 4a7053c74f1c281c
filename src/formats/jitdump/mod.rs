//! Reader for the Linux perf jitdump format as written by V8
//! (`node --perf-prof` writes `jit-PID.dump`).
//!
//! Format: the Linux kernel's `tools/perf/Documentation/jitdump-specification.txt`.
//! A 40-byte (or larger) header, then records `{id u32, total_size u32,
//! timestamp u64, body}`: CODE_LOAD (0), CODE_MOVE (1), DEBUG_INFO (2),
//! CODE_CLOSE (3), UNWINDING_INFO (4). Every field is in the writer's byte
//! order, which the magic reveals.
//!
//! The reader works on a byte slice (the caller may memory-map the file),
//! reads fields through the `object` crate's `Pod` types and never panics.
//! Files are often cut short because the process was killed mid-write: every
//! whole record is used and the cut becomes a [`JitDumpWarning`]. Only an
//! unusable header is a [`JitDumpError`].
//!
//! ```no_run
//! use v8inline::internals::formats::jitdump::{self, ReadOptions};
//! # fn main() -> Result<(), v8inline::Error> {
//! let dump = jitdump::read_path("jit-1234.dump".as_ref(), &ReadOptions::default())?;
//! for load in &dump.loads {
//!     println!("{:#x} {} {}", load.code_address, load.code_size, load.name);
//! }
//! # Ok(())
//! # }
//! ```

mod debug_info;
mod error;
mod header;
mod reader;
mod record;
mod repair;
mod v8_mis_sized;

pub use error::{HeaderProblem, JitDumpError, JitDumpWarning, ReadPathCause, ReadPathError};
pub use header::{FILE_HEADER_SIZE, FileHeader, Header, MAGIC};
pub use reader::{JitDump, ReadOptions, read, read_loads_with_progress, read_path, read_stream, read_with_progress};
pub use record::{
    CodeLoad, CodeLoadFields, CodeMove, CodeMoveFields, DebugEntry, DebugEntryFields, DebugInfo, DebugInfoFields,
    JitDumpRecordKind, RECORD_PREFIX_SIZE, RecordPrefix, RecordProblem, UnwindingInfoFields, V8_DEBUG_ADDRESS_BIAS,
};
pub use repair::{RepairedJitDump, repair};
pub use v8_mis_sized::MisSizedDebugInfo;

#[cfg(test)]
mod tests;
