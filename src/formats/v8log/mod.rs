//! Reader for V8's code log (`node --log-code`): code objects, the functions
//! they inline, and the scripts those functions live in.
//!
//! The log is read in order because its records refer to the state at the
//! time they were written: a `code-source-info` names the inlined functions by
//! their SharedFunctionInfo (SFI) address *at that time*, and `sfi-move`
//! records say where the GC moved an SFI since.

pub mod escape;
pub mod lexer;
pub mod name;
pub mod record;
pub mod tables;

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use memchr::memchr_iter;
use rustc_hash::FxHashMap;

pub use name::{CodeName, FunctionName, JAVASCRIPT_TAGS, LineColumn, ScriptLine};
pub use record::{
    CodeCreation, CodeSourceInfo, InliningPosition, ParseError, PositionEntry, Record, SourceTableError, TableError,
    Tick, Tier, TierMarker, V8Version,
};
pub use tables::{InliningTableProblem, TableProblem};

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

/// The decoded position and inlining tables of a [`SourceInfo`].
#[derive(Debug, Default)]
struct DecodedTables {
    positions: Box<[PositionEntry]>,
    inlining_positions: Box<[InliningPosition]>,
    /// What is wrong with the tables, if anything: text that does not
    /// parse (then the tables are not used), or ids out of range or parent
    /// chains that loop ([`tables::inlining_table_problem`]).
    problem: Option<TableProblem>,
    /// Whether the text parsed, so the tables can be used.
    parsed: bool,
}

impl DecodedTables {
    /// Decodes a `code-source-info`'s table text with
    /// `inlined_function_count` inlined functions.
    fn decode(positions: &[u8], inlining: &[u8], inlined_function_count: usize) -> DecodedTables {
        match record::parse_position_tables(positions, inlining) {
            Ok((positions, inlining_positions)) => {
                DecodedTables::checked(positions.into(), inlining_positions.into(), inlined_function_count)
            }
            Err(problem) => {
                DecodedTables { problem: Some(TableProblem::Unparsable(problem)), ..DecodedTables::default() }
            }
        }
    }

    /// Tables that parsed, with what is inconsistent in them.
    fn checked(
        positions: Box<[PositionEntry]>,
        inlining_positions: Box<[InliningPosition]>,
        inlined_function_count: usize,
    ) -> DecodedTables {
        let functions = vec![SharedFunctionId(0); inlined_function_count];
        let problem = tables::inlining_table_problem(&SourceTables {
            positions: &positions,
            inlining_positions: &inlining_positions,
            inlined_functions: &functions,
        });
        DecodedTables { positions, inlining_positions, problem: problem.map(TableProblem::Inconsistent), parsed: true }
    }
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

/// Where a script's escaped text is.
#[derive(Debug, Clone)]
enum ScriptText {
    /// Copied out of the log.
    Owned(Box<[u8]>),
    /// In the log's [`RetainedText`], at this range.
    Retained(std::ops::Range<usize>),
}

/// The text of a code log kept where it was read: the position tables and
/// script sources of a log stay there, uncopied, until a lookup needs them
/// (most code objects are never sampled).
#[derive(Clone)]
pub struct RetainedText {
    source: RetainedSource,
}

#[derive(Clone)]
enum RetainedSource {
    /// Text in memory that lives as long as the log.
    Memory(Arc<dyn AsRef<[u8]> + Send + Sync>),
    /// The log's file, read again where needed (`pread`). A mapping would
    /// keep every page a lookup touched resident, and Linux maps 64 KiB
    /// around each one (`fault_around_bytes`): on a 20 s recording of a
    /// real app the tables of the sampled code kept 1.5 MB of a 3.5 MB log
    /// resident, and handing the pages back after each decoding (a TLB
    /// shootdown on every thread) cost more time than reading did.
    File(Arc<std::fs::File>),
}

impl RetainedText {
    /// Text that lives as long as the log that refers to it.
    pub fn new(text: Arc<dyn AsRef<[u8]> + Send + Sync>) -> RetainedText {
        RetainedText { source: RetainedSource::Memory(text) }
    }

    /// The text of `file`, read again from it where a lookup needs it.
    pub fn in_file(file: std::fs::File) -> RetainedText {
        RetainedText { source: RetainedSource::File(Arc::new(file)) }
    }

    /// The bytes of `range`; `None` when they cannot be read (the file was
    /// cut or is unreadable since).
    fn read(&self, range: std::ops::Range<usize>) -> Option<Cow<'_, [u8]>> {
        match &self.source {
            RetainedSource::Memory(text) => (**text).as_ref().get(range).map(Cow::Borrowed),
            RetainedSource::File(file) => {
                use std::os::unix::fs::FileExt;
                let mut bytes = vec![0; range.len()];
                file.read_exact_at(&mut bytes, range.start as u64).ok()?;
                Some(Cow::Owned(bytes))
            }
        }
    }
}

impl std::fmt::Debug for RetainedText {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            RetainedSource::Memory(text) => write!(formatter, "RetainedText({} bytes)", (**text).as_ref().len()),
            RetainedSource::File(file) => write!(formatter, "RetainedText({file:?})"),
        }
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

