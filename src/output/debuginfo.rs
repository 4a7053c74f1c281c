//! DWARF for one JIT code object, written into the ELF file `perf inject -j`
//! made for it (`jitted-PID-N.so`): a compile unit with a
//! `DW_TAG_subprogram` for the code object's function, nested
//! `DW_TAG_inlined_subroutine`s for the calls inlined into it, and a line
//! table whose rows give the innermost position. addr2line, llvm-symbolizer,
//! samply, hotspot and perf read inline frames of C++ and Rust from exactly
//! this; with it they show those of JavaScript too.
//!
//! The input is plain data ([`CodeDebugInfo`]); the DWARF is encoded by
//! gimli's writer and the ELF file rewritten by object's builder, which keeps
//! every allocated section (`.text`, the build-id note) at its offset and
//! address, so perf still takes the file for the build id it recorded.
//! Nothing here panics on odd data: names are made writable, rows and
//! ranges out of order or outside the code are left out.

use gimli::write::{
    Address, AttributeValue, DwarfUnit, EndianVec, FileId, LineProgram, LineString, Range, RangeList, Sections,
    UnitEntryId,
};
use gimli::{Encoding, Format, LineEncoding, RunTimeEndian};
use object::build::elf::{Builder, SectionData};

/// Index of a file in [`CodeDebugInfo::files`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileIndex(pub usize);

/// Index of a function in [`CodeDebugInfo::functions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FunctionIndex(pub usize);

/// A line and column in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceLocation {
    /// The file.
    pub file: FileIndex,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (0: unknown).
    pub column: u32,
}

/// A function: an inlined one or the code object's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebugFunction {
    /// Its name, as tools should print it.
    pub name: String,
    /// Where it is declared, when known.
    pub declared_at: Option<SourceLocation>,
}

/// Code offsets from `start` up to, not including, `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeRange {
    /// The first offset.
    pub start: u64,
    /// The first offset after it.
    pub end: u64,
}

/// A call inlined into the code: a `DW_TAG_inlined_subroutine`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlinedCallInfo {
    /// The call it is inlined into (an index of [`CodeDebugInfo::calls`]
    /// before this one); `None` for the code object's own function.
    pub parent: Option<usize>,
    /// The function called.
    pub function: FunctionIndex,
    /// The call site in the caller, when known.
    pub call_site: Option<SourceLocation>,
    /// The code that runs in the call (calls inlined into it included),
    /// ascending.
    pub ranges: Vec<CodeRange>,
}

/// A row of the line table: from `offset` to the next row, the innermost
/// function runs at `location`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRow {
    /// The code offset.
    pub offset: u64,
    /// The position; `None` when unknown (line 0).
    pub location: Option<SourceLocation>,
}

/// What the DWARF of one code object says, as plain data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeDebugInfo {
    /// The source files (paths or URLs as the runtime names its scripts).
    pub files: Vec<String>,
    /// The functions the calls and the code object name.
    pub functions: Vec<DebugFunction>,
    /// The code object's own function.
    pub outer: Option<FunctionIndex>,
    /// The inlined calls, a parent before its children.
    pub calls: Vec<InlinedCallInfo>,
    /// The line table, ascending offsets.
    pub rows: Vec<LineRow>,
}

/// Why a jitted ELF file could not be given its DWARF.
#[derive(Debug, thiserror::Error)]
pub enum DebugInfoError {
    /// The file is no ELF file object can edit.
    #[error("not an ELF file perf inject writes: {0}")]
    NotElf(object::build::Error),
    /// The file has no `.text` section.
    #[error("no .text section")]
    NoText,
    /// The file's `.text` is not loaded into memory (no `SHF_ALLOC`) or is a
    /// table object rebuilds (of strings, symbols, relocations...): no code.
    #[error(".text is no section of code (not loaded, or a table)")]
    TextNotCode,
    /// A section named as debug information (`.debug_*`, which this module
    /// replaces) is loaded into memory, a note or a table (of symbols,
    /// strings, relocations...): a damaged file.
    #[error("section {0} is named as debug information but is loaded, a note or a table")]
    NotDebugInfo(String),
    /// A section's alignment is not a power of two: a damaged file.
    #[error("section {section} is aligned to {align}, no power of two")]
    Alignment {
        /// The section's name.
        section: String,
        /// Its `sh_addralign`.
        align: u64,
    },
    /// gimli refused the DWARF.
    #[error("DWARF: {0}")]
    Dwarf(gimli::write::Error),
    /// The file's layout (the offsets object keeps of its loaded sections,
    /// their alignments) would make it this large: a damaged file.
    #[error("the file would be written {size} bytes long, more than {limit}: its offsets are damaged")]
    TooLarge {
        /// The size object's layout asked for.
        size: u64,
        /// The most allowed: the input, its new debug sections and 1 MiB.
        limit: u64,
    },
    /// object's layout of the file did not add up (what it reserved is not
    /// what it wrote): offsets or alignments so damaged that its arithmetic
    /// wrapped around.
    #[error("ELF: the layout of the file is damaged (reserved {reserved:?} bytes, wrote {written})")]
    Layout {
        /// The size object reserved (`None`: it reserved none).
        reserved: Option<u64>,
        /// The bytes it wrote.
        written: u64,
    },
    /// object wrote a file it cannot read again: damage of the input it
    /// carried over.
    #[error("ELF: the file written cannot be read again: {0}")]
    Unreadable(object::build::Error),
    /// A section is a table of dynamic linking (dynamic symbols, their
    /// versions or hash, `.dynamic`, dynamic relocations), which a jitted
    /// file has none of: object rebuilds such tables from the dynamic
    /// symbols and lays them out other than it writes them (a versions
    /// table without dynamic symbols: 2 bytes written where none were
    /// reserved, every later section off its header).
    #[error("section {0} is a table of dynamic linking, which jitted files have none of: a damaged file")]
    DynamicTable(String),
    /// The file written does not read back as written (its section
    /// headers do not find the DWARF where it is): a layout object got
    /// wrong for a damaged input.
    #[error("ELF: the file written does not read back as written (damaged section headers)")]
    ReadBack,
    /// object could not write the ELF file back.
    #[error("ELF: {0}")]
    Write(object::build::Error),
}

