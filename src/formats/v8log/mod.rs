//! Reader for V8's code log (`node --log-code`): code objects, the functions
//! they inline, and the scripts those functions live in.
//!
//! The log is read in order because its records refer to the state at the
//! time they were written: a `code-source-info` names the inlined functions by
//! their SharedFunctionInfo (SFI) address *at that time*, and `sfi-move`
//! records say where the GC moved an SFI since.
//!
//! Besides the record parsers (`record`, `lexer`, `name`, `escape`,
//! `tables`), the reader is split by concern: this module holds what a log
//! describes ([`CodeLog`], its code objects, functions and scripts, and the
//! ids they refer to each other by); `reading` reads the text line by line,
//! `builder` applies each record in log order (with `addresses`, the code
//! objects' addresses followed through moves and deletes), `lookup` answers
//! questions about a read log (decoding tables on first use), and
//! `retained` keeps a log's text where it was read.

pub mod builtins;
pub mod escape;
pub mod lexer;
pub mod name;
pub mod record;
pub mod tables;

mod addresses;
mod builder;
mod lookup;
mod reading;
mod retained;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use rustc_hash::FxHashMap;

pub use name::{CodeName, FunctionName, JAVASCRIPT_TAGS, LineColumn, ScriptLine};
pub use record::{
    CodeCreation, CodeSourceInfo, InliningPosition, ParseError, PositionEntry, Record, SourceTableError, TableError,
    Tick, Tier, TierMarker, V8Version,
};
pub use tables::{InliningTableProblem, TableProblem};

pub use retained::RetainedText;

use lookup::DecodedTables;
use retained::ScriptText;

/// Index of a code object in [`CodeLog::code_objects`], in log order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodeObjectId(pub(crate) u32);

impl CodeObjectId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of a code object's source information in [`CodeLog::source_info`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceInfoId(std::num::NonZeroU32);

impl SourceInfoId {
    /// The id of the `index`-th source information (kept as `index + 1`, so
    /// that an absent one takes no room in a [`CodeObject`]).
    pub(crate) fn new(index: u32) -> SourceInfoId {
        SourceInfoId(std::num::NonZeroU32::MIN.saturating_add(index))
    }

    /// Its index in the log's source information.
    pub fn index(self) -> usize {
        self.0.get() as usize - 1
    }
}

/// Index of an interned code-object name in a [`CodeLog`] ([`CodeLog::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameId(pub(crate) u32);

