//! One code-log line parsed into a typed record, borrowing from the line.
//!
//! The field layouts mirror V8's `V8FileLogger` in
//! [src/logging/log.cc](https://chromium.googlesource.com/v8/v8/+/refs/heads/main/src/logging/log.cc).

use logos::Logos;
use memchr::memchr_iter;

use super::lexer::{LogRecordKind, TableToken, parse_decimal, parse_hex_address};

/// Why a line could not be parsed: what was expected where. Displays as
/// `field N: expected ...`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A field is missing or does not hold what it should.
    #[error("field {field}: expected {expected}")]
    Field {
        /// The field's 1-based number (the record kind is field 0).
        field: usize,
        /// What it should hold: `a code address`, `a tier marker`...
        expected: &'static str,
    },
    /// The record does not have as many fields as its kind has.
    #[error("expected {expected} fields, found {found}")]
    FieldCount {
        /// The counts its kind has: `8`, `7 or 9`.
        expected: &'static str,
        /// The fields found, the kind included.
        found: usize,
    },
    /// A `script-source` without its four fields.
    #[error("expected 4 fields: script-source,ID,NAME,SOURCE")]
    ScriptSourceFields,
    /// A `code-source-info` table that does not parse.
    #[error(transparent)]
    Table(#[from] SourceTableError),
}

impl ParseError {
    fn expected(what: &'static str, field_index: usize) -> Self {
        ParseError::Field { field: field_index + 1, expected: what }
    }
}

/// A `code-source-info` table that does not parse: which field, and why.
/// Displays as `field 6 (positions): ...`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceTableError {
    /// The position table (field 6).
    #[error("field 6 (positions): {0}")]
    Positions(TableError),
    /// The inlining table (field 7).
    #[error("field 7 (inlining positions): {0}")]
    InliningPositions(TableError),
    /// The inlined functions (field 8).
    #[error("field 8 (inlined functions): {0}")]
    InlinedFunctions(TableError),
}

/// Why a `code-source-info` table does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    /// Text that is no token of the table, or a token the entry's form
    /// does not allow there.
    #[error("unexpected text at byte {offset}, expected {form}")]
    UnexpectedText {
        /// Where the text starts in the table.
        offset: usize,
        /// The form of an entry: `C<n>O<n>[I<n>]`, `F[n]O<n>[I<n>]`,
        /// `S0x<address>`.
        form: &'static str,
    },
    /// The last entry has no `O<offset>`.
    #[error("entry without O<offset> at the end, expected {form}")]
    MissingOffset {
        /// The form of an entry.
        form: &'static str,
    },
    /// A number too large for what it is.
    #[error("{what} {value} out of range")]
    OutOfRange {
        /// What the number is: `code offset`, `script offset`...
        what: &'static str,
        /// The number.
        value: i64,
    },
}

/// A code-log record, borrowing its text from the line.
#[derive(Debug, Clone, PartialEq)]
pub enum Record<'line> {
    /// `code-creation`.
    CodeCreation(CodeCreation<'line>),
    /// `code-source-info`.
    CodeSourceInfo(CodeSourceInfo),
    /// `script-source`.
    ScriptSource(ScriptSource<'line>),
    /// `script-details`.
    ScriptDetails(ScriptDetails<'line>),
    /// `sfi-move`.
    SfiMove(AddressMove),
    /// `code-move`.
    CodeMove(AddressMove),
    /// `code-delete` (old logs).
    CodeDelete {
        /// The freed code object's address.
        address: u64,
    },
    /// `shared-library`.
    SharedLibrary(SharedLibrary<'line>),
    /// `tick`.
    Tick(Tick),
    /// `v8-version`.
    V8Version(V8Version),
}

/// `code-creation,TAG,KIND,TIME,ADDR,SIZE,NAME[,SFI,MARKER]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeCreation<'line> {
    /// `JS`, `Builtin`, `LazyCompile`, ... (kept as written).
    pub tag: &'line [u8],
    /// V8's CodeKind number: differs between versions, so no meaning is read
    /// into it ([`super::CodeKindNumber`]).
    pub code_kind: i64,
    /// Microseconds since the log started.
    pub timestamp_micros: i64,
    /// Start of the code object's instructions.
    pub address: u64,
    /// Instruction size in bytes.
    pub size: u64,
    /// The escaped name, e.g. `root /tmp/exp/bench.js:4:14`.
    pub escaped_name: &'line [u8],
    /// The SharedFunctionInfo address (9-field form only).
    pub shared_function: Option<u64>,
    /// The tier marker (9-field form only; `None` when empty).
    pub tier: Option<TierMarker>,
}

/// Which compiler produced a code object, from the code-creation marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// `~`: Ignition bytecode (or its trampoline copy with
    /// `--interpreted-frames-native-stack`).
    Interpreted,
    /// `^`: Sparkplug baseline code.
    Sparkplug,
    /// `+`: Maglev.
    Maglev,
    /// `*`: TurboFan.
    TurboFan,
}

impl Tier {
    /// The marker V8 uses for plain code of this tier.
    pub fn marker(self) -> &'static str {
        match self {
            Tier::Interpreted => "~",
            Tier::Sparkplug => "^",
            Tier::Maglev => "+",
            Tier::TurboFan => "*",
        }
    }

    /// A human name for reports.
    pub fn display_name(self) -> &'static str {
        match self {
            Tier::Interpreted => "interpreted",
            Tier::Sparkplug => "Sparkplug",
            Tier::Maglev => "Maglev",
            Tier::TurboFan => "TurboFan",
        }
    }

    /// Whether code of this tier inlines other functions.
    pub fn is_optimizing(self) -> bool {
        matches!(self, Tier::Maglev | Tier::TurboFan)
    }
}