/// A jitted ELF file with its new DWARF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewrittenElf {
    /// The file.
    pub bytes: Vec<u8>,
    /// The bytes of the debug sections written (all `.debug_*`).
    pub debug_bytes: usize,
}

/// The name of every section this module writes starts so; those of the
/// input are replaced (perf inject's line table, or an earlier run's).
const DEBUG_PREFIX: &[u8] = b".debug_";

/// `elf` (a `jitted-PID-N.so`) with its debug sections replaced by the DWARF
/// of `info`. The `.text` section's address is the code's offset 0; every
/// other section is kept as it was.
pub fn rewrite_jitted_elf(elf: &[u8], info: &CodeDebugInfo) -> Result<RewrittenElf, DebugInfoError> {
    let mut builder = Builder::read(elf).map_err(DebugInfoError::NotElf)?;
    let text =
        builder.sections.iter().find(|section| section.name.as_slice() == b".text").ok_or(DebugInfoError::NoText)?;
    // object writes back as they were only plain bytes, and an address only
    // for a section loaded into memory; a `.text` that is a string or symbol
    // table, or not loaded (a damaged file), would come out other than the
    // DWARF describes it.
    if !text.is_alloc() {
        return Err(DebugInfoError::TextNotCode);
    }
    let text = TextSection {
        address: text.sh_addr,
        size: match &text.data {
            SectionData::Data(data) => data.len() as u64,
            SectionData::UninitializedData(size) => *size,
            _ => return Err(DebugInfoError::TextNotCode),
        },
    };
    let target = Target {
        address_size: if builder.is_64 { 8 } else { 4 },
        endian: match builder.endian {
            object::Endianness::Little => RunTimeEndian::Little,
            object::Endianness::Big => RunTimeEndian::Big,
        },
    };
    let sections = dwarf_sections(info, text, target).map_err(DebugInfoError::Dwarf)?;
    for section in builder.sections.iter() {
        let dynamic_linking = matches!(
            section.data,
            SectionData::Dynamic(_)
                | SectionData::DynamicRelocation(_)
                | SectionData::DynamicSymbol
                | SectionData::DynamicString
                | SectionData::Hash
                | SectionData::GnuHash
                | SectionData::GnuVersym
                | SectionData::GnuVerdef
                | SectionData::GnuVerneed
        );
        if dynamic_linking && !section.delete {
            return Err(DebugInfoError::DynamicTable(section.name.to_string()));
        }
    }
    for section in builder.sections.iter_mut() {
        if section.name.as_slice().starts_with(DEBUG_PREFIX) {
            // Debug information is plain bytes, neither loaded nor a note; a
            // section that is (the build-id note perf matches the file by) or
            // a table (the symbols, with the strings they need) must stay.
            let plain = matches!(section.data, SectionData::Data(_) | SectionData::UninitializedData(_));
            if !plain || section.is_alloc() || section.sh_type == object::elf::SHT_NOTE {
                return Err(DebugInfoError::NotDebugInfo(section.name.to_string()));
            }
            section.delete = true;
        }
    }
    let debug_bytes = sections.iter().map(|section| section.data.len()).sum();
    for section in &sections {
        let added = builder.sections.add();
        added.name = section.name.as_bytes().into();
        added.sh_type = object::elf::SHT_PROGBITS;
        added.sh_addralign = 1;
        added.data = SectionData::Data(section.data.as_slice().into());
    }
    for section in builder.sections.iter_mut() {
        // 0 and 1 both mean "no alignment" in ELF; object's layout takes
        // the alignment as a mask: 0 puts the section at offset 0, and one
        // not a power of two (which ELF forbids) lays sections over others.
        section.sh_addralign = section.sh_addralign.max(1);
        if !section.sh_addralign.is_power_of_two() && !section.delete {
            return Err(DebugInfoError::Alignment { section: section.name.to_string(), align: section.sh_addralign });
        }
    }
    let mut buffer = BoundedBuffer {
        bytes: Vec::new(),
        limit: (elf.len() + debug_bytes) as u64 + LAYOUT_SLACK,
        ..Default::default()
    };
    let written = builder.write(&mut buffer);
    if let Some(size) = buffer.refused {
        return Err(DebugInfoError::TooLarge { size, limit: buffer.limit });
    }
    written.map_err(DebugInfoError::Write)?;
    let written = buffer.bytes.len() as u64;
    match buffer.reserved {
        Some(reserved) if reserved == written => {}
        reserved => return Err(DebugInfoError::Layout { reserved, written }),
    }
    // object carries some damage of the input over into a file it cannot
    // read (an SHT_SYMTAB_SHNDX section without its symbol table); such a
    // file could not be given its DWARF again.
    Builder::read(buffer.bytes.as_slice()).map_err(DebugInfoError::Unreadable)?;
    // Whatever object's layout got wrong, a file whose headers do not find
    // the DWARF where it was written is not returned.
    if !debug_sections_read_back(&buffer.bytes, &sections) {
        return Err(DebugInfoError::ReadBack);
    }
    Ok(RewrittenElf { bytes: buffer.bytes, debug_bytes })
}