/// The size of the blocks [`CodeLog::read`] reads.
const READ_BLOCK_BYTES: usize = 1 << 20;

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

impl CodeLog {
    /// Reads a code log from a stream, a block at a time: memory holds what
    /// the log describes, not its text (mostly script sources and position
    /// tables). Gives what [`CodeLog::parse`] gives for the whole text.
    pub fn read<R: Read>(input: R) -> io::Result<CodeLog> {
        CodeLog::read_in_blocks(input, READ_BLOCK_BYTES)
    }

    /// [`CodeLog::read`] in blocks of `block_bytes`.
    fn read_in_blocks<R: Read>(mut input: R, block_bytes: usize) -> io::Result<CodeLog> {
        let mut builder = LogBuilder::default();
        let mut buffer: Vec<u8> = Vec::with_capacity(block_bytes);
        // Where the bytes not yet searched for a line end start.
        let mut searched = 0;
        // The length so far of a line over MAX_LINE_BYTES being dropped.
        let mut dropping: Option<u64> = None;
        loop {
            let read = (&mut input).take(block_bytes as u64).read_to_end(&mut buffer)?;
            if let Some(dropped) = dropping.take() {
                match memchr::memchr(b'\n', &buffer) {
                    Some(newline) => {
                        builder.too_long_line(dropped + newline as u64);
                        buffer.drain(..=newline);
                        searched = 0;
                    }
                    None => {
                        let dropped = dropped + buffer.len() as u64;
                        buffer.clear();
                        if read == 0 {
                            builder.too_long_line(dropped);
                            return Ok(builder.log);
                        }
                        if dropped > MAX_UNENDED_BYTES {
                            return Err(io::Error::new(
                                io::ErrorKind::InvalidData,
                                format!(
                                    "no line end in {} MiB: no code log (an endless stream?)",
                                    MAX_UNENDED_BYTES >> 20
                                ),
                            ));
                        }
                        dropping = Some(dropped);
                        continue;
                    }
                }
            }
            // Whole lines are parsed where they lie; the cut last one waits
            // for the next block (a line longer than a block grows the
            // buffer, up to MAX_LINE_BYTES).
            let mut line_start = 0;
            for newline in memchr_iter(b'\n', &buffer[searched..]) {
                let newline = searched + newline;
                builder.line(&buffer[line_start..newline]);
                line_start = newline + 1;
            }
            buffer.drain(..line_start);
            searched = buffer.len();
            if read == 0 {
                if !buffer.is_empty() {
                    builder.cut_last_line(&buffer);
                }
                return Ok(builder.log);
            }
            if buffer.len() > MAX_LINE_BYTES {
                dropping = Some(buffer.len() as u64);
                buffer.clear();
                searched = 0;
            }
        }
    }

    /// Parses a whole code log held in memory.
    pub fn parse(bytes: &[u8]) -> CodeLog {
        CodeLog::parse_with_progress(bytes, |_| {})
    }

    /// [`CodeLog::parse`], telling `progress` every few megabytes the offset
    /// before which everything has been read (and nothing is kept: what the
    /// log keeps is copied out), so that a caller reading a memory-mapped
    /// file can let go of those pages.
    pub fn parse_with_progress(bytes: &[u8], progress: impl FnMut(usize)) -> CodeLog {
        CodeLog::parse_lines(bytes, None, progress)
    }

    /// [`CodeLog::parse_with_progress`] of `bytes`, which `retained` gives
    /// back for as long as the log lives (the same text in memory, or its
    /// file): the position tables and script sources are not copied out,
    /// only their ranges are kept, so `progress` may let go of the pages
    /// read as with [`CodeLog::parse_with_progress`].
    pub fn parse_retained(bytes: &[u8], retained: RetainedText, progress: impl FnMut(usize)) -> CodeLog {
        CodeLog::parse_lines(bytes, Some(&retained), progress)
    }

    fn parse_lines(bytes: &[u8], retained: Option<&RetainedText>, mut progress: impl FnMut(usize)) -> CodeLog {
        const PROGRESS_BYTES: usize = 16 << 20;
        let mut builder =
            LogBuilder { retained_base: retained.map(|_| bytes.as_ptr() as usize), ..LogBuilder::default() };
        let mut line_start = 0;
        let mut next_progress = PROGRESS_BYTES;
        for newline in memchr_iter(b'\n', bytes) {
            builder.line(&bytes[line_start..newline]);
            line_start = newline + 1;
            if line_start >= next_progress {
                progress(line_start);
                next_progress = line_start + PROGRESS_BYTES;
            }
        }
        if line_start < bytes.len() {
            builder.cut_last_line(&bytes[line_start..]);
        }
        builder.log.retained = retained.cloned();
        builder.log
    }

    /// The name with this id (unescaped).
    pub fn name(&self, id: NameId) -> &str {
        &self.names[id.index()]
    }

    /// The tag with this id.
    pub fn tag(&self, id: TagId) -> &str {
        &self.tags[id.index()]
    }

    /// A code object's name, e.g. `root /tmp/exp/bench.js:4:14`.
    pub fn object_name(&self, object: &CodeObject) -> &str {
        self.name(object.name)
    }