/// A parsed tier marker: `~ ^ + * +' *' o+ o*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TierMarker {
    /// The compiler.
    pub tier: Tier,
    /// `o` prefix: compiled for on-stack replacement.
    pub on_stack_replacement: bool,
    /// `'` suffix: specialized to one function context.
    pub context_specialized: bool,
}

/// A code-creation marker that is none of V8's tier markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownTierMarker;

impl TierMarker {
    /// Parses a marker; `Ok(None)` for the empty marker.
    pub fn parse(text: &[u8]) -> Result<Option<TierMarker>, UnknownTierMarker> {
        if text.is_empty() {
            return Ok(None);
        }
        let (on_stack_replacement, rest) = match text.split_first() {
            Some((b'o', rest)) => (true, rest),
            _ => (false, text),
        };
        let (context_specialized, rest) = match rest.split_last() {
            Some((b'\'', rest)) => (true, rest),
            _ => (false, rest),
        };
        let tier = match rest {
            b"~" => Tier::Interpreted,
            b"^" => Tier::Sparkplug,
            b"+" => Tier::Maglev,
            b"*" => Tier::TurboFan,
            _ => return Err(UnknownTierMarker),
        };
        Ok(Some(TierMarker { tier, on_stack_replacement, context_specialized }))
    }

    /// The marker as V8 writes it.
    pub fn text(self) -> String {
        let mut text = String::new();
        if self.on_stack_replacement {
            text.push('o');
        }
        text.push_str(self.tier.marker());
        if self.context_specialized {
            text.push('\'');
        }
        text
    }
}

/// `code-source-info,ADDR,SCRIPT_ID,START,END,POSITIONS,INLINING_POSITIONS,INLINED_FUNCTIONS`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CodeSourceInfo {
    /// The code object this describes (the latest code-creation at it).
    pub address: u64,
    /// The script of the code object's own function.
    pub script_id: i64,
    /// Script offset where the function starts.
    pub function_start: i64,
    /// Script offset where the function ends.
    pub function_end: i64,
    /// The source-position table, in ascending code offset.
    pub positions: Vec<PositionEntry>,
    /// The inlining tree: entry n is inlining id n.
    pub inlining_positions: Vec<InliningPosition>,
    /// SharedFunctionInfo addresses of the inlined functions (as of this record).
    pub inlined_functions: Vec<u64>,
}

/// One source-position entry: `C<code_offset>O<script_offset>[I<inlining_id>]`.
/// It applies from its code offset to the next entry's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PositionEntry {
    /// Offset into the code object's instructions.
    pub code_offset: u32,
    /// Offset into the script (UTF-16 units); -1 = no position.
    pub script_offset: i32,
    /// The inlined function the instruction belongs to, if any.
    pub inlining_id: Option<u32>,
}

/// One node of the inlining tree: `F[<function_index>]O<call_offset>[I<parent>]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InliningPosition {
    /// Index into the inlined functions; `None` for V8's `-1` (no function).
    pub function_index: Option<u32>,
    /// Script offset of the call site, in the caller's script.
    pub call_offset: i32,
    /// The caller's inlining id; `None` = called from the outermost function.
    pub parent: Option<u32>,
}

/// `script-source,ID,NAME,SOURCE`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptSource<'line> {
    /// V8's script id.
    pub script_id: i64,
    /// Escaped script name.
    pub escaped_name: &'line [u8],
    /// Escaped script source.
    pub escaped_source: &'line [u8],
}