/// Whether the `.debug_*` sections of `elf` are `sections`, in order.
fn debug_sections_read_back(elf: &[u8], sections: &[DebugSection]) -> bool {
    use object::{Object as _, ObjectSection as _};
    let Ok(file) = object::File::parse(elf) else { return false };
    let mut read =
        file.sections().filter(|section| section.name_bytes().is_ok_and(|name| name.starts_with(DEBUG_PREFIX)));
    let all_found = sections.iter().all(|expected| {
        read.next().is_some_and(|section| {
            section.name_bytes().ok() == Some(expected.name.as_bytes())
                && section.data().ok() == Some(expected.data.as_slice())
        })
    });
    all_found && read.next().is_none()
}

/// What a rewritten file may have beyond the input and the new debug
/// sections: section headers and names, alignment padding.
const LAYOUT_SLACK: u64 = 1 << 20;

/// The output of object's ELF writer, which reserves the whole file's size
/// once before writing: a size past `limit` is refused, and so is writing
/// past it. object keeps the offsets of loaded sections, so a damaged one
/// (an offset of petabytes) would otherwise have it allocate that much and
/// abort; and its layout arithmetic wraps on such offsets and alignments,
/// so what it reserves need not be what it writes.
#[derive(Default)]
struct BoundedBuffer {
    bytes: Vec<u8>,
    limit: u64,
    /// The size object reserved.
    reserved: Option<u64>,
    /// The first size past the limit, reserved or written.
    refused: Option<u64>,
}

impl BoundedBuffer {
    /// Whether `more` bytes may be written; once one write is refused, no
    /// more are done (the file is refused).
    fn fits(&mut self, more: u64) -> bool {
        let size = (self.bytes.len() as u64).saturating_add(more);
        if self.refused.is_none() && size <= self.limit {
            return true;
        }
        self.refused.get_or_insert(size);
        false
    }
}

impl object::write::WritableBuffer for BoundedBuffer {
    fn reserve(&mut self, size: u64) -> Result<(), ()> {
        self.reserved = Some(size);
        if size > self.limit {
            self.refused = Some(size);
            return Err(());
        }
        // At most the limit: a usize.
        self.bytes.reserve(size as usize);
        Ok(())
    }

    fn write_bytes(&mut self, bytes: &[u8]) {
        if self.fits(bytes.len() as u64) {
            self.bytes.extend_from_slice(bytes);
        }
    }

    fn write_zeros(&mut self, count: u64) {
        if self.fits(count) {
            // Within the limit: a usize.
            self.bytes.resize(self.bytes.len() + count as usize, 0);
        }
    }
}

/// Where the code is in the ELF file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextSection {
    /// The address of offset 0.
    pub address: u64,
    /// Its size: offsets at or past it are left out.
    pub size: u64,
}

/// The machine the DWARF is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// 8 or 4.
    pub address_size: u8,
    /// The byte order.
    pub endian: RunTimeEndian,
}

/// One encoded debug section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebugSection {
    /// `.debug_info`, `.debug_line`, ...
    pub name: &'static str,
    /// Its bytes.
    pub data: Vec<u8>,
}

/// DWARF 4: what every reader of JIT files reads, old perf and libdw too.
const DWARF_VERSION: u16 = 4;

/// Stands for an empty or unknown file name (DWARF 4 allows none empty).
const UNKNOWN_FILE: &str = "<unknown>";