    /// A code object's tag (`JS`, `LazyCompile`, `Builtin`, ...).
    pub fn object_tag(&self, object: &CodeObject) -> &str {
        self.tag(object.tag)
    }

    /// The code object with this id.
    pub fn code_object(&self, id: CodeObjectId) -> &CodeObject {
        &self.code_objects[id.index()]
    }

    /// The source information of a code object, if its log had any.
    pub fn source_info(&self, object: &CodeObject) -> Option<&SourceInfo> {
        object.source_info.map(|id| &self.source_infos[id.index()])
    }

    /// The position and inlining tables of a code object, decoded and
    /// checked on the first call for it (later calls return the same
    /// tables); `None` without them or when their text does not parse
    /// ([`CodeLog::table_problems`] says why).
    pub fn source_tables(&self, object: &CodeObject) -> Option<SourceTables<'_>> {
        let info = self.source_info(object)?;
        let decoded = info.decoded.get_or_init(|| {
            let positions_length = info.positions_length as usize;
            let range = info.text_start..info.text_start + positions_length + 1 + info.inlining_length as usize;
            let text = match &self.retained {
                Some(retained) => retained.read(range),
                None => self.table_text.get(range).map(Cow::Borrowed),
            };
            Box::new(match text {
                Some(text) => DecodedTables::decode(
                    &text[..positions_length],
                    &text[positions_length + 1..],
                    info.functions_count as usize,
                ),
                None => DecodedTables { problem: Some(TableProblem::NotReadAgain), ..DecodedTables::default() },
            })
        });
        if !decoded.parsed {
            return None;
        }
        let functions_start = info.functions_start as usize;
        Some(SourceTables {
            positions: &decoded.positions,
            inlining_positions: &decoded.inlining_positions,
            inlined_functions: &self.inlined_functions
                [functions_start..functions_start + info.functions_count as usize],
        })
    }

    /// A script's escaped source text, when the log carries it (and, for a
    /// log whose text stays in its file, it can be read again).
    pub fn script_source<'log>(&'log self, script: &'log Script) -> Option<Cow<'log, [u8]>> {
        match script.source.as_ref()? {
            ScriptText::Owned(text) => Some(Cow::Borrowed(text)),
            ScriptText::Retained(range) => self.retained.as_ref()?.read(range.clone()),
        }
    }

    /// The code objects whose tables were decoded so far
    /// ([`CodeLog::source_tables`]) and found unparsable or inconsistent,
    /// with what is wrong, in log order. Tables are checked when decoded,
    /// not when the log is read: a code object no sample or lookup needed
    /// is never checked (most are not, and checking would be a quarter of
    /// reading a log without script sources).
    pub fn table_problems(&self) -> impl Iterator<Item = (&CodeObject, &TableProblem)> {
        self.code_objects.iter().filter_map(|object| {
            let problem = self.source_info(object)?.decoded.get()?.problem.as_ref()?;
            Some((object, problem))
        })
    }

    /// The function with this id.
    pub fn function(&self, id: SharedFunctionId) -> &SharedFunction {
        &self.functions[id.index()]
    }

    /// Whether several isolates wrote this file at once
    /// (`--no-logfile-per-isolate` with worker threads): more than one
    /// `v8-version` header, a clock that restarts, or spliced lines.
    pub fn is_shared_by_isolates(&self) -> bool {
        self.isolate_count > 1 || self.clock_restarts > 0 || self.spliced_lines > 0
    }
}

/// The record kinds a spliced line shows after its start: the ones V8 writes
/// most, with the comma that ends the kind.
const SPLICED_RECORD_STARTS: [&[u8]; 5] =
    [b"code-creation,", b"code-source-info,", b"script-source,", b"sfi-move,", b"v8-version,"];

/// Searchers for [`SPLICED_RECORD_STARTS`], built once (`memmem::find`
/// builds one per call, which cost more than the search on short lines).
static SPLICED_RECORD_FINDERS: std::sync::LazyLock<Vec<memchr::memmem::Finder<'static>>> =
    std::sync::LazyLock::new(|| SPLICED_RECORD_STARTS.iter().map(memchr::memmem::Finder::new).collect());

/// Whether a second record starts inside `line`, after its first byte.
fn starts_another_record(line: &[u8]) -> bool {
    let rest = line.get(1..).unwrap_or_default();
    SPLICED_RECORD_FINDERS.iter().any(|finder| finder.find(rest).is_some())
}

/// Whether `field` could be the kind of a V8 record (`code-deopt`,
/// `heap-capacity`): lowercase words joined by `-`. Fragments of a record
/// cut by another writer start with anything.
fn is_record_kind(field: &[u8]) -> bool {
    !field.is_empty()
        && field.len() <= 64
        && field.iter().all(|&byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
}

/// Hashing of addresses for the maps keyed by them. FxHash keeps a key's
/// low bits in the hash's low bits, which pick the bucket: aligned addresses,
/// or addresses differing only in high bits, then crowd into few buckets.
/// Folding the 128-bit product mixes every bit into the low ones.
#[derive(Debug, Clone, Copy, Default)]
struct AddressHashing;

impl BuildHasher for AddressHashing {
    type Hasher = AddressHasher;

    fn build_hasher(&self) -> AddressHasher {
        AddressHasher(0)
    }
}

/// The hasher of [`AddressHashing`].
#[derive(Debug, Clone, Copy)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        // The multiplier of FxHash; the high half of the product folded in.
        let product = u128::from(self.0 ^ value) * 0x517c_c1b7_2722_0a95;
        self.0 = (product as u64) ^ ((product >> 64) as u64);
    }
}

