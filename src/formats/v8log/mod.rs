//! Reader for V8's code log (`node --log-code`): code objects, the functions
//! they inline, and the scripts those functions live in.
//!
//! The log is read in order because its records refer to the state at the
//! time they were written: a `code-source-info` names the inlined functions by
//! their SharedFunctionInfo (SFI) address *at that time*, and `sfi-move`
//! records say where the GC moved an SFI since.

pub mod escape;
pub mod lexer;
pub mod record;

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::Arc;

use fxhash::FxHashMap;
use indexmap::IndexMap;
use memchr::memchr_iter;

pub use record::{
    CodeCreation, CodeSourceInfo, InliningPosition, PositionEntry, Record, Tick, Tier, TierMarker, V8Version,
};

/// Index of a code object in [`CodeLog::code_objects`], in log order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodeObjectId(pub u32);

/// Index of a function (one SharedFunctionInfo, followed through moves) in
/// [`CodeLog::functions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SharedFunctionId(pub u32);

/// A code object from a `code-creation` record.
#[derive(Debug, Clone)]
pub struct CodeObject {
    /// The tag as written (`JS`, `LazyCompile`, `Builtin`, ...); shared by
    /// all code objects with that tag.
    pub tag: Arc<str>,
    /// Start address of its instructions.
    pub address: u64,
    /// Instruction size in bytes.
    pub size: u64,
    /// Unescaped name, e.g. `root /tmp/exp/bench.js:4:14` (shared with its
    /// [`SharedFunction`]).
    pub name: Arc<str>,
    /// The function whose code this is.
    pub function: Option<SharedFunctionId>,
    /// The tier marker; `None` when absent or empty.
    pub tier: Option<TierMarker>,
    /// Source positions and inlining, from its `code-source-info` (boxed:
    /// most code objects, builtins and bytecode handlers, have none).
    pub source_info: Option<Box<SourceInfo>>,
    /// 1-based line of the code-creation record in the log.
    pub log_line: u64,
    /// The record's TIME: microseconds since this log (its isolate) started.
    pub timestamp_micros: i64,
}

/// The `code-source-info` of a code object, with inlined functions resolved.
#[derive(Debug, Clone, Default)]
pub struct SourceInfo {
    /// The script of the code object's own function.
    pub script_id: i64,
    /// Script offset where the function starts.
    pub function_start: i64,
    /// The source-position table, ascending code offset.
    pub positions: Vec<PositionEntry>,
    /// The inlining tree: entry n is inlining id n.
    pub inlining_positions: Vec<InliningPosition>,
    /// The inlined functions, indexed by [`InliningPosition::function_index`].
    pub inlined_functions: Vec<SharedFunctionId>,
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
    /// The escaped source text, when the log carries it.
    pub escaped_source: Option<Box<[u8]>>,
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
        loop {
            let searched = buffer.len();
            let read = (&mut input).take(block_bytes as u64).read_to_end(&mut buffer)?;
            if read == 0 {
                if !buffer.is_empty() {
                    builder.cut_last_line(&buffer);
                }
                return Ok(builder.log);
            }
            // Whole lines are parsed where they lie; the cut last one waits
            // for the next block (a line longer than a block grows the buffer).
            let mut line_start = 0;
            for newline in memchr_iter(b'\n', &buffer[searched..]) {
                let newline = searched + newline;
                builder.line(&buffer[line_start..newline]);
                line_start = newline + 1;
            }
            buffer.drain(..line_start);
        }
    }

    /// Parses a whole code log held in memory.
    pub fn parse(bytes: &[u8]) -> CodeLog {
        let mut builder = LogBuilder::default();
        let mut line_start = 0;
        for newline in memchr_iter(b'\n', bytes) {
            builder.line(&bytes[line_start..newline]);
            line_start = newline + 1;
        }
        if line_start < bytes.len() {
            builder.cut_last_line(&bytes[line_start..]);
        }
        builder.log
    }

    /// The code object with this id.
    pub fn code_object(&self, id: CodeObjectId) -> &CodeObject {
        &self.code_objects[id.0 as usize]
    }

    /// The function with this id.
    pub fn function(&self, id: SharedFunctionId) -> &SharedFunction {
        &self.functions[id.0 as usize]
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
    std::sync::LazyLock::new(|| SPLICED_RECORD_STARTS.iter().map(|start| memchr::memmem::Finder::new(start)).collect());

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
    /// The latest code object created at each address.
    code_at_address: HashMap<u64, CodeObjectId, AddressHashing>,
    /// The function whose SFI is at each address now.
    function_at_address: HashMap<u64, SharedFunctionId, AddressHashing>,
    /// The tags seen, shared by the code objects that carry them.
    tags: FxHashMap<Box<[u8]>, Arc<str>>,
    /// The time of the last code-creation, to see clocks restart.
    last_creation_micros: Option<i64>,
}