/// The DWARF sections of `info` for code at `text` (non-empty ones only).
pub fn dwarf_sections(
    info: &CodeDebugInfo,
    text: TextSection,
    target: Target,
) -> Result<Vec<DebugSection>, gimli::write::Error> {
    let encoding = Encoding { format: Format::Dwarf32, version: DWARF_VERSION, address_size: target.address_size };
    let mut dwarf = DwarfUnit::new(encoding);
    let primary_file = info
        .outer
        .and_then(|outer| info.functions.get(outer.0))
        .and_then(|function| function.declared_at)
        .and_then(|location| info.files.get(location.file.0))
        .map_or(UNKNOWN_FILE, String::as_str);
    // No working directory: files are named by absolute paths or as the
    // runtime names them (`node:internal/...`), which tools print as they are.
    dwarf.unit.line_program = LineProgram::new(
        encoding,
        LineEncoding::default(),
        LineString::String(Vec::new()),
        None,
        LineString::String(file_bytes(primary_file)),
        None,
    );
    let files: Vec<FileId> = info.files.iter().map(|name| add_file(&mut dwarf.unit.line_program, name)).collect();
    let file_of = |location: &SourceLocation| files.get(location.file.0).copied();

    let root = dwarf.unit.root();
    let entry = dwarf.unit.get_mut(root);
    entry.set(gimli::DW_AT_producer, AttributeValue::String(b"v8inline".to_vec()));
    entry.set(gimli::DW_AT_name, AttributeValue::String(file_bytes(primary_file)));
    entry.set(gimli::DW_AT_stmt_list, AttributeValue::LineProgramRef);
    entry.set(gimli::DW_AT_low_pc, AttributeValue::Address(Address::Constant(text.address)));
    entry.set(gimli::DW_AT_high_pc, AttributeValue::Udata(text.size));

    // The abstract instances of the inlined functions, which the calls
    // name as their origin.
    let mut abstract_functions: Vec<Option<UnitEntryId>> = vec![None; info.functions.len()];
    for call in &info.calls {
        let Some(function) = info.functions.get(call.function.0) else { continue };
        if abstract_functions[call.function.0].is_some() {
            continue;
        }
        let id = dwarf.unit.add(root, gimli::DW_TAG_subprogram);
        let entry = dwarf.unit.get_mut(id);
        set_name(entry, &function.name);
        if let Some((location, file)) = function.declared_at.as_ref().and_then(|at| Some((at, file_of(at)?))) {
            entry.set(gimli::DW_AT_decl_file, AttributeValue::FileIndex(Some(file)));
            entry.set(gimli::DW_AT_decl_line, AttributeValue::Udata(location.line.into()));
        }
        entry.set(gimli::DW_AT_inline, AttributeValue::Inline(gimli::DW_INL_inlined));
        abstract_functions[call.function.0] = Some(id);
    }

    // The code object's own function, over all of the code.
    let outer = dwarf.unit.add(root, gimli::DW_TAG_subprogram);
    let outer_function = info.outer.and_then(|outer| info.functions.get(outer.0));
    let entry = dwarf.unit.get_mut(outer);
    set_name(entry, outer_function.map_or("(unknown function)", |function| &function.name));
    if let Some((location, file)) =
        outer_function.and_then(|function| function.declared_at.as_ref()).and_then(|at| Some((at, file_of(at)?)))
    {
        entry.set(gimli::DW_AT_decl_file, AttributeValue::FileIndex(Some(file)));
        entry.set(gimli::DW_AT_decl_line, AttributeValue::Udata(location.line.into()));
    }
    entry.set(gimli::DW_AT_low_pc, AttributeValue::Address(Address::Constant(text.address)));
    entry.set(gimli::DW_AT_high_pc, AttributeValue::Udata(text.size));

    // The calls, each inside its caller.
    let mut call_entries: Vec<Option<UnitEntryId>> = Vec::with_capacity(info.calls.len());
    for (index, call) in info.calls.iter().enumerate() {
        let ranges = clipped_ranges(&call.ranges, text.size);
        let (Some(origin), false) = (abstract_functions.get(call.function.0).copied().flatten(), ranges.is_empty())
        else {
            call_entries.push(None);
            continue;
        };
        // A parent must come first; a call that names a later one (or one
        // left out) hangs from the function, not from nowhere.
        let parent =
            call.parent.filter(|&parent| parent < index).and_then(|parent| call_entries[parent]).unwrap_or(outer);
        let id = dwarf.unit.add(parent, gimli::DW_TAG_inlined_subroutine);
        let range_list = (ranges.len() > 1).then(|| {
            dwarf.unit.ranges.add(RangeList(
                // Offsets from the unit's base address, its low_pc: the code's start.
                ranges.iter().map(|range| Range::OffsetPair { begin: range.start, end: range.end }).collect(),
            ))
        });
        let entry = dwarf.unit.get_mut(id);
        entry.set(gimli::DW_AT_abstract_origin, AttributeValue::UnitRef(origin));
        match range_list {
            Some(list) => entry.set(gimli::DW_AT_ranges, AttributeValue::RangeListRef(list)),
            None => {
                entry.set(
                    gimli::DW_AT_low_pc,
                    AttributeValue::Address(Address::Constant(text.address.saturating_add(ranges[0].start))),
                );
                entry.set(gimli::DW_AT_high_pc, AttributeValue::Udata(ranges[0].end - ranges[0].start));
            }
        }
        if let Some((location, file)) = call.call_site.as_ref().and_then(|at| Some((at, file_of(at)?))) {
            entry.set(gimli::DW_AT_call_file, AttributeValue::FileIndex(Some(file)));
            entry.set(gimli::DW_AT_call_line, AttributeValue::Udata(location.line.into()));
            entry.set(gimli::DW_AT_call_column, AttributeValue::Udata(location.column.into()));
        }
        call_entries.push(Some(id));
    }

    // The line table: one sequence over the code.
    let unknown_file = match files.first() {
        Some(&file) => file,
        None => add_file(&mut dwarf.unit.line_program, UNKNOWN_FILE),
    };
    let program = &mut dwarf.unit.line_program;
    program.begin_sequence(Some(Address::Constant(text.address)));
    let mut next_offset = 0;
    for row in &info.rows {
        // Rows must ascend and lie in the code.
        if row.offset < next_offset || row.offset >= text.size {
            continue;
        }
        next_offset = row.offset;
        let location = row.location.and_then(|location| Some((location, file_of(&location)?)));
        let line_row = program.row();
        line_row.address_offset = row.offset;
        (line_row.file, line_row.line, line_row.column) = match location {
            Some((location, file)) => (file, location.line.into(), line_table_column(location.column)),
            None => (unknown_file, 0, 0),
        };
        program.generate_row();
    }
    program.end_sequence(text.size);

    let mut sections = Sections::new(EndianVec::new(target.endian));
    dwarf.write(&mut sections)?;
    let mut written = Vec::new();
    sections.for_each(|id, section| -> Result<(), gimli::write::Error> {
        if !section.slice().is_empty() {
            written.push(DebugSection { name: id.name(), data: section.slice().to_vec() });
        }
        Ok(())
    })?;
    if text.size > 0 {
        written.push(DebugSection { name: ".debug_aranges", data: address_ranges(text, target)? });
    }
    Ok(written)
}