/// Applies records in log order.
#[derive(Default)]
struct LogBuilder {
    log: CodeLog,
    /// Where the code objects are: the latest created at each address.
    code_addresses: CodeAddresses,
    /// The function whose SFI is at each address now.
    function_at_address: HashMap<u64, SharedFunctionId, AddressHashing>,
    /// The tags seen, as written, with their ids.
    tags: FxHashMap<Box<[u8]>, TagId>,
    /// The names seen, by their escaped text, with their ids.
    names: FxHashMap<Box<[u8]>, NameId>,
    /// The time of the last code-creation, to see clocks restart.
    last_creation_micros: Option<i64>,
    /// Inlined-function addresses of the record being read (reused).
    function_addresses: Vec<u64>,
    /// Where the text starts in memory, when it is retained: tables and
    /// sources are kept as offsets from here.
    retained_base: Option<usize>,
}

/// The latest code object created at each address, followed through
/// `code-move` and `code-delete`.
///
/// V8 writes a code object's `code-source-info` right after its
/// `code-creation`, so the answer is nearly always the last code object
/// created; the map of every address is built only when a record asks for
/// another one (several isolates writing one file), from the code objects
/// and the moves and deletes recorded until then.
#[derive(Default)]
struct CodeAddresses {
    /// The last code object created, while no move or delete came after it.
    last_created: Option<(u64, CodeObjectId)>,
    /// Every address, once needed.
    map: Option<HashMap<u64, CodeObjectId, AddressHashing>>,
    /// `code-delete`s (address, log line) while there is no map.
    deletes: Vec<(u64, u64)>,
}

impl CodeAddresses {
    fn created(&mut self, address: u64, id: CodeObjectId) {
        self.last_created = Some((address, id));
        if let Some(map) = &mut self.map {
            map.insert(address, id);
        }
    }

    fn moved(&mut self, from: u64, to: u64) {
        self.last_created = None;
        if let Some(map) = &mut self.map
            && let Some(code) = map.remove(&from)
        {
            map.insert(to, code);
        }
    }

    fn deleted(&mut self, address: u64, log_line: u64) {
        self.last_created = None;
        match &mut self.map {
            Some(map) => {
                map.remove(&address);
            }
            None => self.deletes.push((address, log_line)),
        }
    }

    /// The latest code object at `address`, as of now in `log`.
    fn at(&mut self, address: u64, log: &CodeLog) -> Option<CodeObjectId> {
        if let Some((last_address, id)) = self.last_created
            && last_address == address
        {
            return Some(id);
        }
        let deletes = &self.deletes;
        self.map.get_or_insert_with(|| replay_addresses(log, deletes)).get(&address).copied()
    }
}

/// The address map of [`CodeAddresses`] after the records read so far: the
/// code-creations, code-moves and code-deletes replayed in log order.
fn replay_addresses(log: &CodeLog, deletes: &[(u64, u64)]) -> HashMap<u64, CodeObjectId, AddressHashing> {
    let mut map: HashMap<u64, CodeObjectId, AddressHashing> = HashMap::default();
    let mut moves = log.code_moves.iter().peekable();
    let mut deletes = deletes.iter().peekable();
    let mut apply_until = |line: u64, map: &mut HashMap<u64, CodeObjectId, AddressHashing>| loop {
        let next_move = moves.peek().map(|moved| moved.log_line).filter(|&at| at < line);
        let next_delete = deletes.peek().map(|&&(_, at)| at).filter(|&at| at < line);
        match (next_move, next_delete) {
            (Some(move_line), delete_line) if delete_line.is_none_or(|delete_line| move_line < delete_line) => {
                let moved = moves.next().expect("peeked");
                if let Some(code) = map.remove(&moved.from) {
                    map.insert(moved.to, code);
                }
            }
            (_, Some(_)) => {
                let &(address, _) = deletes.next().expect("peeked");
                map.remove(&address);
            }
            _ => return,
        }
    };
    for (index, object) in log.code_objects.iter().enumerate() {
        apply_until(object.log_line, &mut map);
        map.insert(object.address, CodeObjectId(index as u32));
    }
    apply_until(u64::MAX, &mut map);
    map
}