/// `script-details,ID,NAME,LINE_OFFSET,COLUMN_OFFSET,SOURCE_MAP_URL`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptDetails<'line> {
    /// V8's script id.
    pub script_id: i64,
    /// Escaped script name.
    pub escaped_name: &'line [u8],
}

/// `sfi-move,FROM,TO` or `code-move,FROM,TO`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressMove {
    /// Address before the move.
    pub from: u64,
    /// Address after the move.
    pub to: u64,
}

/// `shared-library,NAME,START,END,ASLR_SLIDE`.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedLibrary<'line> {
    /// Escaped path of the library.
    pub escaped_name: &'line [u8],
    /// First mapped address.
    pub start: u64,
    /// End of the mapping.
    pub end: u64,
    /// ASLR slide V8 reports (0 when absent).
    pub aslr_slide: i64,
}

/// `tick,PC,TIME,IS_EXTERNAL_CALLBACK,TOS_OR_CALLBACK,VM_STATE[,overflow],FRAME...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    /// The sampled program counter.
    pub pc: u64,
    /// Microseconds since the log started.
    pub timestamp_micros: i64,
    /// Whether the PC is in an external callback.
    pub external_callback: bool,
    /// Top of stack, or the external callback's address.
    pub top_of_stack_or_callback: u64,
    /// V8's VM state number.
    pub vm_state: i64,
    /// The stack was deeper than V8 records.
    pub overflow: bool,
    /// Return addresses, innermost first.
    pub frames: Vec<u64>,
    /// 1-based line of the record in the log (0 until a [`super::CodeLog`]
    /// reads it): the order of ticks and code events, as the tick processor
    /// replays them.
    pub log_line: u64,
}

/// `v8-version,MAJOR,MINOR,BUILD,PATCH,EMBEDDER,CANDIDATE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V8Version {
    /// Major version.
    pub major: i64,
    /// Minor version.
    pub minor: i64,
    /// Build number.
    pub build: i64,
    /// Patch level.
    pub patch: i64,
    /// Embedder string, e.g. `-node.38`.
    pub embedder: String,
}

/// How many fields [`Fields`] keeps without allocating: every record kind
/// but `tick` has fewer.
const INLINE_FIELDS: usize = 10;

/// The comma-separated fields of one line (V8 escapes commas inside fields).
/// The first [`INLINE_FIELDS`] live inline: no allocation per line.
struct Fields<'line> {
    inline: [&'line [u8]; INLINE_FIELDS],
    /// Fields after the inline ones (only `tick` records have any).
    more: Vec<&'line [u8]>,
    count: usize,
}

impl<'line> Fields<'line> {
    fn split(line: &'line [u8]) -> Self {
        let mut fields = Fields { inline: [&[]; INLINE_FIELDS], more: Vec::new(), count: 0 };
        let mut start = 0;
        for comma in memchr_iter(b',', line) {
            fields.push(&line[start..comma]);
            start = comma + 1;
        }
        fields.push(&line[start..]);
        fields
    }

    fn push(&mut self, field: &'line [u8]) {
        match self.inline.get_mut(self.count) {
            Some(slot) => *slot = field,
            None => self.more.push(field),
        }
        self.count += 1;
    }

    fn get(&self, index: usize) -> Option<&'line [u8]> {
        if index >= self.count {
            return None;
        }
        match self.inline.get(index) {
            Some(&field) => Some(field),
            None => self.more.get(index - INLINE_FIELDS).copied(),
        }
    }

    fn len(&self) -> usize {
        self.count
    }

    fn raw(&self, index: usize, what: &'static str) -> Result<&'line [u8], ParseError> {
        self.get(index).ok_or_else(|| ParseError::expected(what, index))
    }

    fn decimal(&self, index: usize, what: &'static str) -> Result<i64, ParseError> {
        parse_decimal(self.raw(index, what)?).ok_or_else(|| ParseError::expected(what, index))
    }

    fn address(&self, index: usize, what: &'static str) -> Result<u64, ParseError> {
        parse_hex_address(self.raw(index, what)?).ok_or_else(|| ParseError::expected(what, index))
    }
}