/// `.debug_aranges` of the one unit: the code's range. elfutils' libdw
/// (hotspot's perfparser, eu-addr2line, perf's libdw backend) finds the unit
/// of an address through this table only: without it, it finds neither line
/// nor inlined frame (elfutils 0.188; gcc's own output too, once the section
/// is stripped). gimli 0.34 writes no aranges, so the set (DWARF 4, 6.1.2)
/// is laid out here with gimli's writer, which encodes each field.
fn address_ranges(text: TextSection, target: Target) -> Result<Vec<u8>, gimli::write::Error> {
    use gimli::write::Writer as _;
    let size = target.address_size;
    let mut table = EndianVec::new(target.endian);
    let length = table.write_initial_length(Format::Dwarf32)?;
    let after_length = table.len();
    table.write_u16(2)?; // the aranges version of DWARF 2 to 4
    table.write_offset(0, gimli::SectionId::DebugInfo, Format::Dwarf32.word_size())?; // the unit
    table.write_u8(size)?;
    table.write_u8(0)?; // no segment selector
    // The pairs start at a multiple of their size.
    while !table.len().is_multiple_of(2 * usize::from(size)) {
        table.write_u8(0)?;
    }
    table.write_address(Address::Constant(text.address), size)?;
    table.write_udata(text.size, size)?;
    // The end of the set.
    table.write_udata(0, size)?;
    table.write_udata(0, size)?;
    let set_length = (table.len() - after_length) as u64;
    table.write_initial_length_at(length, set_length, Format::Dwarf32)?;
    Ok(table.into_vec())
}

/// A column for the line table: past 65,535 (minified code), 0, "unknown".
/// libdw keeps a row's column in 16 bits and refuses the whole table when
/// one does not fit; LLVM keeps 16 bits and wraps it.
fn line_table_column(column: u32) -> u64 {
    if column > u32::from(u16::MAX) { 0 } else { column.into() }
}

/// Adds a file to the line program: an absolute path as its directory and
/// name (as compilers do), anything else as it is.
fn add_file(program: &mut LineProgram, name: &str) -> FileId {
    let name = if name.is_empty() { UNKNOWN_FILE } else { name };
    let directory = match name.rsplit_once('/') {
        Some((directory, file)) if name.starts_with('/') && !file.is_empty() => {
            let directory = if directory.is_empty() { "/" } else { directory };
            Some((program.add_directory(LineString::String(file_bytes(directory))), file))
        }
        _ => None,
    };
    match directory {
        Some((directory, file)) => program.add_file(LineString::String(file_bytes(file)), directory, None),
        None => program.add_file(LineString::String(file_bytes(name)), program.default_directory(), None),
    }
}

/// Names a function. The linkage name is the same: binutils' addr2line
/// prints the ELF symbol (the code object's) for the innermost frame unless
/// the function has one.
fn set_name(entry: &mut gimli::write::DebuggingInformationEntry, name: &str) {
    entry.set(gimli::DW_AT_name, AttributeValue::String(name_bytes(name)));
    entry.set(gimli::DW_AT_linkage_name, AttributeValue::String(name_bytes(name)));
}

/// A file or directory name gimli accepts: not empty, no NUL.
fn file_bytes(name: &str) -> Vec<u8> {
    let bytes = name_bytes(name);
    if bytes.is_empty() { UNKNOWN_FILE.as_bytes().to_vec() } else { bytes }
}

/// A name as a DWARF string: NUL ends one, so it is left out.
fn name_bytes(name: &str) -> Vec<u8> {
    name.bytes().filter(|&byte| byte != 0).collect()
}