impl NameId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of an interned code-object tag in a [`CodeLog`] ([`CodeLog::tag`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TagId(pub(crate) u32);

impl TagId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of a function (one SharedFunctionInfo, followed through moves) in
/// [`CodeLog::functions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SharedFunctionId(pub(crate) u32);

impl SharedFunctionId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A code object from a `code-creation` record.
///
/// Logs hold millions of them: names and tags are ids of the log's interned
/// strings ([`CodeLog::object_name`], [`CodeLog::object_tag`]).
#[derive(Debug, Clone)]
pub struct CodeObject {
    /// The tag as written (`JS`, `LazyCompile`, `Builtin`, ...).
    pub tag: TagId,
    /// Start address of its instructions.
    pub address: u64,
    /// Instruction size in bytes.
    pub size: u64,
    /// Unescaped name, e.g. `root /tmp/exp/bench.js:4:14`.
    pub name: NameId,
    /// The function whose code this is.
    pub function: Option<SharedFunctionId>,
    /// The tier marker; `None` when absent or empty.
    pub tier: Option<TierMarker>,
    /// Source positions and inlining, from its `code-source-info`
    /// ([`CodeLog::source_info`]; most code objects, builtins and bytecode
    /// handlers, have none).
    pub source_info: Option<SourceInfoId>,
    /// 1-based line of the code-creation record in the log.
    pub log_line: u64,
    /// The record's TIME: microseconds since this log (its isolate) started.
    pub timestamp_micros: i64,
    /// V8's CodeKind number, as written.
    pub kind: CodeKindNumber,
}

/// V8's `CodeKind` of a code-creation, as the number the log writes. The
/// numbering changes between V8 versions, so nothing reads a meaning into
/// a number; a reader compares the numbers of one log, e.g. to learn which
/// kinds the jitdump never writes (bytecode arrays: V8's jitdump writer
/// logs only `Code` objects).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodeKindNumber(pub u8);

impl CodeKindNumber {
    /// The kind of a record's KIND field; one out of range (no V8 has 255
    /// kinds) is kept as 255.
    pub fn new(number: i64) -> CodeKindNumber {
        CodeKindNumber(u8::try_from(number).unwrap_or(u8::MAX))
    }
}

/// The `code-source-info` of a code object, with inlined functions resolved.
///
/// Its position and inlining tables stay text (copied into the log, or in
/// the log's own text or file, [`RetainedText`]) until a lookup first needs
/// them ([`CodeLog::source_tables`]), and are checked then: most code objects
/// are never sampled.
#[derive(Debug, Default)]
pub struct SourceInfo {
    /// The script of the code object's own function.
    pub script_id: i64,
    /// Script offset where the function starts.
    pub function_start: i64,
    /// Where its table text starts in [`CodeLog::table_text`] (or the
    /// retained text): the positions, a comma, the inlining positions.
    text_start: usize,
    /// Bytes of position-table text.
    positions_length: u32,
    /// Bytes of inlining-table text.
    inlining_length: u32,
    /// Its inlined functions in [`CodeLog::inlined_functions`]: start, count.
    functions_start: u32,
    functions_count: u32,
    /// The decoded tables, once a lookup needed them (boxed: most never
    /// are, and a log has hundreds of thousands of source infos).
    decoded: OnceLock<Box<DecodedTables>>,
}

/// A code object's source-position and inlining tables, decoded.
#[derive(Debug, Clone, Copy)]
pub struct SourceTables<'log> {
    /// The source-position table, ascending code offset.
    pub positions: &'log [PositionEntry],
    /// The inlining tree: entry n is inlining id n.
    pub inlining_positions: &'log [InliningPosition],
    /// The inlined functions, indexed by [`InliningPosition::function_index`].
    pub inlined_functions: &'log [SharedFunctionId],
}

/// A JavaScript function: one SharedFunctionInfo followed through `sfi-move`s.
#[derive(Debug, Clone, Default)]
pub struct SharedFunction {
    /// The name of the latest code-creation that carried this function, e.g.
    /// `root /tmp/exp/bench.js:4:14`; empty if none did.
    pub name: Arc<str>,
    /// Its script, from a code-source-info of its code.
    pub script_id: Option<i64>,
    /// Its start offset in the script.
    pub function_start: Option<i64>,
}

/// A script from `script-source` or `script-details`.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// Unescaped name (usually a path or `node:internal/...`).
    pub name: Box<str>,
    /// The escaped source text, when the log carries it
    /// ([`CodeLog::script_source`]).
    source: Option<ScriptText>,
}

impl Script {
    /// Whether the log carries the script's text.
    pub fn has_source(&self) -> bool {
        self.source.is_some()
    }
}

/// A native library from a `shared-library` record.
#[derive(Debug, Clone)]
pub struct SharedLibraryMapping {
    /// Path of the library.
    pub path: Box<str>,
    /// First mapped address.
    pub start: u64,
    /// End of the mapping.
    pub end: u64,
    /// ASLR slide reported by V8.
    pub aslr_slide: i64,
}

/// A `code-move` record and where it is in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeMoveEvent {
    /// Address before the move.
    pub from: u64,
    /// Address after the move.
    pub to: u64,
    /// 1-based line of the record.
    pub log_line: u64,
}

/// A problem with one log line; the line is skipped and reading goes on.
#[derive(Debug, Clone)]
pub struct LogWarning {
    /// 1-based line number.
    pub line: u64,
    /// What kind of problem.
    pub kind: LogWarningKind,
    /// What was wrong.
    pub message: String,
}

/// The kinds of [`LogWarning`], for summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogWarningKind {
    /// A record of a known kind whose fields do not parse.
    UnparsableLine,
    /// A `code-source-info` for an address no `code-creation` announced.
    SourceInfoWithoutCode,
    /// The last line has no newline: the file was cut short there.
    CutShort,
}