/// Parses one line (without its newline). `Ok(None)`: a record kind this
/// reader skips; the caller counts it.
pub fn parse_line(line: &[u8]) -> Result<Option<Record<'_>>, ParseError> {
    let kind_end = memchr::memchr(b',', line).unwrap_or(line.len());
    let Some(kind) = LogRecordKind::of_field(&line[..kind_end]) else {
        return Ok(None);
    };
    if kind == LogRecordKind::ScriptSource {
        // Splitting a whole script at its commas would only cost time.
        return parse_script_source(line).map(|script| Some(Record::ScriptSource(script)));
    }
    let fields = Fields::split(line);
    let record = match kind {
        LogRecordKind::CodeCreation => Record::CodeCreation(parse_code_creation(&fields)?),
        LogRecordKind::CodeSourceInfo => Record::CodeSourceInfo(parse_code_source_info(&fields)?),
        LogRecordKind::ScriptSource => Record::ScriptSource(parse_script_source(line)?),
        LogRecordKind::ScriptDetails => Record::ScriptDetails(ScriptDetails {
            script_id: fields.decimal(1, "a script id")?,
            escaped_name: fields.raw(2, "a script name")?,
        }),
        LogRecordKind::SfiMove => Record::SfiMove(parse_move(&fields)?),
        LogRecordKind::CodeMove => Record::CodeMove(parse_move(&fields)?),
        LogRecordKind::CodeDelete => Record::CodeDelete { address: fields.address(1, "an address")? },
        LogRecordKind::SharedLibrary => Record::SharedLibrary(SharedLibrary {
            escaped_name: fields.raw(1, "a library path")?,
            start: fields.address(2, "a start address")?,
            end: fields.address(3, "an end address")?,
            aslr_slide: if fields.len() > 4 { fields.decimal(4, "an ASLR slide")? } else { 0 },
        }),
        LogRecordKind::Tick => Record::Tick(parse_tick(&fields)?),
        LogRecordKind::V8Version => Record::V8Version(V8Version {
            major: fields.decimal(1, "a major version")?,
            minor: fields.decimal(2, "a minor version")?,
            build: fields.decimal(3, "a build number")?,
            patch: fields.decimal(4, "a patch number")?,
            embedder: String::from_utf8_lossy(fields.raw(5, "an embedder string").unwrap_or(b"")).into_owned(),
        }),
    };
    Ok(Some(record))
}

/// Parses a line known to start with `code-creation,` (what
/// [`parse_line`] gives for it, without recognizing the kind again).
pub fn parse_code_creation_line(line: &[u8]) -> Result<CodeCreation<'_>, ParseError> {
    plain_code_creation(line).map_or_else(|| parse_code_creation(&Fields::split(line)), Ok)
}

/// A code-creation in the plain form V8 writes
/// (`code-creation,TAG,KIND,TIME,0xADDRESS,SIZE,NAME[,0xSFI,MARKER]`), read
/// in one pass: the short fields byte by byte, the name by its commas (V8
/// escapes those inside it). `None` for anything else, which the field
/// parser then reads, to the same result or with its exact error.
fn plain_code_creation(line: &[u8]) -> Option<CodeCreation<'_>> {
    let mut rest = line.strip_prefix(b"code-creation,")?;
    let mut next_short_field = || {
        let comma = rest.iter().position(|&byte| byte == b',')?;
        let field = &rest[..comma];
        rest = &rest[comma + 1..];
        Some(field)
    };
    let tag = next_short_field()?;
    let code_kind = parse_decimal(next_short_field()?)?;
    let timestamp_micros = parse_decimal(next_short_field()?)?;
    let address = parse_hex_address(next_short_field()?)?;
    let size = u64::try_from(parse_decimal(next_short_field()?)?).ok()?;
    let mut commas = memchr_iter(b',', rest);
    let (escaped_name, shared_function, tier) = match (commas.next(), commas.next(), commas.next()) {
        (None, _, _) => (rest, None, None),
        (Some(name_end), Some(marker_start), None) => {
            let tier = TierMarker::parse(&rest[marker_start + 1..]).ok()?;
            let shared_function = parse_hex_address(&rest[name_end + 1..marker_start])?;
            (&rest[..name_end], Some(shared_function), tier)
        }
        _ => return None,
    };
    Some(CodeCreation { tag, code_kind, timestamp_micros, address, size, escaped_name, shared_function, tier })
}

fn parse_code_creation<'line>(fields: &Fields<'line>) -> Result<CodeCreation<'line>, ParseError> {
    if fields.len() != 7 && fields.len() != 9 {
        return Err(ParseError::FieldCount { expected: "7 or 9", found: fields.len() });
    }
    let size = fields.decimal(5, "a code size")?;
    let (shared_function, tier) = if fields.len() == 9 {
        let marker = fields.raw(8, "a tier marker")?;
        let tier = TierMarker::parse(marker)
            .map_err(|UnknownTierMarker| ParseError::expected("a tier marker (~ ^ + * +' *' o+ o*)", 8))?;
        (Some(fields.address(7, "a SharedFunctionInfo address")?), tier)
    } else {
        (None, None)
    };
    Ok(CodeCreation {
        tag: fields.raw(1, "a tag")?,
        code_kind: fields.decimal(2, "a code kind")?,
        timestamp_micros: fields.decimal(3, "a timestamp")?,
        address: fields.address(4, "a code address")?,
        size: u64::try_from(size).map_err(|_| ParseError::expected("a non-negative size", 5))?,
        escaped_name: fields.raw(6, "a name")?,
        shared_function,
        tier,
    })
}