/// `ranges` within `0..size`, empty and descending ones left out.
fn clipped_ranges(ranges: &[CodeRange], size: u64) -> Vec<CodeRange> {
    let mut clipped: Vec<CodeRange> = Vec::with_capacity(ranges.len());
    for range in ranges {
        let start = range.start.max(clipped.last().map_or(0, |last| last.end));
        let end = range.end.min(size);
        if start < end {
            clipped.push(CodeRange { start, end });
        }
    }
    clipped
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::{Object as _, ObjectSection as _};

    /// A file perf inject wrote (testdata/esmapp, node 26: TurboFan code,
    /// its bytes zeroed), with perf inject's line table from V8.
    const JITTED: &[u8] = include_bytes!("../../testdata/debuginfo/jitted-17052-6378.so");

    fn location(file: usize, line: u32) -> Option<SourceLocation> {
        Some(SourceLocation { file: FileIndex(file), line, column: 3 })
    }

    /// f (a.js) inlines g (b.js) twice over, g inlines h.
    fn info() -> CodeDebugInfo {
        let function =
            |name: &str, file, line| DebugFunction { name: name.to_string(), declared_at: location(file, line) };
        CodeDebugInfo {
            files: vec!["/app/a.js".to_string(), "node:internal/b".to_string()],
            functions: vec![function("f", 0, 1), function("g", 1, 10), function("h", 1, 20)],
            outer: Some(FunctionIndex(0)),
            calls: vec![
                InlinedCallInfo {
                    parent: None,
                    function: FunctionIndex(1),
                    call_site: location(0, 2),
                    ranges: vec![CodeRange { start: 8, end: 24 }, CodeRange { start: 32, end: 40 }],
                },
                InlinedCallInfo {
                    parent: Some(0),
                    function: FunctionIndex(2),
                    call_site: location(1, 11),
                    ranges: vec![CodeRange { start: 16, end: 24 }],
                },
            ],
            rows: vec![
                LineRow { offset: 0, location: location(0, 1) },
                LineRow { offset: 8, location: location(1, 11) },
                LineRow { offset: 16, location: location(1, 21) },
                LineRow { offset: 24, location: None },
                LineRow { offset: 32, location: location(1, 12) },
            ],
        }
    }

    fn section<'file>(file: &'file object::File<'file>, name: &str) -> Option<&'file [u8]> {
        file.section_by_name(name).map(|section| section.data().unwrap())
    }

    #[test]
    fn the_debug_sections_are_replaced_and_the_rest_kept() {
        let rewritten = rewrite_jitted_elf(JITTED, &info()).unwrap();
        let (before, after) = (object::File::parse(JITTED).unwrap(), object::File::parse(&*rewritten.bytes).unwrap());
        assert!(section(&before, ".debug_line").is_some_and(|line| !line.is_empty()), "perf inject wrote one");
        let text = |file: &object::File| {
            let text = file.section_by_name(".text").unwrap();
            (text.address(), text.file_range(), text.data().unwrap().to_vec())
        };
        assert_eq!(text(&after), text(&before));
        assert_eq!(after.build_id().unwrap(), before.build_id().unwrap());
        let symbols = |file: &object::File| {
            use object::ObjectSymbol as _;
            file.symbols()
                .map(|symbol| (symbol.name().unwrap().to_string(), symbol.address(), symbol.size()))
                .collect::<Vec<_>>()
        };
        assert_eq!(symbols(&after), symbols(&before));
        for name in [".debug_info", ".debug_abbrev", ".debug_line", ".debug_ranges", ".debug_aranges"] {
            assert!(section(&after, name).is_some_and(|data| !data.is_empty()), "{name}");
        }
        let debug_bytes: usize = after
            .sections()
            .filter(|section| section.name().unwrap().starts_with(".debug_"))
            .map(|section| section.size() as usize)
            .sum();
        assert_eq!(debug_bytes, rewritten.debug_bytes);
        // Once more changes nothing: the earlier run's sections are replaced.
        assert_eq!(rewrite_jitted_elf(&rewritten.bytes, &info()).unwrap(), rewritten);
    }

    #[test]
    fn odd_data_is_left_out_not_a_panic() {
        let mut odd = info();
        odd.files.push(String::new());
        odd.files.push("a\0b".to_string());
        odd.functions.push(DebugFunction { name: "nul\0name".to_string(), declared_at: location(99, 1) });
        odd.functions.push(DebugFunction { name: String::new(), declared_at: location(3, 0) });
        odd.calls.push(InlinedCallInfo {
            parent: Some(7),
            function: FunctionIndex(3),
            call_site: location(2, 1),
            ranges: vec![CodeRange { start: 50, end: 10 }, CodeRange { start: 0, end: u64::MAX }],
        });
        odd.calls.push(InlinedCallInfo { parent: None, function: FunctionIndex(42), call_site: None, ranges: vec![] });
        odd.calls.push(InlinedCallInfo {
            parent: Some(2),
            function: FunctionIndex(4),
            call_site: location(4, 1),
            ranges: vec![CodeRange { start: 1, end: 2 }],
        });
        odd.rows.push(LineRow { offset: 4, location: location(3, 1) });
        odd.rows.push(LineRow { offset: u64::MAX, location: location(9, 1) });
        odd.outer = Some(FunctionIndex(77));
        assert!(rewrite_jitted_elf(JITTED, &odd).is_ok());
        assert!(rewrite_jitted_elf(JITTED, &CodeDebugInfo::default()).is_ok());
        let text = TextSection { address: 0x80, size: 0 };
        let target = Target { address_size: 4, endian: RunTimeEndian::Big };
        assert!(dwarf_sections(&odd, text, target).is_ok());
    }

    /// `jitted` rebuilt with its sections renamed: `from` is called `to`.
    fn renamed(jitted: &[u8], renames: &[(&str, &str)]) -> Vec<u8> {
        let mut builder = Builder::read(jitted).unwrap();
        for section in builder.sections.iter_mut() {
            if let Some(&(_, to)) = renames.iter().find(|(from, _)| section.name.as_slice() == from.as_bytes()) {
                section.name = to.as_bytes().to_vec().into();
            }
        }
        let mut bytes = Vec::new();
        builder.write(&mut bytes).unwrap();
        bytes
    }

    /// `jitted` with the header of its section `name` changed by `change`
    /// (the bytes of an `Elf64_Shdr`, little-endian).
    fn with_section_header(jitted: &[u8], name: &str, change: impl FnOnce(&mut [u8])) -> Vec<u8> {
        let index = object::File::parse(jitted).unwrap().section_by_name(name).unwrap().index().0;
        let table = u64::from_le_bytes(jitted[40..48].try_into().unwrap()) as usize;
        let mut patched = jitted.to_vec();
        change(&mut patched[table + 64 * index..table + 64 * (index + 1)]);
        patched
    }

    /// Found by the jitted_elf fuzz target: a `.text` that is not loaded
    /// (its flags damaged) was taken for the code, but object writes no
    /// address for it: the file came out with `.text` at 0 and the DWARF at
    /// its old address.
    #[test]
    fn a_text_section_not_loaded_is_refused() {
        let not_loaded = with_section_header(JITTED, ".text", |header| {
            header[8..16].copy_from_slice(&4u64.to_le_bytes()); // sh_flags: SHF_EXECINSTR, no SHF_ALLOC
        });
        assert!(matches!(rewrite_jitted_elf(&not_loaded, &info()), Err(DebugInfoError::TextNotCode)));
    }

    /// Found by the jitted_elf fuzz target: a `.text` that is the section
    /// name table was taken for the code, and the file written back with
    /// other bytes under the name.
    #[test]
    fn a_text_section_that_is_a_table_is_refused() {
        let strings_named_text = renamed(JITTED, &[(".text", ".code"), (".shstrtab", ".text")]);
        assert!(matches!(rewrite_jitted_elf(&strings_named_text, &info()), Err(DebugInfoError::TextNotCode)));
        let no_text = renamed(JITTED, &[(".text", ".code")]);
        assert!(matches!(rewrite_jitted_elf(&no_text, &info()), Err(DebugInfoError::NoText)));
    }

    /// Found by the jitted_elf fuzz target: the build-id note under a
    /// `.debug_` name was replaced with the debug sections, and the file
    /// lost the build id perf finds it by.
    #[test]
    fn a_note_named_as_debug_information_is_refused() {
        let note_named_debug = renamed(JITTED, &[(".note.gnu.build-id", ".debug_id")]);
        match rewrite_jitted_elf(&note_named_debug, &info()) {
            Err(DebugInfoError::NotDebugInfo(name)) => assert_eq!(name, ".debug_id"),
            other => panic!("{other:?}"),
        }
    }

    /// Found by the jitted_elf fuzz target: the symbol table under a
    /// `.debug_` name was dropped, the file lost its symbols, and its string
    /// table, linked from nothing, made the file one object cannot read.
    #[test]
    fn a_symbol_table_named_as_debug_information_is_refused() {
        let symbols_named_debug = renamed(JITTED, &[(".symtab", ".debug_symbols")]);
        match rewrite_jitted_elf(&symbols_named_debug, &info()) {
            Err(DebugInfoError::NotDebugInfo(name)) => assert_eq!(name, ".debug_symbols"),
            other => panic!("{other:?}"),
        }
    }

    /// Found by the jitted_elf fuzz target: an alignment of 0 (no alignment,
    /// as 1) made object lay the section out at offset 0 and reserve less
    /// than it then wrote, past a loaded section's far offset (2.5 GB).
    #[test]
    fn a_section_aligned_to_0_is_laid_out_as_aligned_to_1() {
        let aligned_to_0 = with_section_header(JITTED, ".strtab", |header| {
            header[48..56].copy_from_slice(&0u64.to_le_bytes()); // sh_addralign
        });
        let rewritten = rewrite_jitted_elf(&aligned_to_0, &info()).unwrap();
        let strings = |elf: &[u8]| {
            let file = object::File::parse(elf).unwrap();
            let strtab = file.section_by_name(".strtab").unwrap();
            (strtab.align(), strtab.data().unwrap().to_vec())
        };
        let (align, data) = strings(&rewritten.bytes);
        assert_eq!((align, data), (1, strings(JITTED).1));
    }

    /// Found by the jitted_elf fuzz target: an alignment that is no power of
    /// two (here `u64::MAX`) made object lay sections over others; the
    /// build-id note came out over the ELF header.
    #[test]
    fn an_alignment_that_is_no_power_of_two_is_refused() {
        for align in [3, u64::MAX] {
            let misaligned = with_section_header(JITTED, ".eh_frame_hdr", |header| {
                header[48..56].copy_from_slice(&align.to_le_bytes()); // sh_addralign
            });
            match rewrite_jitted_elf(&misaligned, &info()) {
                Err(DebugInfoError::Alignment { section, align: refused }) => {
                    assert_eq!((section.as_str(), refused), (".eh_frame_hdr", align));
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// Found by the jitted_elf fuzz target: with a symbol table index
    /// section (`SHT_SYMTAB_SHNDX`) and only the null section typed as a
    /// symbol table, object wrote the index section without a table, and
    /// then refused that file.
    #[test]
    fn a_file_object_cannot_read_again_is_refused() {
        let mut damaged = JITTED.to_vec();
        damaged[60..62].copy_from_slice(&5u16.to_le_bytes()); // e_shnum: .text to .shstrtab
        let table = u64::from_le_bytes(JITTED[40..48].try_into().unwrap()) as usize;
        let header = |index: usize| table + 64 * index;
        damaged[header(0) + 4..header(0) + 8].copy_from_slice(&object::elf::SHT_SYMTAB.0.to_le_bytes());
        let eh_frame_hdr = header(3);
        damaged[eh_frame_hdr + 4..eh_frame_hdr + 8].copy_from_slice(&object::elf::SHT_SYMTAB_SHNDX.0.to_le_bytes());
        damaged[eh_frame_hdr + 8..eh_frame_hdr + 16].copy_from_slice(&0u64.to_le_bytes()); // not loaded
        assert!(matches!(rewrite_jitted_elf(&damaged, &info()), Err(DebugInfoError::Unreadable(_))));
    }

    /// Found by the jitted_elf fuzz target: object keeps the file offset of
    /// each loaded section, even an empty one's, and reserved a file
    /// reaching it (here 1 PiB), which aborted.
    #[test]
    fn a_section_offset_past_any_file_is_refused_not_an_abort() {
        let far = with_section_header(JITTED, ".eh_frame_hdr", |header| {
            header[24..32].copy_from_slice(&(1u64 << 50).to_le_bytes()); // sh_offset
            header[32..40].copy_from_slice(&0u64.to_le_bytes()); // sh_size
        });
        let debug_bytes = rewrite_jitted_elf(JITTED, &info()).unwrap().debug_bytes;
        match rewrite_jitted_elf(&far, &info()) {
            Err(DebugInfoError::TooLarge { size, limit }) => {
                assert!(size >= 1 << 50);
                assert_eq!(limit, (JITTED.len() + debug_bytes) as u64 + LAYOUT_SLACK);
            }
            other => panic!("{other:?}"),
        }
    }

    /// Found by the jitted_elf fuzz target
    /// (`fuzz/regressions/jitted_elf-crash-f0dde34f...`): a section typed
    /// `SHT_GNU_VERSYM` (here the build-id note's header) in a file without
    /// dynamic symbols. object reserves no bytes for it but writes its null
    /// entry, 2 bytes, so every section after it was 2 bytes off its header.
    #[test]
    fn a_dynamic_linking_table_is_refused_not_written_off_its_header() {
        let input = include_bytes!("../../fuzz/regressions/jitted_elf-crash-f0dde34f5c355a4d89598ea0854a0d7680eeaaf3");
        let length = u32::from_le_bytes(input[..4].try_into().unwrap()) as usize;
        let elf = &input[4..4 + length];
        match rewrite_jitted_elf(elf, &info()) {
            Err(DebugInfoError::DynamicTable(section)) => assert_eq!(section, ".note.gnu.build-id"),
            Ok(rewritten) => {
                let written = object::File::parse(&*rewritten.bytes).unwrap();
                let expected = dwarf_sections(
                    &info(),
                    TextSection { address: 0x80, size: 0x1fc },
                    Target { address_size: 8, endian: RunTimeEndian::Little },
                )
                .unwrap();
                for section in expected {
                    assert_eq!(self::section(&written, section.name), Some(&section.data[..]), "{}", section.name);
                }
                panic!("written");
            }
            Err(other) => panic!("{other:?}"),
        }
    }

    /// Cut or flipped bytes: an error or a file, never a panic.
    #[test]
    fn damaged_files_are_refused_not_a_panic() {
        assert!(matches!(rewrite_jitted_elf(b"not ELF", &info()), Err(DebugInfoError::NotElf(_))));
        let info = info();
        for length in 0..JITTED.len() {
            let _ = rewrite_jitted_elf(&JITTED[..length], &info);
        }
        let mut flipped = JITTED.to_vec();
        for (index, &byte) in JITTED.iter().enumerate() {
            flipped[index] = byte ^ 0xa5;
            let _ = rewrite_jitted_elf(&flipped, &info);
            flipped[index] = byte;
        }
    }
}