impl LogBuilder {
    fn line(&mut self, line: &[u8]) {
        if line.len() > MAX_LINE_BYTES {
            self.too_long_line(line.len() as u64);
            return;
        }
        self.log.line_count += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return;
        }
        // The record V8 writes for every optimized code object, checked
        // without decoding its tables; the full parser takes what this
        // does not (and says what is wrong).
        if let Some(fields) = line.strip_prefix(b"code-source-info,")
            && self.plain_code_source_info(fields)
        {
            return;
        }
        if line.starts_with(b"code-creation,")
            && let Ok(creation) = record::parse_code_creation_line(line)
        {
            self.code_creation(creation);
            return;
        }
        match record::parse_line(line) {
            Ok(Some(record)) => self.apply(record),
            Ok(None) => {
                let kind_end = memchr::memchr(b',', line).unwrap_or(line.len());
                let spliced = starts_another_record(line);
                if spliced || !is_record_kind(&line[..kind_end]) {
                    self.log.damaged_lines += 1;
                    self.log.spliced_lines += u64::from(spliced);
                }
                let kind = String::from_utf8_lossy(&line[..kind_end.min(64)]).into_owned();
                *self.log.skipped_kinds.entry(kind).or_default() += 1;
            }
            Err(error) => {
                self.log.damaged_lines += 1;
                self.log.spliced_lines += u64::from(starts_another_record(line));
                let kind_end = memchr::memchr(b',', line).unwrap_or(line.len()).min(64);
                let kind = String::from_utf8_lossy(&line[..kind_end]);
                self.warn(LogWarningKind::UnparsableLine, format!("{kind}: {error}"));
            }
        }
    }

    /// A line over [`MAX_LINE_BYTES`] (of `length` bytes, its end not
    /// counted): damage, skipped.
    fn too_long_line(&mut self, length: u64) {
        self.log.line_count += 1;
        self.log.damaged_lines += 1;
        self.warn(
            LogWarningKind::UnparsableLine,
            format!("a line of {length} bytes, more than the {} MiB a line may have: skipped", MAX_LINE_BYTES >> 20),
        );
    }

    /// A last line without a newline. V8 ends every record with one, so the
    /// line was cut short (the process died mid-write) and may miss fields or
    /// table entries: it is not used.
    fn cut_last_line(&mut self, line: &[u8]) {
        self.log.line_count += 1;
        let length = line.len();
        self.warn(
            LogWarningKind::CutShort,
            format!(
                "expected a line ending in a newline, the file ends {length} bytes into it (cut short); line skipped"
            ),
        );
    }

    fn warn(&mut self, kind: LogWarningKind, message: String) {
        self.log.warning_count += 1;
        *self.log.warning_counts.entry(kind).or_default() += 1;
        if self.log.warnings.len() < MAX_KEPT_WARNINGS {
            self.log.warnings.push(LogWarning { line: self.log.line_count, kind, message });
        }
    }

    fn apply(&mut self, record: Record<'_>) {
        match record {
            Record::CodeCreation(creation) => self.code_creation(creation),
            Record::CodeSourceInfo(info) => self.parsed_code_source_info(info),
            Record::ScriptSource(script) => {
                let entry = self.log.scripts.entry(script.script_id).or_default();
                entry.name = escape::unescape(script.escaped_name).into();
                entry.source = Some(match self.retained_base {
                    Some(base) => {
                        let start = script.escaped_source.as_ptr() as usize - base;
                        ScriptText::Retained(start..start + script.escaped_source.len())
                    }
                    None => ScriptText::Owned(script.escaped_source.into()),
                });
            }
            Record::ScriptDetails(details) => {
                let entry = self.log.scripts.entry(details.script_id).or_default();
                if entry.name.is_empty() {
                    entry.name = escape::unescape(details.escaped_name).into();
                }
            }
            Record::SfiMove(moved) => {
                if let Some(function) = self.function_at_address.remove(&moved.from) {
                    self.function_at_address.insert(moved.to, function);
                }
            }
            Record::CodeMove(moved) => {
                self.log.code_moves.push(CodeMoveEvent {
                    from: moved.from,
                    to: moved.to,
                    log_line: self.log.line_count,
                });
                self.code_addresses.moved(moved.from, moved.to);
            }
            Record::CodeDelete { address } => self.code_addresses.deleted(address, self.log.line_count),
            Record::SharedLibrary(library) => self.log.shared_libraries.push(SharedLibraryMapping {
                path: escape::unescape(library.escaped_name).into(),
                start: library.start,
                end: library.end,
                aslr_slide: library.aslr_slide,
            }),
            Record::Tick(tick) => self.log.ticks.push(Tick { log_line: self.log.line_count, ..tick }),
            Record::V8Version(version) => {
                self.log.isolate_count += 1;
                if self.log.v8_version.is_none() {
                    self.log.v8_version = Some(version);
                }
            }
        }
    }

    fn code_creation(&mut self, creation: CodeCreation<'_>) {
        // Looked up as written: most names repeat (every tier of a function,
        // every isolate's builtins), and a hit needs no unescaping.
        let name = match self.names.get(creation.escaped_name) {
            Some(&name) => name,
            None => {
                let name = NameId(self.log.names.len() as u32);
                self.log.names.push(escape::unescape_borrowed(creation.escaped_name).into());
                self.names.insert(creation.escaped_name.into(), name);
                name
            }
        };
        let function = creation.shared_function.map(|address| self.function_for_creation(address, name));
        let id = CodeObjectId(self.log.code_objects.len() as u32);
        let tag = match self.tags.get(creation.tag) {
            Some(&tag) => tag,
            None => {
                let tag = TagId(self.log.tags.len() as u32);
                self.log.tags.push(String::from_utf8_lossy(creation.tag).into());
                self.tags.insert(creation.tag.into(), tag);
                tag
            }
        };
        self.log.code_objects.push(CodeObject {
            tag,
            address: creation.address,
            size: creation.size,
            name,
            function,
            tier: creation.tier,
            source_info: None,
            log_line: self.log.line_count,
            timestamp_micros: creation.timestamp_micros,
        });
        self.code_addresses.created(creation.address, id);
        if self.last_creation_micros.is_some_and(|last| creation.timestamp_micros < last) {
            self.log.clock_restarts += 1;
        }
        self.last_creation_micros = Some(creation.timestamp_micros);
    }

    /// The function a code-creation carries. A different name at a known SFI
    /// address means the GC freed that SFI and put another there.
    fn function_for_creation(&mut self, address: u64, name: NameId) -> SharedFunctionId {
        let name = &self.log.names[name.index()];
        if let Some(&existing) = self.function_at_address.get(&address) {
            let function = &mut self.log.functions[existing.index()];
            // Functions take their names from the interned ones: the same
            // name is nearly always the same string.
            if Arc::ptr_eq(&function.name, name) || function.name.is_empty() || *function.name == **name {
                if function.name.is_empty() {
                    function.name = name.clone();
                }
                return existing;
            }
        }
        let id = SharedFunctionId(self.log.functions.len() as u32);
        self.log.functions.push(SharedFunction { name: name.clone(), ..SharedFunction::default() });
        self.function_at_address.insert(address, id);
        id
    }

    /// A `code-source-info` whose fields and tables are in the plain form
    /// V8 writes (`ADDRESS,SCRIPT,START,END,POSITIONS,INLINING,FUNCTIONS`
    /// after the kind), applied without decoding its tables; `false` leaves
    /// the line to the full parser.
    fn plain_code_source_info(&mut self, fields: &[u8]) -> bool {
        let mut commas = memchr_iter(b',', fields);
        let mut field_ends = [0usize; 6];
        for end in &mut field_ends {
            match commas.next() {
                Some(comma) => *end = comma,
                None => return false,
            }
        }
        if commas.next().is_some() {
            return false;
        }
        let field = |index: usize| {
            let start = if index == 0 { 0 } else { field_ends[index - 1] + 1 };
            let end = field_ends.get(index).copied().unwrap_or(fields.len());
            &fields[start..end]
        };
        let (Some(address), Some(script_id), Some(function_start), Some(_end)) = (
            lexer::parse_hex_address(field(0)),
            lexer::parse_decimal(field(1)),
            lexer::parse_decimal(field(2)),
            lexer::parse_decimal(field(3)),
        ) else {
            return false;
        };
        let mut addresses = std::mem::take(&mut self.function_addresses);
        addresses.clear();
        if !tables::inlined_function_addresses(field(6), &mut addresses) {
            self.function_addresses = addresses;
            return false;
        }
        // The two tables and the comma between them, kept as text: they are
        // decoded and checked when first needed (`CodeLog::source_tables`).
        let tables_end = field_ends[5];
        let source =
            SourceText { positions: field(4), inlining: field(5), tables: &fields[field_ends[3] + 1..tables_end] };
        self.code_source_info(address, script_id, function_start, &addresses, TableSource::Text(source));
        self.function_addresses = addresses;
        true
    }

    /// A `code-source-info` the full parser read (not in the plain form).
    fn parsed_code_source_info(&mut self, info: CodeSourceInfo) {
        let decoded =
            DecodedTables::checked(info.positions.into(), info.inlining_positions.into(), info.inlined_functions.len());
        self.code_source_info(
            info.address,
            info.script_id,
            info.function_start,
            &info.inlined_functions,
            TableSource::Decoded(decoded),
        );
    }

    fn code_source_info(
        &mut self,
        address: u64,
        script_id: i64,
        function_start: i64,
        inlined_function_addresses: &[u64],
        tables: TableSource<'_>,
    ) {
        let Some(code_id) = self.code_addresses.at(address, &self.log) else {
            self.log.damaged_lines += 1;
            self.warn(
                LogWarningKind::SourceInfoWithoutCode,
                format!("code-source-info for 0x{address:x} with no code-creation before it"),
            );
            return;
        };
        let functions_start = self.log.inlined_functions.len() as u32;
        for &address in inlined_function_addresses {
            let function = match self.function_at_address.get(&address) {
                Some(&function) => function,
                None => {
                    // Not seen yet: remember the address so a later
                    // code-creation of that SFI names it.
                    let id = SharedFunctionId(self.log.functions.len() as u32);
                    self.log.functions.push(SharedFunction::default());
                    self.function_at_address.insert(address, id);
                    id
                }
            };
            self.log.inlined_functions.push(function);
        }
        let code = &mut self.log.code_objects[code_id.index()];
        // Without `script-source` or `script-details` (`--no-log-source-code`),
        // the code's name is the only place that names its script.
        let script = self.log.scripts.entry(script_id).or_default();
        if script.name.is_empty() {
            let name = &self.log.names[code.name.index()];
            script.name = FunctionName::parse(name, None).script.into();
        }
        if let Some(function) = code.function {
            let function = &mut self.log.functions[function.index()];
            function.script_id = Some(script_id);
            function.function_start = Some(function_start);
        }
        let (text_start, positions_length, inlining_length, decoded) = match tables {
            TableSource::Text(text) => {
                let text_start = match self.retained_base {
                    Some(base) => text.tables.as_ptr() as usize - base,
                    None => {
                        let start = self.log.table_text.len();
                        self.log.table_text.extend_from_slice(text.tables);
                        start
                    }
                };
                (text_start, text.positions.len() as u32, text.inlining.len() as u32, OnceLock::new())
            }
            TableSource::Decoded(decoded) => (0, 0, 0, OnceLock::from(Box::new(decoded))),
        };
        code.source_info = Some(SourceInfoId::new(self.log.source_infos.len() as u32));
        self.log.source_infos.push(SourceInfo {
            script_id,
            function_start,
            text_start,
            positions_length,
            inlining_length,
            functions_start,
            functions_count: inlined_function_addresses.len() as u32,
            decoded,
        });
    }
}