impl LogBuilder {
    fn line(&mut self, line: &[u8]) {
        self.log.line_count += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
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
                self.warn(LogWarningKind::UnparsableLine, format!("{kind}: {}", error.0));
            }
        }
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
            Record::CodeSourceInfo(info) => self.code_source_info(info),
            Record::ScriptSource(script) => {
                let entry = self.log.scripts.entry(script.script_id).or_default();
                entry.name = escape::unescape(script.escaped_name).into();
                entry.escaped_source = Some(script.escaped_source.into());
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
                if let Some(code) = self.code_at_address.remove(&moved.from) {
                    self.code_at_address.insert(moved.to, code);
                }
            }
            Record::CodeDelete { address } => {
                self.code_at_address.remove(&address);
            }
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
        let name: Arc<str> = Arc::from(escape::unescape_borrowed(creation.escaped_name).as_ref());
        let function = creation.shared_function.map(|address| self.function_for_creation(address, &name));
        // Code of the same function (each tier) shares its name.
        let name = match function {
            Some(function) if *self.log.functions[function.0 as usize].name == *name => {
                self.log.functions[function.0 as usize].name.clone()
            }
            _ => name,
        };
        let id = CodeObjectId(self.log.code_objects.len() as u32);
        let tag = match self.tags.get(creation.tag) {
            Some(tag) => tag.clone(),
            None => {
                let tag: Arc<str> = String::from_utf8_lossy(creation.tag).into();
                self.tags.insert(creation.tag.into(), tag.clone());
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
        self.code_at_address.insert(creation.address, id);
        if self.last_creation_micros.is_some_and(|last| creation.timestamp_micros < last) {
            self.log.clock_restarts += 1;
        }
        self.last_creation_micros = Some(creation.timestamp_micros);
    }

    /// The function a code-creation carries. A different name at a known SFI
    /// address means the GC freed that SFI and put another there.
    fn function_for_creation(&mut self, address: u64, name: &Arc<str>) -> SharedFunctionId {
        if let Some(&existing) = self.function_at_address.get(&address) {
            let function = &mut self.log.functions[existing.0 as usize];
            if function.name.is_empty() || *function.name == **name {
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

    fn code_source_info(&mut self, info: CodeSourceInfo) {
        let Some(&code_id) = self.code_at_address.get(&info.address) else {
            self.log.damaged_lines += 1;
            self.warn(
                LogWarningKind::SourceInfoWithoutCode,
                format!("code-source-info for 0x{:x} with no code-creation before it", info.address),
            );
            return;
        };
        let inlined_functions = info
            .inlined_functions
            .iter()
            .map(|&address| match self.function_at_address.get(&address) {
                Some(&function) => function,
                None => {
                    // Not seen yet: remember the address so a later
                    // code-creation of that SFI names it.
                    let id = SharedFunctionId(self.log.functions.len() as u32);
                    self.log.functions.push(SharedFunction::default());
                    self.function_at_address.insert(address, id);
                    id
                }
            })
            .collect();
        let code = &mut self.log.code_objects[code_id.0 as usize];
        // Without `script-source` or `script-details` (`--no-log-source-code`),
        // the code's name is the only place that names its script.
        let script = self.log.scripts.entry(info.script_id).or_default();
        if script.name.is_empty() {
            script.name = crate::v8::source::FunctionName::parse(&code.name, None).script.into();
        }
        if let Some(function) = code.function {
            let function = &mut self.log.functions[function.0 as usize];
            function.script_id = Some(info.script_id);
            function.function_start = Some(info.function_start);
        }
        // The tables live as long as the log: no spare capacity.
        let mut positions = info.positions;
        positions.shrink_to_fit();
        let mut inlining_positions = info.inlining_positions;
        inlining_positions.shrink_to_fit();
        code.source_info = Some(Box::new(SourceInfo {
            script_id: info.script_id,
            function_start: info.function_start,
            positions,
            inlining_positions,
            inlined_functions,
        }));
    }
}

#[cfg(test)]
mod read_tests {
    use super::*;

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
}