/// Everything read from one code log.
#[derive(Debug, Default)]
pub struct CodeLog {
    /// Where it was read from (for messages).
    pub path: PathBuf,
    /// Code objects in log order.
    pub code_objects: Vec<CodeObject>,
    /// The code objects' names, unescaped, by [`NameId`].
    names: Vec<Arc<str>>,
    /// The code objects' tags, by [`TagId`].
    tags: Vec<Box<str>>,
    /// The code objects' source information, by [`SourceInfoId`].
    source_infos: Vec<SourceInfo>,
    /// The text of every position and inlining table, undecoded (unless
    /// the text is `retained`).
    table_text: Vec<u8>,
    /// The log's own text, when it stays where it was read: tables and
    /// script sources are then ranges of it.
    retained: Option<RetainedText>,
    /// The inlined functions of every [`SourceInfo`], one run each.
    inlined_functions: Vec<SharedFunctionId>,
    /// Functions (SFIs), indexed by [`SharedFunctionId`].
    pub functions: Vec<SharedFunction>,
    /// Scripts by V8 script id.
    pub scripts: FxHashMap<i64, Script>,
    /// Native libraries (`--prof` logs).
    pub shared_libraries: Vec<SharedLibraryMapping>,
    /// V8's own samples (`--prof` logs), in log order.
    pub ticks: Vec<Tick>,
    /// `code-move` records in log order (the GC moving bytecode arrays),
    /// for replaying the address space in time as the tick processor does.
    pub code_moves: Vec<CodeMoveEvent>,
    /// The first `v8-version` record.
    pub v8_version: Option<V8Version>,
    /// How many `v8-version` records were seen: more than one means several
    /// isolates wrote to this file, whose script ids may collide.
    pub isolate_count: u32,
    /// Code-creations timed before the code-creation above them. V8 writes
    /// an isolate's records under one lock with times from one timer, so its
    /// own log never goes back: another isolate's clock restarted from zero.
    pub clock_restarts: u64,
    /// Lines where a second record starts after the first one's beginning
    /// (`code-creation,Builtin,code-creation,Builtin,2,...`): several
    /// writers appended to the file at once.
    pub spliced_lines: u64,
    /// Lines that are not whole records: unparsable lines, spliced lines and
    /// fragments whose first field is no record kind at all. Skipped; in a
    /// log of one isolate they are damage, in a shared one the collisions.
    pub damaged_lines: u64,
    /// Lines read.
    pub line_count: u64,
    /// Records of kinds this reader does not use, counted by kind.
    pub skipped_kinds: IndexMap<String, u64>,
    /// Lines that could not be parsed or applied (every one is counted;
    /// `warnings` keeps the first [`MAX_KEPT_WARNINGS`]).
    pub warning_count: u64,
    /// [`CodeLog::warning_count`] by kind.
    pub warning_counts: FxHashMap<LogWarningKind, u64>,
    /// The first warnings, with line numbers.
    pub warnings: Vec<LogWarning>,
}

/// The longest code-log line read: a longer one is damage, skipped and
/// counted as a damaged line (and, read as a stream, dropped as it is
/// read). The longest real ones are `script-source` records of bundles: the
/// longest in testdata/ is 724,126 bytes (prettier's ES module build).
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// Past this many bytes without a line end a streamed input is no code log
/// (`/dev/zero` through a pipe): an error, not an endless read.
pub const MAX_UNENDED_BYTES: u64 = 1 << 30;

/// How many warnings a [`CodeLog`] keeps verbatim; the rest are only counted.
pub const MAX_KEPT_WARNINGS: usize = 20;

#[cfg(test)]
mod tests {
    use super::*;

    /// Millions of code objects live as long as the run: their size is
    /// watched.
    #[test]
    fn code_objects_stay_small() {
        assert!(size_of::<CodeObject>() <= 56, "{} bytes", size_of::<CodeObject>());
        assert!(size_of::<SourceInfo>() <= 56, "{} bytes", size_of::<SourceInfo>());
    }
}