/// The undecoded table text of a `code-source-info`.
#[derive(Clone, Copy)]
struct SourceText<'line> {
    positions: &'line [u8],
    inlining: &'line [u8],
    /// `positions,inlining`, as in the line.
    tables: &'line [u8],
}

/// A `code-source-info`'s tables: text to decode on first use, or decoded
/// by the full parser.
enum TableSource<'line> {
    Text(SourceText<'line>),
    Decoded(DecodedTables),
}

#[cfg(test)]
mod read_tests {
    use super::*;

    /// Millions of code objects live as long as the run: their size is
    /// watched.
    /// Tables are decoded and checked on first use: those that parse are
    /// used, with a problem where ids are out of range or chains loop;
    /// those that do not parse are not used, and the problem says why.
    #[test]
    fn tables_are_checked_when_decoded() {
        // (positions, inlining positions, inlined functions, problem)
        let cases: &[(&str, &str, usize, Option<&str>)] = &[
            ("", "", 0, None),
            ("C0O68C39O28I0C114O-1I1", "F0O81FO88I0", 1, None),
            ("C0O5I2", "F0O100F1O200I0", 2, Some("position entry 0: expected an inlining id below 2, found 2")),
            ("C0O5", "F2O100", 2, Some("inlining position 0: expected a function index below 2, found 2")),
            ("C0O5", "F0O100I0", 1, Some("inlining position 0: expected a parent chain that ends, it loops")),
            // A parent after its child (V8 writes callers first), but the chain ends.
            ("C0O5", "F0O100I1F0O1", 1, None),
            ("C1C2O3", "", 0, Some("field 6 (positions): unexpected text at byte 2, expected C<n>O<n>[I<n>]")),
            (
                "C1O1",
                "F0",
                1,
                Some("field 7 (inlining positions): entry without O<offset> at the end, expected F[n]O<n>[I<n>]"),
            ),
        ];
        for &(positions, inlining, functions, expected) in cases {
            let decoded = DecodedTables::decode(positions.as_bytes(), inlining.as_bytes(), functions);
            assert_eq!(
                decoded.problem.as_ref().map(ToString::to_string).as_deref(),
                expected,
                "{positions} {inlining}"
            );
            assert_eq!(decoded.parsed, !expected.is_some_and(|problem| problem.starts_with("field")));
        }
        // Through the log: the problem is known once the tables were needed.
        let log = CodeLog::parse(
            b"code-creation,JS,10,1,0x6000,16,f /a.js:1:1,0x100,*\ncode-source-info,0x6000,1,0,9,C1C2O3,,\n",
        );
        assert_eq!((log.warning_count, log.table_problems().count()), (0, 0));
        assert!(log.source_tables(&log.code_objects[0]).is_none());
        let problems: Vec<String> = log.table_problems().map(|(_, problem)| problem.to_string()).collect();
        assert_eq!(problems, ["field 6 (positions): unexpected text at byte 2, expected C<n>O<n>[I<n>]"]);
    }