fn parse_code_source_info(fields: &Fields<'_>) -> Result<CodeSourceInfo, ParseError> {
    if fields.len() != 8 {
        return Err(ParseError::FieldCount { expected: "8", found: fields.len() });
    }
    // Field by field, so that an error names the first bad one.
    let address = fields.address(1, "a code address")?;
    let script_id = fields.decimal(2, "a script id")?;
    let function_start = fields.decimal(3, "a start offset")?;
    let function_end = fields.decimal(4, "an end offset")?;
    let (positions, inlining_positions) =
        parse_position_tables(fields.raw(5, "positions")?, fields.raw(6, "inlining positions")?)?;
    let inlined_functions =
        parse_inlined_functions(fields.raw(7, "inlined functions")?).map_err(SourceTableError::InlinedFunctions)?;
    Ok(CodeSourceInfo {
        address,
        script_id,
        function_start,
        function_end,
        positions,
        inlining_positions,
        inlined_functions,
    })
}

/// Parses a `code-source-info`'s position table (its 6th field) and
/// inlining table (its 7th); the error names the field.
pub fn parse_position_tables(
    positions: &[u8],
    inlining: &[u8],
) -> Result<(Vec<PositionEntry>, Vec<InliningPosition>), SourceTableError> {
    let positions = parse_positions(positions).map_err(SourceTableError::Positions)?;
    let inlining = parse_inlining_positions(inlining).map_err(SourceTableError::InliningPositions)?;
    Ok((positions, inlining))
}

fn table_number(value: i64, what: &'static str) -> Result<u32, TableError> {
    u32::try_from(value).map_err(|_| TableError::OutOfRange { what, value })
}

fn script_offset(value: i64) -> Result<i32, TableError> {
    i32::try_from(value).map_err(|_| TableError::OutOfRange { what: "script offset", value })
}

/// The shape both code-source-info tables share: an entry opens with one
/// token (`C<n>` or `F[n]`), then must have `O<offset>`, then may have `I<id>`.
trait TableEntry: Sized {
    /// The entry's form, for messages.
    const FORM: &'static str;
    /// A new entry if `token` opens one.
    fn open(token: TableToken) -> Option<Result<Self, TableError>>;
    /// Sets the `O` offset.
    fn set_offset(&mut self, offset: i32);
    /// The `I` id, if set.
    fn id(&self) -> Option<u32>;
    /// Sets the `I` id.
    fn set_id(&mut self, id: u32);
}

impl TableEntry for PositionEntry {
    const FORM: &'static str = "C<n>O<n>[I<n>]";
    fn open(token: TableToken) -> Option<Result<Self, TableError>> {
        let TableToken::CodeOffset(offset) = token else { return None };
        Some(table_number(offset, "code offset").map(|code_offset| PositionEntry {
            code_offset,
            script_offset: -1,
            inlining_id: None,
        }))
    }
    fn set_offset(&mut self, offset: i32) {
        self.script_offset = offset;
    }
    fn id(&self) -> Option<u32> {
        self.inlining_id
    }
    fn set_id(&mut self, id: u32) {
        self.inlining_id = Some(id);
    }
}

impl TableEntry for InliningPosition {
    const FORM: &'static str = "F[n]O<n>[I<n>]";
    fn open(token: TableToken) -> Option<Result<Self, TableError>> {
        let TableToken::Function(index) = token else { return None };
        Some(
            index
                .map(|index| table_number(index, "function index"))
                .transpose()
                .map(|function_index| InliningPosition { function_index, call_offset: -1, parent: None }),
        )
    }
    fn set_offset(&mut self, offset: i32) {
        self.call_offset = offset;
    }
    fn id(&self) -> Option<u32> {
        self.parent
    }
    fn set_id(&mut self, id: u32) {
        self.parent = Some(id);
    }
}

fn parse_table<Entry: TableEntry>(table: &[u8]) -> Result<Vec<Entry>, TableError> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut expecting_offset = false;
    let mut lexer = TableToken::lexer(table);
    while let Some(token) = lexer.next() {
        let unexpected = || TableError::UnexpectedText { offset: lexer.span().start, form: Entry::FORM };
        let token = token.map_err(|()| unexpected())?;
        if !expecting_offset && let Some(entry) = Entry::open(token) {
            entries.push(entry?);
            expecting_offset = true;
            continue;
        }
        match (token, expecting_offset, entries.last_mut()) {
            (TableToken::ScriptOffset(offset), true, Some(entry)) => {
                entry.set_offset(script_offset(offset)?);
                expecting_offset = false;
            }
            (TableToken::InliningId(id), false, Some(entry)) if entry.id().is_none() => {
                entry.set_id(table_number(id, "inlining id")?);
            }
            _ => return Err(unexpected()),
        }
    }
    if expecting_offset {
        return Err(TableError::MissingOffset { form: Entry::FORM });
    }
    Ok(entries)
}

