//! The record dispatch: [`LogBuilder`] applies each line's record to the
//! log in log order (code objects, their source information, functions
//! followed through `sfi-move`, scripts), and counts what it skips.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use memchr::memchr_iter;

use rustc_hash::FxHashMap;

use super::addresses::{AddressHashing, CodeAddresses};
use super::lookup::DecodedTables;
use super::record::{self, CodeCreation, CodeSourceInfo, Record};
use super::{
    CodeKindNumber, CodeLog, CodeMoveEvent, CodeObject, CodeObjectId, FunctionName, LogWarning, LogWarningKind,
    MAX_KEPT_WARNINGS, MAX_LINE_BYTES, NameId, ScriptText, SharedFunction, SharedFunctionId, SharedLibraryMapping,
    SourceInfo, SourceInfoId, TagId, Tick, escape, lexer, tables,
};

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

/// Applies records in log order.
#[derive(Default)]
pub(super) struct LogBuilder {
    pub(super) log: CodeLog,
    /// Where the code objects are: the latest created at each address.
    pub(super) code_addresses: CodeAddresses,
    /// The function whose SFI is at each address now.
    pub(super) function_at_address: HashMap<u64, SharedFunctionId, AddressHashing>,
    /// The tags seen, as written, with their ids.
    pub(super) tags: FxHashMap<Box<[u8]>, TagId>,
    /// The names seen, by their escaped text, with their ids.
    pub(super) names: FxHashMap<Box<[u8]>, NameId>,
    /// The time of the last code-creation, to see clocks restart.
    pub(super) last_creation_micros: Option<i64>,
    /// Inlined-function addresses of the record being read (reused).
    pub(super) function_addresses: Vec<u64>,
    /// Where the text starts in memory, when it is retained: tables and
    /// sources are kept as offsets from here.
    pub(super) retained_base: Option<usize>,
}

impl LogBuilder {
    pub(super) fn line(&mut self, line: &[u8]) {
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
    pub(super) fn too_long_line(&mut self, length: u64) {
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
    pub(super) fn cut_last_line(&mut self, line: &[u8]) {
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
            kind: CodeKindNumber::new(creation.code_kind),
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