    #[test]
    fn code_objects_stay_small() {
        assert!(size_of::<CodeObject>() <= 56, "{} bytes", size_of::<CodeObject>());
        assert!(size_of::<SourceInfo>() <= 56, "{} bytes", size_of::<SourceInfo>());
    }

    /// Reading in blocks, however small, parses every line as a whole-text
    /// parse does.
    #[test]
    fn reading_in_blocks_equals_parsing_whole() {
        let text: &[u8] = b"v8-version,11,3,244,8,-node.38,0\n\
            code-creation,JS,13,45545,0x7f3e9a7e5a40,396,b /tmp/a.js:2:11,0x1899,*\n\
            code-source-info,0x7f3e9a7e5a40,81,68,99,C0O68C39O28I0,F0O81,S0x1899\r\n\
            bad-line-without-fields\n\n\
            code-creation,JS,13,1,zz,20,f\n\
            script-source,81,/tmp/a.js,function b() {}";
        let whole = format!("{:?}", CodeLog::parse(text));
        for block in [1, 2, 7, 64, 1 << 20] {
            let read = CodeLog::read_in_blocks(text, block).unwrap();
            assert_eq!(format!("{read:?}"), whole, "block {block}");
        }
        assert_eq!(CodeLog::read_in_blocks(&text[..0], 4).unwrap().line_count, 0);
    }