/// Parses `C<code_offset>O<script_offset>[I<inlining_id>]...`.
pub fn parse_positions(table: &[u8]) -> Result<Vec<PositionEntry>, TableError> {
    parse_table(table)
}

/// Parses `F[<function_index>]O<call_offset>[I<parent>]...`.
pub fn parse_inlining_positions(table: &[u8]) -> Result<Vec<InliningPosition>, TableError> {
    parse_table(table)
}

/// Parses `S<address>...`.
pub fn parse_inlined_functions(table: &[u8]) -> Result<Vec<u64>, TableError> {
    let mut addresses = Vec::new();
    let mut lexer = TableToken::lexer(table);
    while let Some(token) = lexer.next() {
        match token {
            Ok(TableToken::SharedFunction(address)) => addresses.push(address),
            _ => {
                return Err(TableError::UnexpectedText { offset: lexer.span().start, form: "S0x<address>" });
            }
        }
    }
    Ok(addresses)
}

/// `script-source` keeps everything after the third comma as the source:
/// V8 escapes commas, but a robust reader should not lose a source to one.
fn parse_script_source(line: &[u8]) -> Result<ScriptSource<'_>, ParseError> {
    let mut commas = memchr_iter(b',', line);
    let (Some(first), Some(second), Some(third)) = (commas.next(), commas.next(), commas.next()) else {
        return Err(ParseError::ScriptSourceFields);
    };
    let script_id = parse_decimal(&line[first + 1..second]).ok_or_else(|| ParseError::expected("a script id", 1))?;
    Ok(ScriptSource { script_id, escaped_name: &line[second + 1..third], escaped_source: &line[third + 1..] })
}

fn parse_move(fields: &Fields<'_>) -> Result<AddressMove, ParseError> {
    Ok(AddressMove { from: fields.address(1, "a from address")?, to: fields.address(2, "a to address")? })
}