    /// A log read from its file reads tables and sources back from it when
    /// a lookup first needs them. Cut since (replaced, or still being
    /// written over), what is gone is reported as unreadable, not read
    /// wrong (a mapping would have killed the process with SIGBUS).
    #[test]
    fn tables_of_a_log_cut_after_reading_are_reported_unreadable() {
        let text: &[u8] = b"script-source,81,/tmp/a.js,function b() {}\\n\n\
            code-creation,JS,13,45545,0x7f3e9a7e5a40,396,b /tmp/a.js:2:11,0x1899,*\n\
            code-source-info,0x7f3e9a7e5a40,81,68,99,C0O68C39O28I0,F0O81,S0x1899\n\
            code-creation,JS,13,45547,0x7f3e9a7e7000,396,d /tmp/a.js:4:11,0x18b9,*\n\
            code-source-info,0x7f3e9a7e7000,81,68,99,C0O1234567890,,\n";
        let path = std::env::temp_dir().join(format!("v8inline-log-unit-{}.log", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let log = CodeLog::parse_retained(text, RetainedText::in_file(std::fs::File::open(&path).unwrap()), |_| {});
        let [first, second] = [&log.code_objects[0], &log.code_objects[1]];
        assert_eq!(log.source_tables(first).unwrap().positions.len(), 2);
        let second_record = memchr::memmem::find(text, b"code-creation,JS,13,45547").unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(second_record as u64).unwrap();
        assert!(log.source_tables(second).is_none());
        assert_eq!(log.source_tables(first).unwrap().positions.len(), 2, "decoded before the cut: kept");
        let problems: Vec<(u64, &TableProblem)> =
            log.table_problems().map(|(object, problem)| (object.address, problem)).collect();
        assert_eq!(problems, [(0x7f3e9a7e7000, &TableProblem::NotReadAgain)]);
        assert_eq!(problems[0].1.to_string(), "its tables could not be read again from the log file");
        assert_eq!(log.script_source(&log.scripts[&81]).as_deref(), Some(&b"function b() {}\\n"[..]));
        file.set_len(10).unwrap();
        assert_eq!(log.script_source(&log.scripts[&81]), None);
        std::fs::remove_file(&path).unwrap();
    }

    /// A log whose text is retained keeps its tables and sources as ranges
    /// of it, and gives what a copying parse gives.
    #[test]
    fn retained_text_gives_what_copies_give() {
        let text: &[u8] = b"script-source,81,/tmp/a.js,function b() {}\\x2C 1\\n\\n\\n\n\
            code-creation,JS,13,45545,0x7f3e9a7e5a40,396,b /tmp/a.js:2:11,0x1899,*\n\
            code-source-info,0x7f3e9a7e5a40,81,68,99,C0O68C39O28I0,F0O81,S0x1899\n\
            code-creation,JS,13,45546,0x7f3e9a7e6000,396,c /tmp/a.js:3:11,0x18a9,*\n\
            code-source-info,0x7f3e9a7e6000,81,68,99,C0O1I1,F0O81I0,S0x1899\n\
            code-creation,JS,13,45547,0x7f3e9a7e7000,396,d /tmp/a.js:4:11,0x18b9,*\n\
            code-source-info,0x7f3e9a7e7000,81,68,99,C0O1234567890,,\n\
            code-creation,JS,13,45548,0x7f3e9a7e8000,396,e /tmp/a.js:5:11,0x18c9,*\n\
            code-source-info,0x7f3e9a7e8000,81,68,99,,,\n";
        let copied = CodeLog::parse(text);
        let retained = CodeLog::parse_retained(text, RetainedText::new(Arc::new(text.to_vec())), |_| {});
        assert_eq!(copied.code_objects.len(), 4);
        for (left, right) in copied.code_objects.iter().zip(&retained.code_objects) {
            let (left_tables, right_tables) =
                (copied.source_tables(left).unwrap(), retained.source_tables(right).unwrap());
            assert_eq!(left_tables.positions, right_tables.positions);
            assert_eq!(left_tables.inlining_positions, right_tables.inlining_positions);
            assert_eq!(left_tables.inlined_functions, right_tables.inlined_functions);
        }
        let problems = |log: &CodeLog| log.table_problems().map(|(object, _)| object.address).collect::<Vec<_>>();
        assert_eq!(problems(&copied), [0x7f3e9a7e6000]);
        assert_eq!(problems(&copied), problems(&retained));
        assert_eq!(copied.source_tables(&copied.code_objects[0]).unwrap().positions.len(), 2);
        assert_eq!(copied.source_tables(&copied.code_objects[2]).unwrap().positions[0].script_offset, 1234567890);
        let script = |log: &CodeLog| log.script_source(&log.scripts[&81]).map(|source| source.to_vec());
        assert_eq!(script(&copied), Some(b"function b() {}\\x2C 1\\n\\n\\n".to_vec()));
        assert_eq!(script(&copied), script(&retained));
    }
}