fn parse_tick(fields: &Fields<'_>) -> Result<Tick, ParseError> {
    let mut index = 6;
    let overflow = fields.get(6).is_some_and(|field| field == b"overflow");
    if overflow {
        index += 1;
    }
    let mut frames = Vec::with_capacity(fields.len().saturating_sub(index));
    while index < fields.len() {
        frames.push(fields.address(index, "a frame address")?);
        index += 1;
    }
    Ok(Tick {
        pc: fields.address(1, "a pc")?,
        timestamp_micros: fields.decimal(2, "a timestamp")?,
        external_callback: fields.decimal(3, "0 or 1 (external callback)")? != 0,
        top_of_stack_or_callback: fields.address(4, "a stack or callback address")?,
        vm_state: fields.decimal(5, "a VM state")?,
        overflow,
        frames,
        log_line: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &str) -> Record<'_> {
        parse_line(line.as_bytes()).unwrap_or_else(|error| panic!("{line}: {error:?}")).unwrap()
    }

    /// The one-pass reader of plain code-creations agrees with the field
    /// parser on every code-creation of the bundled logs, and leaves the
    /// odd forms to it.
    #[test]
    fn plain_code_creations_read_as_the_field_parser_reads_them() {
        let mut checked = 0;
        for recording in [
            "node18",
            "node20",
            "node22",
            "node24",
            "node26",
            "realapp",
            "workers/node20",
            "workers/node24",
            "interpreted",
        ] {
            let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(recording);
            for entry in std::fs::read_dir(&directory).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if !name.ends_with(".log.gz") {
                    continue;
                }
                let mut text = Vec::new();
                std::io::Read::read_to_end(
                    &mut flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()),
                    &mut text,
                )
                .unwrap();
                for line in text.split(|&byte| byte == b'\n').filter(|line| line.starts_with(b"code-creation,")) {
                    let plain =
                        plain_code_creation(line).unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(line)));
                    assert_eq!(Ok(plain), parse_code_creation(&Fields::split(line)));
                    checked += 1;
                }
            }
        }
        assert!(checked > 20_000, "{checked}");
        for odd in [
            "code-creation,JS,1,2,0x10,4,name,0x20",
            "code-creation,JS,1,2,0x10,4,a,b,0x20,~",
            "code-creation,JS,1,2,0x10,4,name,0x20,?",
            "code-creation,JS,1,2,0x10,-4,name",
            "code-creation,JS,1,2,16,4,name",
            "code-creation,JS,1,2,0x10",
            "code-creation,JS,x,2,0x10,4,name",
        ] {
            assert_eq!(plain_code_creation(odd.as_bytes()), None, "{odd}");
            assert!(parse_code_creation(&Fields::split(odd.as_bytes())).is_err(), "{odd}");
        }
    }

    #[test]
    fn code_creation_forms_and_markers() {
        let markers = [
            ("~", Some((Tier::Interpreted, false, false))),
            ("^", Some((Tier::Sparkplug, false, false))),
            ("+", Some((Tier::Maglev, false, false))),
            ("*", Some((Tier::TurboFan, false, false))),
            ("+'", Some((Tier::Maglev, false, true))),
            ("*'", Some((Tier::TurboFan, false, true))),
            ("o+", Some((Tier::Maglev, true, false))),
            ("o*", Some((Tier::TurboFan, true, false))),
            ("", None),
        ];
        for (marker, expected) in markers {
            for tag in ["JS", "LazyCompile", "SharedFunction"] {
                let line =
                    format!("code-creation,{tag},13,45545,0x7f3e9a7e5a40,396,b /tmp/a\\x2Cb.js:2:11,0x1899,{marker}");
                let Record::CodeCreation(creation) = parsed(&line) else { panic!("{line}") };
                assert_eq!(creation.tag, tag.as_bytes());
                assert_eq!((creation.code_kind, creation.timestamp_micros), (13, 45545));
                assert_eq!((creation.address, creation.size), (0x7f3e9a7e5a40, 396));
                assert_eq!(creation.escaped_name, b"b /tmp/a\\x2Cb.js:2:11");
                assert_eq!(creation.shared_function, Some(0x1899));
                let tier = creation.tier.map(|tier| (tier.tier, tier.on_stack_replacement, tier.context_specialized));
                assert_eq!(tier, expected, "{marker}");
                assert_eq!(creation.tier.map(TierMarker::text).unwrap_or_default(), marker);
            }
        }
        let Record::CodeCreation(builtin) = parsed("code-creation,Builtin,2,12,0x55d0,1024,ArrayPush") else {
            panic!()
        };
        assert_eq!((builtin.shared_function, builtin.tier), (None, None));
        for bad in [
            "code-creation,JS,13,1,0x10,20,f,0x30",
            "code-creation,JS,13,1,0x10,-1,f,0x30,*",
            "code-creation,JS,13,1,0x10,20,f,0x30,?",
            "code-creation,JS,13,1,zz,20,f",
        ] {
            assert!(parse_line(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_other_record_kind() {
        let Record::CodeSourceInfo(info) =
            parsed("code-source-info,0x7f3e,81,68,99,C0O68C39O28I0C114O-1I1,F0O81FO88I0,S0x1a2bS0x3c4d")
        else {
            panic!()
        };
        assert_eq!((info.address, info.script_id, info.function_start, info.function_end), (0x7f3e, 81, 68, 99));
        assert_eq!(
            info.positions,
            vec![
                PositionEntry { code_offset: 0, script_offset: 68, inlining_id: None },
                PositionEntry { code_offset: 39, script_offset: 28, inlining_id: Some(0) },
                PositionEntry { code_offset: 114, script_offset: -1, inlining_id: Some(1) },
            ]
        );
        assert_eq!(
            info.inlining_positions,
            vec![
                InliningPosition { function_index: Some(0), call_offset: 81, parent: None },
                InliningPosition { function_index: None, call_offset: 88, parent: Some(0) },
            ]
        );
        assert_eq!(info.inlined_functions, vec![0x1a2b, 0x3c4d]);
        let Record::CodeSourceInfo(sparkplug) = parsed("code-source-info,0x10,1,0,5,,,") else { panic!() };
        assert!(sparkplug.positions.is_empty() && sparkplug.inlined_functions.is_empty());

        let Record::ScriptSource(script) = parsed("script-source,81,/tmp/a.js,f(a\\x2C b),\\nx") else { panic!() };
        assert_eq!((script.script_id, script.escaped_name), (81, &b"/tmp/a.js"[..]));
        assert_eq!(script.escaped_source, b"f(a\\x2C b),\\nx", "a stray comma stays in the source");
        let Record::ScriptDetails(details) = parsed("script-details,81,/tmp/a.js,0,0,") else { panic!() };
        assert_eq!((details.script_id, details.escaped_name), (81, &b"/tmp/a.js"[..]));
        assert_eq!(parsed("sfi-move,0x10,0x20"), Record::SfiMove(AddressMove { from: 0x10, to: 0x20 }));
        assert_eq!(parsed("code-move,0x10,0x20"), Record::CodeMove(AddressMove { from: 0x10, to: 0x20 }));
        assert_eq!(parsed("code-delete,0x10"), Record::CodeDelete { address: 0x10 });
        let Record::SharedLibrary(library) = parsed("shared-library,/usr/bin/node,0x400000,0x2000000,0") else {
            panic!()
        };
        assert_eq!((library.escaped_name, library.start, library.end), (&b"/usr/bin/node"[..], 0x400000, 0x2000000));
        let Record::Tick(tick) = parsed("tick,0x7f10,1234,0,0x0,6,0x7f20,0x7f30") else { panic!() };
        assert_eq!((tick.pc, tick.timestamp_micros, tick.vm_state, tick.overflow), (0x7f10, 1234, 6, false));
        assert_eq!(tick.frames, vec![0x7f20, 0x7f30]);
        let Record::Tick(overflowed) = parsed("tick,0x7f10,1234,1,0x99,0,overflow,0x7f20") else { panic!() };
        assert!(overflowed.overflow && overflowed.external_callback);
        assert_eq!(overflowed.frames, vec![0x7f20]);
        let Record::V8Version(version) = parsed("v8-version,11,3,244,8,-node.38,0") else { panic!() };
        assert_eq!((version.major, version.minor, version.build, version.patch), (11, 3, 244, 8));
        assert_eq!(version.embedder, "-node.38");
        assert_eq!(parse_line(b"heap-capacity,123"), Ok(None));
        assert_eq!(parse_line(b""), Ok(None));
    }

    #[test]
    fn ticks_with_more_fields_than_kept_inline() {
        let frames: Vec<String> = (1..=12).map(|frame| format!("0x{frame:x}0")).collect();
        let line = format!("tick,0x7f10,1234,0,0x0,6,overflow,{}", frames.join(","));
        let Record::Tick(tick) = parsed(&line) else { panic!() };
        assert!(tick.overflow);
        assert_eq!(tick.frames, (1..=12).map(|frame| frame * 16).collect::<Vec<u64>>());
        let bad = format!("tick,0x7f10,1234,0,0x0,6,{},zz", frames.join(","));
        let error = parse_line(bad.as_bytes()).unwrap_err();
        assert_eq!(error, ParseError::Field { field: 19, expected: "a frame address" });
        assert_eq!(error.to_string(), "field 19: expected a frame address");
    }

    #[test]
    fn malformed_tables_are_errors() {
        for bad in ["C1C2O3", "C1O2I3I4", "C1", "O1", "I1C1O1", "C1O2Z", "C99999999999O1"] {
            assert!(parse_positions(bad.as_bytes()).is_err(), "{bad}");
        }
        for bad in ["F0", "F0O1I2I3", "C0O1", "F99999999999O1"] {
            assert!(parse_inlining_positions(bad.as_bytes()).is_err(), "{bad}");
        }
        assert!(parse_inlined_functions(b"S0x1S").is_err());
        let error = parse_line(b"code-source-info,0x1,1,0,1,C0O1C2,,").unwrap_err();
        assert_eq!(
            error,
            ParseError::Table(SourceTableError::Positions(TableError::MissingOffset { form: "C<n>O<n>[I<n>]" }))
        );
        assert_eq!(
            error.to_string(),
            "field 6 (positions): entry without O<offset> at the end, expected C<n>O<n>[I<n>]"
        );
        let messages = [
            (parse_positions(b"C1O2Z").unwrap_err(), "unexpected text at byte 4, expected C<n>O<n>[I<n>]"),
            (parse_positions(b"C99999999999O1").unwrap_err(), "code offset 99999999999 out of range"),
            (parse_positions(b"C1O99999999999").unwrap_err(), "script offset 99999999999 out of range"),
            (parse_inlined_functions(b"S0x1S").unwrap_err(), "unexpected text at byte 4, expected S0x<address>"),
        ];
        for (error, message) in messages {
            assert_eq!(error.to_string(), message);
        }
        assert_eq!(
            parse_line(b"code-source-info,0x1,1,0,1,,,S").unwrap_err().to_string(),
            "field 8 (inlined functions): unexpected text at byte 0, expected S0x<address>"
        );
        assert_eq!(parse_line(b"code-source-info,0x1").unwrap_err().to_string(), "expected 8 fields, found 2");
        assert_eq!(
            parse_line(b"script-source,1").unwrap_err().to_string(),
            "expected 4 fields: script-source,ID,NAME,SOURCE"
        );
    }
}
